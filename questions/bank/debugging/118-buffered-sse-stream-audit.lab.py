"""Lab data for 118: a benchmark burst whose streams carry metadata, one token or several.

A load generator on the serving host launches a burst of streaming chat requests at
once through an HTTP client whose connection pool allows `pool` connections; the rest
wait inside the client, with their clocks already running, until a stream ends and
frees one. The server is a vLLM-V1-like OpenAI-compatible API server in front of an
engine core (a separate process) running Llama 3.1 8B with EAGLE speculative decoding
(three draft tokens) and chunked prefill. So an SSE event carries:

- metadata only: the role chunk (sent with the first output, as vLLM does), the final
  usage chunk (`choices: []`) and `[DONE]`;
- one token: the first token (a prefill step emits one), and decode steps where no
  draft token was accepted;
- several tokens: decode steps that accepted drafts, and, once, everything the engine
  produced while the API server's event loop sat in a garbage-collection pause (the
  per-request output collector merges the deltas the consumer has not picked up yet).

Every value handed to the question is measured from the generated ledgers and events,
as a candidate would measure it; times are whole microseconds, printed in ms with three
decimals, so the printed numbers and the values agree exactly.
"""

from __future__ import annotations

import json

from questions.labs import (
    ChartArtifact,
    EventLogArtifact,
    LabOutput,
    Series,
    TableArtifact,
    TraceArtifact,
    TraceEvent,
    Track,
)

BURST = 16
TOKEN_BUDGET = 2048  # tokens per engine step (--max-num-batched-tokens)
DRAFT_TOKENS = 3  # EAGLE proposals verified per decode step
ACCEPT = (0.74, 0.6, 0.5)  # chance that draft position j is accepted, given the earlier ones were
MODEL_ID = "meta-llama/Llama-3.1-8B-Instruct"
CREATED = 1764601923
REQUESTS_PID, ENGINE_PID, API_PID = 1, 2, 3
TEXT = (
    "The cache hit rate depends on how often two requests share a prefix , and on how long the shared "
    "blocks stay resident before the allocator evicts them . A chat product with a long system prompt "
    "sees most of its prefill served from cache , so the first token comes quickly even when the "
    "prompt is long . An agent that rewrites its scratchpad on every turn sees almost nothing , because "
    "each turn changes the text near the start of the context and every later block hashes differently ."
).split(" ")


def _us(rng, low: float, high: float) -> int:
    return int(round(rng.uniform(low, high)))


def _ms(microseconds: float) -> str:
    return f"{microseconds / 1000:.6f} ms"


def _cell(microseconds: int) -> float:
    return round(microseconds / 1000, 3)


def _pieces(count: int) -> list[str]:
    """`count` token texts: words with their leading space, cycling through TEXT."""
    return [("" if index == 0 else " ") + TEXT[index % len(TEXT)] for index in range(count)]


class _Request:
    def __init__(self, index: int, launch: int, prompt: int, max_tokens: int):
        self.id = f"req-{index + 1:02d}"
        self.index = index
        self.launch = launch
        self.prompt = prompt
        self.max_tokens = max_tokens
        self.prefilled = 0
        self.generated = 0
        self.engine_outputs: list[tuple[int, int]] = []  # (engine time, tokens)
        self.events: list[tuple[int, int]] = []  # (client receive time, tokens), token events only
        self.connection = self.headers_sent = self.arrival = self.queued = self.response = None
        self.scheduled = self.first_token = self.last_token = self.done = None


class _Frontend:
    """The API server's event loop: nothing it handles moves while its one
    garbage-collection pause runs. The simulation places the pause once the traced
    request's first token exists, inside that request's decode, so its stream shows it
    (the loop itself knows nothing of which request is traced)."""

    def __init__(self):
        self.gc_start = self.gc_end = None

    def free_at(self, t: int) -> int:
        if self.gc_start is not None and self.gc_start <= t < self.gc_end:
            return self.gc_end
        return t

    def pauses_during(self, start: int, end: int) -> bool:
        """Whether the pause begins while the loop is busy from `start` to `end`."""
        return self.gc_start is not None and start < self.gc_start < end


