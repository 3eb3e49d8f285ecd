"""Scores a candidate can trust: a later worse answer keeps the solve, an answer after the
solution earns nothing, a double-click is one attempt, drafts survive a reload, and each
part lists its earlier answers."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

import grading
from grading import services
from grading.models import Attempt
from grading.verdict import Verdict
from questions.loader import load_file
from questions.tests.factories import store_version
from questions.variants import draw_variant
from trainer.models import Draft, Progress

HTMX = {"HTTP_HX_REQUEST": "true"}
SEED = 7
BANK_SAMPLER = "questions/bank/speculative/119-top-p-sampler.yaml"


def _on_variant(client, slug, seed=SEED):
    session = client.session
    session[f"variant:{slug}"] = seed
    session.save()


def _reference(version, seed=SEED):
    question = version.as_question()
    kind = grading.get_kind("numeric")
    return kind.reference_answer(kind.load_spec(question.part("floor").raw), draw_variant(question, seed).context)


def _answer_and_grade(client, answer):
    response = client.post(reverse("submit-answer", args=["test-decode-floor", "floor"]), {"answer": answer}, **HTMX)
    assert response.status_code == 200
    attempt = Attempt.objects.latest("id")
    services.attempt_grade(attempt.id)
    attempt.refresh_from_db()
    return attempt


@pytest.fixture
def sampler_question(db):
    return store_version(load_file(BANK_SAMPLER).data)


def test_solve_then_fail_keeps_the_solve(client, login_as, candidate, decode_question):
    login_as(candidate)
    _on_variant(client, "test-decode-floor")
    assert _answer_and_grade(client, _reference(decode_question)).correct
    assert not _answer_and_grade(client, "1 s").correct
    progress = Progress.objects.get(user=candidate)
    assert progress.solved and progress.part_scores == {"floor": 1.0}
    page = client.get(reverse("question-detail", args=["test-decode-floor"])).content.decode()
    assert 'id="solution"' in page and "Give up and show the solution" not in page  # still solved


def test_give_up_then_copy_the_answer_earns_nothing(client, login_as, candidate, decode_question):
    login_as(candidate)
    _on_variant(client, "test-decode-floor")
    client.post(reverse("give-up", args=["test-decode-floor"]))
    copied = _answer_and_grade(client, _reference(decode_question))
    assert copied.after_solution and copied.correct and copied.score == 0.0
    progress = Progress.objects.get(user=candidate)
    assert progress.attempted and not progress.solved and progress.part_scores == {}
    poll = client.get(reverse("attempt-status", args=[copied.id]), **HTMX).content.decode()
    assert 'data-mark="after-solution"' in poll and "no credit" in poll
    # A new variant closes the solution again: its answers count.
    client.post(reverse("new-variant", args=["test-decode-floor"]))
    _on_variant(client, "test-decode-floor", seed=SEED + 1)
    assert _answer_and_grade(client, _reference(decode_question, SEED + 1)).after_solution is False


def test_idk_and_every_box_ticked_does_not_reach_full_credit(client, login_as, candidate, decode_question):
    login_as(candidate)
    response = client.post(reverse("submit-answer", args=["test-decode-floor", "why"]), {"answer": "idk"}, **HTMX)
    assert 'data-verdict="invalid"' in response.content.decode() and "at least 8 words" in response.content.decode()
    assert not Attempt.objects.exists()  # nothing recorded, so no rubric and no model answer to tick against


def test_a_self_assessed_explanation_is_marked_and_left_out_of_mastery(client, login_as, candidate, decode_question):
    login_as(candidate)
    text = "Every step reads the whole KV cache, and launch gaps add host time between kernels."
    client.post(reverse("submit-answer", args=["test-decode-floor", "why"]), {"answer": text}, **HTMX)
    attempt = Attempt.objects.get()
    services.attempt_grade(attempt.id)
    response = client.post(reverse("self-assess", args=[attempt.id]), {"item": ["kv", "gaps"]}, **HTMX)
    assert 'data-mark="self-assessed"' in response.content.decode()
    progress = Progress.objects.get(user=candidate)
    assert progress.part_scores == {"why": 1.0} and not progress.solved
    dashboard = client.get(reverse("dashboard")).content.decode()
    assert 'data-topic="Roofline and hardware" data-value="0.000"' in dashboard  # did not move


def test_a_double_click_records_one_attempt(client, login_as, candidate, decode_question):
    login_as(candidate)
    url = reverse("submit-answer", args=["test-decode-floor", "floor"])
    first = client.post(url, {"answer": "1000 ms"}, **HTMX)
    second = client.post(url, {"answer": "1000 ms"}, **HTMX)
    assert first.status_code == second.status_code == 200
    assert Attempt.objects.count() == 1
    attempt = Attempt.objects.get()
    assert f'/attempts/{attempt.id}/' in second.content.decode()  # the second click polls the same attempt


def test_the_same_answer_later_or_a_different_one_is_a_new_attempt(candidate, decode_question):
    submit = dict(user=candidate, version=decode_question, part_id="floor", seed=SEED)
    first = services.attempt_submit(**submit, answer="1000 ms").attempt
    assert services.attempt_submit(**submit, answer="999 ms").attempt.id != first.id
    Attempt.objects.filter(id=first.id).update(created_at=timezone.now() - services.DUPLICATE_WINDOW - timedelta(1))
    assert services.attempt_submit(**submit, answer="1000 ms").attempt.id != first.id
    assert Attempt.objects.count() == 3


def test_a_failed_attempt_may_be_sent_again_at_once(candidate, decode_question):
    submit = dict(user=candidate, version=decode_question, part_id="floor", seed=SEED, answer="1000 ms")
    first = services.attempt_submit(**submit).attempt
    Attempt.objects.filter(id=first.id).update(status=Attempt.Status.FAILED)
    assert services.attempt_submit(**submit).attempt.id != first.id


def test_code_typed_is_kept_as_a_draft_and_restored_on_reload(client, login_as, candidate, sampler_question):
    login_as(candidate)
    slug = sampler_question.question.slug
    part_id = next(part.id for part in sampler_question.as_question().parts if part.kind == "code")
    draft = "def top_p_keep(logits, p, temperature):\n    return 'half-way there'\n"
    response = client.post(reverse("save-draft", args=[slug, part_id]), {"answer": draft})
    assert response.status_code == 204
    assert Draft.objects.get(user=candidate).text == draft
    page = client.get(reverse("question-detail", args=[slug])).content.decode()
    assert "return &#x27;half-way there&#x27;" in page and "data-has-drafts" in page
    # A new variant discards it (the page asks first: data-confirm-if-drafts).
    assert "data-confirm-if-drafts" in page
    client.post(reverse("new-variant", args=[slug]))
    assert not Draft.objects.exists()
    assert "half-way there" not in client.get(reverse("question-detail", args=[slug])).content.decode()


def test_only_program_parts_keep_drafts_and_only_for_their_owner(client, login_as, candidate, decode_question):
    login_as(candidate)
    response = client.post(reverse("save-draft", args=["test-decode-floor", "floor"]), {"answer": "1 ms"})
    assert response.status_code == 400 and not Draft.objects.exists()
    assert client.post(reverse("save-draft", args=["test-decode-floor", "nope"]), {"answer": "x"}).status_code == 404
    client.logout()
    assert client.post(reverse("save-draft", args=["test-decode-floor", "floor"]), {"answer": "x"}).status_code == 302


def test_each_part_lists_its_earlier_answers_and_code_can_be_restored(client, login_as, candidate, sampler_question):
    login_as(candidate)
    slug = sampler_question.question.slug
    question = sampler_question.as_question()
    part_id = next(part.id for part in question.parts if part.kind == "code")
    _on_variant(client, slug)
    for number in range(2):
        Attempt.objects.create(user=candidate, question_version=sampler_question, part_id=part_id, part_kind="code",
                               variant_seed=SEED, answer=f"def top_p_keep(l, p, t):\n    return {number}\n",
                               status=Attempt.Status.GRADED, correct=False, score=0.25 * number,
                               verdict=Verdict(valid=True, correct=False, score=0.25 * number,
                                               interpreted="Python, 2 lines", feedback="wrong answer: tie").to_dict())
    page = client.get(reverse("question-detail", args=[slug])).content.decode()
    assert "Your earlier answers (2)" in page
    assert page.count("Restore into the editor") == 2 and "return 0" in page and "return 1" in page
    assert "0.25" in page


def test_the_dashboard_states_the_scoring_model(client, login_as, candidate):
    login_as(candidate)
    page = client.get(reverse("dashboard")).content.decode()
    assert 'id="scoring-model"' in page
    for phrase in ("best graded score", "opened the solution", "self-assessed", "FSRS", "Easy"):
        assert phrase in page


def test_speed_that_was_not_measured_is_said_so_beside_the_verdict():
    from django.template.loader import render_to_string

    not_measured = {"status": "not_measured", "share": 0.0, "passed": False, "reason": "no GPU on this grader"}
    html = render_to_string("kinds/speed_check.html", {"speed": not_measured})
    assert 'data-speed="not_measured"' in html and "Speed not measured here (no GPU on this grader)" in html
    assert "not part of this score" in html
    measured = {"status": "measured", "share": 0.5, "passed": True, "reason": "3.1 TB/s, 78% of peak"}
    assert "Speed passed (50% of the part)" in render_to_string("kinds/speed_check.html", {"speed": measured})
    assert render_to_string("kinds/speed_check.html", {"speed": None}).strip() == ""
