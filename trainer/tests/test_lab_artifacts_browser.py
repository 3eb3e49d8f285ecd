"""Every kind of lab artifact in real Chromium, as a candidate meets it: in practice and
in the interview room, the page shows it the way it is read (a table sorted from the
keyboard, a trace timeline, an event log, a chart) and its download link returns the
data itself (CSV, trace-event JSON, log text), with no Content-Security-Policy refusal.

Lab 114 carries the table, the traces and the log. No bank lab has a chart yet, so a
test-only question (its generator written to a temporary file) carries a line chart, a
histogram and a table whose numbers are written with units and thousands commas.
"""

import csv
import io
import json

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from conftest import log_in
from questions.labs import generator as lab_generator
from questions.loader import BANK_DIR
from questions.services import question_save_text
from questions.tests.factories import store_version
from trainer.interviews.tests.conftest import make_interview, start
from trainer.tests.csp_watch import assert_no_csp_violations, watch_csp

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAB_PATH = BANK_DIR / "debugging" / "114-cold-schema-warm-batch-traces.yaml"
LAB_URL = "/questions/cold-schema-warm-batch-traces/"
CHART_GENERATOR = "debugging/990-test-lab-chart.lab.py"
CHART_GENERATOR_SOURCE = '''
from questions.labs import ChartArtifact, LabOutput, Series, TableArtifact

BATCHES = (1, 2, 4, 8, 16, 32, 64)


def generate(variant):
    rng = variant.rng
    p50 = tuple((batch, round(8 + 0.21 * batch + rng.uniform(0, 0.4), 3)) for batch in BATCHES)
    p99 = tuple((batch, round(y * rng.uniform(1.3, 1.5), 3)) for batch, y in p50)
    stalls = [rng.uniform(1.0, 2.0) for _ in range(40)]
    counts = [sum(1 for stall in stalls if low <= stall < low + 0.25) for low in (1.0, 1.25, 1.5, 1.75)]
    return LabOutput((
        ChartArtifact("step-time", "batch size", "step time (ms)", (Series("p50", p50), Series("p99", p99)),
                      title="Step time by batch size"),
        ChartArtifact("stall-histogram", "stall (ms)", "steps",
                      (Series("steps", tuple(zip((1.0, 1.25, 1.5, 1.75), counts))),), style="bar"),
        TableArtifact("configs", ("config", "latency", "tokens"),
                      (("b", "3 s", "1,024"), ("a", "950 ms", "96"), ("c", "12.5 ms", "10,240"), ("d", None, "5"))),
    ), {"p50_at_64": f"{p50[-1][1]} ms"})
'''
CHART_QUESTION = {
    "slug": "test-lab-chart", "seed": 990, "title": "Step time by batch (test lab)", "topic": "debugging",
    "difficulty": 1, "summary": "Read a chart.", "statement": "The chart shows the decode step time.",
    "generator": CHART_GENERATOR,
    "parts": [{"id": "p50", "kind": "numeric", "prompt": "The p50 step time at batch 64?",
               "answer": "lab.p50_at_64", "unit": "ms"}],
    "solution": "Read the last p50 point.",
}


@pytest.fixture
def lab_version(db):
    result = question_save_text(LAB_PATH.read_text(), origin="file", source_path=str(LAB_PATH))
    assert result.version is not None, result.problems
    return result.version


@pytest.fixture
def chart_version(db, tmp_path, monkeypatch):
    """The test-only chart lab, its generator outside the bank: the live server runs in
    this process, so looking the generator up in the temporary folder reaches it."""
    path = tmp_path / "990-test-lab-chart.lab.py"
    path.write_text(CHART_GENERATOR_SOURCE)
    real_path = lab_generator.generator_path
    monkeypatch.setattr(lab_generator, "generator_path",
                        lambda relative: path if relative == CHART_GENERATOR else real_path(relative))
    return store_version(CHART_QUESTION, source_text="(test)")


def _download(page, base_url, figure):
    """The figure's download link, fetched with the page's session: (response, body)."""
    href = figure.locator("a.artifact-download").get_attribute("href")
    response = page.request.get(base_url + href)
    assert response.ok, (href, response.status)
    return response, response.body()


def _column(table, index):
    return table.locator(f"tbody tr td:nth-child({index + 1})").all_inner_texts()


def check_table_sorts_from_the_keyboard(page, base_url):
    """warm-steps: a scrolling box with a sticky header; Enter and Space on a header
    button sort by that column, by value, both ways, with aria-sort; the CSV is the rows."""
    figure = page.locator("#artifact-warm-steps")
    table = figure.locator("table.sortable")
    box = figure.locator(".artifact-table")
    assert box.evaluate("el => el.scrollHeight > el.clientHeight && getComputedStyle(el).overflowY === 'auto'")
    assert table.locator("th").first.evaluate("el => getComputedStyle(el).position") == "sticky"
    headers = table.locator("th")
    detokenize = headers.filter(has_text="detokenize_ms")
    before = [float(text) for text in _column(table, 9)]
    headers.first.locator("button").focus()
    for _ in range(9):  # from the first header to the tenth, as a keyboard user would
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "detokenize_ms"
    page.keyboard.press("Enter")
    expect(detokenize).to_have_attribute("aria-sort", "ascending")
    assert [float(text) for text in _column(table, 9)] == sorted(before)
    page.keyboard.press("Space")
    expect(detokenize).to_have_attribute("aria-sort", "descending")
    assert [float(text) for text in _column(table, 9)] == sorted(before, reverse=True)
    assert headers.first.get_attribute("aria-sort") == "none"
    response, body = _download(page, base_url, figure)
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(body.decode())))
    assert rows[0][:2] == ["step", "step_start_ms"] and len(rows) == 1 + table.locator("tbody tr").count()


