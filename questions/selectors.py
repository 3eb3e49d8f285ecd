"""Reads of the question bank shared by pages.

The visibility rule lives here and nowhere else: unreleased questions (and questions
with no content yet) exist only for users who may author questions. Interview-only
questions are visible (interviews ask them) but never part of the practice bank.
"""

from __future__ import annotations

from django.db.models import QuerySet

from questions.models import Question, QuestionVersion

AUTHOR_PERMISSION = "questions.author_questions"


def can_author(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.has_perm(AUTHOR_PERMISSION))


def released_questions() -> QuerySet[Question]:
    """Questions candidates may answer, with their current version, in catalogue order."""
    return Question.objects.filter(is_released=True, current_version__isnull=False).select_related("current_version")


def practice_bank() -> QuerySet[Question]:
    """Released questions practice offers (and the dashboard scores): interview-only
    ones never are. Locks by live interviews are trainer.selectors.practice_questions'."""
    return released_questions().filter(interview_only=False)


def visible_questions(user) -> QuerySet[Question]:
    """What `user` may see: everything with content for authors, released ones otherwise."""
    if can_author(user):
        return Question.objects.filter(current_version__isnull=False).select_related("current_version")
    return released_questions()


def get_question_version(slug: str, user=None, number: int | None = None) -> QuestionVersion:
    """The question's current version (or version `number`) if `user` may see it.

    Raises QuestionVersion.DoesNotExist when there is no such question or version, or the
    question is hidden from `user` (no user: treated as a candidate).
    """
    try:
        question = visible_questions(user).get(slug=slug)
    except Question.DoesNotExist:
        raise QuestionVersion.DoesNotExist(f"no visible question {slug!r}") from None
    if number is None:
        version = question.current_version
        version.question = question  # the page reads both; spare a query
        return version
    return QuestionVersion.objects.select_related("question").get(question=question, number=number)


def get_version_by_id(version_id: int, user=None) -> QuestionVersion:
    """A version by primary key (what an attempt stores), under the same visibility rule."""
    version = QuestionVersion.objects.select_related("question").get(pk=version_id)
    if not can_author(user) and not version.question.is_released:
        raise QuestionVersion.DoesNotExist(f"version {version_id} is not visible")
    return version
