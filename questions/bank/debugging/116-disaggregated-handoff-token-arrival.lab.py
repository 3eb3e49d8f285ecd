"""Lab data for 116: a request-correlated trace of a disaggregated prefill/decode handoff.

Six requests go through a router to one prefill node and one decode node (Llama 3.3 70B,
TP 8 on each). The prefill node's KV connector pushes each request's KV cache in eight
layer groups over one NIC per node, each group as soon as the prefill has computed it,
so most of the transfer runs under the prefill. The router streams the first token,
sampled at the end of the prefill, to the client at once; the decode node then admits
the request into its running batch at a step boundary, once its KV has landed and a
batch slot is free (the batch is capped at max_num_seqs), and every decode step streams
one more token. One request, the target, lands while the batch is full and waits several
steps for a slot: the handoff stall. Its first token is on time; its second is late.

Distractors a real capture has: the other requests' prefills and transfers, the router's
health checks, the decode node's periodic stats, a KV-cache usage that is nowhere near
full, a second client stream that is healthy, the stream's role-only first event, and the
benchmark's per-request summary whose mean TPOT dilutes the stall over the whole answer.

Every value is measured from the generated spans, rows and log lines, the way a candidate
would measure them; times are whole microseconds from the trace's origin.
"""

from __future__ import annotations

from datetime import datetime, timedelta

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

ROUTER, PREFILL, DECODE = 1, 2, 3  # trace pids
MAIN, GPU_STREAM, NIC, SCHEDULER = 1, 7, 9, 2  # trace tids
TP = 8
LAYER_GROUPS = 8
MAX_NUM_SEQS = 64
REQUESTS = 6
MEMORY_UTILISATION = 0.9
EPOCH = datetime(2025, 5, 6, 14, 3, 12, 250_000)  # the wall-clock time of the trace's ts 0 (PTP-synced hosts)
WORDS = ("The", " answer", " depends", " on", " the", " cache", ",", " and", " each", " step", " adds", " one",
         " token", " to", " every", " sequence", " in", " batch", ".", " So", " we", " measure", " it", " first")

TRACKS = (
    Track(ROUTER, MAIN, "router", "proxy"),
    Track(PREFILL, GPU_STREAM, "prefill node", "GPU 0 stream 7"),
    Track(PREFILL, NIC, "prefill node", "KV connector (NIC)"),
    Track(DECODE, SCHEDULER, "decode node", "scheduler"),
    Track(DECODE, GPU_STREAM, "decode node", "GPU 0 stream 7"),
)


def _us(rng, low: float, high: float) -> int:
    return int(round(rng.uniform(low, high)))


def _ms(microseconds: float) -> str:
    return f"{microseconds / 1000:.6f} ms"


def _magnitude(value, unit: str) -> float:
    return float(value.m_as(unit)) if hasattr(value, "m_as") else float(value)


class _Model:
    """The per-variant physics: prefill time per prompt, KV bytes, a decode step's time."""

    def __init__(self, rng, context):
        model, gpu, link = context["model"], context["gpu"], context["link"]
        dtype_bytes = _magnitude(context["dtype"]["bytes"], "B")
        self.layers = int(model["layers"])
        self.kv_per_token = 2 * self.layers * int(model["kv_heads"]) * int(model["head_dim"]) * dtype_bytes
        self.linear_flops_per_token = 2 * float(model["params"])
        self.attention_flops_per_token2 = 2 * self.layers * int(model["heads"]) * int(model["head_dim"])
        self.prefill_rate = TP * _magnitude(gpu["bf16_dense"], "FLOP/s") * rng.uniform(0.45, 0.55)  # MFU
        self.link_rate = _magnitude(link["bandwidth"], "B/s") * rng.uniform(0.75, 0.9)  # one NIC, large paged writes
        streamed = (float(model["params"]) - int(model["vocab"]) * int(model["hidden"])) * dtype_bytes
        mean_context = rng.uniform(2_500, 3_500)
        step_bytes = streamed + MAX_NUM_SEQS * mean_context * self.kv_per_token
        bandwidth = TP * _magnitude(gpu["hbm_bandwidth"], "B/s")
        self.step = step_bytes / bandwidth / rng.uniform(0.65, 0.75) * 1e6 + rng.uniform(1_200, 1_800)  # us
        pool = TP * _magnitude(gpu["memory"], "B") * MEMORY_UTILISATION - float(model["params"]) * dtype_bytes
        self.pool_tokens = pool / self.kv_per_token

    def prefill(self, rng, prompt: int) -> int:
        flops = self.linear_flops_per_token * prompt + self.attention_flops_per_token2 * prompt ** 2
        return int(round(flops / self.prefill_rate * 1e6 * rng.uniform(0.98, 1.02)))

    def group_send(self, rng, prompt: int) -> int:
        return int(round(prompt * self.kv_per_token / LAYER_GROUPS / self.link_rate * 1e6 * rng.uniform(0.97, 1.03)))


