"""The site on a phone (the reviewers' 390 × 844 viewport), in Chromium: no page is wider
than the screen, wide content scrolls in its own box, and the header's "Log out" stays
on screen and clickable for a signed-in candidate."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 390, 844
# A bank question with a Markdown table and display math, the widest things a question holds.
TABLE_QUESTION = Path(__file__).resolve().parents[2] / "questions/bank/speculative/058-sampling-knob-order.yaml"


@pytest.fixture
def table_question(db):
    from questions.loader import load_text
    from questions.tests.factories import store_version

    text = TABLE_QUESTION.read_text()
    return store_version(load_text(text).data, source_text=text)


@pytest.fixture
def phone(browser, live_server, candidate):
    """A signed-in candidate's page in a 390 px wide viewport."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", candidate.username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/questions/")
    yield page
    context.close()


def _assert_fits_the_screen(page):
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"{page.url} is {width} px wide on a {WIDTH} px screen"


def _assert_log_out_reachable(page):
    log_out = page.get_by_role("button", name="Log out")
    assert log_out.is_visible()
    box = log_out.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, box
    log_out.click(trial=True)  # Playwright's checks that a click would land on it, without clicking


def test_question_list_fits_and_log_out_works(decode_question, table_question, phone, live_server):
    phone.goto(f"{live_server.url}/questions/")
    phone.locator("#question-table tbody tr").nth(1).wait_for()
    _assert_fits_the_screen(phone)
    _assert_log_out_reachable(phone)
    # The table is wider than the screen and scrolls inside its own box instead.
    box_scrolls = phone.evaluate(
        "(() => { const box = document.querySelector('#question-table').parentElement;"
        " return [box.className, box.scrollWidth > box.clientWidth]; })()")
    assert box_scrolls == ["table-scroll", True]
    phone.get_by_role("button", name="Log out").click()
    phone.wait_for_url(f"{live_server.url}/accounts/login/")


def test_dashboard_and_its_charts_fit(phone, live_server, candidate, decode_question):
    from trainer.models import MasterySnapshot

    for days_ago, value in [(12, 0.3), (2, 0.6)]:
        when = timezone.now() - timedelta(days=days_ago)
        MasterySnapshot.objects.create(user=candidate, day=when.date(), taken_at=when, mastery={"roofline": value})
    phone.goto(f"{live_server.url}/me/")
    phone.locator("#history-chart").wait_for()
    _assert_fits_the_screen(phone)
    _assert_log_out_reachable(phone)
    chart_width = phone.locator("#history-chart").bounding_box()["width"]
    assert chart_width < WIDTH  # scaled down to the card, not clipped


@pytest.mark.parametrize("slug", ["test-decode-floor", "sampling-knob-order"])
def test_question_pages_fit(phone, live_server, decode_question, table_question, slug):
    phone.goto(f"{live_server.url}/questions/{slug}/")
    phone.locator(".statement").wait_for()
    _assert_fits_the_screen(phone)
    _assert_log_out_reachable(phone)
