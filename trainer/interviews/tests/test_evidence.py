"""The evidence a scorecard opens with: per part, the final graded answer, hints, time,
submissions, runs with their results, and the rubric of parts a person assesses."""

from datetime import timedelta

import pytest
from django.utils import timezone

import grading
from grading.models import Attempt
from grading.services import _part_and_context, attempt_grade
from trainer.interviews import services
from trainer.interviews.evidence import JudgedPart, part_evidence
from trainer.interviews.models import InterviewEvent, PartJudgement
from trainer.interviews.tests.conftest import make_interview, start

Kind = InterviewEvent.Kind
EXPLANATION = "KV cache reads grow with the batch and the context length, so each step reads more."
RUN_VERDICT = {
    "valid": True, "correct": None, "score": 0.0, "feedback": "passed: a\nwrong answer: b",
    "examples": [{"name": "a", "outcome": "passed"},
                 {"name": "b", "outcome": "wrong_answer", "got": "[1]", "expected": "[0, 1]"}],
}


def reference(question, part_id):
    _, part, context = _part_and_context(question.question_version, part_id, question.variant_seed)
    return grading.get_kind(part.kind).reference_answer(grading.load_part(part.raw), context)


@pytest.fixture
def measured(interviewer, candidate, decode_question, runnable_code_question):
    """An interview where the candidate opened the decode question, took a hint, answered
    wrong then right (both graded), wrote an explanation, and ran code once."""
    interview = start(make_interview(interviewer, decode_question, runnable_code_question), candidate)
    decode, code = interview.questions.select_related("question_version").order_by("position")
    services.question_open(interview=interview, user=candidate, question=decode)
    services.hint_take(interview=interview, user=candidate, question=decode)
    for answer in ("1000 ms", reference(decode, "floor")):
        attempt_grade(services.answer_submit(interview=interview, user=candidate, question=decode, part_id="floor",
                                             answer=answer).attempt.id)
    services.answer_submit(interview=interview, user=candidate, question=decode, part_id="floor", answer="fast")
    services.answer_submit(interview=interview, user=candidate, question=decode, part_id="why", answer=EXPLANATION)
    run = services.code_run(interview=interview, user=candidate, question=code, part_id="keep",
                            source="def top_p_keep(logits, p, temperature):\n    return []\n")
    Attempt.objects.filter(id=run.attempt.id).update(  # the write grading makes for a finished run
        status=Attempt.Status.GRADED, verdict=RUN_VERDICT, correct=None, score=0.0, graded_at=timezone.now())
    return interview


def test_each_part_carries_what_the_interview_measured(measured):
    floor, why, keep = part_evidence(measured)
    assert [item.label for item in (floor, why, keep)] == ["Q1/floor", "Q1/why", "Q2/keep"]

    # Correct, less the hint's cost: the score grading gave is the auto score.
    assert floor.engine.auto_graded and floor.correct is True and floor.auto_score == floor.final_attempt.score == 0.9
    assert floor.final_attempt.answer == reference(measured.questions.get(position=1), "floor")
    assert floor.summary == "correct, score 0.90"
    assert (floor.submissions, floor.unreadable, floor.hints_used) == (2, 1, 1)
    opened = InterviewEvent.objects.get(kind=Kind.QUESTION_OPENED).at
    final = InterviewEvent.objects.filter(kind=Kind.ANSWER, part_id="floor").order_by("sequence").last().at
    assert floor.time_on_part == final - opened and floor.time_on_part >= timedelta(0)
    assert floor.rubric == () and floor.runs == () and floor.speed == ""

    assert why.engine.self_assessed and why.auto_score is None  # a person assesses it
    assert [item.id for item in why.rubric] == ["kv", "gaps"] and why.final_attempt.answer == EXPLANATION
    assert why.hints_used == 1  # hints are taken per question

    (run,) = keep.runs
    assert run.outcome == "ran the visible examples: 1 of 2 passed"
    assert run.output == "passed: a\nwrong answer: b; got [1]; expected [0, 1]"
    assert keep.final_attempt is None and keep.summary == "no answer" and keep.time_on_part is None


def test_a_kernel_verdict_says_speed_was_not_measured_here(interviewer, candidate, kernel_question):
    interview = start(make_interview(interviewer, kernel_question), candidate)
    question = interview.questions.select_related("question_version").get()
    attempt = Attempt.objects.create(
        user=candidate, question_version=question.question_version, part_id="kernel", variant_seed=1,
        answer="import triton", status=Attempt.Status.GRADED, correct=True, score=1.0, graded_at=timezone.now(),
        verdict={"valid": True, "correct": True, "score": 1.0, "feedback": "all groups passed",
                 "speed": {"status": "not_measured", "share": 0.0, "passed": False, "reason": "no GPU here"}},
    )
    services.InterviewAttempt.objects.create(attempt=attempt, question=question)
    services.event_append(interview.id, Kind.ANSWER, actor=candidate, question=question, part_id="kernel",
                          data={"answer": attempt.answer, "attempt_id": attempt.id, "kind": "kernel"})
    (kernel,) = part_evidence(interview)
    assert kernel.speed == "speed not measured here (no GPU here); it is not part of this score"


def test_a_judged_part_scores_the_override_then_the_ticks_then_the_auto_score(measured):
    floor, why, _ = part_evidence(measured)
    assert JudgedPart(floor, None).score is None and not JudgedPart(floor, None).is_judged
    unconfirmed = PartJudgement(part_id="floor", auto_score=1.0)
    assert not JudgedPart(floor, unconfirmed).is_judged
    assert JudgedPart(floor, PartJudgement(part_id="floor", auto_score=1.0, confirmed=True)).score == 1.0
    ticked = JudgedPart(why, PartJudgement(part_id="why", rubric_ticked=["kv"]))
    assert (ticked.is_judged, ticked.state, ticked.score) == (True, "ticked", 0.5)
    overridden = JudgedPart(why, PartJudgement(part_id="why", rubric_ticked=["kv"], override_score=0.9, reason="r"))
    assert (overridden.state, overridden.score) == ("overridden", 0.9)


def test_the_evidence_takes_three_queries_however_long_the_record(measured, django_assert_num_queries):
    with django_assert_num_queries(3):
        part_evidence(measured)
