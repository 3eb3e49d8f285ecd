"""The shell around the scratchpad and credit carried forward: attempts keep the working
and grade it; a later part is graded with the candidate's own earlier wrong answer; the
`grade` command does the same from a file."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from grading import services
from grading.models import Attempt
from questions.variants import draw_variant
from trainer.interviews.models import InterviewAttempt
from trainer.interviews.tests.conftest import make_interview, start

BANK = Path(__file__).resolve().parents[2] / "questions" / "bank"
FLOOR_FILE = "roofline/001-decode-floor-from-weights.yaml"
CHAIN_FILE = "kv-cache/010-kv-bytes-and-the-sequence-ceiling.yaml"
FLOOR_VARIANT = {"gpu": "h100_sxm", "model": "llama33_70b", "dtype": "bf16", "batch": 16, "context": 4096}
ONE_GPU = "w = (70.6e9 - 128256 * 8192) * 2 B\nt = w / 3.35 TB/s\nfloor = t * 1\n"


def _stored(relative: str):
    from questions.services import question_save_text

    result = question_save_text((BANK / relative).read_text(), origin="file", source_path=f"questions/bank/{relative}")
    assert result.version is not None, result.problems
    return result.version


def _seed_for(version, choices: dict) -> int:
    question = version.as_question()
    return next(seed for seed in range(5000)
                if all(draw_variant(question, seed).choices[name] == value for name, value in choices.items()))


@pytest.fixture
def enqueued(monkeypatch):
    calls = []
    monkeypatch.setattr(services, "_enqueue", lambda attempt_id, kind, countdown=None: calls.append(attempt_id))
    return calls


def _graded(user, version, part_id, seed, answer="", scratchpad=""):
    result = services.attempt_submit(user=user, version=version, part_id=part_id, seed=seed, answer=answer,
                                     scratchpad=scratchpad)
    assert result.attempt is not None, result.verdict.feedback
    return services.attempt_grade(result.attempt.id)


@pytest.mark.django_db
def test_the_working_is_stored_with_the_attempt_and_graded_step_by_step(candidate, enqueued):
    version = _stored(FLOOR_FILE)
    seed = _seed_for(version, FLOOR_VARIANT)
    attempt = _graded(candidate, version, "floor", seed, scratchpad=ONE_GPU)
    assert attempt.scratchpad == ONE_GPU and attempt.answer == "41.52 ms"  # the answer line, as typed text
    verdict = attempt.stored_verdict
    assert verdict.first_wrong_step == 2 and verdict.steps[1].mistake == "mistakes[4]"
    assert verdict.steps[0].matched == "weight bytes"
    assert attempt.score == pytest.approx(0.5)


@pytest.mark.django_db
def test_a_scratchpad_that_does_not_read_costs_nothing(candidate, enqueued):
    version = _stored(FLOOR_FILE)
    result = services.attempt_submit(user=candidate, version=version, part_id="floor", seed=1, answer="",
                                     scratchpad="w = 70e9 * 2 B\nt = w / bandwidht")
    assert result.attempt is None and not result.verdict.valid
    assert "line 2" in result.verdict.feedback
    assert not Attempt.objects.exists() and not enqueued


@pytest.mark.django_db
def test_a_later_part_consistent_with_a_wrong_earlier_answer_earns_carried_credit(candidate, enqueued):
    version = _stored(CHAIN_FILE)
    earlier = _graded(candidate, version, "kv_token_gpu", 3, answer="320 KiB/token")
    assert earlier.correct is False
    consistent = _graded(candidate, version, "concurrency", 3, answer="21.4")
    assert consistent.score == pytest.approx(0.75)
    assert consistent.stored_verdict.carried.consistent
    assert "Consistent with your earlier 320 KiB/token" in consistent.stored_verdict.feedback
    inconsistent = _graded(candidate, version, "concurrency", 3, answer="3")
    assert inconsistent.score == 0.0 and not inconsistent.stored_verdict.carried.consistent


@pytest.mark.django_db
def test_nothing_is_carried_once_the_earlier_part_is_answered_right(candidate, other_candidate, enqueued):
    version = _stored(CHAIN_FILE)
    _graded(candidate, version, "kv_token_gpu", 3, answer="320 KiB/token")
    _graded(candidate, version, "kv_token_gpu", 3, answer="16 KiB/token")  # the latest is right
    later = _graded(candidate, version, "concurrency", 3, answer="21.4")
    assert later.score == 0.0 and later.stored_verdict.carried is None
    # Another candidate's wrong answer is not this one's.
    _graded(other_candidate, version, "kv_token_gpu", 3, answer="320 KiB/token")
    assert _graded(candidate, version, "concurrency", 3, answer="21.40").stored_verdict.carried is None


def _grade_json(*args) -> dict:
    out = io.StringIO()
    call_command("grade", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_grade_command_grades_a_scratchpad_file(tmp_path):
    working = tmp_path / "working.txt"
    working.write_text(ONE_GPU)
    choices = [item for name, value in FLOOR_VARIANT.items() for item in ("--choice", f"{name}={value}")]
    result = _grade_json("decode-floor-from-weights", "--part", "floor", "--scratchpad", str(working), *choices)
    assert result["first_wrong_step"] == 2
    assert [(step["line"], step["value"], step["matched"], step["mistake"]) for step in result["steps"]] == [
        (1, "139 GB", "weight bytes", None), (2, "41.5 ms", "", "mistakes[4]"), (3, "41.5 ms", "", "mistakes[4]")]
    assert result["score"] == 0.5 and result["carried"] is None


def test_the_grade_command_carries_a_given_earlier_answer():
    result = _grade_json("kv-bytes-and-the-sequence-ceiling", "--part", "concurrency", "--seed", "3",
                         "--answer", "21.4", "--given", "kv_token_gpu=320 KiB/token")
    assert result["carried"] == {"parts": ["kv_token_gpu"], "values": ["320 KiB/token"], "consistent": True}
    assert result["score"] == 0.75


def test_the_grade_command_refuses_a_given_part_the_reference_does_not_name():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="does not name answers.kv_formula"):
        _grade_json("kv-bytes-and-the-sequence-ceiling", "--part", "concurrency", "--answer", "3",
                    "--given", "kv_formula=2*L")


@pytest.mark.django_db
def test_an_interview_answer_carries_nothing_into_practice(candidate, interviewer, enqueued):
    """Practice and interviews are apart: a wrong earlier answer given in an interview
    is not the candidate's earlier answer in practice, even on the same variant."""
    version = _stored(CHAIN_FILE)
    interview = start(make_interview(interviewer, version), candidate)
    in_interview = _graded(candidate, version, "kv_token_gpu", 3, answer="320 KiB/token")
    InterviewAttempt.objects.create(attempt=in_interview, question=interview.questions.get())
    practice = _graded(candidate, version, "concurrency", 3, answer="21.4")
    assert practice.score == 0.0 and practice.stored_verdict.carried is None
