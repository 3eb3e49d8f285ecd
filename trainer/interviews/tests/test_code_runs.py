"""Run in the interview room: the code runs on the part's visible examples through
grading's practice path (an EXAMPLES attempt, queued, same sandbox and rate limit), the
room polls for the result, and the record and the panel's pages show what ran and how.

Tests marked `sandbox` grade the run for real; the others stop at the queued attempt, or
write a finished run's result the way the grading service writes it.
"""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from grading import services as grading_services
from grading.models import Attempt
from grading.sandbox import sandbox_available
from trainer.interviews import selectors, services, transcript
from trainer.interviews.models import InterviewAttempt, InterviewEvent
from trainer.interviews.tests.conftest import code_solution, make_interview, start
from trainer.models import Progress

Kind = InterviewEvent.Kind
HTMX = {"HTTP_HX_REQUEST": "true"}
AVAILABLE, WHY_NOT = sandbox_available()
needs_sandbox = pytest.mark.skipif(not AVAILABLE, reason=f"sandbox: {WHY_NOT}")
UNREADABLE = "def top_p_keep(logits, p, temperature:\n"
EXAMPLE_LINES = "passed: three distinct logits\npassed: a tie at the cutoff\npassed: temperature zero"


@pytest.fixture
def coding(interviewer, runnable_code_question, candidate):
    """An open interview over the top-p question; the candidate is in the room."""
    return start(make_interview(interviewer, runnable_code_question), candidate)


def question_of(interview):
    return interview.questions.select_related("question_version").get(position=1)


def run(interview, user, source):
    return services.code_run(interview=interview, user=user, question=question_of(interview), part_id="keep",
                             source=source)


def run_url(interview):
    return reverse("interview-run", args=[interview.id, 1, "keep"])


def status_url(interview, attempt):
    return reverse("interview-attempt-status", args=[interview.id, attempt.id])


def finish_as_grading_does(attempt, feedback=EXAMPLE_LINES):
    """The write attempt_grade makes for a finished run of the examples (no sandbox here)."""
    Attempt.objects.filter(id=attempt.id).update(
        status=Attempt.Status.GRADED, verdict={"valid": True, "correct": None, "score": 0.0, "feedback": feedback},
        correct=None, score=0.0, graded_at=timezone.now(),
    )


# --- The service ---------------------------------------------------------------------------

def test_run_queues_an_examples_attempt_linked_to_the_question(coding, candidate, runnable_code_question,
                                                               django_capture_on_commit_callbacks):
    source = code_solution(runnable_code_question)
    with django_capture_on_commit_callbacks() as queued:
        result = run(coding, candidate, source)
    attempt = result.attempt
    assert (attempt.purpose, attempt.status, attempt.user, attempt.answer) == (
        Attempt.Purpose.EXAMPLES, Attempt.Status.QUEUED, candidate, source)
    assert attempt.variant_seed == question_of(coding).variant_seed
    assert InterviewAttempt.objects.get(attempt=attempt).question == question_of(coding)
    assert len(queued) == 1  # its grading task, sent once the link is committed with it
    event = InterviewEvent.objects.get(kind=Kind.CODE_RUN)
    assert event.data == {"source": source, "valid": True, "feedback": "", "attempt_id": attempt.id}
    assert (event.actor, event.question, event.part_id) == (candidate, question_of(coding), "keep")


def test_unreadable_code_runs_nothing_but_is_recorded(coding, candidate):
    result = run(coding, candidate, UNREADABLE)
    assert result.attempt is None and not result.valid and "Syntax error" in result.feedback
    assert not Attempt.objects.exists()
    event = InterviewEvent.objects.get(kind=Kind.CODE_RUN)
    assert event.data == {"source": UNREADABLE, "valid": False, "feedback": result.feedback, "attempt_id": None}


def test_runs_share_the_sandbox_rate_limit_with_every_code_submission(coding, candidate, runnable_code_question):
    source = code_solution(runnable_code_question)
    for attempt in range(grading_services.MAX_UNFINISHED_RUNS):
        assert run(coding, candidate, source + f"\n# run {attempt}\n").attempt is not None
    refused = run(coding, candidate, source + "\n# one more\n")
    assert refused.refused and "being graded" in refused.feedback
    assert Attempt.objects.count() == grading_services.MAX_UNFINISHED_RUNS
    last = InterviewEvent.objects.filter(kind=Kind.CODE_RUN).latest("sequence")
    assert last.data["attempt_id"] is None and last.data["valid"] and "being graded" in last.data["feedback"]


