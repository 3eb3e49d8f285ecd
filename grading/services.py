"""Everything that changes attempts: submit, grade, retry, fail.

The pure library decides verdicts (`grading.grade`, `grading.interpret`); this module
stores them and moves each attempt through its states. Two promises hold here: an
accepted answer is never lost or stuck (`requeue_stale_attempts`, retries that end in
FAILED), and an answer that could not be graded is never stored as wrong (it is retried,
then FAILED, and counts nowhere).
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

import grading
from gpu_runner.routing import queue_for
from grading.kinds.base import GIVEN_KEY, JUDGE_SEED_KEY, SpecError
from grading.machine import local_effects
from grading.models import Attempt
from grading.signals import attempt_scored
from grading.storable import storable, storable_text
from grading.verdict import Verdict
from questions.schema import Question
from questions.variants import draw_variant

logger = logging.getLogger(__name__)

# A delivery that finds the attempt already claimed this many times gives up on it: a
# task that keeps killing its worker, or keeps failing, must end as FAILED, never stay
# RUNNING.
MAX_GRADING_TRIES = 3
# The first retry of an attempt that could not be graded waits this long, the next twice
# as long: a sandbox that is down for a moment gets time to come back.
RETRY_BASE_DELAY_S = 5
# Sandboxed runs are expensive: one user may have this many waiting or running, and
# start this many per minute; beyond that the answer is refused (costing nothing).
MAX_UNFINISHED_RUNS = 2
MAX_RUNS_PER_MINUTE = 6
UNFINISHED = (Attempt.Status.QUEUED, Attempt.Status.RUNNING)
# The same answer to the same part and variant within this long is one submission: a
# double-click or a retried POST records one attempt. (A failed one may be sent again.)
DUPLICATE_WINDOW = timedelta(seconds=10)
GRADE_TASK = "grading.grade_attempt"  # grading.tasks.grade_attempt


class SubmitRefused(Exception):
    """The request cannot become an attempt (unknown part, kind not answerable here)."""


@dataclass(frozen=True)
class SubmitResult:
    """`attempt` is None when the answer was not accepted (invalid input costs nothing)."""

    verdict: Verdict
    attempt: Attempt | None
    # The same answer came in again within DUPLICATE_WINDOW (a double-click, a retried
    # POST): `attempt` is the one already made, and nothing new was stored.
    duplicate: bool = False


def _question(version) -> Question:
    return Question.from_data(version.data)


def _part_and_context(version, part_id: str, seed: int):
    question = _question(version)
    try:
        part = question.part(part_id)
    except KeyError:
        raise SubmitRefused(f"this question has no part {part_id!r}") from None
    if part.kind not in grading.kinds():
        raise SubmitRefused(f"{part.kind} parts are not answerable yet")
    return question, part, draw_variant(question, seed).context


def attempt_interpret(*, version, part_id: str, seed: int, answer: str, scratchpad: str = "") -> Verdict:
    """What the engine reads in `answer` (and `scratchpad`, the part's working, whose answer
    line stands in for an empty answer), without grading or storing it (live preview)."""
    _, part, context = _part_and_context(version, part_id, seed)
    return grading.interpret(part.raw, answer, context, scratchpad=scratchpad)


def scratchpad_preview(*, version, part_id: str, seed: int, scratchpad: str) -> tuple:
    """The scratchpad line by line, each line's value or error (live preview): nothing is
    compared with the reference, so nothing is revealed."""
    _, part, _context = _part_and_context(version, part_id, seed)
    return grading.read_scratchpad(part.raw, scratchpad)


def attempt_submit(
    *, user, version, part_id: str, seed: int, answer: str, hints_used: int = 0, time_taken=None,
    purpose: str = Attempt.Purpose.ANSWER, after_solution: bool = False, scratchpad: str = "",
) -> SubmitResult:
    """Accept a valid answer for grading off the request path.

    An answer the engine cannot read, or one longer than its kind takes, comes back at
    once with its message and no attempt is stored, so it costs the candidate nothing. A
    readable answer is stored QUEUED and its grading task is queued when the transaction
    commits. For sandboxed kinds the limit on unfinished runs is checked and the attempt
    created under a lock on the user's row, so concurrent posts cannot all slip past it.
    A `scratchpad` (kinds that have one) is read with the answer, stored with the attempt
    and graded with it; a line of it that does not read makes the answer invalid, and an
    empty answer takes the scratchpad's answer line.
    """
    _, part, context = _part_and_context(version, part_id, seed)
    kind = grading.get_kind(part.kind)
    if purpose == Attempt.Purpose.EXAMPLES and not kind.has_examples:
        raise SubmitRefused(f"{part.kind} parts have no visible examples to run")
    too_long = answer_too_long(kind, answer)
    if too_long:
        return SubmitResult(Verdict.invalid(too_long), None)
    answer, scratchpad = storable_text(answer), storable_text(scratchpad or "")
    reading = grading.interpret(part.raw, answer, context, scratchpad=scratchpad)
    if not reading.valid:
        return SubmitResult(reading, None)
    if scratchpad.strip() and not answer.strip():
        answer = kind.scratchpad_answer(kind.load_spec(part.raw), scratchpad) or ""
    with transaction.atomic():
        # Serialises this user's submissions, so that the duplicate check and the run
        # limits below hold under concurrent posts (PostgreSQL row lock; SQLite's
        # IMMEDIATE transactions already serialise every writer).
        get_user_model().objects.select_for_update().filter(pk=user.pk).exists()
        earlier = _same_answer_just_now(user, version, part_id, seed, purpose, answer, scratchpad)
        if earlier is not None:
            return SubmitResult(reading, earlier, duplicate=True)
        if kind.runs_in_sandbox:
            refusal = check_run_rate(user)
            if refusal:
                return SubmitResult(Verdict(valid=False, correct=False, score=0.0, feedback=refusal), None)
        attempt = Attempt.objects.create(
            user=user,
            question_version=version,
            part_id=part_id,
            part_kind=part.kind,
            purpose=purpose,
            variant_seed=seed,
            answer=answer,
            scratchpad=scratchpad,
            hints_used=hints_used,
            time_taken=time_taken,
            queued_at=timezone.now(),
            judge_seed=secrets.randbits(63) if kind.runs_in_sandbox else None,
            after_solution=after_solution,
        )
        transaction.on_commit(lambda: _enqueue(attempt.id, part.kind))
    return SubmitResult(reading, attempt)


def _same_answer_just_now(user, version, part_id, seed, purpose, answer, scratchpad="") -> Attempt | None:
    return Attempt.objects.filter(
        user=user, question_version=version, part_id=part_id, variant_seed=seed, purpose=purpose, answer=answer,
        scratchpad=scratchpad,
        created_at__gte=timezone.now() - DUPLICATE_WINDOW,
    ).exclude(status=Attempt.Status.FAILED).first()


def answer_too_long(kind, answer: str) -> str | None:
    """Why `answer` is refused for its length, or None."""
    if len(answer) <= kind.max_answer_chars:
        return None
    return (f"This answer is {len(answer):,} characters long; the limit is {kind.max_answer_chars:,}. "
            "Nothing was stored and no attempt was used.")


def sandboxed_kinds() -> list[str]:
    return [name for name in grading.kinds() if grading.get_kind(name).runs_in_sandbox]


def grading_deadline(kind_name: str) -> timedelta:
    """How long an attempt of this kind may stay queued or running before it is presumed
    lost: the kind's own deadline, capped by GRADING_DEADLINE_CAP seconds when set."""
    deadline = grading.get_kind(kind_name).grading_deadline
    cap = settings.GRADING_DEADLINE_CAP
    return min(deadline, timedelta(seconds=cap)) if cap else deadline


