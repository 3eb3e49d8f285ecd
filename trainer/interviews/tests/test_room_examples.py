"""The interview room lists a code part's visible examples before any run, and a run of
them shows each example's result beside its name (the same partial as practice)."""

import pytest
from django.urls import reverse
from django.utils import timezone

from grading.models import Attempt
from trainer.interviews import services
from trainer.interviews.tests.conftest import code_solution, make_interview, start

HTMX = {"HTTP_HX_REQUEST": "true"}
FIRST_CALL = "top_p_keep(np.array([[2.0, 1.0, 0.0]], dtype=np.float32), p=0.7, temperature=1.0)"
RUN_VERDICT = {
    "valid": True, "correct": None, "score": 0.0, "mistake": "wrong_answer",
    "feedback": "passed: three distinct logits\nwrong answer: a tie at the cutoff (...)\npassed: temperature zero",
    "examples": [
        {"name": "three distinct logits", "outcome": "passed", "got": "", "expected": "", "detail": ""},
        {"name": "a tie at the cutoff", "outcome": "wrong_answer", "got": "array([[ True, False, False, False]])",
         "expected": "array([[ True,  True,  True, False]])", "detail": "the result differs at 2 of 4 entries"},
        {"name": "temperature zero", "outcome": "passed", "got": "", "expected": "", "detail": ""},
    ],
}


@pytest.fixture
def coding(interviewer, runnable_code_question, candidate):
    return start(make_interview(interviewer, runnable_code_question), candidate)


def room(client, interview) -> str:
    return client.get(reverse("interview-room", args=[interview.id]) + "?q=1").content.decode()


def test_the_room_lists_the_visible_examples_above_the_editor(client, login_as, coding, candidate):
    login_as(candidate)
    body = room(client, coding)
    assert 'id="examples-keep"' in body
    assert '<th scope="row">a tie at the cutoff</th>' in body
    assert f"<code>{FIRST_CALL}</code>" in body
    assert "<code>array([[False,  True,  True, False]])</code>" in body  # temperature zero's expected output
    assert body.index('id="examples-keep"') < body.index('class="code"')


def test_a_finished_run_shows_each_examples_result_beside_its_name(client, login_as, coding, candidate,
                                                                   runnable_code_question):
    question = coding.questions.get(position=1)
    attempt = services.code_run(interview=coding, user=candidate, question=question, part_id="keep",
                                source=code_solution(runnable_code_question)).attempt
    Attempt.objects.filter(id=attempt.id).update(status=Attempt.Status.GRADED, verdict=RUN_VERDICT, correct=None,
                                                 score=0.0, graded_at=timezone.now())
    login_as(candidate)
    done = client.get(reverse("interview-attempt-status", args=[coding.id, attempt.id]), **HTMX)
    body = done.content.decode()
    assert done.status_code == 286 and 'data-run="examples"' in body
    assert '<li data-example="temperature zero" data-outcome="passed">' in body
    tie = body[body.index('data-example="a tie at the cutoff"'):body.index('data-example="temperature zero"')]
    assert 'data-outcome="wrong_answer"' in tie and "wrong answer: a tie at the cutoff" in tie
    assert "<dt>Got</dt><dd><code>array([[ True, False, False, False]])</code></dd>" in tie
    assert "<dt>Expected</dt><dd><code>array([[ True,  True,  True, False]])</code></dd>" in tie
    # The reloaded room shows the same run in its place.
    page = room(client, coding)
    assert '<li data-example="a tie at the cutoff" data-outcome="wrong_answer">' in page
