"""Trusted judge for 118-buffered-sse-stream-audit (part ``audit_code``): reviewed code,
never sent to the sandbox.

Each case is a client's capture of one streamed chat completion, in the lab's log
format (``[<received> ms] <SSE line>``), and the request's launch time. Every ``data:``
chunk carries ``usage.completion_tokens`` (vLLM's ``continuous_usage_stats``), the
only reliable token count: a chunk may carry no token (the role chunk, the final
usage chunk with ``"choices": []``), one token, several, or tokens without text (a
special token, or text a detokenizer holds back). The reference gives each token the
receive time of the chunk whose count first includes it, and nothing else.

Groups isolate one rule each, so a solution that breaks one rule fails that group only:

- ``metadata``: the role chunk arrives at acceptance, well before the first token,
  keep-alive comments come while the request waits, and the usage chunk comes late;
  every token event carries one token with text;
- ``multi_token``: chunks carry one to four tokens (accepted drafts), the first one
  included; the role chunk comes with the first token;
- ``silent_tokens``: some one-token chunks have empty text, the last one among them;
- ``edge``: a one-token stream (no TPOT, no wait), and a stream whose chunks often
  share one receive time (several SSE events in one socket read).
"""

import json
import re

import numpy as np

from grading.judge import Case, Judge

LINE = re.compile(r"^\[\s*(-?[0-9]+(?:\.[0-9]+)?) ms\] (.*)$")
WORDS = ["The", " cache", " hit", " rate", " depends", " on", " how", " often", " two", " requests", " share",
         " a", " prefix", ",", " and", " on", " how", " long", " the", " blocks", " stay", "."]


def audit(lines, launch_ms):
    """The reference: token times from the usage counts, then the three figures."""
    times, counted = [], 0
    for line in lines:
        received, sse = LINE.match(line).groups()
        if not sse.startswith("data: ") or sse == "data: [DONE]":
            continue
        count = json.loads(sse[len("data: "):])["usage"]["completion_tokens"]
        if count > counted:
            times += [float(received)] * (count - counted)
            counted = count
    many = len(times) > 1
    return {
        "token_times_ms": times,
        "ttft_ms": times[0] - launch_ms,
        "tpot_ms": (times[-1] - times[0]) / (len(times) - 1) if many else None,
        "max_wait_ms": max(later - earlier for earlier, later in zip(times, times[1:])) if many else None,
    }


def _chunk(choices, prompt, completion):
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return json.dumps({"id": "chatcmpl-7a1", "object": "chat.completion.chunk", "created": 1764601923,
                       "model": "meta-llama/Llama-3.1-8B-Instruct", "choices": choices, "usage": usage},
                      separators=(",", ":"))


def _line(received_us: int, sse: str) -> str:
    return f"[{received_us / 1000:10.3f} ms] {sse}"


def stream(events, prompt=512, launch_us=0, role_us=None, keepalives=(), usage_delay_us=0):
    """Capture lines for token events ``(received_us, tokens, text)``: the role chunk
    (at ``role_us``, or with the first token), keep-alive comments, the token chunks
    (the last with ``finish_reason``), the usage chunk and ``[DONE]`` (in the same
    socket read as the last token unless ``usage_delay_us`` says otherwise)."""
    first = events[0][0]
    role = [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}]
    lines = [(first if role_us is None else role_us, f"data: {_chunk(role, prompt, 0)}")]
    lines += [(at, ": keep-alive") for at in keepalives]
    completion = 0
    for number, (received, tokens, text) in enumerate(events):
        completion += tokens
        finish = None
        if number == len(events) - 1:
            finish = "length" if text else "stop"  # a last token without text: the end-of-turn token
        choice = [{"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": finish}]
        lines.append((received, f"data: {_chunk(choice, prompt, completion)}"))
    last = events[-1][0]
    lines.append((last + usage_delay_us, f"data: {_chunk([], prompt, completion)}"))
    lines.append((last + usage_delay_us, "data: [DONE]"))
    lines.sort(key=lambda item: item[0])  # stable: the role chunk stays before a token at the same time
    return [_line(at, sse) for at, sse in lines]


