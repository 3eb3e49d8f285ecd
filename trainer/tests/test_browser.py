"""End to end in a real browser: sign up, answer, see the verdict arrive, log out.

A real Celery worker (in a thread, on the in-memory broker) grades the answers: the page
only sees the verdict if the task was queued on commit and the worker stored it.
"""

import pytest

from grading.models import Attempt

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _reference(version, seed):
    import grading
    from questions.variants import draw_variant

    question = version.as_question()
    kind = grading.get_kind("numeric")
    return kind.reference_answer(kind.load_spec(question.part("floor").raw), draw_variant(question, seed).context)


def test_sign_up_answer_and_log_out(live_server, page, decode_question, grading_worker):
    page.goto(f"{live_server.url}/accounts/signup/")
    page.fill("#id_username", "browser-candidate")
    page.fill("#id_password1", "roofline-ridge-295")
    page.fill("#id_password2", "roofline-ridge-295")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/questions/")

    page.click("text=Decode floor (test question)")
    page.wait_for_url("**/questions/test-decode-floor/")
    page.evaluate("window.__no_reload_marker = 42")

    answer_box = page.locator("#part-floor input[name=answer]")
    answer_box.fill("12 GB")
    page.locator("#interpretation-floor").get_by_text("time").wait_for()  # live reading: wrong dimension
    page.locator("#part-floor button[type=submit]").click()
    page.locator('#verdict-floor [data-verdict="invalid"]').wait_for()
    assert Attempt.objects.count() == 0  # unreadable: no attempt used

    answer_box.fill("1000 ms")
    page.locator("#part-floor button[type=submit]").click()
    page.locator('#verdict-floor [data-verdict="wrong"]').wait_for()

    attempt = Attempt.objects.get()
    answer_box.fill(_reference(decode_question, attempt.variant_seed))
    page.locator("#part-floor button[type=submit]").click()
    page.locator('#verdict-floor [data-verdict="correct"]').wait_for()
    assert page.evaluate("window.__no_reload_marker") == 42  # verdicts arrived without a reload
    assert Attempt.objects.filter(correct=True).count() == 1

    page.click("text=Log out")
    page.wait_for_url(f"{live_server.url}/accounts/login/")
    page.goto(f"{live_server.url}/questions/")
    assert "/accounts/login/" in page.url

    page.fill("#id_username", "browser-candidate")
    page.fill("#id_password", "roofline-ridge-295")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/questions/")
    assert page.locator(".status-solved").count() == 1
