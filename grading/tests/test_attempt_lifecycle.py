"""No accepted answer is lost or stuck, and none that could not be graded is stored as wrong."""

from datetime import timedelta

import pytest
from django.utils import timezone

import grading
from grading import services
from grading.kinds.base import SpecError
from grading.models import Attempt
from grading.verdict import Verdict
from trainer.models import Progress


@pytest.fixture
def enqueued(monkeypatch):
    """The (attempt id, countdown) of every grading task queued, instead of a broker."""
    calls = []
    monkeypatch.setattr(services, "_enqueue", lambda attempt_id, kind, countdown=None: calls.append(
        (attempt_id, countdown)))
    return calls


_answers = iter(range(1, 10_000))


def _submit(user, version, answer=None):
    # A distinct answer each time: the same one twice within seconds is one submission.
    answer = answer or f"{next(_answers)} ms"
    result = services.attempt_submit(user=user, version=version, part_id="floor", seed=3, answer=answer)
    assert result.attempt is not None, result.verdict.feedback
    return result.attempt


def _grader_says(monkeypatch, outcome):
    def fake_grade(part, text, context, **options):
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    monkeypatch.setattr(grading, "grade", fake_grade)


def test_an_answer_the_sandbox_could_not_grade_is_retried_not_stored_as_wrong(
    candidate, decode_question, monkeypatch, enqueued, django_capture_on_commit_callbacks
):
    attempt = _submit(candidate, decode_question)
    _grader_says(monkeypatch, Verdict.invalid("Code cannot be run on this server right now (no sandbox)"))
    with django_capture_on_commit_callbacks(execute=True):
        attempt = services.attempt_grade(attempt.id)
    assert attempt.status == Attempt.Status.QUEUED
    assert attempt.correct is None and attempt.score is None and attempt.verdict is None
    assert "no sandbox" in attempt.failure_reason
    assert enqueued[-1] == (attempt.id, services.RETRY_BASE_DELAY_S)  # queued again, after a pause
    assert not Progress.objects.filter(user=candidate).exists()


def test_an_answer_that_can_never_be_graded_ends_failed_and_counts_nowhere(
    candidate, decode_question, monkeypatch, enqueued, django_capture_on_commit_callbacks
):
    attempt = _submit(candidate, decode_question)
    _grader_says(monkeypatch, Verdict.invalid("The sandbox failed before running this answer"))
    for _ in range(services.MAX_GRADING_TRIES):
        with django_capture_on_commit_callbacks(execute=True):
            attempt = services.attempt_grade(attempt.id)
    assert attempt.status == Attempt.Status.FAILED
    assert attempt.correct is None and attempt.score is None
    assert "sandbox failed" in attempt.failure_reason and "tried 3 times" in attempt.failure_reason
    delays = [countdown for _, countdown in enqueued if countdown]
    assert delays == [services.RETRY_BASE_DELAY_S, 2 * services.RETRY_BASE_DELAY_S]
    assert not Progress.objects.filter(user=candidate).exists()


def test_a_broken_question_fails_the_attempt_at_once(candidate, decode_question, monkeypatch, enqueued):
    attempt = _submit(candidate, decode_question)
    _grader_says(monkeypatch, SpecError("cannot evaluate the reference", "parts[0].answer"))
    attempt = services.attempt_grade(attempt.id)
    assert attempt.status == Attempt.Status.FAILED
    assert "parts[0].answer" in attempt.failure_reason
    assert services.check_run_rate(candidate) is None


def test_an_unexpected_error_while_grading_is_retried_then_fails(
    candidate, decode_question, monkeypatch, enqueued, django_capture_on_commit_callbacks
):
    attempt = _submit(candidate, decode_question)
    _grader_says(monkeypatch, RuntimeError("the engine tripped"))
    with django_capture_on_commit_callbacks(execute=True):
        attempt = services.attempt_grade(attempt.id)
    assert attempt.status == Attempt.Status.QUEUED and "RuntimeError" in attempt.failure_reason
    for _ in range(services.MAX_GRADING_TRIES - 1):
        attempt = services.attempt_grade(attempt.id)
    assert attempt.status == Attempt.Status.FAILED


def test_a_retry_that_succeeds_stores_the_verdict_and_clears_the_reason(
    candidate, decode_question, monkeypatch, enqueued
):
    attempt = _submit(candidate, decode_question)
    real_grade = grading.grade
    _grader_says(monkeypatch, RuntimeError("a blip"))
    services.attempt_grade(attempt.id)
    monkeypatch.setattr(grading, "grade", real_grade)
    attempt = services.attempt_grade(attempt.id)
    assert attempt.status == Attempt.Status.GRADED and attempt.correct is False
    assert attempt.failure_reason == ""


def test_nul_and_surrogates_from_the_sandbox_are_stored_as_replacement_characters(
    candidate, decode_question, monkeypatch, enqueued
):
    attempt = _submit(candidate, decode_question)
    _grader_says(monkeypatch, Verdict(valid=True, correct=False, score=0.0, feedback="bad\x00byte \ud800 here"))
    attempt = services.attempt_grade(attempt.id)
    assert attempt.status == Attempt.Status.GRADED
    assert attempt.verdict["feedback"] == "bad\ufffdbyte \ufffd here"


def test_nul_in_a_typed_answer_is_never_stored(candidate, decode_question, enqueued):
    unreadable = services.attempt_submit(user=candidate, version=decode_question, part_id="floor", seed=3,
                                         answer="1 ms\x00")
    assert unreadable.attempt is None and "at character 5" in unreadable.verdict.feedback
    explained = services.attempt_submit(user=candidate, version=decode_question, part_id="why", seed=3,
                                        answer="KV reads\x00 add bytes to every step of the decode loop")
    assert explained.attempt.answer == "KV reads\ufffd add bytes to every step of the decode loop"