def _text(rng, tokens: int, silent: bool = False) -> str:
    return "" if silent else "".join(WORDS[int(index)] for index in rng.integers(len(WORDS), size=tokens))


def _events(rng, count: int, start_us: int, step_us: tuple, max_tokens: int = 1, silent_share: float = 0.0,
            shared_reads: bool = False):
    events, at = [], start_us
    for number in range(count):
        if number:
            at += 0 if shared_reads and rng.random() < 0.4 else int(rng.integers(*step_us))
        tokens = 1 if number == 0 and max_tokens == 1 else int(rng.integers(1, max_tokens + 1))
        silent = tokens == 1 and number > 0 and rng.random() < silent_share
        events.append((at, tokens, _text(rng, tokens, silent)))
    return events


class StreamAuditJudge(Judge):
    def examples(self):
        return [
            Case("a role chunk, a two-token event and the usage chunk", "multi_token", (stream(
                [(10_500, 1, "The"), (14_000, 2, " cache hit"), (16_250, 1, ".")], launch_us=1_000), 1.0)),
            Case("a keep-alive, then a stream of one token", "edge", (stream(
                [(40_000, 1, "OK")], keepalives=(20_000,), launch_us=500), 0.5)),
        ]

    def hidden_cases(self, rng):
        cases = []
        for number in range(2):
            launch = int(rng.integers(200, 3_000))
            first = launch + int(rng.integers(150_000, 900_000))
            events = _events(rng, int(rng.integers(30, 80)), first, (2_500, 9_000))
            keepalives = tuple(sorted(int(at) for at in rng.integers(launch + 5_000, first, size=2)))
            lines = stream(events, launch_us=launch, role_us=launch + int(rng.integers(1_000, 4_000)),
                           keepalives=keepalives, usage_delay_us=int(rng.integers(20_000, 60_000)))
            cases.append(Case(f"early role chunk, keep-alives, late usage chunk {number + 1}", "metadata",
                              (lines, launch / 1000)))
        for number in range(2):
            launch = int(rng.integers(200, 3_000))
            events = _events(rng, int(rng.integers(30, 80)), launch + int(rng.integers(40_000, 400_000)),
                             (5_000, 12_000), max_tokens=4)
            if events[0][1] == 1:  # the first event carries several tokens in every case
                events[0] = (events[0][0], 3, _text(rng, 3))
            cases.append(Case(f"events of one to four tokens {number + 1}", "multi_token",
                              (stream(events, launch_us=launch), launch / 1000)))
        launch = int(rng.integers(200, 3_000))
        events = _events(rng, int(rng.integers(40, 90)), launch + int(rng.integers(40_000, 400_000)),
                         (3_000, 9_000), silent_share=0.2)
        events[-1] = (events[-1][0], 1, "")  # the last token (an end-of-turn token) has no text
        cases.append(Case("tokens without text, the last one too", "silent_tokens",
                          (stream(events, launch_us=launch), launch / 1000)))
        launch = int(rng.integers(200, 3_000))
        first = launch + int(rng.integers(40_000, 400_000))
        cases.append(Case("a stream of one token", "edge", (stream(
            [(first, 1, _text(rng, 1))], launch_us=launch), launch / 1000)))
        events = _events(rng, int(rng.integers(30, 80)), first, (2_000, 6_000), shared_reads=True)
        cases.append(Case("several events in one socket read", "edge",
                          (stream(events, launch_us=launch), launch / 1000)))
        return cases

    def reference(self, case):
        return audit(*case.args)

    def check(self, case, got, expected):
        # NumPy is available to candidates: a 1-D array of token times is as good an
        # answer as the list the prompt shows, so compare it as one.
        times = got.get("token_times_ms") if isinstance(got, dict) else None
        if isinstance(times, np.ndarray) and times.ndim == 1:
            got = {**got, "token_times_ms": times.tolist()}
        return super().check(case, got, expected)


JUDGES = {"audit_code": StreamAuditJudge()}
