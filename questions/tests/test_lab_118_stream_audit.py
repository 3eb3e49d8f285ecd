"""Lab 118 (buffered-sse-stream-audit): the references are what a candidate measures from
the downloaded files, and the code part's judge agrees with the lab on the lab's own log."""

import csv
import importlib.util
import io
import json
import re

import numpy as np
import pytest

from questions.labs import generator as lab_generator
from questions.loader import BANK_DIR, load_file
from questions.schema import Question
from questions.variants import draw_variant

QUESTION_FILE = BANK_DIR / "debugging" / "118-buffered-sse-stream-audit.yaml"
JUDGE_FILE = BANK_DIR / "debugging" / "118-buffered-sse-stream-audit.judge.py"
LINE = re.compile(r"^\[\s*([0-9.]+) ms\] (.*)$")
SEEDS = (3, 17, 2024)


@pytest.fixture(scope="module")
def question():
    return Question.from_data(load_file(QUESTION_FILE).data)


def _lab(question, seed):
    variant = draw_variant(question, seed)
    return lab_generator.run_generator(question.generator, seed, variant.choices, variant.context)


def _file(output, name):
    return output.artifact(name).to_bytes().decode()


def _ms(text) -> float:
    return float(str(text).split()[0])


def _judge_module():
    spec = importlib.util.spec_from_file_location("judge_118", JUDGE_FILE)
    judge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(judge)
    return judge


def _token_events(log_text):
    """(receive time, tokens added) for each data chunk that adds tokens."""
    events, counted = [], 0
    for line in log_text.splitlines():
        received, sse = LINE.match(line).groups()
        if sse == "data: [DONE]":
            continue
        count = json.loads(sse.removeprefix("data: "))["usage"]["completion_tokens"]
        if count > counted:
            events.append((float(received), count - counted))
            counted = count
    return events


@pytest.mark.parametrize("seed", SEEDS)
def test_the_references_are_measured_from_the_downloaded_files(question, seed):
    output = _lab(question, seed)
    values = output.values
    client = {row["request"]: row for row in csv.DictReader(io.StringIO(_file(output, "client-ledger.csv")))}
    engine = {row["request"]: row for row in csv.DictReader(io.StringIO(_file(output, "engine-ledger.csv")))}
    traced = values["traced"]
    launch = float(client[traced]["launch_ms"])
    events = _token_events(_file(output, "traced-stream.log"))
    tokens = sum(added for _, added in events)
    assert _ms(values["ttft"]) == pytest.approx(events[0][0] - launch, abs=1e-6)
    assert _ms(values["launch_delay"]) == pytest.approx(float(engine[traced]["arrival_ms"]) - launch, abs=1e-6)
    assert _ms(values["tpot"]) == pytest.approx((events[-1][0] - events[0][0]) / (tokens - 1), abs=1e-6)
    gaps = [later[0] - earlier[0] for earlier, later in zip(events, events[1:])]
    assert _ms(values["max_wait"]) == pytest.approx(max(gaps), abs=1e-6)
    assert tokens == values["tokens"] == int(client[traced]["completion_tokens"])


@pytest.mark.parametrize("seed", SEEDS)
def test_the_stream_has_the_shapes_the_question_relies_on(question, seed):
    output = _lab(question, seed)
    values = output.values
    events = _token_events(_file(output, "traced-stream.log"))
    assert events[0][1] == 1  # the prefill's one token arrives alone
    assert values["multi_token_events"] > len(events) // 2  # speculation: most events carry several
    # The longest wait is the API server's pause, ended by the merged event.
    assert _ms(values["max_wait"]) == pytest.approx(
        _ms(values["before_gc"]) + _ms(values["gc"]) + _ms(values["after_gc"]), abs=1e-6)
    assert values["max_wait_tokens"] == values["biggest_event"]
    trace = json.loads(_file(output, "burst-timeline.json"))
    steps = [event for event in trace["traceEvents"] if event.get("name") == "step"]
    gc_start, gc_end = _ms(values["gc_start_ms"]) * 1000, (_ms(values["gc_start_ms"]) + _ms(values["gc"])) * 1000
    assert any(gc_start <= step["ts"] < gc_end for step in steps)  # the engine kept stepping


@pytest.mark.parametrize("seed", SEEDS)
def test_the_judge_reference_agrees_with_the_lab_on_its_own_log(question, seed):
    judge = _judge_module()
    output = _lab(question, seed)
    values = output.values
    audit = judge.audit(_file(output, "traced-stream.log").splitlines(), _ms(values["launch_ms"]))
    assert audit["ttft_ms"] == pytest.approx(_ms(values["ttft"]), abs=1e-6)
    assert audit["tpot_ms"] == pytest.approx(_ms(values["tpot"]), abs=1e-6)
    assert audit["max_wait_ms"] == pytest.approx(_ms(values["max_wait"]), abs=1e-6)
    assert len(audit["token_times_ms"]) == values["tokens"]


@pytest.mark.parametrize("seed", (3, 22, 79))  # 22 and 79 once had an event leave just after the pause began
def test_nothing_leaves_the_api_server_during_its_pause(question, seed):
    output = _lab(question, seed)
    values = output.values
    gc_start = _ms(values["gc_start_ms"])
    gc_end = gc_start + _ms(values["gc"])
    received = [float(LINE.match(line).group(1)) for line in _file(output, "traced-stream.log").splitlines()]
    assert not [at for at in received if gc_start <= at < gc_end]
    assert _ms(values["before_gc"]) >= 0  # the solution's "from the last event before the pause to its start"


def test_the_judge_takes_token_times_as_a_numpy_array_too():
    judge = _judge_module().JUDGES["audit_code"]
    case = judge.examples()[0]
    expected = judge.reference(case)
    as_array = {**expected, "token_times_ms": np.array(expected["token_times_ms"])}
    assert judge.check(case, as_array, expected) is None
    shifted = {**expected, "token_times_ms": np.array(expected["token_times_ms"]) + 1.0}
    assert judge.check(case, shifted, expected) is not None
