"""Lab charts: a ChartArtifact is validated when built, served as long-form CSV byte for
byte, drawn as an SVG with ticks, labels, a legend and a hover title per point, and
covered by validation's determinism and display checks."""

import csv
import io
import math
import re

import pytest

from grading.kinds.base import SpecError
from questions.labs import ArtifactError, ChartArtifact, LabOutput, Series, TableArtifact, render_artifact
from questions.labs import generator as lab_generator
from questions.labs.charts import PALETTE, bar_width, chart_svg, nice_axis, tick_values
from questions.labs.checks import generator_problems
from questions.loader import BANK_DIR, load_file
from questions.schema import Question
from questions.variants import draw_variant

LAB_FILE = BANK_DIR / "debugging" / "114-cold-schema-warm-batch-traces.yaml"


def _latency_chart(style="line"):
    return ChartArtifact(
        "step-time", "batch size", "step time (ms)",
        (Series("p50", ((1, 10.5), (8, 12.25), (32, 19.0))), Series("p99", ((1, 14.0), (8, 17.5), (32, 31.125)))),
        style=style, title="Step time by batch",
    )


def test_a_chart_is_long_form_csv_with_the_table_number_format():
    chart = _latency_chart()
    assert chart.to_bytes() == (b"series,x,y\np50,1,10.5\np50,8,12.25\np50,32,19.0\n"
                                b"p99,1,14.0\np99,8,17.5\np99,32,31.125\n")
    rows = list(csv.DictReader(io.StringIO(chart.to_bytes().decode())))
    assert len(rows) == 6 and rows[-1] == {"series": "p99", "x": "32", "y": "31.125"}
    assert chart.to_bytes() == _latency_chart().to_bytes()
    rendered = render_artifact(chart)
    assert (rendered.filename, rendered.kind, rendered.content_type) == ("step-time.csv", "chart",
                                                                         "text/csv; charset=utf-8")
    assert rendered.data == chart.to_bytes()


@pytest.mark.parametrize("build, message", [
    (lambda: ChartArtifact("Bad Name", "x", "y", (Series("a", ((0, 1),)),)), "lowercase"),
    (lambda: ChartArtifact("c", "x", "y", ()), "at least one series"),
    (lambda: ChartArtifact("c", "x", "y", (Series("a", ((0, 1),)),), style="pie"), "not one of"),
    (lambda: Series("a", ()), "no points"),
    (lambda: Series("a", ((0, math.nan),)), "finite"),
    (lambda: Series("a", ((math.inf, 1),)), "finite"),
    (lambda: Series("a", ((0, "3 ms"),)), "use a number"),
    (lambda: Series("a", ((True, 1),)), "use a number"),
    (lambda: Series("a", ((0, 1, 2),)), "(x, y) pair"),
    (lambda: Series("", ((0, 1),)), "non-empty"),
    (lambda: ChartArtifact("c", "x", "y", (Series("a", ((2, 1), (1, 2))),)), "must ascend"),
    (lambda: ChartArtifact("c", "x", "y", (Series("a", ((1, 1), (1, 2))),), style="bar"), "two bars"),
    (lambda: ChartArtifact("c", "x", "y", (Series("a", ((0, 1),)), Series("a", ((0, 2),)))), "two series"),
    (lambda: ChartArtifact("c", "x", "y", ({"label": "a", "points": [(0, 1)]},)), "Series values"),
])
def test_a_malformed_chart_is_refused_when_built(build, message):
    with pytest.raises(ArtifactError, match=re.escape(message)):
        build()


def test_a_scatter_may_take_points_in_any_order_and_lists_become_tuples():
    chart = ChartArtifact("c", "x", "y", [Series("a", [[3, 1.5], [1, 2]])], style="scatter")
    assert chart.series[0].points == ((3, 1.5), (1, 2)) and isinstance(chart.series, tuple)


def test_nice_axes_end_on_whole_steps():
    assert nice_axis(0.3, 9.7) == (0, 10, 2)
    assert nice_axis(10.5, 31.125)[::2] == (10, 5)
    start, end, step = nice_axis(0.1, 0.3)
    assert tick_values(start, end, step) == pytest.approx([0.1, 0.15, 0.2, 0.25, 0.3])
    assert nice_axis(5, 5) == (4.4, 5.6, 0.2)  # a flat series still gets an axis
    assert nice_axis(3, 7, include_zero=True)[0] == 0