def _prefill_side(rng, physics: _Model, target: int, stall_steps: int):
    """Arrivals, routing, prefills and KV pushes; per request the times the rest needs."""
    events, requests = [], []
    arrival, gpu_free, nic_free = _us(rng, 20_000, 60_000), 0, 0
    for index in range(REQUESTS):
        prompt = rng.randrange(6_000, 9_001) if index == target else rng.randrange(2_500, 9_001)
        request_id = f"chatcmpl-{rng.getrandbits(32):08x}"
        route = _us(rng, 200, 500)
        prefill_start = max(arrival + route + _us(rng, 100, 300), gpu_free)
        prefill = physics.prefill(rng, prompt)
        prefill_end = prefill_start + prefill
        gpu_free = prefill_end + _us(rng, 150, 400)
        sends = []
        for group in range(LAYER_GROUPS):
            computed = prefill_start + round(prefill * (group + 1) / LAYER_GROUPS)
            start = max(computed + _us(rng, 30, 80), nic_free + _us(rng, 10, 30))
            duration = physics.group_send(rng, prompt)
            first, last = group * physics.layers // LAYER_GROUPS, (group + 1) * physics.layers // LAYER_GROUPS - 1
            sends.append(TraceEvent(f"kv_send {request_id} L{first}-{last}", start, duration, PREFILL, NIC, "rdma",
                                    {"req": request_id, "bytes": int(prompt * physics.kv_per_token / LAYER_GROUPS)}))
            nic_free = start + duration
        events.append(TraceEvent(f"route {request_id}", arrival, route, ROUTER, MAIN, "http",
                                 {"req": request_id, "prefill": "prefill-0", "decode": "decode-0"}))
        events.append(TraceEvent(f"prefill {request_id}", prefill_start, prefill, PREFILL, GPU_STREAM, "kernel",
                                 {"req": request_id, "tokens": prompt}))
        events += sends
        relay = prefill_end + _us(rng, 150, 350)
        events.append(TraceEvent(f"relay first token {request_id}", relay, _us(rng, 60, 140), ROUTER, MAIN, "http",
                                 {"req": request_id, "from": "prefill-0"}))
        requests.append({
            "id": request_id, "prompt": prompt, "arrival": arrival, "route_end": arrival + route,
            "prefill_start": prefill_start, "prefill_end": prefill_end, "relay_end": events[-1].end,
            "sends": sends, "kv_ready": sends[-1].end, "output": rng.randrange(120, 361),
        })
        gap = prefill * rng.uniform(0.8, 1.3)
        if index == target:  # the next request lands well after the target's stall, so only the target waits
            gap = max(gap, requests[-1]["kv_ready"] - arrival + (stall_steps + 3) * physics.step * 1.05)
        arrival = int(arrival + gap)
    return events, requests


