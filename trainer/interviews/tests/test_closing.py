"""Closing an interview submits the code left unsubmitted in its editors (closing.py)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from grading.models import Attempt
from trainer.interviews import closing, services, tasks
from trainer.interviews.models import InterviewAttempt, InterviewEvent
from trainer.interviews.tests.conftest import code_solution, make_interview, start

Kind = InterviewEvent.Kind


@pytest.fixture
def coding(interviewer, runnable_code_question, candidate):
    """An interview over the bank's top-p question (code part `keep`, with a judge), started."""
    return start(make_interview(interviewer, runnable_code_question), candidate)


@pytest.fixture
def queued(monkeypatch):
    """The grading tasks queued on commit, by attempt id (nothing is sent to a broker)."""
    sent = []
    monkeypatch.setattr("grading.services._enqueue", lambda attempt_id, kind, **_: sent.append(attempt_id))
    return sent


def question(interview):
    return interview.questions.select_related("question_version").get(position=1)


def snapshot(interview, candidate, source, part_id="keep"):
    services.code_snapshot(interview=interview, user=candidate, question=question(interview), part_id=part_id,
                           source=source)


def expire(interview):
    services.move_deadline(interview=interview, deadline=timezone.now() - timedelta(seconds=1))


def answers(interview):
    return list(InterviewEvent.objects.filter(interview=interview, kind__in=[Kind.ANSWER, Kind.ANSWER_INVALID]))


def test_code_typed_but_not_submitted_is_graded_as_the_final_answer_at_time_out(
        coding, candidate, runnable_code_question, queued, django_capture_on_commit_callbacks):
    code = code_solution(runnable_code_question)
    snapshot(coding, candidate, code)
    expire(coding)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.interview_close_if_expired(coding)
    [event] = answers(coding)
    assert event.kind == Kind.ANSWER and event.data["answer"] == code
    assert event.data["auto_submitted"] is True and event.data["reason"] == "expired"
    attempt = Attempt.objects.get(id=event.data["attempt_id"])
    assert attempt.purpose == Attempt.Purpose.ANSWER and attempt.user == candidate and attempt.answer == code
    assert InterviewAttempt.objects.filter(attempt=attempt, question=question(coding)).exists()
    assert queued == [attempt.id]  # graded like any answer, queued once the close committed
    closed = InterviewEvent.objects.get(interview=coding, kind=Kind.CLOSED)
    assert event.sequence < closed.sequence  # the record reads: answer submitted, then closed


def test_closing_twice_submits_the_final_answer_once(coding, candidate, runnable_code_question, queued):
    snapshot(coding, candidate, code_solution(runnable_code_question))
    expire(coding)
    assert services.close_expired_interviews() == 1
    assert services.close_expired_interviews() == 0
    assert services.interview_close_if_expired(coding) is False
    assert closing.final_answers_submit(coding.id, reason="expired") == 0  # a retried task
    assert len(answers(coding)) == 1
    assert Attempt.objects.filter(purpose=Attempt.Purpose.ANSWER).count() == 1


def test_code_already_submitted_is_not_submitted_again(coding, candidate, runnable_code_question):
    code = code_solution(runnable_code_question)
    snapshot(coding, candidate, code)
    services.answer_submit(interview=coding, user=candidate, question=question(coding), part_id="keep", answer=code)
    expire(coding)
    services.interview_close_if_expired(coding)
    [event] = answers(coding)
    assert "auto_submitted" not in event.data


def test_code_changed_after_the_last_submission_is_submitted(coding, candidate, runnable_code_question):
    first = code_solution(runnable_code_question)
    services.answer_submit(interview=coding, user=candidate, question=question(coding), part_id="keep", answer=first)
    later = first + "\n# checked the cutoff again\n"
    snapshot(coding, candidate, later)
    expire(coding)
    services.interview_close_if_expired(coding)
    submitted, final = answers(coding)
    assert submitted.data["answer"] == first and final.data["answer"] == later
    assert final.data["auto_submitted"] is True


def test_a_part_never_typed_in_submits_nothing(coding):
    expire(coding)
    services.interview_close_if_expired(coding)
    assert answers(coding) == []  # the starter is not the candidate's answer


def test_unreadable_code_is_recorded_once_as_an_unreadable_final_answer(coding, candidate):
    snapshot(coding, candidate, "def top_p(logits, p:\n")
    expire(coding)
    services.interview_close_if_expired(coding)
    assert closing.final_answers_submit(coding.id, reason="expired") == 0
    [event] = answers(coding)
    assert event.kind == Kind.ANSWER_INVALID and event.data["auto_submitted"] is True
    assert event.data["answer"] == "def top_p(logits, p:\n"
    assert not Attempt.objects.exists()  # unreadable costs nothing, at the end as before


def test_a_part_grading_cannot_take_is_left_as_typed(interviewer, code_question, candidate):
    interview = start(make_interview(interviewer, code_question), candidate)
    snapshot(interview, candidate, "def total(xs):\n    return sum(xs)\n", part_id="impl")  # a part with no judge
    expire(interview)
    assert services.interview_close_if_expired(interview)  # the refusal does not stop the close
    assert answers(interview) == []
    assert InterviewEvent.objects.filter(interview=interview, kind=Kind.CLOSED).count() == 1


def test_ending_the_interview_early_submits_the_code_too(coding, candidate, interviewer, runnable_code_question):
    snapshot(coding, candidate, code_solution(runnable_code_question))
    assert services.interview_end(interview=coding, ended_by=interviewer)
    [event] = answers(coding)
    assert event.data["auto_submitted"] is True and event.data["reason"] == "ended_by_interviewer"
    assert services.interview_end(interview=coding, ended_by=interviewer) is False
    assert len(answers(coding)) == 1


def test_a_part_the_sandbox_refuses_for_now_is_submitted_by_the_retry_task(
        coding, candidate, runnable_code_question, monkeypatch, django_capture_on_commit_callbacks):
    code = code_solution(runnable_code_question)
    for source in (code, code + "\n"):  # two runs still queued: the sandbox takes no more for now
        services.code_run(interview=coding, user=candidate, question=question(coding), part_id="keep", source=source)
    snapshot(coding, candidate, code + "\n\n")
    retries = []
    monkeypatch.setattr(closing.current_app, "send_task", lambda name, args, countdown: retries.append((name, args)))
    expire(coding)
    with django_capture_on_commit_callbacks(execute=True):
        services.interview_close_if_expired(coding)
    assert answers(coding) == []
    assert retries == [(closing.FINAL_ANSWERS_TASK, (coding.id, "expired"))]

    Attempt.objects.filter(purpose=Attempt.Purpose.EXAMPLES).update(status=Attempt.Status.GRADED)
    assert tasks.submit_final_answers.apply(args=(coding.id, "expired")).get() == 0
    [event] = answers(coding)
    assert event.data["answer"] == code + "\n\n" and event.data["auto_submitted"] is True
    tasks.submit_final_answers.apply(args=(coding.id, "expired")).get()
    assert len(answers(coding)) == 1


def test_the_exports_say_which_answer_was_submitted_at_time_out(coding, candidate, runnable_code_question, queued):
    from trainer.interviews import transcript

    snapshot(coding, candidate, code_solution(runnable_code_question))
    expire(coding)
    services.interview_close_if_expired(coding)
    assert "submitted for the candidate at time-out" in transcript.export_markdown(coding)
    [answer] = [event for event in transcript.export_json(coding)["events"] if event["kind"] == Kind.ANSWER]
    assert answer["data"]["auto_submitted"] is True and answer["data"]["reason"] == "expired"
