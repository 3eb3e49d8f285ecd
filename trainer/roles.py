"""The three roles, as Django groups with permissions.

A role is a group; what a role may do is the permissions its group holds, so views
check permissions (`grading.submit_attempt`), never group names. `ensure_roles()` makes
the groups and their permissions idempotently; it runs after every `migrate`.
"""

from django.db import models

ROLE_PERMISSIONS = {
    "candidate": ["grading.submit_attempt"],
    "interviewer": ["grading.submit_attempt", "grading.review_attempts"],
    "admin": [
        "grading.submit_attempt",
        "grading.review_attempts",
        "questions.author_questions",
        # The Django admin is the authoring base: it checks model permissions.
        "questions.view_question",
        "questions.add_question",
        "questions.change_question",
        "questions.view_questionversion",
    ],
}


class Role(models.TextChoices):
    CANDIDATE = "candidate", "Candidate"
    INTERVIEWER = "interviewer", "Interviewer"
    ADMIN = "admin", "Admin"


def ensure_roles(**_signal_kwargs) -> None:
    """Create the role groups and give each exactly its permissions.

    Permissions that do not exist yet (their app has not migrated) are skipped; the
    handler runs again after the next app's migrations, so the final state is complete.
    """
    from django.contrib.auth.models import Group, Permission

    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        wanted = []
        for dotted in codenames:
            app_label, codename = dotted.split(".")
            permission = Permission.objects.filter(
                content_type__app_label=app_label, codename=codename
            ).first()
            if permission is not None:
                wanted.append(permission)
        group.permissions.set(wanted)


def user_roles(user) -> list[str]:
    if not user.is_authenticated:
        return []
    return sorted(user.groups.filter(name__in=Role.values).values_list("name", flat=True))


def role_context(request) -> dict:
    """Template context: what the navigation may show this user."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"can_review": False, "can_author": False}
    return {
        "can_review": user.has_perm("grading.review_attempts"),
        "can_author": user.has_perm("questions.author_questions"),
    }
