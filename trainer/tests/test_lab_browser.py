"""A lab question in a real browser: the page shows its table and timelines, and a
download link serves a trace that parses as Chrome trace-event JSON."""

import json

import pytest

from conftest import PASSWORD
from questions.loader import BANK_DIR
from questions.services import question_save_text

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAB_PATH = BANK_DIR / "debugging" / "114-cold-schema-warm-batch-traces.yaml"


def test_the_lab_page_shows_its_data_and_downloads_a_trace(live_server, page, candidate):
    result = question_save_text(LAB_PATH.read_text(), origin="file", source_path=str(LAB_PATH))
    assert result.version is not None, result.problems
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", candidate.username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/questions/")

    page.goto(f"{live_server.url}/questions/cold-schema-warm-batch-traces/")
    page.locator("#artifact-warm-steps table tbody tr").first.wait_for()
    assert page.locator("#artifact-warm-steps table tbody tr").count() == 20
    timeline = page.locator("#artifact-warm-batch svg.trace-timeline")
    assert timeline.is_visible() and timeline.locator("rect.span").count() > 100

    link = page.locator("#artifact-warm-batch a[download]")
    with page.expect_download() as download_info:
        link.click()
    assert download_info.value.suggested_filename == "warm-batch.json"
    response = page.request.get(live_server.url + link.get_attribute("href"))
    assert response.ok and response.headers["content-type"] == "application/json"
    trace = json.loads(response.body())
    assert any(event["ph"] == "X" and event["name"] == "forward" for event in trace["traceEvents"])