def busy_grading(worker: str, *, now=None) -> bool:
    """Whether `worker` is grading an attempt that is still within its kind's deadline
    (a long sandboxed run keeps its pool from running heartbeats, yet it is working)."""
    now = now or timezone.now()
    running = Attempt.objects.filter(status=Attempt.Status.RUNNING, claimed_by=worker)
    for name in set(running.values_list("part_kind", flat=True)):
        if running.filter(part_kind=name, started_at__gte=now - grading_deadline(name)).exists():
            return True
    return False


def _stale(kind_name: str, now) -> Q:
    """Unfinished attempts of `kind_name` past their kind's deadline: presumed lost."""
    cutoff = now - grading_deadline(kind_name)
    return Q(part_kind=kind_name) & (
        Q(status=Attempt.Status.QUEUED, queued_at__lt=cutoff)
        | Q(status=Attempt.Status.QUEUED, queued_at__isnull=True, created_at__lt=cutoff)
        | Q(status=Attempt.Status.RUNNING, started_at__lt=cutoff)
    )


def check_run_rate(user, *, now=None) -> str | None:
    """Why `user` may not start another sandboxed run now, or None. Attempts past their
    kind's deadline do not count: a lost one must not lock the candidate out."""
    now = now or timezone.now()
    names = sandboxed_kinds()
    mine = Attempt.objects.filter(user=user, part_kind__in=names)
    stale = Q()
    for name in names:
        stale |= _stale(name, now)
    unfinished = mine.filter(status__in=UNFINISHED).exclude(stale).count()
    if unfinished >= MAX_UNFINISHED_RUNS:
        return f"you already have {unfinished} submissions being graded; wait for their verdicts"
    recent = mine.filter(created_at__gte=now - timedelta(minutes=1)).count()
    if recent >= MAX_RUNS_PER_MINUTE:
        return f"at most {MAX_RUNS_PER_MINUTE} submissions a minute; try again shortly"
    return None