def _simulate(rng, pool: int, step_model: dict):
    traced_index = pool  # the first request that had to wait for a connection
    requests = []
    launch = 0
    for index in range(BURST):
        launch += _us(rng, 60, 140)  # the client builds and starts each request in turn
        max_tokens = rng.randrange(260, 321) if index == traced_index else rng.randrange(90, 321)
        requests.append(_Request(index, launch, rng.randrange(600, 1401), max_tokens))
    frontend = _Frontend()
    free_connections = pool
    waiting_for_connection = []


    def send(request, acquired: int, new_connection: bool) -> _Request:
        """The client got a connection at `acquired`: it writes the request, and the
        API server accepts it (after the pause, if it lands in one), renders and
        tokenizes the prompt, hands it to the engine, then sends the headers."""
        request.connection = acquired
        connect = _us(rng, 180, 420) if new_connection else 0  # loopback TCP connect
        request.headers_sent = acquired + connect + _us(rng, 90, 200)
        request.arrival = frontend.free_at(request.headers_sent + _us(rng, 250, 600))
        request.queued = request.arrival + int(request.prompt * rng.uniform(0.4, 0.6)) + _us(rng, 300, 600)
        request.response = request.queued + _us(rng, 150, 350)
        return request

    pending = []  # sent, not yet admitted by the scheduler
    for request in requests:
        if free_connections:
            free_connections -= 1
            pending.append(send(request, request.launch, new_connection=True))
        else:
            waiting_for_connection.append(request)

    steps, running, t, unfinished = [], [], 0, BURST
    while unfinished:
        admitted = [request for request in pending if request.queued <= t]
        if not running and not admitted:
            t = min(request.queued for request in pending)
            continue
        for request in admitted:
            pending.remove(request)
            running.append(request)
        decoding = [request for request in running if request.prefilled == request.prompt]
        budget = TOKEN_BUDGET - (1 + DRAFT_TOKENS) * len(decoding)
        chunks = []
        for request in running:
            if request.prefilled < request.prompt and budget > 0:
                take = min(budget, request.prompt - request.prefilled)
                budget -= take
                chunks.append((request, take))
                if request.scheduled is None:
                    request.scheduled = t
        prefill_tokens = sum(take for _, take in chunks)
        context = sum(request.prefilled + request.generated for request in running)
        verified = (1 + DRAFT_TOKENS) * len(decoding)
        linear = max(step_model["weights"], (prefill_tokens + verified) * step_model["flop_token"])
        duration = linear + context * step_model["kv_token"] + step_model["draft"] + step_model["host"]
        duration = int(duration * rng.uniform(0.985, 1.03))
        end = t + duration
        produced = 0
        for request in decoding:
            accepted = 0
            while accepted < DRAFT_TOKENS and rng.random() < ACCEPT[accepted]:
                accepted += 1
            tokens = min(1 + accepted, request.max_tokens - request.generated)
            request.generated += tokens
            request.engine_outputs.append((end, tokens))
            produced += tokens
        for request, take in chunks:
            request.prefilled += take
            if request.prefilled == request.prompt:  # the last chunk samples the first token
                request.generated = 1
                request.first_token = end
                request.engine_outputs.append((end, 1))
                produced += 1
                if request.index == traced_index:
                    decode_guess = request.max_tokens / 2.4 * (step_model["weights"] + step_model["draft"])
                    frontend.gc_start = end + int(decode_guess * rng.uniform(0.35, 0.5))
                    frontend.gc_end = frontend.gc_start + _us(rng, 150_000, 240_000)
        steps.append(TraceEvent("step", t, duration, ENGINE_PID, 1, "engine", {
            "decode_requests": len(decoding), "prefill_tokens": prefill_tokens, "tokens_out": produced}))
        for request in list(running):
            if request.generated == request.max_tokens:
                request.last_token = end
                running.remove(request)
                unfinished -= 1
                _deliver(rng, frontend, request)
                if waiting_for_connection:  # the freed connection goes to the longest waiter
                    released = request.done + _us(rng, 30, 80)
                    pending.append(send(waiting_for_connection.pop(0), released, new_connection=False))
        t = end + _us(rng, 150, 350)  # the scheduler's host work between steps
    return requests, steps, frontend, requests[traced_index]