def test_a_run_after_the_deadline_is_refused_and_runs_nothing(coding, candidate, runnable_code_question):
    services.move_deadline(interview=coding, deadline=timezone.now() - timedelta(seconds=1))
    with pytest.raises(services.InterviewClosed):
        run(coding, candidate, code_solution(runnable_code_question))
    assert not Attempt.objects.exists() and not InterviewEvent.objects.filter(kind=Kind.CODE_RUN).exists()


def test_only_the_candidate_can_run(coding, interviewer, other_candidate, runnable_code_question):
    for user in (interviewer, other_candidate):
        with pytest.raises(services.InterviewRefused):
            run(coding, user, code_solution(runnable_code_question))
    assert not Attempt.objects.exists()


def test_a_run_is_never_the_answer(coding, candidate, runnable_code_question):
    attempt = run(coding, candidate, code_solution(runnable_code_question)).attempt
    finish_as_grading_does(attempt)
    (room_part,) = selectors.room(coding, question_of(coding))["parts"]
    assert room_part.attempt is None and room_part.run_attempt == attempt
    (score,) = selectors.question_scores(coding)
    (part,) = score.parts
    assert (part.attempt, part.answers) == (None, 0)


@pytest.mark.sandbox
@needs_sandbox
def test_a_run_is_graded_on_the_examples_in_the_sandbox(coding, candidate, runnable_code_question):
    attempt = run(coding, candidate, code_solution(runnable_code_question, "wrong_answer")).attempt
    graded = grading_services.attempt_grade(attempt.id)
    assert (graded.status, graded.correct, graded.score) == (Attempt.Status.GRADED, None, 0.0)
    assert "passed: three distinct logits" in graded.verdict["feedback"]
    assert not InterviewEvent.objects.filter(kind=Kind.VERDICT).exists()  # not an answer: no verdict
    assert not Progress.objects.filter(user=candidate).exists()


# --- The room ------------------------------------------------------------------------------

def test_run_by_htmx_shows_the_polling_partial_then_the_result(client, login_as, coding, candidate,
                                                               runnable_code_question):
    login_as(candidate)
    response = client.post(run_url(coding), {"answer": code_solution(runnable_code_question)}, **HTMX)
    attempt = Attempt.objects.get()
    body = response.content.decode()
    assert response.status_code == 200 and "HX-Request" in response["Vary"]
    assert 'id="code-run-keep"' in body and 'data-run="pending"' in body
    assert status_url(coding, attempt) in body  # it polls this attempt
    still_queued = client.get(status_url(coding, attempt), **HTMX)
    assert still_queued.status_code == 200 and 'data-run="pending"' in still_queued.content.decode()
    finish_as_grading_does(attempt)
    done = client.get(status_url(coding, attempt), **HTMX)
    assert done.status_code == 286  # polling ends
    assert 'data-run="examples"' in done.content.decode() and "passed: a tie at the cutoff" in done.content.decode()
    assert 'id="verdict-keep"' not in done.content.decode()  # the answer's slot is left alone


@pytest.mark.sandbox
@needs_sandbox
def test_run_in_the_room_shows_the_sandbox_result(client, login_as, coding, candidate, runnable_code_question):
    login_as(candidate)
    client.post(run_url(coding), {"answer": code_solution(runnable_code_question)}, **HTMX)
    attempt = Attempt.objects.get()
    grading_services.attempt_grade(attempt.id)
    done = client.get(status_url(coding, attempt), **HTMX)
    assert done.status_code == 286
    assert "passed: three distinct logits" in done.content.decode()


def test_unreadable_code_is_answered_at_once(client, login_as, coding, candidate):
    login_as(candidate)
    response = client.post(run_url(coding), {"answer": UNREADABLE}, **HTMX)
    assert response.status_code == 200 and 'data-run="unreadable"' in response.content.decode()
    assert "Syntax error" in response.content.decode() and not Attempt.objects.exists()


