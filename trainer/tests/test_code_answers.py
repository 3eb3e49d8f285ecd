"""Code answers through the same attempt path as every other answer: stored, graded by
the task in the sandbox, verdict on the page; running the examples is never scored."""


import pytest
from django.urls import reverse

from grading import services
from grading.models import Attempt
from grading.sandbox import sandbox_available
from questions.loader import load_file
from questions.tests.factories import store_version
from trainer.models import Progress

AVAILABLE, WHY_NOT = sandbox_available()
pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(not AVAILABLE, reason=f"sandbox: {WHY_NOT}")]
HTMX = {"HTTP_HX_REQUEST": "true"}
BANK_FILE = "questions/bank/speculative/119-top-p-sampler.yaml"


@pytest.fixture
def sampler_question(db):
    """The bank's top-p question, stored as it is (its solutions are checked by
    validate_questions already; storing skips running them again)."""
    return store_version(load_file(BANK_FILE).data)


def _code_part(version):
    return next(part for part in version.as_question().parts if part.kind == "code")


def _solution(part, verdict):
    return next(item["code"] for item in part.raw["solutions"] if item["verdict"] == verdict)


def test_accepted_and_wrong_code_get_their_verdicts(candidate, sampler_question):
    part = _code_part(sampler_question)
    right = services.attempt_submit(user=candidate, version=sampler_question, part_id=part.id, seed=1,
                                    answer=_solution(part, "accepted"))
    graded = services.attempt_grade(right.attempt.id)
    assert (graded.status, graded.correct, graded.score) == ("graded", True, 1.0)
    assert graded.verdict["mistake"] == "accepted"

    wrong_code = _solution(part, "wrong_answer")
    wrong = services.attempt_grade(services.attempt_submit(
        user=candidate, version=sampler_question, part_id=part.id, seed=1, answer=wrong_code).attempt.id)
    assert wrong.correct is False and wrong.verdict["mistake"] == "wrong_answer"
    assert wrong.verdict["feedback"]  # names the first failing case
    assert Progress.objects.get(user=candidate).attempted


def test_every_case_a_code_answer_ran_is_kept_and_shown(client, login_as, candidate, sampler_question):
    part = _code_part(sampler_question)
    wrong = services.attempt_grade(services.attempt_submit(
        user=candidate, version=sampler_question, part_id=part.id, seed=1,
        answer=_solution(part, "wrong_answer")).attempt.id)
    verdict = Attempt.objects.get(pk=wrong.pk).stored_verdict
    assert verdict.outcome in ("wrong", "partial") and verdict.cases
    assert any(case.visible for case in verdict.cases) and any(not case.visible for case in verdict.cases)
    failed = [case for case in verdict.cases if not case.passed]
    assert failed and all(case.detail for case in failed)
    assert verdict.cases_passed == len(verdict.cases) - len(failed)

    login_as(candidate)
    page = client.get(reverse("attempt-status", args=[wrong.pk]), **HTMX).content.decode()
    assert f"{verdict.cases_passed} of {len(verdict.cases)} tests passed" in page
    assert page.count('data-case-outcome="') == len(verdict.cases)


def test_running_the_examples_is_shown_but_never_scored(client, login_as, candidate, sampler_question):
    part = _code_part(sampler_question)
    login_as(candidate)
    response = client.post(reverse("run-examples", args=[sampler_question.question.slug, part.id]),
                           {"answer": _solution(part, "accepted")}, **HTMX)
    attempt = Attempt.objects.get()
    assert attempt.purpose == Attempt.Purpose.EXAMPLES
    assert "Grading" in response.content.decode()
    services.attempt_grade(attempt.id)
    poll = client.get(reverse("attempt-status", args=[attempt.id]), **HTMX)
    assert poll.status_code == 286 and 'data-verdict="examples"' in poll.content.decode()
    assert "passed" in poll.content.decode()
    assert not Progress.objects.filter(user=candidate).exists()


def test_examples_exist_only_for_code_parts(client, login_as, candidate, decode_question):
    login_as(candidate)
    response = client.post(reverse("run-examples", args=["test-decode-floor", "floor"]), {"answer": "1 ms"}, **HTMX)
    assert response.status_code == 400


def test_a_user_may_have_two_code_runs_in_flight(candidate, other_candidate, sampler_question):
    part = _code_part(sampler_question)
    code = _solution(part, "accepted")
    for run in range(services.MAX_UNFINISHED_RUNS):
        assert services.attempt_submit(user=candidate, version=sampler_question, part_id=part.id, seed=1,
                                       answer=code + f"\n# run {run}\n").attempt is not None
    refused = services.attempt_submit(user=candidate, version=sampler_question, part_id=part.id, seed=1,
                                      answer=code + "\n# one more\n")
    assert refused.attempt is None and not refused.verdict.valid
    assert "being graded" in refused.verdict.feedback
    # Another candidate is not held back by the first one's queue.
    assert services.attempt_submit(user=other_candidate, version=sampler_question, part_id=part.id, seed=1,
                                   answer=code).attempt is not None
