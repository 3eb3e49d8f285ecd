"""Trusted judge for 116-disaggregated-handoff-token-arrival (part ``breakdown``): reviewed
code, never sent to the sandbox.

The hidden captures are the lab's own: each case runs the generator beside this file
(``116-...lab.py``) on another seed, through the question's own params, so the hidden
data is drawn exactly as a candidate's page draws it, and hands the candidate what the
page serves: the trace's ``traceEvents`` list as ``json.load`` reads it, the
decode-steps rows as dicts, the client log's lines and the wall-clock time of the
trace's ts 0 (from the trace's title). Three groups:

- ``trace``: a whole capture without the client log, so every token field is None;
- ``client``: a whole capture with the client log (the stalled stream and a healthy one);
- ``cut``: a capture that stops early, as a real one can: during the target's transfer
  tail (its last layer group still in flight), during its wait for a batch slot (KV
  landed, not admitted, no second token yet), and during a later request's prefill
  (routed, some groups sent, no prefill span yet). A span still open when the capture
  stops is not in it, and neither is a step row the engine had not written yet nor a
  line the client had not received: the fields those would give are None.

``breakdown`` is the reference (the statement's definitions, read from the data as
served). On every whole capture ``hidden_cases`` checks it against the generator's own
values for the stalled and the healthy request (prefill end, KV landed, admission, first
and second token), so the judge and the page's references cannot drift apart.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from pathlib import Path

from grading import variants as engine_variants
from grading.judge import Case, Judge
from questions.catalogue import load_catalogue
from questions.labs.generator import run_generator
from questions.loader import load_file
from questions.schema import Question

QUESTION_FILE = Path(__file__).with_name("116-disaggregated-handoff-token-arrival.yaml")
GENERATOR = "debugging/116-disaggregated-handoff-token-arrival.lab.py"
FIELDS = ("prefill_end", "kv_landed", "admitted", "first_token", "second_token")
LAYER_GROUPS = 8
CLOCK = "%H:%M:%S.%f"
TOLERANCE_MS = 0.0005  # every source time is a whole microsecond: half of one separates right from wrong
EPOCH_IN_TITLE = re.compile(r"ts 0 = (\d\d:\d\d:\d\d\.\d{6})")


# ---------------------------------------------------------------- the reference


def _clock_ms(stamp: str, epoch: str) -> float:
    delta = datetime.strptime(stamp, CLOCK) - datetime.strptime(epoch, CLOCK)
    return round(delta.total_seconds() * 1000, 3)


def breakdown(trace_events, step_rows, sse_lines, trace_epoch) -> dict:
    """Per request id (any a span's ``args.req`` or a client line names), in ms from the
    trace's ts 0: its prefill span's end, the end of the last of its eight kv_send spans
    (None unless all eight are there), the start of the step row that lists it under
    ``admitted``, and the arrival of its first and second token (SSE data events with
    content; the role-only event is not a token). None wherever the capture holds no
    such event."""
    found: dict[str, dict] = {}

    def entry(request_id):
        return found.setdefault(request_id, {"prefill": None, "sends": [], "admitted": None, "tokens": []})

    for event in trace_events:
        request_id = (event.get("args") or {}).get("req")
        if event.get("ph") != "X" or request_id is None:
            continue
        end = (event["ts"] + event["dur"]) / 1000
        if event["name"].startswith("prefill "):
            entry(request_id)["prefill"] = end
        elif event["name"].startswith("kv_send "):
            entry(request_id)["sends"].append(end)
        else:
            entry(request_id)
    for row in step_rows:
        for request_id in filter(None, (part.strip() for part in str(row["admitted"]).split(","))):
            slot = entry(request_id)
            if slot["admitted"] is None:
                slot["admitted"] = float(row["start_ms"])
    for line in sse_lines:
        stamp, request_id, rest = line.split(" ", 2)
        slot = entry(request_id)
        if rest.startswith("< data:") and '"content":""' not in rest and '"content":' in rest:
            slot["tokens"].append(_clock_ms(stamp, trace_epoch))
    result = {}
    for request_id, slot in found.items():
        sends, tokens = slot["sends"], sorted(slot["tokens"])
        result[request_id] = {
            "prefill_end": slot["prefill"],
            "kv_landed": max(sends) if len(sends) == LAYER_GROUPS else None,
            "admitted": slot["admitted"],
            "first_token": tokens[0] if tokens else None,
            "second_token": tokens[1] if len(tokens) > 1 else None,
        }
    return result


# ---------------------------------------------------------------- captures from the lab


@functools.lru_cache(maxsize=1)
def _question() -> Question:
    return Question.from_data(load_file(QUESTION_FILE).data)


def _lab(seed: int):
    """The generator's output for variant ``seed``, drawn as the page draws it (uncached:
    hidden captures must not crowd the pages' lab cache)."""
    question = _question()
    choices = engine_variants.draw_choices(question.params_spec, seed)
    context = engine_variants.build_context(question.params_spec, question.derived, choices, load_catalogue())
    return run_generator(GENERATOR, seed, choices, context)


def _capture(output) -> dict:
    """What the page serves, as the candidate's function receives it."""
    trace = output.artifact("handoff.json")
    steps = output.artifact("decode-steps.csv")
    log = output.artifact("client-sse.log")
    epoch = EPOCH_IN_TITLE.search(trace.title)
    if epoch is None:
        raise AssertionError("the trace's title no longer names the wall-clock time of ts 0")
    return {"events": trace.to_json()["traceEvents"],
            "rows": [dict(zip(steps.columns, row)) for row in steps.rows],
            "lines": list(log.lines), "epoch": epoch.group(1)}


def _cut(capture: dict, at_ms: float) -> dict:
    """The capture had it stopped at ``at_ms``: finished spans, written rows, received lines."""
    limit_us = at_ms * 1000
    events = [event for event in capture["events"]
              if event["ph"] != "X" or event["ts"] + event["dur"] <= limit_us]
    rows = [row for row in capture["rows"] if row["end_ms"] <= at_ms]
    lines = [line for line in capture["lines"] if _clock_ms(line.split(" ", 1)[0], capture["epoch"]) <= at_ms]
    return {**capture, "events": events, "rows": rows, "lines": lines}


def _ms(values, name: str) -> float:
    return float(str(values[name]).split()[0])


def _agrees_with_lab(output, reference: dict) -> None:
    """The reference for the stalled and the healthy request equals the generator's own
    measured values (the ones the numeric parts grade against)."""
    values = output.values
    target, healthy = reference[values["target"]], reference[values["healthy"]]
    wanted = {"prefill_end": _ms(values, "prefill_end"), "kv_landed": _ms(values, "kv_ready"),
              "admitted": _ms(values, "admit_start"), "first_token": _ms(values, "first_token"),
              "second_token": _ms(values, "second_token")}
    for name, value in wanted.items():
        if abs(target[name] - value) > TOLERANCE_MS:
            raise AssertionError(f"the reference's {name} for the target disagrees with the lab's value")
    gap = healthy["second_token"] - healthy["first_token"]
    if abs(gap - _ms(values, "healthy_gap")) > 2 * TOLERANCE_MS:
        raise AssertionError("the reference's healthy second-token gap disagrees with the lab's value")


def _landmarks(output, capture) -> dict:
    """Trace times (ms) the cuts are placed between: the stalled request's, and the
    prefill of the first request prefilled after it."""
    values = output.values
    prefills = sorted((event["ts"], event["dur"]) for event in capture["events"]
                      if event["ph"] == "X" and event["name"].startswith("prefill "))
    target_start = _ms(values, "prefill_start") * 1000
    later_start, later_duration = next((ts, dur) for ts, dur in prefills if ts > target_start)
    return {"first_token": _ms(values, "first_token"), "kv_ready": _ms(values, "kv_ready"),
            "admit_start": _ms(values, "admit_start"), "later_start": later_start / 1000,
            "later_end": (later_start + later_duration) / 1000}


# name: (the landmark after which, the one before which, how far between): each on every seed
CUTS = {
    "the capture stopped during the stalled request's transfer tail": ("first_token", "kv_ready", 0.5),
    "the capture stopped while the stalled request waited for a slot": ("kv_ready", "admit_start", 0.5),
    "the capture stopped during a later request's prefill": ("later_start", "later_end", 0.6),
}


def _case(name: str, group: str, capture: dict, with_client: bool = True) -> Case:
    lines = capture["lines"] if with_client else []
    return Case(name, group, (capture["events"], capture["rows"], lines, capture["epoch"]))


# ---------------------------------------------------------------- the visible examples

EXAMPLE_EPOCH = "12:00:00.000000"


def _example_capture() -> dict:
    """One request, r1: prefilled from 0.5 to 8.5 ms, its eight groups sent as each is
    computed (the last lands at 9.4 ms), its first token relayed at once; the batch is
    full at step 1, so it joins at step 2 (29.05 ms) and its second token comes after."""
    spans = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "router"}},
        {"name": "route r1", "ph": "X", "ts": 0, "dur": 300, "pid": 1, "tid": 1, "args": {"req": "r1"}},
        {"name": "prefill r1", "ph": "X", "ts": 500, "dur": 8000, "pid": 2, "tid": 7, "args": {"req": "r1"}},
        {"name": "relay first token r1", "ph": "X", "ts": 8600, "dur": 100, "pid": 1, "tid": 1,
         "args": {"req": "r1"}},
    ]
    spans += [{"name": f"kv_send r1 L{10 * group}-{10 * group + 9}", "ph": "X", "ts": 1500 + 1000 * group,
               "dur": 900, "pid": 2, "tid": 9, "args": {"req": "r1"}} for group in range(LAYER_GROUPS)]
    spans += [{"name": "schedule", "ph": "X", "ts": start, "dur": 300, "pid": 3, "tid": 2, "args": {"step": step}}
              for step, start in enumerate((9000, 19050, 29050))]
    columns = ("step", "start_ms", "end_ms", "batch", "waiting", "admitted", "finished", "kv_cache_usage_pct")
    rows = [dict(zip(columns, row)) for row in ((0, 9.0, 19.0, 64, 0, "", 0, 7.5),
                                                (1, 19.05, 29.0, 64, 1, "", 1, 7.5),
                                                (2, 29.05, 39.0, 64, 0, "r1", 0, 7.6))]
    lines = [f"12:00:00.{at:06d} r1 < data: " + '{"id":"r1","choices":[{"index":0,"delta":%s}]}' % delta
             for at, delta in ((900, '{"role":"assistant","content":""}'), (9100, '{"content":"The"}'),
                               (39800, '{"content":" answer"}'), (50200, '{"content":" is"}'))]
    lines.insert(0, "12:00:00.000100 r1 > POST /v1/chat/completions stream=true max_tokens=64")
    return {"events": spans, "rows": rows, "lines": lines, "epoch": EXAMPLE_EPOCH}