def _deliver(rng, frontend: _Frontend, request: _Request) -> None:
    """The client receive time of each SSE event of a finished request. An output the
    engine produced while the API server was paused waits for the pause to end, and
    the outputs that waited together leave as one event (deltas merged)."""
    merged: list[list[int]] = []  # [loop time, tokens]
    for engine_time, tokens in request.engine_outputs:
        loop_time = frontend.free_at(engine_time)
        if merged and merged[-1][0] == loop_time:
            merged[-1][1] += tokens
        else:
            merged.append([loop_time, tokens])
    received = 0
    for number, (loop_time, tokens) in enumerate(merged):
        latency = _us(rng, 250, 600)  # detokenize, serialize, loopback
        if frontend.pauses_during(loop_time, loop_time + latency):
            # The loop was still sending this output when the pause began, so nothing
            # left before the pause ended: the output goes out with those the pause held.
            loop_time = frontend.gc_end
            if number + 1 < len(merged) and merged[number + 1][0] == loop_time:
                merged[number + 1][1] += tokens
                continue
        received = max(received + 40, loop_time + latency)
        request.events.append((received, tokens))
    request.done = received + _us(rng, 40, 120)  # the usage chunk, then [DONE]


def _step_model(context) -> dict:
    """Per-step costs in microseconds, from the question's derived roofline figures."""
    weights = context["weight_read"].to("us").magnitude
    return {
        "weights": weights,
        "kv_token": context["kv_read_per_token"].to("us").magnitude,
        "flop_token": context["prefill_per_token"].to("us").magnitude,
        "draft": 0.27 * weights,  # the EAGLE head's three proposals: a layer and the LM head each
        "host": 400,
    }


def _sse_lines(request: _Request, text: list[str]) -> tuple[list[str], list[tuple]]:
    """The traced stream as the client captured it, and the same events as table rows."""
    chunk_id = "chatcmpl-5d0c7e2a9b41"
    lines, rows = [], []

    def chunk(choices, completion):
        usage = {"prompt_tokens": request.prompt, "completion_tokens": completion,
                 "total_tokens": request.prompt + completion}
        return json.dumps({"id": chunk_id, "object": "chat.completion.chunk", "created": CREATED,
                           "model": MODEL_ID, "choices": choices, "usage": usage}, separators=(",", ":"))

    def line(received: int, payload: str) -> str:
        return f"[{received / 1000:10.3f} ms] data: {payload}"

    first_received = request.events[0][0]
    role = [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}]
    lines.append(line(first_received, chunk(role, 0)))
    rows.append((1, _cell(first_received), "assistant", "", None, 0))
    completion = 0
    for number, (received, tokens) in enumerate(request.events):
        content = "".join(text[completion:completion + tokens])
        completion += tokens
        finish = "length" if number == len(request.events) - 1 else None
        choice = [{"index": 0, "delta": {"content": content}, "logprobs": None, "finish_reason": finish}]
        lines.append(line(received, chunk(choice, completion)))
        rows.append((len(rows) + 1, _cell(received), None, content, finish, completion))
    usage_at = request.events[-1][0] + (request.done - request.events[-1][0]) // 2
    lines.append(line(usage_at, chunk([], completion)))
    rows.append((len(rows) + 1, _cell(usage_at), None, None, None, completion))
    lines.append(line(request.done, "[DONE]"))
    return lines, rows


