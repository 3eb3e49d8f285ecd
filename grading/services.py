"""Everything that changes attempts: submit, grade, fail.

The pure library decides verdicts (`grading.grade`, `grading.interpret`); this module
stores them and moves each attempt through its states.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

import grading
from grading.models import Attempt
from grading.signals import attempt_scored
from grading.verdict import Verdict
from questions.rendering import draw_variant
from questions.schema import Question

# A delivery that finds the attempt already claimed this many times gives up on it: a
# task that keeps killing its worker must end as FAILED, never stay RUNNING.
MAX_GRADING_TRIES = 3
QUEUED_KINDS = frozenset({"numeric", "formula", "explain", "code", "kernel"})
# Sandboxed runs are expensive: one user may have this many waiting or running, and
# start this many per minute; beyond that the answer is refused (costing nothing).
SANDBOXED_KINDS = frozenset({"code", "kernel"})
MAX_UNFINISHED_RUNS = 2
MAX_RUNS_PER_MINUTE = 6


class SubmitRefused(Exception):
    """The request cannot become an attempt (unknown part, kind not answerable here)."""


@dataclass(frozen=True)
class SubmitResult:
    """`attempt` is None when the answer was not accepted (invalid input costs nothing)."""

    verdict: Verdict
    attempt: Attempt | None


def _question(version) -> Question:
    return Question.from_data(version.data)


def _part_and_context(version, part_id: str, seed: int):
    question = _question(version)
    try:
        part = question.part(part_id)
    except KeyError:
        raise SubmitRefused(f"this question has no part {part_id!r}") from None
    if part.kind not in QUEUED_KINDS:
        raise SubmitRefused(f"{part.kind} parts are not answerable yet")
    return question, part, draw_variant(question, seed).context


def attempt_interpret(*, version, part_id: str, seed: int, answer: str) -> Verdict:
    """What the engine reads in `answer`, without grading or storing it (live preview)."""
    _, part, context = _part_and_context(version, part_id, seed)
    return grading.interpret(part.raw, answer, context)


def attempt_submit(
    *, user, version, part_id: str, seed: int, answer: str, hints_used: int = 0, time_taken=None,
    purpose: str = Attempt.Purpose.ANSWER,
) -> SubmitResult:
    """Accept a valid answer for grading off the request path.

    An answer the engine cannot read comes back at once with its message and no attempt
    is stored, so it costs the candidate nothing. A readable answer is stored QUEUED and
    its grading task is queued when the transaction commits.
    """
    _, part, context = _part_and_context(version, part_id, seed)
    if purpose == Attempt.Purpose.EXAMPLES and part.kind != "code":
        raise SubmitRefused("only code parts have examples to run")
    reading = grading.interpret(part.raw, answer, context)
    if not reading.valid:
        return SubmitResult(reading, None)
    if part.kind in SANDBOXED_KINDS:
        refusal = check_run_rate(user)
        if refusal:
            return SubmitResult(Verdict(valid=False, correct=False, score=0.0, feedback=refusal), None)
    with transaction.atomic():
        attempt = Attempt.objects.create(
            user=user,
            question_version=version,
            part_id=part_id,
            part_kind=part.kind,
            purpose=purpose,
            variant_seed=seed,
            answer=answer,
            hints_used=hints_used,
            time_taken=time_taken,
        )
        transaction.on_commit(lambda: _enqueue(attempt.id, part.kind))
    return SubmitResult(reading, attempt)


def check_run_rate(user) -> str | None:
    """Why `user` may not start another sandboxed run now, or None."""
    mine = Attempt.objects.filter(user=user, part_kind__in=SANDBOXED_KINDS)
    unfinished = mine.filter(status__in=[Attempt.Status.QUEUED, Attempt.Status.RUNNING]).count()
    if unfinished >= MAX_UNFINISHED_RUNS:
        return f"you already have {unfinished} submissions being graded; wait for their verdicts"
    recent = mine.filter(created_at__gte=timezone.now() - timedelta(minutes=1)).count()
    if recent >= MAX_RUNS_PER_MINUTE:
        return f"at most {MAX_RUNS_PER_MINUTE} submissions a minute; try again shortly"
    return None


def _enqueue(attempt_id: int, part_kind: str) -> None:
    """Queue the grading task: kernel answers go to the GPU pool when one is configured."""
    from gpu_runner.routing import queue_for
    from grading.tasks import grade_attempt

    grade_attempt.apply_async((attempt_id,), queue=queue_for(part_kind))


def attempt_grade(attempt_id: int) -> Attempt:
    """Grade one attempt; safe to run twice and after a worker died mid-run.

    The claim (QUEUED or RUNNING → RUNNING, tries + 1) is a conditional update, and so is
    the final write, which only lands while the attempt is unfinished: a duplicate
    delivery either finds it finished and does nothing, or computes the same verdict
    (grading is a pure function of the stored answer and seed) and loses the race.
    """
    unfinished = [Attempt.Status.QUEUED, Attempt.Status.RUNNING]
    claimed = Attempt.objects.filter(id=attempt_id, status__in=unfinished).update(
        status=Attempt.Status.RUNNING, tries=F("tries") + 1, started_at=timezone.now()
    )
    attempt = Attempt.objects.select_related("question_version").get(id=attempt_id)
    if not claimed:
        return attempt
    if attempt.tries > MAX_GRADING_TRIES:
        return _attempt_fail(attempt, f"grading was interrupted {attempt.tries - 1} times")
    try:
        question, part, context = _part_and_context(attempt.question_version, attempt.part_id, attempt.variant_seed)
        if attempt.purpose == Attempt.Purpose.EXAMPLES:
            kind = grading.get_kind(part.kind)
            verdict = kind.try_examples(kind.load_spec(part.raw), attempt.answer)
        else:
            verdict = grading.grade(part.raw, attempt.answer, context)
    except SubmitRefused as refusal:
        return _attempt_fail(attempt, str(refusal))
    score = verdict.score * hint_factor(question.hint_cost, attempt.hints_used)
    written = Attempt.objects.filter(id=attempt_id, status__in=unfinished).update(
        status=Attempt.Status.GRADED,
        verdict=verdict.to_dict(),
        correct=verdict.correct,
        score=score,
        graded_at=timezone.now(),
    )
    attempt.refresh_from_db()
    if written and attempt.purpose == Attempt.Purpose.ANSWER:  # only the write that landed reports
        attempt_scored.send(sender=Attempt, attempt=attempt)
    return attempt


def _attempt_fail(attempt: Attempt, reason: str) -> Attempt:
    Attempt.objects.filter(id=attempt.id).exclude(status=Attempt.Status.GRADED).update(
        status=Attempt.Status.FAILED, failure_reason=reason, graded_at=timezone.now()
    )
    attempt.refresh_from_db()
    return attempt


def hint_factor(hint_cost: float, hints_used: int) -> float:
    """The share of a part's score kept after taking `hints_used` hints."""
    return max(0.0, 1.0 - hint_cost * hints_used)


def attempt_self_assess(attempt: Attempt, ticked_ids: list[str]) -> Attempt:
    """Score an explain attempt from the rubric items the candidate says they covered.

    Practice mode trusts the candidate's own ticks against the model answer (an
    interviewer scores them in an interview); the score is the ticked share of the
    rubric, less the hints taken. Unknown item ids are refused.
    """
    question = _question(attempt.question_version)
    part = question.part(attempt.part_id)
    if part.kind != "explain" or attempt.status != Attempt.Status.GRADED:
        raise SubmitRefused("only a recorded explanation can be self-assessed")
    kind = grading.get_kind("explain")
    try:
        fraction = kind.score_rubric(kind.load_spec(part.raw), ticked_ids)
    except ValueError as error:
        raise SubmitRefused(str(error)) from None
    verdict = dict(attempt.verdict or {})
    verdict["rubric_ticked"] = sorted(set(ticked_ids))
    attempt.verdict = verdict
    attempt.score = fraction * hint_factor(question.hint_cost, attempt.hints_used)
    attempt.save(update_fields=["verdict", "score"])
    attempt_scored.send(sender=Attempt, attempt=attempt)
    return attempt