class BreakdownJudge(Judge):
    def examples(self):
        return [
            _case("one request: the first token relayed, a wait for a slot, then the second", "client",
                  _example_capture()),
            _case("the capture stopped at 9 ms, during the transfer tail: nothing invented", "cut",
                  _cut(_example_capture(), 9.0)),
        ]

    def hidden_cases(self, rng):
        cases = []
        for group, count in (("trace", 2), ("client", 2)):
            for number in range(count):
                output = _lab(int(rng.integers(0, 2**31)))
                capture = _capture(output)
                reference = breakdown(capture["events"], capture["rows"], capture["lines"], capture["epoch"])
                _agrees_with_lab(output, reference)
                cases.append(_case(f"a whole capture {number + 1}{'' if group == 'client' else ', no client log'}",
                                   group, capture, with_client=group == "client"))
        for name, (after, before, share) in CUTS.items():
            output = _lab(int(rng.integers(0, 2**31)))
            capture = _capture(output)
            times = _landmarks(output, capture)
            at_ms = round(times[after] + share * (times[before] - times[after]), 3)
            cases.append(_case(name, "cut", _cut(capture, at_ms)))
        return cases

    def reference(self, case):
        return breakdown(*case.args)

    def check(self, case, got, expected):
        if not isinstance(got, dict):
            return f"the result is a {type(got).__name__}, expected a dict keyed by request id"
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
        if missing or extra:
            return f"the request ids differ: missing {missing}, not in the capture {extra}"
        for request_id, wanted in expected.items():
            entry = got[request_id]
            if not isinstance(entry, dict) or set(entry) != set(FIELDS):
                return f"{request_id}: expected a dict with exactly the keys {list(FIELDS)}"
            for name in FIELDS:
                value, right = entry[name], wanted[name]
                if right is None or value is None:
                    if value is not right:
                        return f"{request_id} {name} is {value!r}, expected {right!r}"
                    continue
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    return f"{request_id} {name} is a {type(value).__name__}, expected a number of ms"
                if abs(value - right) > TOLERANCE_MS:
                    return f"{request_id} {name} is {value:.3f} ms, expected {right:.3f} ms"
        return None


JUDGES = {"breakdown": BreakdownJudge()}
