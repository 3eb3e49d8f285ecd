"""Reads behind the candidate's and the interviewer's pages."""

from dataclasses import dataclass

from django.db.models import Exists, OuterRef

from grading.models import Attempt
from questions.rendering import render_markdown, render_question
from questions.schema import Question


@dataclass(frozen=True)
class QuestionRow:
    question: object
    status: str  # "new", "attempted" or "solved"


def question_rows(*, user, questions) -> list[QuestionRow]:
    """Each question with this user's status on it, in two queries whatever the count."""
    mine = Attempt.objects.filter(user=user, question_version__question=OuterRef("pk"))
    annotated = questions.annotate(
        attempted=Exists(mine), solved=Exists(mine.filter(correct=True))
    )
    return [
        QuestionRow(q, "solved" if q.solved else "attempted" if q.attempted else "new")
        for q in annotated
    ]


def question_page(*, user, version, seed: int, hints_taken: int, gave_up: bool) -> dict:
    """Everything the question page shows for one variant: the rendered question, the
    latest attempt per part, the hints taken so far, and whether the solution is open."""
    question = Question.from_data(version.data)
    rendered = render_question(question, seed)
    latest = {}
    for attempt in Attempt.objects.filter(user=user, question_version=version, variant_seed=seed):
        latest.setdefault(attempt.part_id, attempt)  # ordered newest first
    auto_parts = [part.id for part in question.parts if part.is_auto_graded]
    solved = bool(auto_parts) and all(
        latest.get(part_id) is not None and latest[part_id].correct for part_id in auto_parts
    )
    return {
        "version": version,
        "question": rendered,
        "seed": seed,
        "parts": [
            (part, latest.get(part.id), explain_review(question, latest.get(part.id))) for part in rendered.parts
        ],
        "hints_shown": rendered.hints_html[:hints_taken],
        "hints_left": len(rendered.hints_html) - hints_taken,
        "hint_cost_percent": round(question.hint_cost * 100),
        "solved": solved,
        "show_solution": solved or gave_up,
    }


def recent_attempts(*, limit: int):
    return Attempt.objects.select_related("user", "question_version__question")[:limit]


def explain_review(question: Question, attempt) -> dict | None:
    """For a recorded explanation: the model answer and the rubric to tick against it."""
    if attempt is None or attempt.status != Attempt.Status.GRADED:
        return None
    part = question.part(attempt.part_id)
    if part.kind != "explain":
        return None
    ticked = set((attempt.verdict or {}).get("rubric_ticked", ()))
    return {
        "model_answer_html": render_markdown(part.raw.get("model_answer", "")).html,
        "items": [(item["id"], item["text"], item["id"] in ticked) for item in part.rubric],
        "assessed": "rubric_ticked" in (attempt.verdict or {}),
    }


def verdict_context(attempt, *, part_id: str, reading=None) -> dict:
    """What the verdict partial needs for one part's latest attempt (or an unread answer)."""
    review = None
    if attempt is not None:
        review = explain_review(Question.from_data(attempt.question_version.data), attempt)
    return {"part_id": part_id, "attempt": attempt, "reading": reading, "review": review}
