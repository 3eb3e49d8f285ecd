"""Reads behind the candidate's and the interviewer's pages."""

from dataclasses import dataclass
from datetime import timedelta

from grading.models import Attempt
from questions.rendering import render_markdown, render_question
from questions.schema import AUTO_GRADED_KINDS, Question
from trainer import progress as progress_model


STATUSES = ("new", "attempted", "solved", "due")


@dataclass(frozen=True)
class QuestionRow:
    question: object
    kinds: tuple[str, ...]
    status: str  # one of STATUSES


def _part_kinds(question) -> tuple[str, ...]:
    return tuple(part["kind"] for part in question.current_version.data.get("parts", []))


def question_infos(questions) -> list[progress_model.QuestionInfo]:
    return [
        progress_model.QuestionInfo(
            id=question.id,
            topic=question.topic,
            difficulty=question.difficulty,
            auto_parts=tuple(
                part["id"] for part in question.current_version.data.get("parts", [])
                if part["kind"] in AUTO_GRADED_KINDS
            ),
        )
        for question in questions
    ]


def graded_attempt_rows(user) -> list[progress_model.AttemptRow]:
    """Every graded attempt of `user`, oldest first, as plain rows (one query)."""
    rows = (
        Attempt.objects.filter(user=user, status=Attempt.Status.GRADED)
        .order_by("created_at", "id")
        .values_list("question_version__question_id", "part_id", "created_at", "score", "correct")
    )
    return [progress_model.AttemptRow(q, part, at, score or 0.0, correct) for q, part, at, score, correct in rows]


def user_progress(user, questions, now):
    return progress_model.replay(question_infos(questions), graded_attempt_rows(user), until=now)


def question_rows(*, user, questions, now, topic=None, difficulty=None, kind=None, status=None) -> list[QuestionRow]:
    """The bank as this user sees it, filtered; two queries whatever the count."""
    questions = list(questions)
    progress = user_progress(user, questions, now)
    rows = []
    for question in questions:
        row = QuestionRow(question, _part_kinds(question), progress[question.id].status(now))
        if topic and question.topic != topic:
            continue
        if difficulty and question.difficulty != difficulty:
            continue
        if kind and kind not in row.kinds:
            continue
        if status and row.status != status:
            continue
        rows.append(row)
    return rows


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


def dashboard(*, user, questions, topics: list[tuple[str, str]], now, history_days: int = 30) -> dict:
    """Mastery per topic now and at the end of each of the last `history_days` days, the
    next question to practise, and counts; two queries (questions, attempts)."""
    questions = list(questions)
    infos = question_infos(questions)
    attempts = graded_attempt_rows(user)
    topic_keys = [key for key, _ in topics]
    progress = progress_model.replay(infos, attempts, until=now)
    mastery = progress_model.mastery_by_topic(progress, topic_keys, now)
    days = [now - timedelta(days=back) for back in range(history_days - 1, -1, -1)]
    history = progress_model.mastery_history(infos, attempts, topic_keys, days)
    upcoming = progress_model.next_question(progress, mastery, now)
    by_id = {question.id: question for question in questions}
    statuses = [state.status(now) for state in progress.values()]
    return {
        "mastery": [(key, label, mastery.get(key, 0.0)) for key, label in topics],
        "history": history,
        "history_days": days,
        "next_question": by_id[upcoming.info.id] if upcoming else None,
        "next_reason": None if upcoming is None else upcoming.status(now),
        "counts": {status: statuses.count(status) for status in STATUSES},
        "attempt_count": len(attempts),
    }


def export_rows(user):
    """Every attempt of `user`, oldest first, for the CSV and JSON exports."""
    return (
        Attempt.objects.filter(user=user)
        .order_by("created_at", "id")
        .values(
            "id", "created_at", "question_version__question__slug", "question_version__number", "part_id",
            "variant_seed", "answer", "status", "correct", "score", "hints_used", "time_taken",
        )
    )