def test_the_line_chart_svg_has_axes_labels_legend_and_a_title_per_point():
    svg = chart_svg(_latency_chart())
    assert svg.startswith('<svg class="lab-chart"') and 'role="img"' in svg
    label = re.search(r'aria-label="([^"]*)"', svg).group(1)
    assert label == ("Step time by batch: line chart of step time (ms) against batch size; 2 series (p50, p99), "
                     "6 points, step time (ms) from 10.5 to 31.125")
    assert svg.count("<polyline") == 2 and svg.count("<circle") == 6 and svg.count("<title>") == 6
    assert "<title>p99: batch size = 32, step time (ms) = 31.125</title>" in svg
    assert '>batch size</text>' in svg and '>step time (ms)</text>' in svg
    assert svg.count('class="legend-swatch"') == 2 and f'fill="{PALETTE[1]}"' in svg
    y_ticks = re.findall(r'text-anchor="end">([^<]*)</text>', svg)
    assert y_ticks == ["10", "15", "20", "25", "30", "35"]


def test_a_single_series_has_no_legend_and_text_is_escaped():
    chart = ChartArtifact("c", "tokens <in>", "time & more", (Series("only", ((0, 1), (1, 2))),),
                          style="scatter")
    svg = chart_svg(chart)
    assert "legend" not in svg and "<polyline" not in svg and svg.count("<circle") == 2
    assert "tokens &lt;in&gt;" in svg and "time &amp; more" in svg and "<in>" not in svg


def test_histogram_bars_are_as_wide_as_the_smallest_bin_and_start_at_zero():
    chart = ChartArtifact("stall-histogram", "stall (us)", "steps",
                          (Series("steps", ((100, 3), (150, 7), (200, 0), (300, 2))),), style="bar")
    assert bar_width(chart) == 50
    svg = chart_svg(chart)
    bars = re.findall(r'<rect class="chart-bar" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"', svg)
    assert len(bars) == 4 and svg.count("<title>") == 4
    widths = {float(width) for _, _, width, _ in bars}
    assert len(widths) == 1  # every bin the same width
    bottoms = {round(float(y) + float(height), 0) for _, y, _, height in bars if float(height) > 1}
    assert len(bottoms) == 1  # every bar stands on y = 0
    assert "<title>steps: stall (us) = 150, steps = 7</title>" in svg


def test_bars_of_two_series_sit_side_by_side():
    chart = ChartArtifact("by-engine", "config index", "tokens/s",
                          (Series("A", ((0, 10), (1, 20))), Series("B", ((0, 15), (1, 5)))), style="bar")
    xs = [float(x) for x in re.findall(r'<rect class="chart-bar" x="([\d.]+)"', chart_svg(chart))]
    assert xs[0] < xs[2] < xs[1] < xs[3]  # A0, B0, A1, B1 from left to right


@pytest.fixture(scope="module")
def lab_question():
    return Question.from_data(load_file(LAB_FILE).data)


def _generator_file(tmp_path, monkeypatch, body):
    path = tmp_path / "chart.lab.py"
    path.write_text("import random\nfrom questions.labs import ChartArtifact, LabOutput, Series\n" + body)
    monkeypatch.setattr(lab_generator, "generator_path", lambda relative: path)


def test_validation_catches_a_chart_drawn_from_the_global_random(tmp_path, monkeypatch, lab_question):
    _generator_file(tmp_path, monkeypatch, (
        "def generate(variant):\n"
        "    points = tuple((x, random.random()) for x in range(5))\n"
        "    return LabOutput((ChartArtifact('noise', 'x', 'y', (Series('s', points),)),), {})\n"))
    problems = generator_problems(lab_question, [draw_variant(lab_question, 0)])
    assert problems and "not deterministic" in problems[0][1] and "'noise'" in problems[0][1]


def test_validation_passes_a_deterministic_chart(tmp_path, monkeypatch, lab_question):
    _generator_file(tmp_path, monkeypatch, (
        "def generate(variant):\n"
        "    rng = variant.rng\n"
        "    points = tuple((x, rng.uniform(1, 2)) for x in range(5))\n"
        "    return LabOutput((ChartArtifact('noise', 'x', 'y', (Series('s', points),), style='bar'),), {})\n"))
    assert generator_problems(lab_question, [draw_variant(lab_question, 0)]) == []


def test_validation_reports_a_chart_that_does_not_display(tmp_path, monkeypatch, lab_question):
    _generator_file(tmp_path, monkeypatch, (
        "def generate(variant):\n"
        "    chart = ChartArtifact('c', 'x', 'y', (Series('s', ((0, 1),)),))\n"
        "    object.__setattr__(chart, 'style', 'pie')  # past __post_init__, as a bug in the drawing would be\n"
        "    return LabOutput((chart,), {})\n"))
    problems = generator_problems(lab_question, [draw_variant(lab_question, 0)])
    assert problems and "does not display" in problems[0][1]


def test_a_chart_and_a_table_may_not_share_a_file_name():
    output = LabOutput((TableArtifact("x", ("a",), ((1,),)), ChartArtifact("x", "a", "b", (Series("s", ((0, 1),)),))))
    with pytest.raises(SpecError, match="two artifacts are called 'x.csv'"):
        lab_generator._checked(output)