def _decode_side(rng, physics: _Model, requests, target: int, stall_steps: int):
    """The decode node's steps until every traced request has emitted its last token:
    admissions at step boundaries (KV landed and a batch slot free, first come first
    served), the step spans, one row per step, and each traced request's emission times.
    The batch starts full of long-running background sequences; each traced request gets
    the slot of one that finishes, the target's only some steps after its KV landed."""
    nominal = physics.step
    frees = []  # when a background sequence emits its last token, freeing its batch slot
    for index, request in enumerate(requests):
        if index == target:
            frees.append(request["kv_ready"] + (stall_steps + rng.uniform(0.2, 0.8)) * nominal)
        else:
            frees.append(request["kv_ready"] - rng.uniform(0.5, 2.5) * nominal)
    frees.sort()
    background = [rng.uniform(1_500, 4_500) for _ in range(MAX_NUM_SEQS)]  # their context lengths
    left, contexts, waiting, admitted_at = {}, {}, [], {}
    emitted = {index: [] for index in range(len(requests))}
    events, rows, t, step, free_slots, next_free, next_ready = [], [], 0, 0, 0, 0, 0
    while next_ready < len(requests) or waiting or left:
        while next_ready < len(requests) and requests[next_ready]["kv_ready"] <= t:
            waiting.append(next_ready)
            next_ready += 1
        admitted = []
        while waiting and free_slots > 0:
            index = waiting.pop(0)
            free_slots -= 1
            left[index] = requests[index]["output"] - 1  # the first token came from the prefill node
            contexts[index] = requests[index]["prompt"] + 1
            admitted_at[index] = step
            admitted.append(requests[index]["id"])
        batch = MAX_NUM_SEQS - free_slots
        schedule = _us(rng, 250, 450)
        forward_start = t + schedule + _us(rng, 30, 80)
        forward_end = forward_start + int(round(nominal * rng.uniform(0.97, 1.03)))
        events.append(TraceEvent("schedule", t, schedule, DECODE, SCHEDULER, "cpu", {"step": step}))
        events.append(TraceEvent("decode", forward_start, forward_end - forward_start, DECODE, GPU_STREAM, "kernel",
                                 {"step": step, "batch": batch}))
        finished = 0
        for index in list(left):
            emitted[index].append(forward_end)
            contexts[index] += 1
            left[index] -= 1
            if left[index] == 0:
                del left[index], contexts[index]
                free_slots += 1
                finished += 1
        background = [length + 1 for length in background]
        while next_free < len(frees) and frees[next_free] <= forward_end:
            background.pop(rng.randrange(len(background)))
            free_slots += 1
            finished += 1
            next_free += 1
        # blocks are reserved when the router assigns a request, so one in flight or waiting holds its prompt's
        reserved = sum(request["prompt"] for index, request in enumerate(requests)
                       if request["arrival"] <= t and index not in admitted_at)
        in_use = sum(background) + sum(contexts.values()) + reserved
        rows.append((step, t, forward_end, batch, len(waiting), ", ".join(admitted), finished,
                     round(100 * in_use / physics.pool_tokens, 1)))
        if step % 100 == 37:
            events.append(TraceEvent("log_stats", forward_end + 20, _us(rng, 300, 600), DECODE, SCHEDULER, "cpu"))
        t = forward_end + _us(rng, 40, 90)
        step += 1
    return events, rows, admitted_at, emitted


def _stamp(microseconds: int) -> str:
    return (EPOCH + timedelta(microseconds=microseconds)).strftime("%H:%M:%S.%f")


def _client_stream(rng, request, emitted):
    """What the client received for one request: its send time and every SSE event's
    arrival (the role-only event first, then one token each), as (time, text) pairs."""
    rid = request["id"]
    send = request["arrival"] - _us(rng, 300, 700)
    events = [(send, f"{rid} > POST /v1/chat/completions stream=true max_tokens={request['output']}"),
              (request["route_end"] + _us(rng, 300, 600),
               f'{rid} < data: {{"id":"{rid}","choices":[{{"index":0,"delta":{{"role":"assistant","content":""}}}}]}}')]
    tokens = [request["relay_end"] + _us(rng, 250, 500)] + [time + _us(rng, 600, 1_100) for time in emitted]
    offset = rng.randrange(len(WORDS))
    for position, time in enumerate(tokens):
        word = WORDS[(offset + position * 7) % len(WORDS)]  # 7 and 24 are coprime: every word in turn
        delta = f'{{"content":"{word}"}}'
        events.append((time, f'{rid} < data: {{"id":"{rid}","choices":[{{"index":0,"delta":{delta}}}]}}'))
    return send, tokens, events