def _trace(requests, steps, frontend) -> TraceArtifact:
    tracks = [Track(REQUESTS_PID, request.index + 1, "requests (by request id)", request.id) for request in requests]
    tracks += [Track(ENGINE_PID, 1, "engine core", "steps"), Track(API_PID, 1, "api server", "event loop")]
    events = []
    for request in requests:
        tid = request.index + 1
        if request.connection > request.launch:
            events.append(TraceEvent("client: waiting for a connection", request.launch,
                                     request.connection - request.launch, REQUESTS_PID, tid, "client"))
        events += [
            TraceEvent("api: render + tokenize", request.arrival, request.queued - request.arrival,
                       REQUESTS_PID, tid, "server", {"prompt_tokens": request.prompt}),
            TraceEvent("engine: queued", request.queued, request.scheduled - request.queued, REQUESTS_PID, tid,
                       "engine"),
            TraceEvent("engine: prefill", request.scheduled, request.first_token - request.scheduled,
                       REQUESTS_PID, tid, "engine"),
            TraceEvent("engine: decode", request.first_token, request.last_token - request.first_token,
                       REQUESTS_PID, tid, "engine", {"generation_tokens": request.max_tokens}),
        ]
    events += steps
    events.append(TraceEvent("gc.collect", frontend.gc_start, frontend.gc_end - frontend.gc_start, API_PID, 1,
                             "python", {"generation": 2}))
    events.sort(key=lambda event: (event.ts, event.pid, event.tid))
    return TraceArtifact("burst-timeline", events, tracks,
                         title="The burst, request by request, with the engine's steps and the API server's loop")


def _ledgers(requests) -> tuple[TableArtifact, TableArtifact]:
    client = TableArtifact(
        "client-ledger",
        ("request", "launch_ms", "connection_ms", "headers_sent_ms", "response_headers_ms", "done_ms", "status",
         "sse_data_events", "completion_tokens"),
        [(request.id, _cell(request.launch), _cell(request.connection), _cell(request.headers_sent),
          _cell(request.response), _cell(request.done), 200, len(request.events) + 2, request.max_tokens)
         for request in requests],
        title="The load generator's ledger (aiohttp trace hooks; ms since the burst began)",
    )
    engine = TableArtifact(
        "engine-ledger",
        ("request", "arrival_ms", "queued_ms", "scheduled_ms", "first_token_ms", "last_token_ms", "prompt_tokens",
         "generation_tokens", "preemptions", "finish_reason"),
        [(request.id, _cell(request.arrival), _cell(request.queued), _cell(request.scheduled),
          _cell(request.first_token), _cell(request.last_token), request.prompt, request.max_tokens, 0, "length")
         for request in sorted(requests, key=lambda request: request.arrival)],
        title="The server's per-request timestamps (same host clock, ms since the burst began)",
    )
    return client, engine


def _staircase(request) -> ChartArtifact:
    """Tokens received so far against time: flat until an event, then a jump."""
    points, count = [(0.0, 0)], 0
    for received, tokens in request.events:
        points.append((_cell(received - request.launch), count))
        count += tokens
        points.append((_cell(received - request.launch), count))
    return ChartArtifact("tokens-received", "time since the request's launch (ms)", "tokens received",
                         (Series(request.id, tuple(points)),),
                         title=f"{request.id}: completion tokens received by the client")


