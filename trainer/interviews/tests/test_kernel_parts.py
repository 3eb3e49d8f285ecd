"""Kernel parts in an interview: the candidate writes the Triton kernel in the room's code
editor (typing recorded like a code part's), submits it, and it is graded as in practice
(under Triton's interpreter here, speed unmeasured; on a GPU worker when one is set up).
There is no Run: kernel parts have no visible examples."""

import pytest
from django.urls import reverse

from grading import services as grading_services
from grading.models import Attempt
from grading.sandbox import sandbox_available
from trainer.interviews import services
from trainer.interviews.models import InterviewEvent
from trainer.interviews.tests.conftest import code_solution, make_interview, start

Kind = InterviewEvent.Kind
HTMX = {"HTTP_HX_REQUEST": "true"}
AVAILABLE, WHY_NOT = sandbox_available()


@pytest.fixture
def kernel_interview(interviewer, kernel_question, candidate):
    return start(make_interview(interviewer, kernel_question), candidate)


def answer_url(interview):
    return reverse("interview-answer", args=[interview.id, 1, "kernel"])


def test_the_room_gives_a_kernel_part_the_code_editor_and_no_run(client, login_as, kernel_interview, candidate):
    login_as(candidate)
    page = client.get(reverse("interview-room", args=[kernel_interview.id]) + "?q=1").content.decode()
    assert "cannot be answered in an interview" not in page
    assert 'class="code"' in page and "@triton.jit" in page  # the starter
    assert reverse("interview-snapshot", args=[kernel_interview.id, 1, "kernel"]) in page
    assert reverse("interview-run", args=[kernel_interview.id, 1, "kernel"]) not in page


def test_typing_in_a_kernel_part_is_recorded(kernel_interview, candidate):
    question = kernel_interview.questions.get(position=1)
    assert services.code_snapshot(interview=kernel_interview, user=candidate, question=question, part_id="kernel",
                                  source="import triton\n")
    assert InterviewEvent.objects.filter(kind=Kind.CODE_SNAPSHOT, part_id="kernel").count() == 1


@pytest.mark.sandbox
@pytest.mark.skipif(not AVAILABLE, reason=f"sandbox: {WHY_NOT}")
def test_a_submitted_kernel_is_graded_like_practice(client, login_as, kernel_interview, candidate, kernel_question):
    login_as(candidate)
    response = client.post(answer_url(kernel_interview), {"answer": code_solution(kernel_question)}, **HTMX)
    assert response.status_code == 200
    attempt = Attempt.objects.get(part_kind="kernel", purpose=Attempt.Purpose.ANSWER)
    grading_services.attempt_grade(attempt.id)
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.GRADED and attempt.correct is True, attempt.verdict
    assert attempt.verdict["mistake"] == "speed_not_scored"  # no GPU here: correctness only
    assert InterviewEvent.objects.filter(kind=Kind.ANSWER, part_id="kernel").exists()
