"""Changes to interview templates: saving a set of questions, renaming, sharing, deleting.

Who may see a template is selectors.visible_templates' rule; only its creator changes it.
"""

from __future__ import annotations

from django.db import transaction

from trainer.interviews import selectors
from trainer.interviews.models import InterviewTemplate
from trainer.interviews.services import InterviewRefused


@transaction.atomic
def template_save(*, name: str, created_by, questions, shared: bool = False) -> InterviewTemplate:
    template = InterviewTemplate.objects.create(name=name, created_by=created_by, shared=shared)
    template.questions.set(questions)
    return template


def _check_template_owner(template: InterviewTemplate, user) -> None:
    if not selectors.owns_template(user, template):
        raise InterviewRefused("only the template's creator can change it")


def template_update(*, template: InterviewTemplate, user, name: str, shared: bool) -> InterviewTemplate:
    """Rename and share (or unshare) a template: its creator only."""
    _check_template_owner(template, user)
    name = name.strip()
    if not name:
        raise InterviewRefused("a template needs a name")
    template.name, template.shared = name, shared
    template.save(update_fields=["name", "shared"])
    return template


def template_delete(*, template: InterviewTemplate, user) -> None:
    """Delete a template: its creator only. Interviews made from it keep their questions."""
    _check_template_owner(template, user)
    template.delete()