def _audit(request) -> dict:
    """What the question asks, measured from the traced request's ledger rows and events
    as printed (whole microseconds)."""
    events = request.events
    first, last = events[0][0], events[-1][0]
    tokens = sum(tokens for _, tokens in events)
    gaps = [(later[0] - earlier[0], later[1]) for earlier, later in zip(events, events[1:])]
    longest = max(gaps)
    return {
        "ttft": first - request.launch,
        "ttft_headers": request.response - request.launch,
        "ttft_from_connection": first - request.connection,
        "engine_ttft": request.first_token - request.arrival,
        "launch_delay": request.arrival - request.launch,
        "connection_wait": request.connection - request.launch,
        "engine_queue": request.scheduled - request.queued,
        "prefill": request.first_token - request.scheduled,
        "delivery": first - request.first_token,
        "tokens": tokens,
        "token_events": len(events),
        "first_event_tokens": events[0][1],
        "decode_span": last - first,
        "tpot": (last - first) / (tokens - 1),
        "itl_per_event": (last - first) / (len(events) - 1),
        "tpot_with_ttft": (last - request.launch) / tokens,
        "engine_tpot": (request.last_token - request.first_token) / (tokens - 1),
        "max_wait": longest[0],
        "max_wait_tokens": longest[1],
        "max_wait_spread": max(gap / count for gap, count in gaps),
        "biggest_event": max(tokens for _, tokens in events),
        "multi_token_events": sum(1 for _, tokens in events if tokens > 1),
        "median_event_gap": sorted(gap for gap, _ in gaps)[len(gaps) // 2],
    }


def generate(variant) -> LabOutput:
    rng = variant.rng
    pool = int(variant.choices["pool"])
    requests, steps, frontend, traced = _simulate(rng, pool, _step_model(variant.context))
    lines, rows = _sse_lines(traced, _pieces(traced.max_tokens))
    client, engine = _ledgers(requests)
    stream = EventLogArtifact("traced-stream", lines,
                              title=f"{traced.id}: the SSE stream as the client received it")
    events = TableArtifact("traced-events", ("event", "received_ms", "delta_role", "delta_content",
                                             "finish_reason", "usage_completion_tokens"), rows,
                           title=f"{traced.id}: the same data events, parsed")
    artifacts = (client, engine, _trace(requests, steps, frontend), stream, events, _staircase(traced))
    audit = _audit(traced)
    first_wave = requests[:pool]
    waiters = requests[pool:]
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    decode_steps = [step.dur for step in steps if step.args["prefill_tokens"] == 0]
    values = {
        "pool": pool,
        "burst": BURST,
        "traced": traced.id,
        "traced_number": traced.index + 1,
        "prompt_tokens": traced.prompt,
        "launch_ms": _ms(traced.launch),
        "arrival_ms": _ms(traced.arrival),
        "connection_ms": _ms(traced.connection),
        "response_ms": _ms(traced.response),
        "first_event_ms": _ms(traced.events[0][0]),
        "last_event_ms": _ms(traced.events[-1][0]),
        "engine_first_token_ms": _ms(traced.first_token),
        "engine_last_token_ms": _ms(traced.last_token),
        "scheduled_ms": _ms(traced.scheduled),
        "queued_ms": _ms(traced.queued),
        "gc": _ms(frontend.gc_end - frontend.gc_start),
        "gc_start_ms": _ms(frontend.gc_start),
        "decode_step": _ms(mean(decode_steps)),
        "first_wave_engine_ttft": _ms(mean([r.first_token - r.arrival for r in first_wave])),
        "waiters_engine_ttft": _ms(mean([r.first_token - r.arrival for r in waiters])),
        "waiters_connection_wait": _ms(mean([r.connection - r.launch for r in waiters])),
        "client_ttft_max": _ms(max(r.events[0][0] - r.launch for r in requests)),
        "engine_ttft_max": _ms(max(r.first_token - r.arrival for r in requests)),
    }
    # The longest wait against the pause: the last event before the gap, the pause
    # itself (the gc.collect span), and the merged event that ends the gap.
    gap_end = next(received for received, _ in traced.events if received >= frontend.gc_end)
    gap_start = max(received for received, _ in traced.events if received < gap_end)
    values["before_gc"] = _ms(frontend.gc_start - gap_start)
    values["after_gc"] = _ms(gap_end - frontend.gc_end)
    for name, value in audit.items():
        counted = name in ("tokens", "token_events", "first_event_tokens", "max_wait_tokens", "biggest_event",
                           "multi_token_events")
        values[name] = value if counted else _ms(value)
    values["launch_share"] = round(audit["launch_delay"] / audit["ttft"], 6)
    values["tokens_per_event"] = round(audit["tokens"] / audit["token_events"], 6)
    return LabOutput(artifacts, values)