def test_a_rate_limited_run_says_why(client, login_as, coding, candidate, runnable_code_question):
    source = code_solution(runnable_code_question)
    for attempt in range(grading_services.MAX_UNFINISHED_RUNS):
        run(coding, candidate, source + f"\n# run {attempt}\n")
    login_as(candidate)
    response = client.post(run_url(coding), {"answer": source}, **HTMX)
    assert response.status_code == 200 and 'data-run="refused"' in response.content.decode()
    assert "being graded" in response.content.decode()


def test_a_run_on_a_part_that_is_not_code_says_why(client, login_as, interviewer, decode_question, candidate):
    interview = start(make_interview(interviewer, decode_question), candidate)
    login_as(candidate)
    response = client.post(reverse("interview-run", args=[interview.id, 1, "floor"]), {"answer": "x"}, **HTMX)
    assert response.status_code == 200 and 'data-run="refused"' in response.content.decode()
    assert client.post(reverse("interview-run", args=[interview.id, 1, "floor"]), {"answer": "x"}).status_code == 400


def test_a_run_without_htmx_goes_back_to_the_room_which_shows_it(client, login_as, coding, candidate,
                                                                 runnable_code_question):
    login_as(candidate)
    response = client.post(run_url(coding), {"answer": code_solution(runnable_code_question)})
    assert response.status_code == 302
    attempt = Attempt.objects.get()
    finish_as_grading_does(attempt)
    room = client.get(response["Location"]).content.decode()
    assert 'data-run="examples"' in room and "passed: temperature zero" in room
    assert "Run the visible examples" in room


def test_nobody_else_can_run_or_read_a_run(client, login_as, coding, candidate, other_candidate, interviewer,
                                           runnable_code_question):
    attempt = run(coding, candidate, code_solution(runnable_code_question)).attempt
    for user in (other_candidate, interviewer):
        login_as(user)
        assert client.post(run_url(coding), {"answer": "def top_p_keep(): ..."}, **HTMX).status_code == 404
        assert client.get(status_url(coding, attempt), **HTMX).status_code == 404
    assert Attempt.objects.count() == 1


# --- The panel -----------------------------------------------------------------------------

def test_the_live_timeline_follows_a_run_until_it_is_done(client, login_as, coding, candidate, interviewer,
                                                          runnable_code_question):
    attempt = run(coding, candidate, code_solution(runnable_code_question)).attempt
    coding.refresh_from_db()
    login_as(interviewer)
    monitor = client.get(reverse("interview-monitor", args=[coding.id])).content.decode()
    assert 'data-run="pending"' in monitor and "grading=1" in monitor  # it keeps asking while the run waits
    url = reverse("interview-timeline", args=[coding.id])
    # nothing new to a page not waiting
    assert client.get(url, {"after": coding.last_sequence}, **HTMX).status_code == 204
    finish_as_grading_does(attempt)
    poll = client.get(url, {"after": coding.last_sequence, "grading": "1"}, **HTMX)
    body = poll.content.decode()
    assert poll.status_code == 200 and 'data-run="graded"' in body and "passed: a tie at the cutoff" in body
    assert "grading=1" not in body  # back to asking for new events only


def test_transcript_and_exports_show_what_ran_and_what_happened(client, login_as, coding, candidate, interviewer,
                                                                runnable_code_question):
    source = code_solution(runnable_code_question)
    finish_as_grading_does(run(coding, candidate, source).attempt)
    run(coding, candidate, UNREADABLE)
    login_as(interviewer)
    page = client.get(reverse("interview-transcript", args=[coding.id])).content.decode()
    assert "ran the visible examples" in page and "passed: temperature zero" in page
    assert "not run, the code does not read: Syntax error" in page
    assert "top_p_keep" in page  # the source that ran

    markdown = transcript.export_markdown(coding)
    assert "**Code run** Q1/keep (cand): ran the visible examples" in markdown
    assert "  passed: three distinct logits" in markdown and "  ```python" in markdown
    runs = [event for event in transcript.export_json(coding)["events"] if event["kind"] == Kind.CODE_RUN]
    assert runs[0]["attempt"]["purpose"] == "examples" and "passed" in runs[0]["attempt"]["feedback"]
    assert runs[0]["data"]["source"] == source
    assert "attempt" not in runs[1] and runs[1]["data"]["valid"] is False
