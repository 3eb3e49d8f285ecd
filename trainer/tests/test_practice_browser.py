"""A new candidate's practice session, end to end in Chromium with a real worker:
sign up, filter the bank, answer a numeric and a formula part (wrong, then right), take
a hint, read the solution, and see the topic scores move on the dashboard."""

import re

import pytest

from grading.models import Attempt

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _reference(version, part_id, seed):
    import grading
    from questions.variants import draw_variant

    question = version.as_question()
    part = question.part(part_id)
    kind = grading.get_kind(part.kind)
    return kind.reference_answer(kind.load_spec(part.raw), draw_variant(question, seed).context)


def _mastery(page, label):
    value = page.locator(f'.mastery-bar[data-topic="{label}"]').get_attribute("data-value")
    return float(value)


def _answer(page, part_id, text, verdict):
    page.locator(f"#part-{part_id} input[name=answer]").fill(text)
    page.locator(f"#part-{part_id} button[type=submit]").click()
    page.locator(f'#verdict-{part_id} [data-verdict="{verdict}"]').wait_for()


def test_new_candidate_practises_and_sees_scores_move(
    live_server, page, decode_question, kv_formula_question, grading_worker
):
    page.goto(f"{live_server.url}/accounts/signup/")
    page.fill("#id_username", "practice-candidate")
    page.fill("#id_password1", "ridge-point-295-flop")
    page.fill("#id_password2", "ridge-point-295-flop")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/questions/")

    page.goto(f"{live_server.url}/me/")
    assert _mastery(page, "KV cache and memory") == 0.0
    assert _mastery(page, "Roofline and hardware") == 0.0

    # Filtering is instant (htmx) and leaves a shareable URL.
    page.goto(f"{live_server.url}/questions/")
    page.select_option("select[name=topic]", "kv-cache")
    page.wait_for_url(re.compile(r".*topic=kv-cache.*"))
    page.locator("#results").get_by_text("KV bytes per token (test question)").wait_for()
    assert page.locator("#results").get_by_text("Decode floor (test question)").count() == 0

    # A formula part: wrong (a listed mistake), then right.
    page.click("text=KV bytes per token (test question)")
    page.locator("#part-kv input[name=answer]").fill("L*h*d*b")
    page.locator("#interpretation-kv math").wait_for()  # the reading, rendered as math
    page.locator("#part-kv button[type=submit]").click()
    page.locator('#verdict-kv [data-verdict="wrong"]').get_by_text("Keys and values are both cached").wait_for()
    _answer(page, "kv", "2*L*h*d*b", "correct")
    page.locator("#solution").wait_for()  # solved: the worked solution opens

    # A numeric part, after a hint: wrong, then right; the hint costs part of the score.
    page.goto(f"{live_server.url}/questions/test-decode-floor/")
    page.click("text=Show a hint")
    page.get_by_text("Every weight crosses HBM once per step.").wait_for()
    _answer(page, "floor", "1000 ms", "wrong")
    seed = Attempt.objects.filter(part_id="floor").latest("id").variant_seed
    _answer(page, "floor", _reference(decode_question, "floor", seed), "correct")
    page.reload()
    page.locator("#solution").get_by_text("Worked solution").wait_for()

    page.goto(f"{live_server.url}/me/")
    assert _mastery(page, "KV cache and memory") == pytest.approx(1.0, abs=0.01)
    assert _mastery(page, "Roofline and hardware") == pytest.approx(0.9, abs=0.01)  # one hint taken
