"""The practice page lists a code part's visible examples (inputs and expected output)
before any run, and a run of them shows each example's result beside its name."""

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from grading import services
from grading.judge.contract import load_judge
from grading.models import Attempt
from questions.loader import load_file
from questions.tests.factories import store_version

HTMX = {"HTTP_HX_REQUEST": "true"}
BANK_FILE = "questions/bank/speculative/119-top-p-sampler.yaml"
KERNEL_FILE = "questions/bank/kernels/123-looped-softmax-vocab.yaml"
FIRST_CALL = "top_p_keep(np.array([[2.0, 1.0, 0.0]], dtype=np.float32), p=0.7, temperature=1.0)"
A_TIE_RESULT = "array([[ True,  True,  True, False]])  # the three tied tokens stand or fall together"


@pytest.fixture
def sampler_question(db):
    return store_version(load_file(BANK_FILE).data)


def page(client, version) -> str:
    response = client.get(reverse("question-detail", args=[version.question.slug]))
    assert response.status_code == 200
    return response.content.decode()


def examples_run(user, version, verdict: dict) -> Attempt:
    """A finished run of the visible examples, written as the grading service writes it."""
    attempt = services.attempt_submit(user=user, version=version, part_id="keep", seed=1, answer="def top_p_keep(): 0",
                                      purpose=Attempt.Purpose.EXAMPLES).attempt
    Attempt.objects.filter(id=attempt.id).update(status=Attempt.Status.GRADED, verdict=verdict, correct=None,
                                                 score=0.0, graded_at=timezone.now())
    return attempt


def test_the_page_shows_each_examples_inputs_and_expected_output_before_any_run(client, login_as, candidate,
                                                                               sampler_question):
    login_as(candidate)
    body = page(client, sampler_question)
    assert 'id="examples-keep"' in body
    table = body[body.index('id="examples-keep"'):body.index("</table>", body.index('id="examples-keep"'))]
    for name in ("three distinct logits", "a tie at the cutoff", "temperature zero"):
        assert f'<th scope="row">{name}</th>' in table
    assert f"<code>{FIRST_CALL}</code>" in table
    assert f"<code>{A_TIE_RESULT}</code>" in table
    assert body.index('id="examples-keep"') < body.index('name="answer"')  # above the editor
    assert not Attempt.objects.exists()  # shown without running anything


def test_the_page_shows_no_hidden_case(client, login_as, candidate, sampler_question):
    login_as(candidate)
    body = page(client, sampler_question)
    judge = load_judge("speculative/119-top-p-sampler.judge.py", "keep")
    # Some hidden cases are named in the prompt's own words ("p = 1 on a 128K vocabulary"),
    # which the page shows anyway; the others must not appear.
    public = sampler_question.as_question().parts[0].prompt
    hidden = {case.name for seed in (1, 2) for case in judge.hidden_cases(np.random.default_rng(seed))}
    only_hidden = {name for name in hidden if name not in public}
    assert {"random logits, vocabulary 1000", "temperature 0, with tied maxima"} <= only_hidden
    assert [name for name in only_hidden if name in body] == []


def test_an_examples_run_shows_each_examples_result_beside_its_name(client, login_as, candidate, sampler_question):
    attempt = examples_run(candidate, sampler_question, {
        "valid": True, "correct": None, "score": 0.0, "mistake": "wrong_answer",
        "feedback": "passed: three distinct logits\nwrong answer: a tie at the cutoff (...)",
        "examples": [
            {"name": "three distinct logits", "outcome": "passed", "got": "array([[ True,  True, False]])",
             "expected": "array([[ True,  True, False]])", "detail": ""},
            {"name": "a tie at the cutoff", "outcome": "wrong_answer", "got": "array([[ True, False, False, False]])",
             "expected": "array([[ True,  True,  True, False]])", "detail": "the result differs at 2 of 4 entries"},
            {"name": "temperature zero", "outcome": "runtime_error", "got": "",
             "expected": "array([[False,  True,  True, False]])", "detail": "ZeroDivisionError: division by zero"},
        ]})
    login_as(candidate)
    poll = client.get(reverse("attempt-status", args=[attempt.id]), **HTMX)
    body = poll.content.decode()
    assert poll.status_code == 286 and 'data-verdict="examples"' in body
    assert '<li data-example="three distinct logits" data-outcome="passed">' in body
    assert "passed: three distinct logits" in body
    tie = body[body.index('data-example="a tie at the cutoff"'):body.index('data-example="temperature zero"')]
    assert "wrong answer: a tie at the cutoff" in tie
    assert "<dt>Got</dt><dd><code>array([[ True, False, False, False]])</code></dd>" in tie
    assert "<dt>Expected</dt><dd><code>array([[ True,  True,  True, False]])</code></dd>" in tie
    assert "the result differs at 2 of 4 entries" in tie
    crash = body[body.index('data-example="temperature zero"'):]
    assert "runtime error: temperature zero" in crash and "ZeroDivisionError" in crash
    assert "<dt>Got</dt>" not in crash


def test_a_run_without_per_example_results_shows_its_feedback(client, login_as, candidate, sampler_question):
    attempt = examples_run(candidate, sampler_question, {
        "valid": True, "correct": None, "score": 0.0, "feedback": "Time limit: the run took longer than 20 s"})
    login_as(candidate)
    body = client.get(reverse("attempt-status", args=[attempt.id]), **HTMX).content.decode()
    assert "Time limit: the run took longer than 20 s" in body and "data-outcome" not in body


def test_a_kernel_part_without_visible_examples_lists_none(client, login_as, candidate, db):
    version = store_version(load_file(KERNEL_FILE).data)
    login_as(candidate)
    body = page(client, version)
    assert 'name="answer"' in body and 'data-examples="visible"' not in body