def _enqueue(attempt_id: int, part_kind: str, *, countdown: float | None = None) -> None:
    """Queue the grading task by name (tasks.py registers it): kernel answers go to the
    GPU pool when one is configured."""
    current_app.send_task(GRADE_TASK, args=(attempt_id,), queue=queue_for(part_kind), countdown=countdown)


class NotGraded(Exception):
    """The answer could not be graded now (the sandbox is down or failed, the engine
    crashed): it is retried, and never stored as wrong."""


def attempt_grade(attempt_id: int, *, worker: str = "") -> Attempt:
    """Grade one attempt; safe to run twice and after a worker died mid-run.

    The claim (QUEUED or RUNNING → RUNNING, tries + 1) is a conditional update, and so is
    the final write, which only lands while the attempt is unfinished: a duplicate
    delivery either finds it finished and does nothing, or computes the same verdict
    (grading is a pure function of the stored answer and seed) and loses the race.

    Whatever goes wrong ends in a state: a broken question (SpecError) fails the attempt
    at once; anything else (the sandbox down, an engine bug, a write the database
    refused) queues it again after a pause, until MAX_GRADING_TRIES, then fails it.
    """
    claimed = Attempt.objects.filter(id=attempt_id, status__in=UNFINISHED).update(
        status=Attempt.Status.RUNNING, tries=F("tries") + 1, started_at=timezone.now(), claimed_by=worker
    )
    attempt = Attempt.objects.select_related("question_version").get(id=attempt_id)
    if not claimed:
        return attempt
    if attempt.tries > MAX_GRADING_TRIES:
        reason = attempt.failure_reason or f"grading was interrupted {attempt.tries - 1} times"
        return _attempt_fail(attempt, reason)
    try:
        return _grade_claimed(attempt)
    except (SubmitRefused, SpecError) as error:
        logger.exception("attempt %s: its question cannot be graded", attempt_id)
        return _attempt_fail(attempt, f"this question could not be graded ({error}); an author has to fix it")
    except NotGraded as error:
        return _attempt_retry_or_fail(attempt, str(error))
    except Exception as error:  # a bug or an outage must not leave the attempt RUNNING
        logger.exception("attempt %s: grading failed", attempt_id)
        return _attempt_retry_or_fail(attempt, f"grading failed unexpectedly ({type(error).__name__})")


def _grade_claimed(attempt: Attempt) -> Attempt:
    question, part, context = _part_and_context(attempt.question_version, attempt.part_id, attempt.variant_seed)
    if attempt.judge_seed is not None:
        context = {**context, JUDGE_SEED_KEY: attempt.judge_seed}
    if attempt.purpose == Attempt.Purpose.EXAMPLES:
        kind = grading.get_kind(part.kind)
        verdict = kind.try_examples(kind.load_spec(part.raw), attempt.answer, effects=local_effects())
    else:
        given = given_answers(attempt, question, part)
        if given:
            context = {**context, GIVEN_KEY: given}
        verdict = grading.grade(part.raw, attempt.answer, context, effects=local_effects(),
                                scratchpad=attempt.scratchpad)
    if not verdict.valid:
        # The answer was readable when it was accepted: an invalid verdict now means the
        # grader could not run it (no sandbox, a sandbox failure), not a wrong answer.
        raise NotGraded(verdict.feedback or "the grader could not grade this answer")
    score = verdict.score * hint_factor(question.hint_cost, attempt.hints_used)
    if attempt.after_solution:
        score = 0.0  # the verdict still says whether it was right; the credit is gone
    written = Attempt.objects.filter(id=attempt.id, status__in=UNFINISHED).update(
        status=Attempt.Status.GRADED,
        verdict=storable(verdict.to_dict()),
        correct=verdict.correct,
        score=score,
        failure_reason="",
        graded_at=timezone.now(),
    )
    attempt.refresh_from_db()
    if written and attempt.purpose == Attempt.Purpose.ANSWER:  # only the write that landed reports
        attempt_scored.send(sender=Attempt, attempt=attempt)
    return attempt