def check_trace_timelines(page, base_url):
    for name in ("cold-schema", "warm-batch"):
        figure = page.locator(f"#artifact-{name}")
        timeline = figure.locator("svg.trace-timeline")
        expect(timeline).to_be_visible()
        assert timeline.get_attribute("role") == "img"
        response, body = _download(page, base_url, figure)
        assert response.headers["content-type"] == "application/json"
        spans = [event for event in json.loads(body)["traceEvents"] if event["ph"] == "X"]
        assert timeline.locator("rect.span").count() == len(spans) > 10


def check_event_log(page, base_url):
    figure = page.locator("#artifact-cold-engine")
    shown = figure.locator("pre.artifact-log")
    expect(shown).to_be_visible()
    response, body = _download(page, base_url, figure)
    assert response.headers["content-type"].startswith("text/plain")
    assert body.decode().splitlines() == shown.inner_text().splitlines()
    assert "grammar cache miss" in body.decode()


def check_charts(page, base_url):
    """The line chart and the histogram are SVG pictures whose points are the CSV's rows,
    each named on hover; the table sorts numbers with units and commas by value."""
    for name, marks in (("step-time", "circle.chart-point"), ("stall-histogram", "rect.chart-bar")):
        figure = page.locator(f"#artifact-{name}")
        chart = figure.locator("svg.lab-chart")
        expect(chart).to_be_visible()
        assert chart.get_attribute("role") == "img" and "against" in chart.get_attribute("aria-label")
        response, body = _download(page, base_url, figure)
        assert response.headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(body.decode())))
        assert list(rows[0]) == ["series", "x", "y"] and chart.locator(marks).count() == len(rows)
        last = rows[-1]
        title = chart.locator(f"{marks} title").last.text_content()
        assert title.startswith(f"{last['series']}: ") and f"= {float(last['y']):g}" in title
    step_time = page.locator("#artifact-step-time svg.lab-chart")
    assert step_time.locator("polyline").count() == 2 and step_time.locator(".legend-label").count() == 2
    box = step_time.bounding_box()
    assert box["width"] > 300 and box["height"] > 150  # drawn at a readable size, not collapsed

    table = page.locator("#artifact-configs table")
    table.locator("th button", has_text="latency").click()
    assert table.locator("tbody tr td:first-child").all_inner_texts() == ["c", "a", "b", "d"]  # empty last
    table.locator("th button", has_text="tokens").focus()
    page.keyboard.press("Enter")
    assert table.locator("tbody tr td:first-child").all_inner_texts() == ["d", "a", "b", "c"]


def test_practice_shows_every_artifact_type_and_downloads_its_data(live_server, page, candidate, lab_version,
                                                                   chart_version):
    found = watch_csp(page)
    log_in(page, live_server.url, candidate.username)
    page.goto(live_server.url + LAB_URL)
    check_table_sorts_from_the_keyboard(page, live_server.url)
    check_trace_timelines(page, live_server.url)
    check_event_log(page, live_server.url)
    page.goto(f"{live_server.url}/questions/{CHART_QUESTION['slug']}/")
    check_charts(page, live_server.url)
    assert_no_csp_violations(page, found)


def test_the_interview_room_shows_every_artifact_type_and_downloads_its_data(live_server, page, candidate,
                                                                             interviewer, lab_version,
                                                                             chart_version):
    interview = start(make_interview(interviewer, lab_version, chart_version), candidate)
    found = watch_csp(page)
    log_in(page, live_server.url, candidate.username)
    room = live_server.url + reverse("interview-room", args=[interview.id])
    page.goto(room + "?q=1")
    assert "/room/q1/artifacts/" in page.locator("#artifact-warm-steps a.artifact-download").get_attribute("href")
    check_table_sorts_from_the_keyboard(page, live_server.url)
    check_trace_timelines(page, live_server.url)
    check_event_log(page, live_server.url)
    page.goto(room + "?q=2")
    check_charts(page, live_server.url)
    assert_no_csp_violations(page, found)


def test_the_monitor_shows_the_candidates_artifacts_and_sorts_them(live_server, page, candidate, interviewer,
                                                                   lab_version):
    interview = start(make_interview(interviewer, lab_version), candidate)
    found = watch_csp(page)
    log_in(page, live_server.url, interviewer.username)
    page.goto(live_server.url + reverse("interview-monitor", args=[interview.id]))
    page.locator("details.card summary").first.click()
    table = page.locator("#artifact-warm-steps table")
    header = table.locator("th").nth(9)
    header.locator("button").click()
    expect(header).to_have_attribute("aria-sort", "ascending")
    values = [float(text) for text in _column(table, 9)]
    assert values == sorted(values) and len(values) == 20
    assert page.locator("a.artifact-download").count() == 0
    assert_no_csp_violations(page, found)