def test_an_answer_longer_than_its_kind_takes_is_refused_and_stores_nothing(candidate, decode_question, enqueued):
    limit = grading.get_kind("numeric").max_answer_chars
    result = services.attempt_submit(user=candidate, version=decode_question, part_id="floor", seed=3,
                                     answer="1" * (limit + 1) + " ms")
    assert result.attempt is None and not result.verdict.valid
    assert f"{limit:,}" in result.verdict.feedback and "no attempt was used" in result.verdict.feedback
    assert Attempt.objects.count() == 0


def _age(attempt, **fields):
    Attempt.objects.filter(id=attempt.id).update(**fields)
    attempt.refresh_from_db()
    return attempt


def test_stale_attempts_are_queued_again_once_and_fresh_ones_are_left(
    candidate, decode_question, enqueued, django_capture_on_commit_callbacks
):
    long_ago = timezone.now() - timedelta(hours=1)
    lost_in_queue = _age(_submit(candidate, decode_question), queued_at=long_ago)
    died_running = _age(_submit(candidate, decode_question), status=Attempt.Status.RUNNING, started_at=long_ago,
                        tries=1)
    fresh = _submit(candidate, decode_question)
    enqueued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert services.requeue_stale_attempts() == 2
    assert sorted(attempt_id for attempt_id, _ in enqueued) == sorted([lost_in_queue.id, died_running.id])
    died_running.refresh_from_db()
    assert died_running.status == Attempt.Status.QUEUED
    with django_capture_on_commit_callbacks(execute=True):
        assert services.requeue_stale_attempts() == 0  # just queued again: not stale any more
    fresh.refresh_from_db()
    assert fresh.status == Attempt.Status.QUEUED
    # The retried delivery grades it, exactly once.
    assert services.attempt_grade(died_running.id).status == Attempt.Status.GRADED


def test_a_stale_attempt_out_of_tries_ends_failed_when_its_requeue_is_delivered(candidate, decode_question, enqueued):
    attempt = _age(_submit(candidate, decode_question), status=Attempt.Status.RUNNING,
                   started_at=timezone.now() - timedelta(hours=1), tries=services.MAX_GRADING_TRIES)
    services.requeue_stale_attempts()
    attempt = services.attempt_grade(attempt.id)
    assert attempt.status == Attempt.Status.FAILED
    assert "interrupted" in attempt.failure_reason


def test_the_deadline_cap_shortens_every_kinds_deadline(settings):
    settings.GRADING_DEADLINE_CAP = 5
    assert services.grading_deadline("code") == timedelta(seconds=5)
    settings.GRADING_DEADLINE_CAP = 0
    assert services.grading_deadline("code") == grading.get_kind("code").grading_deadline


def test_the_limit_on_unfinished_runs_ignores_stale_ones(candidate, decode_question):
    sandboxed = services.sandboxed_kinds()[0]
    long_ago = timezone.now() - timedelta(hours=1)
    for _ in range(services.MAX_UNFINISHED_RUNS):
        Attempt.objects.create(user=candidate, question_version=decode_question, part_id="x", part_kind=sandboxed,
                               variant_seed=1, answer="def f(): pass", queued_at=long_ago,
                               created_at=long_ago)
    Attempt.objects.update(created_at=long_ago)  # auto_now_add ignores the value passed
    assert services.check_run_rate(candidate) is None
    Attempt.objects.update(queued_at=timezone.now())
    assert "being graded" in services.check_run_rate(candidate)


def test_a_code_attempts_hidden_test_seed_is_stored_and_reused_by_every_retry(
    candidate, monkeypatch, enqueued, django_capture_on_commit_callbacks
):
    from questions.loader import load_file
    from questions.tests.factories import store_version

    version = store_version(load_file("questions/bank/speculative/119-top-p-sampler.yaml").data)
    source = "def top_p_keep(logits, p, temperature):\n    return logits > 0\n"
    attempt = services.attempt_submit(user=candidate, version=version, part_id="keep", seed=1,
                                      answer=source).attempt
    assert attempt.judge_seed is not None and attempt.judge_seed >= 2**31  # drawn from 63 bits
    seeds = []

    def fake_grade(part, text, context, **options):
        seeds.append(context["judge_seed"])
        raise RuntimeError("the sandbox vanished")

    monkeypatch.setattr(grading, "grade", fake_grade)
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            services.attempt_grade(attempt.id)
    assert seeds == [attempt.judge_seed, attempt.judge_seed]
    other = services.attempt_submit(user=candidate, version=version, part_id="keep", seed=1,
                                    answer=source + "\n# sent again\n").attempt
    assert other.judge_seed != attempt.judge_seed


def test_a_database_that_refuses_the_claim_for_a_moment_retries_the_task(monkeypatch, candidate, decode_question,
                                                                        enqueued, settings):
    """The CI failure this pins: the claim's UPDATE met "database table is locked"; the task
    raised and the answer waited for the beat. It is now sent again with a backoff."""
    from django.db import OperationalError

    from grading.tasks import grade_attempt

    settings.CELERY_TASK_ALWAYS_EAGER = True
    attempt = _submit(candidate, decode_question)
    real_grade = services.attempt_grade
    calls = []

    def locked_once(attempt_id, worker=""):
        calls.append(attempt_id)
        if len(calls) == 1:
            raise OperationalError("database table is locked: grading_attempt")
        return real_grade(attempt_id, worker=worker)

    monkeypatch.setattr(services, "attempt_grade", locked_once)
    result = grade_attempt.apply(args=(attempt.id,))
    assert calls == [attempt.id, attempt.id]
    assert result.get() == Attempt.Status.GRADED
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.GRADED and attempt.tries == 1
