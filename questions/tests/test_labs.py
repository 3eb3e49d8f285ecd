"""Labs: generators are deterministic, artifacts have real shapes and display as
tables and timelines, and the lab question's references are measured from its data."""

import json
import re

import pytest

from questions.labs import EventLogArtifact, TableArtifact, TraceArtifact, TraceEvent, Track, render_artifact
from questions.labs import generator as lab_generator
from questions.labs.checks import generator_problems
from questions.labs.display import table_html, trace_svg
from questions.loader import BANK_DIR, load_file
from questions.rendering import render_question
from questions.schema import Question
from questions.validation import validate_file
from questions.variants import draw_variant

LAB_FILE = BANK_DIR / "debugging" / "114-cold-schema-warm-batch-traces.yaml"


@pytest.fixture(scope="module")
def lab_question():
    return Question.from_data(load_file(LAB_FILE).data)


def _fresh(question, seed):
    variant = draw_variant(question, seed)
    return lab_generator.run_generator(question.generator, seed, variant.choices, variant.context)


def test_the_same_variant_gives_the_same_bytes(lab_question):
    first, second = _fresh(lab_question, 42), _fresh(lab_question, 42)
    assert [a.to_bytes() for a in first.artifacts] == [a.to_bytes() for a in second.artifacts]
    assert dict(first.values) == dict(second.values)


def test_another_seed_gives_other_data(lab_question):
    assert _fresh(lab_question, 1).artifacts[2].to_bytes() != _fresh(lab_question, 2).artifacts[2].to_bytes()


def test_the_lab_question_validates():
    report = validate_file(LAB_FILE)
    assert [str(problem) for problem in report.problems] == []


def test_a_generator_that_draws_from_the_global_random_is_caught(tmp_path, monkeypatch, lab_question):
    path = tmp_path / "flaky.lab.py"
    path.write_text(
        "import random\n"
        "from questions.labs import EventLogArtifact, LabOutput\n"
        "def generate(variant):\n"
        "    return LabOutput((EventLogArtifact('log', [str(random.random())]),), {})\n"
    )
    monkeypatch.setattr(lab_generator, "generator_path", lambda relative: path)
    variant = draw_variant(lab_question, 0)
    problems = generator_problems(lab_question, [variant])
    assert problems and "not deterministic" in problems[0][1]


@pytest.mark.parametrize("body, words", [
    ("    if variant.seed % 25 == 3:\n        raise ValueError('no SLO between the policies')\n", "generate() fails"),
    ("    if variant.seed % 25 == 3:\n        return LabOutput((log,), {})\n", "appear on some seeds only"),
])
def test_a_generator_that_breaks_on_a_few_seeds_in_a_hundred_is_caught(tmp_path, monkeypatch, lab_question, body,
                                                                         words):
    path = tmp_path / "rare.lab.py"
    path.write_text(
        "from questions.labs import EventLogArtifact, LabOutput\n"
        "def generate(variant):\n"
        "    log = EventLogArtifact('log', [str(variant.rng.random())])\n"
        + body +
        "    return LabOutput((log,), {'x': 1.0})\n"
    )
    monkeypatch.setattr(lab_generator, "generator_path", lambda relative: path)
    problems = generator_problems(lab_question, [draw_variant(lab_question, 0)])
    assert problems and words in problems[0][1] and "[seed " in problems[0][1]


def test_the_stall_reference_is_measured_from_the_downloaded_trace(lab_question):
    variant = draw_variant(lab_question, 7)
    trace = json.loads(variant.lab.output.artifact("warm-batch.json").to_bytes())
    spans = [event for event in trace["traceEvents"] if event["ph"] == "X"]
    forwards = [event for event in spans if event["name"] == "forward"]
    applies = [event for event in spans if event["name"] == "apply_bitmask"]
    stalls = [apply["ts"] - (forward["ts"] + forward["dur"]) for forward, apply in zip(forwards, applies)]
    assert variant.context["lab"]["stall"].m_as("us") == pytest.approx(sum(stalls) / len(stalls), abs=1e-3)
    cold = json.loads(variant.lab.output.artifact("cold-schema.json").to_bytes())["traceEvents"]
    prefill = next(event for event in cold if event["name"] == "prefill")
    first_sample = min(event["ts"] for event in cold if event["name"] == "apply_bitmask+sample")
    exposed = first_sample - (prefill["ts"] + prefill["dur"])
    assert variant.context["lab"]["compile_exposed"].m_as("us") == pytest.approx(exposed, abs=1e-3)


def test_a_trace_is_chrome_trace_event_json_with_named_tracks():
    trace = TraceArtifact("t", [TraceEvent("forward", 10, 5, 2, 7, "kernel", {"step": 1})],
                          [Track(2, 7, "GPU 0", "stream 7")])
    data = json.loads(trace.to_bytes())
    assert data["traceEvents"][-1] == {"name": "forward", "ph": "X", "ts": 10, "dur": 5, "pid": 2, "tid": 7,
                                       "cat": "kernel", "args": {"step": 1}}
    assert {"name": "thread_name", "ph": "M", "pid": 2, "tid": 7, "args": {"name": "stream 7"}} in data["traceEvents"]
    assert trace.content_type == "application/json" and render_artifact(trace).filename == "t.json"


def test_the_svg_has_one_rect_per_span_with_its_title():
    events = [TraceEvent(f"span<{index}>", index * 100, 50, 1, index % 3) for index in range(9)]
    svg = trace_svg(TraceArtifact("t", events))
    assert len(re.findall(r"<rect class=\"span ", svg)) == 9
    assert svg.count("<title>") == 9 and "span&lt;3&gt;: 0.05 ms, from 0.3 ms to 0.35 ms" in svg
    assert svg.count('class="track-label"') == 3 and "ms</text>" in svg  # three tracks, a time axis


def test_a_table_is_an_html_table_and_csv():
    table = TableArtifact("steps", ("step", "note"), [(1, "a<b"), (2, None)])
    html = table_html(table)
    assert html.count("<tr>") == 3 and "a&lt;b" in html and '<td class="num">1</td>' in html
    assert table.to_bytes() == b"step,note\n1,a<b\n2,\n"
    assert table.content_type.startswith("text/csv")


def test_an_event_log_is_lines_of_text():
    log = EventLogArtifact("engine", ["09:00:00.001 INFO up", "09:00:00.002 WARN <slow>"])
    assert log.to_bytes() == b"09:00:00.001 INFO up\n09:00:00.002 WARN <slow>\n"
    assert "&lt;slow&gt;" in render_artifact(log).html


def test_the_rendered_question_carries_the_artifacts(lab_question):
    rendered = render_question(lab_question, 3)
    assert [artifact.filename for artifact in rendered.artifacts] == [
        "cold-schema.json", "cold-engine.log", "warm-batch.json", "warm-steps.csv"]
    assert rendered.artifact("warm-steps.csv").html.count("<tr>") == 21


def test_table_headers_are_buttons_a_script_sorts_by():
    html = table_html(TableArtifact("steps", ("step", "stall <us>"), [(1, 2.5)], title="Per step"))
    assert html.count('<button type="button" class="sort-button">') == 2
    assert ('<th scope="col" data-sort="1"><button type="button" class="sort-button">stall &lt;us&gt;</button>'
            "</th>") in html
    assert 'role="region" aria-label="Per step"' in html  # the scrolling box is reachable and named
