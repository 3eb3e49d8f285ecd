"""Lab 115: the graded values are what a candidate computes from the downloaded CSVs, and
every variant tells the story the question's choice parts rely on (the longest combine
on a rank below the mean load, the new placement faster overall and slower to
communicate, the balancer's prediction below what the batch sees)."""

import csv
import io
import json

import pytest

from questions.labs import generator as lab_generator
from questions.loader import BANK_DIR, load_file
from questions.schema import Question
from questions.variants import draw_variant

LAB_FILE = BANK_DIR / "parallelism" / "115-ep-combine-wait-placement-control.yaml"
SEEDS = range(24)  # the draw covers all four (gpu, tokens_per_rank) variants several times


@pytest.fixture(scope="module")
def labs():
    question = Question.from_data(load_file(LAB_FILE).data)
    out = []
    for seed in SEEDS:
        variant = draw_variant(question, seed)
        out.append(lab_generator.run_generator(question.generator, seed, variant.choices, variant.context))
    return out


def _rows(output, name):
    artifact = output.artifact(f"{name}.csv")
    return list(csv.DictReader(io.StringIO(artifact.to_bytes().decode())))


def _number(text) -> float:
    return float(str(text).split()[0])


def _from_downloads(output):
    """The candidate's arithmetic, from the CSV bytes alone (never the generator's internals)."""
    old, new = [0] * 8, [0] * 8
    for row in _rows(output, "expert-load"):
        old[int(row["rank_old"])] += int(row["tokens_routed"])
        new[int(row["rank_new"])] += int(row["tokens_routed"])
    spans = {}
    for row in _rows(output, "rank-spans"):
        times = {key: float(value) for key, value in row.items() if key.endswith("_ms")}
        spans.setdefault(row["replay"], {})[int(row["rank"])] = times
    full, control = spans["old full"], spans["old control"]
    duration = [full[r]["expert_end_ms"] - full[r]["expert_start_ms"] for r in range(8)]
    x_mean, y_mean = sum(old) / 8, sum(duration) / 8
    slope = (sum((x - x_mean) * (y - y_mean) for x, y in zip(old, duration))
             / sum((x - x_mean) ** 2 for x in old))
    combine = {r: full[r]["combine_end_ms"] - full[r]["combine_start_ms"] for r in range(8)}
    longest = max(combine, key=combine.get)

    def moe(replay):
        return (max(span["combine_end_ms"] for span in spans[replay].values())
                - min(span["dispatch_start_ms"] for span in spans[replay].values()))

    return {
        "old": old, "new": new, "longest": longest,
        "hot_ratio": max(old) / (sum(old) / 8),
        "slope_us": slope * 1e6,  # ms per token -> us per 1,000 tokens
        "wait_ms": combine[longest] - (control[longest]["combine_end_ms"] - control[longest]["combine_start_ms"]),
        "gain_ms": moe("old full") - moe("new full"),
        "comm_delta_ms": moe("new control") - moe("old control"),
    }


def test_every_graded_value_is_what_the_downloads_give(labs):
    for output in labs:
        measured, values = _from_downloads(output), output.values
        assert measured["longest"] == values["longest_rank"]
        assert measured["hot_ratio"] == pytest.approx(values["hot_ratio"], rel=1e-5)
        assert measured["slope_us"] == pytest.approx(_number(values["slope"]), rel=1e-5)
        for name in ("wait", "gain", "comm_delta"):
            assert measured[f"{name}_ms"] == pytest.approx(_number(values[name]), abs=1e-6)


def test_every_variant_tells_the_story_the_choices_rely_on(labs):
    for output in labs:
        measured, values = _from_downloads(output), output.values
        mean = sum(measured["old"]) / 8
        assert measured["old"][measured["longest"]] < mean  # "a lightly loaded rank"
        assert measured["gain_ms"] > 0 and measured["comm_delta_ms"] > 0  # faster, yet more bytes
        assert max(measured["new"]) / mean > values["predicted_ratio"]  # the prediction is not what the batch sees
        assert values["fanout_new"] > values["fanout_old"]


def test_the_chart_plots_the_routed_tokens_the_table_sums(labs):
    output = labs[0]
    old = _from_downloads(output)["old"]
    chart_rows = _rows(output, "tokens-vs-times")
    xs = sorted(int(float(row["x"])) for row in chart_rows if row["series"] == "old placement: grouped_gemm end")
    assert xs == sorted(old)


def test_each_replay_starts_at_its_first_gate_kernel(labs):
    """The statement and the rank-spans title put every replay on a clock from its first gate kernel."""
    for output in labs:
        for name in ("old-placement", "new-placement"):
            events = json.loads(output.artifact(f"{name}.json").to_bytes())["traceEvents"]
            for pid in (1, 2):
                gates = [event["ts"] for event in events if event.get("ph") == "X" and event["pid"] == pid
                         and event["name"] == "moe_gate"]
                assert min(gates) == 0