def generate(variant) -> LabOutput:
    rng = variant.rng
    physics = _Model(rng, variant.context)
    target = rng.choice((2, 3))
    stall_steps = rng.randrange(3, 7)
    prefill_events, requests = _prefill_side(rng, physics, target, stall_steps)
    decode_events, steps, admitted_at, emitted = _decode_side(rng, physics, requests, target, stall_steps)
    window_end = steps[max(admitted_at.values()) + 8][2]
    health = [TraceEvent("GET /health", at, _us(rng, 90, 200), ROUTER, MAIN, "http")
              for at in range(_us(rng, 100_000, 400_000), window_end, 500_000)]
    events = sorted((event for event in prefill_events + decode_events + health if event.ts < window_end),
                    key=lambda event: (event.ts, event.pid, event.tid))

    streams = {index: _client_stream(rng, requests[index], emitted[index]) for index in range(REQUESTS)}
    # the client captured one other stream: the healthiest of the others, the one whose second token came soonest
    healthy = min((index for index in range(REQUESTS) if index != target),
                  key=lambda index: streams[index][1][1] - streams[index][1][0])
    log = sorted((time, text) for index in (healthy, target) for time, text in streams[index][2] if time <= window_end)
    lines = tuple(f"{_stamp(time)} {text}" for time, text in log)

    summary = []
    for index, request in enumerate(requests):
        send, tokens, _ = streams[index]
        ttft, e2e = tokens[0] - send, tokens[-1] - send
        summary.append((request["id"], request["prompt"], len(tokens), round(ttft / 1000, 1),
                        round((e2e - ttft) / (len(tokens) - 1) / 1000, 2), round(e2e / 1000, 1)))
    rows = tuple((step, start / 1000, end / 1000, batch, waiting, admitted, finished, kv)
                 for step, start, end, batch, waiting, admitted, finished, kv in steps if start < window_end)
    occupancy = ChartArtifact(
        "decode-slots", "step start (ms)", "requests",
        (Series("free batch slots", tuple((row[1], MAX_NUM_SEQS - row[3]) for row in rows)),
         Series("KV landed, waiting for a slot", tuple((row[1], row[4]) for row in rows))),
        title=f"Decode node: free slots under max_num_seqs={MAX_NUM_SEQS}, and requests waiting to join, per step",
    )
    artifacts = (
        TraceArtifact("handoff", events, TRACKS,
                      title="Router, prefill node and decode node: the spans of six requests (ts 0 = "
                            f"{EPOCH.strftime('%H:%M:%S.%f')})"),
        EventLogArtifact("client-sse", lines, title="The client's capture of two of the streams (receive times)"),
        TableArtifact("decode-steps", ("step", "start_ms", "end_ms", "batch", "waiting", "admitted", "finished",
                                       "kv_cache_usage_pct"), rows,
                      title="Decode node: one row per step (times in ms from the trace's ts 0)"),
        occupancy,
        TableArtifact("requests", ("request_id", "prompt_tokens", "output_tokens", "ttft_ms", "tpot_ms", "e2e_ms"),
                      tuple(summary), title="The benchmark's per-request summary (client side)"),
    )
    return LabOutput(artifacts, _values(requests, steps, admitted_at, streams, summary, target, healthy))


def _values(requests, steps, admitted_at, streams, summary, target, healthy) -> dict:
    """The answers, measured from the spans, rows and log lines as a candidate would."""
    request = requests[target]
    sends = request["sends"]
    kv_ready = max(send.end for send in sends)
    first_send = min(send.ts for send in sends)
    admit_step = steps[admitted_at[target]]
    send, tokens, _ = streams[target]
    healthy_send, healthy_tokens, _ = streams[healthy]
    healthy_request = requests[healthy]
    healthy_step = steps[admitted_at[healthy]]
    return {
        "target": request["id"],
        "healthy": healthy_request["id"],
        "max_num_seqs": MAX_NUM_SEQS,
        "prompt": request["prompt"],
        "prefill_start": _ms(request["prefill_start"]),
        "prefill_end": _ms(request["prefill_end"]),
        "kv_first_start": _ms(first_send),
        "kv_ready": _ms(kv_ready),
        "kv_window": _ms(kv_ready - first_send),
        "kv_busy": _ms(sum(send.dur for send in sends)),
        "kv_hidden": _ms(request["prefill_end"] - first_send),
        "exposed_transfer": _ms(kv_ready - request["prefill_end"]),
        "admit_step": admit_step[0],
        "admit_start": _ms(admit_step[1]),
        "admit_end": _ms(admit_step[2]),
        "admission_wait": _ms(admit_step[1] - kv_ready),
        "wait_from_prefill_end": _ms(admit_step[1] - request["prefill_end"]),
        "wait_to_step_end": _ms(admit_step[2] - kv_ready),
        "handoff": _ms(admit_step[2] - request["prefill_end"]),
        "admission_larger": int(admit_step[1] - kv_ready > kv_ready - request["prefill_end"]),
        "send": _ms(send),
        "first_token": _ms(tokens[0]),
        "second_token": _ms(tokens[1]),
        "ttft": _ms(tokens[0] - send),
        "gap": _ms(tokens[1] - tokens[0]),
        "third_gap": _ms(tokens[2] - tokens[1]),
        "role_to_first": _ms(tokens[0] - next(time for time, text in streams[target][2] if '"role"' in text)),
        "ttft_decode_delivery": _ms(tokens[1] - send),
        "tpot": f"{summary[target][4]} ms",
        "healthy_tpot": f"{summary[healthy][4]} ms",
        "output_tokens": summary[target][2],
        "healthy_gap": _ms(healthy_tokens[1] - healthy_tokens[0]),
        "healthy_ttft": _ms(healthy_tokens[0] - healthy_send),
        "healthy_exposed": _ms(healthy_request["kv_ready"] - healthy_request["prefill_end"]),
        "healthy_wait": _ms(healthy_step[1] - healthy_request["kv_ready"]),
        "step": _ms(sum(row[2] - row[1] for row in steps[:admit_step[0] + 8]) / (admit_step[0] + 8)),
        "kv_usage_max": max(row[7] for row in steps[:admit_step[0] + 8]),
    }