def given_answers(attempt: Attempt, question: Question, part) -> dict:
    """The candidate's own answers to the earlier parts this part's reference names
    (credit carried forward): for each, the latest graded answer to it in the same
    variant, submitted before this one, when it was graded wrong ({part_id:
    GivenAnswer}). A right earlier answer carries nothing: the reference is what it gave."""
    kind = part.engine
    earlier_ids = kind.earlier_parts(kind.load_spec(part.raw))
    if not earlier_ids:
        return {}
    rows = Attempt.objects.filter(
        user_id=attempt.user_id, question_version_id=attempt.question_version_id, variant_seed=attempt.variant_seed,
        purpose=Attempt.Purpose.ANSWER, status=Attempt.Status.GRADED, part_id__in=earlier_ids, id__lt=attempt.id,
    )
    # Practice and each interview are apart: an answer carries only within the context
    # it was given in, never from an interview into practice or back.
    interview = _interview_of(attempt)
    rows = rows.filter(interview_link__question__interview_id=interview) if interview else rows.filter(
        interview_link__isnull=True)
    rows = rows.order_by("-id").values_list("part_id", "answer", "correct")
    given, seen = {}, set()
    for part_id, answer, correct in rows:
        if part_id in seen:
            continue
        seen.add(part_id)
        if correct is False:
            earlier = question.part(part_id)
            value = earlier.engine.given_answer(earlier.engine.load_spec(earlier.raw), answer)
            if value is not None:
                given[part_id] = value
    return given


def _interview_of(attempt: Attempt) -> int | None:
    return (Attempt.objects.filter(pk=attempt.pk).values_list("interview_link__question__interview_id", flat=True)
            .first())


def _attempt_retry_or_fail(attempt: Attempt, reason: str) -> Attempt:
    """Queue a claimed attempt again after a pause, or fail it once out of tries."""
    if attempt.tries >= MAX_GRADING_TRIES:
        return _attempt_fail(attempt, f"{reason} (tried {attempt.tries} times)")
    released = Attempt.objects.filter(id=attempt.id, status=Attempt.Status.RUNNING).update(
        status=Attempt.Status.QUEUED, queued_at=timezone.now(), failure_reason=storable_text(reason)[:2000]
    )
    if released:
        delay = RETRY_BASE_DELAY_S * 2 ** (attempt.tries - 1)
        transaction.on_commit(lambda: _enqueue(attempt.id, attempt.part_kind, countdown=delay))
    attempt.refresh_from_db()
    return attempt


def _attempt_fail(attempt: Attempt, reason: str) -> Attempt:
    Attempt.objects.filter(id=attempt.id).exclude(status=Attempt.Status.GRADED).update(
        status=Attempt.Status.FAILED, failure_reason=storable_text(reason)[:2000], graded_at=timezone.now()
    )
    attempt.refresh_from_db()
    return attempt


def requeue_stale_attempts(*, now=None) -> int:
    """Queue again every attempt that has been queued or running past its kind's
    deadline: its message was lost (the filesystem broker deletes a message when a
    worker fetches it; a killed worker takes it along) or its worker died. Safe to run
    twice and alongside a worker that is still grading: grading is idempotent, and an
    attempt past its tries ends as FAILED on its next claim. Returns how many."""
    now = now or timezone.now()
    requeued = 0
    for name in grading.kinds():
        stale = Attempt.objects.filter(_stale(name, now)).values_list("id", flat=True)
        for attempt_id in list(stale[:500]):
            # The same condition again, so two beats cannot both queue one attempt.
            moved = Attempt.objects.filter(_stale(name, now), id=attempt_id).update(
                status=Attempt.Status.QUEUED, queued_at=now
            )
            if moved:
                logger.warning("attempt %s was stale; queued again", attempt_id)
                transaction.on_commit(lambda attempt_id=attempt_id, name=name: _enqueue(attempt_id, name))
                requeued += moved
    return requeued


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
    kind = grading.get_kind(part.kind)
    if not kind.self_assessed or attempt.status != Attempt.Status.GRADED:
        raise SubmitRefused("only a recorded explanation can be self-assessed")
    try:
        fraction = kind.score_rubric(kind.load_spec(part.raw), ticked_ids)
    except ValueError as error:
        raise SubmitRefused(str(error)) from None
    verdict = attempt.stored_verdict or Verdict(valid=True, correct=None, score=0.0)
    attempt.verdict = storable(dataclasses.replace(verdict, rubric_ticked=tuple(sorted(set(ticked_ids)))).to_dict())
    attempt.__dict__.pop("stored_verdict", None)  # the cached reading is of the old row
    attempt.score = fraction * hint_factor(question.hint_cost, attempt.hints_used)
    attempt.save(update_fields=["verdict", "score"])
    attempt_scored.send(sender=Attempt, attempt=attempt)
    return attempt
