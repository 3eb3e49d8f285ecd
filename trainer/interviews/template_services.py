"""Changes to interview templates: saving a set of questions."""

from __future__ import annotations

from django.db import transaction

from trainer.interviews.models import InterviewTemplate


@transaction.atomic
def template_save(*, name: str, created_by, questions) -> InterviewTemplate:
    template = InterviewTemplate.objects.create(name=name, created_by=created_by)
    template.questions.set(questions)
    return template

