"""Lab data for 114: a cold-schema trace and a warm-batch trace of a structured-output engine.

Cold: the first request with a new JSON schema. The grammar compiles on its own thread
while the prefill runs on the GPU; the prefill hides the start of the compilation, and
the GPU then idles until the grammar (and the first token's bitmask) exists (this engine
schedules the prefill while the grammar compiles, where vLLM V1 and SGLang hold the
request until it is compiled). Warm: the
schema is cached, a batch of constrained requests decodes, and every step the bitmask
fill on the grammar worker outlasts the forward pass it overlaps, so the GPU waits for
it before applying the mask and sampling. Distractors: the API span that covers the
whole request, tokenisation, output processing and detokenisation (overlapped), one
garbage-collection pause on the output thread, the bitmask copy. Tokenisation and
output processing run in a separate API-server process (as in vLLM V1), so that
process's garbage collection, which holds only its own GIL, cannot stall the engine's
scheduler or grammar threads.

Every value below is measured from the spans generated here, the way a candidate would
measure it from the downloaded trace; times are whole microseconds.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from questions.labs import EventLogArtifact, LabOutput, TableArtifact, TraceArtifact, TraceEvent, Track

ENGINE, GPU, FRONTEND = 1, 2, 3
API, SCHEDULER, GRAMMAR, OUTPUT = 1, 2, 3, 4
COMPUTE, COPY = 7, 8
VOCAB = 128_256
MASK_BYTES = (VOCAB + 31) // 32 * 4  # one request's packed bitmask
H2D_BYTES_PER_US = 25_000  # pinned PCIe 5 copies, about 25 GB/s
WARM_STEPS = 20
LOG_START = datetime(2025, 3, 14, 9, 12, 3, 104_000)

COLD_TRACKS = (
    Track(FRONTEND, API, "api server", "main"),
    Track(ENGINE, SCHEDULER, "engine", "scheduler loop"),
    Track(ENGINE, GRAMMAR, "engine", "grammar compiler"),
    Track(GPU, COMPUTE, "GPU 0", "stream 7 (compute)"),
)
WARM_TRACKS = (
    Track(ENGINE, SCHEDULER, "engine", "scheduler loop"),
    Track(ENGINE, GRAMMAR, "engine", "grammar worker"),
    Track(FRONTEND, OUTPUT, "api server", "output processor"),
    Track(GPU, COMPUTE, "GPU 0", "stream 7 (compute)"),
    Track(GPU, COPY, "GPU 0", "stream 8 (copy)"),
)


def _us(rng, low: float, high: float) -> int:
    return int(round(rng.uniform(low, high)))


def _ms(microseconds: float) -> str:
    return f"{microseconds / 1000:.6f} ms"


def _cold(rng, prompt_tokens: int):
    """The cold request's trace and log, and the spans the answers are measured from."""
    events = []
    tokenize = int(round(rng.uniform(0.25, 0.4) * prompt_tokens))  # 0.25 to 0.4 us per token
    lookup_start = 150 + tokenize + 40
    lookup = _us(rng, 40, 90)
    compile_start = lookup_start + lookup + 30
    schedule_start = lookup_start + lookup + 10
    schedule = _us(rng, 300, 500)
    prefill_start = schedule_start + schedule + _us(rng, 120, 220)
    prefill = int(prompt_tokens * rng.uniform(32, 44))  # about 70 B parameters on one node
    compile_dur = prefill_start + prefill - compile_start + _us(rng, 120_000, 600_000)
    compile_end = compile_start + compile_dur
    fill = _us(rng, 90, 160)
    sample_start = compile_end + fill + _us(rng, 25, 45)
    sample = _us(rng, 180, 260)
    first_token = sample_start + sample
    events += [
        TraceEvent("tokenize", 150, tokenize, FRONTEND, API, "cpu", {"tokens": prompt_tokens}),
        TraceEvent("grammar_cache_lookup", lookup_start, lookup, ENGINE, SCHEDULER, "cpu", {"hit": "false"}),
        TraceEvent("schedule", schedule_start, schedule, ENGINE, SCHEDULER, "cpu"),
        TraceEvent("grammar_compile", compile_start, compile_dur, ENGINE, GRAMMAR, "cpu",
                   {"schema": "sha256:5be1c0de", "states": rng.randrange(2_000, 9_000)}),
        TraceEvent("prefill", prefill_start, prefill, GPU, COMPUTE, "kernel", {"tokens": prompt_tokens}),
        TraceEvent("fill_bitmask", compile_end, fill, ENGINE, GRAMMAR, "cpu", {"requests": 1}),
        TraceEvent("apply_bitmask+sample", sample_start, sample, GPU, COMPUTE, "kernel"),
    ]
    step_start = first_token + 40
    for step in range(4):  # the same request decoding alone: its mask is tiny and hidden
        forward = _us(rng, 11_500, 12_500)
        launch = step_start + _us(rng, 200, 300)
        events.append(TraceEvent("schedule", step_start, launch - step_start - 60, ENGINE, SCHEDULER, "cpu"))
        events.append(TraceEvent("forward", launch, forward, GPU, COMPUTE, "kernel", {"batch": 1, "step": step}))
        events.append(TraceEvent("fill_bitmask", launch + 20, _us(rng, 90, 160), ENGINE, GRAMMAR, "cpu",
                                 {"requests": 1}))
        sample_at = launch + forward + 10
        events.append(TraceEvent("apply_bitmask+sample", sample_at, _us(rng, 180, 260), GPU, COMPUTE, "kernel"))
        step_start = events[-1].end + 40
    request_end = step_start
    events.insert(0, TraceEvent("POST /v1/chat/completions", 0, request_end, FRONTEND, API, "http",
                                {"prompt_tokens": prompt_tokens, "response_format": "json_schema"}))
    events.sort(key=lambda event: (event.ts, event.pid, event.tid))

    def stamp(microseconds: int) -> str:
        return (LOG_START + timedelta(microseconds=microseconds)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    log = (
        f"{stamp(0)} INFO  [api] POST /v1/chat/completions req=chatcmpl-7f3a prompt_tokens={prompt_tokens}"
        " response_format=json_schema",
        f"{stamp(lookup_start + lookup)} INFO  [scheduler] req=chatcmpl-7f3a grammar cache miss"
        " schema=sha256:5be1c0de, compiling on the grammar thread",
        f"{stamp(schedule_start + schedule)} INFO  [scheduler] req=chatcmpl-7f3a prefill scheduled"
        f" ({prompt_tokens} tokens)",
        f"{stamp(compile_end)} INFO  [grammar] compiled schema=sha256:5be1c0de in {compile_dur / 1000:.1f} ms"
        " (grammar cache size 1)",
        f"{stamp(first_token)} INFO  [api] req=chatcmpl-7f3a first token after {first_token / 1000:.1f} ms",
        f"{stamp(request_end)} INFO  [api] req=chatcmpl-7f3a finished (5 tokens, finish_reason=length)",
    )
    measured = {
        "compile": compile_dur,
        "prefill": prefill,
        "prefill_end": prefill_start + prefill,
        "compile_start": compile_start,
        "compile_end": compile_end,
        "first_sample_start": sample_start,
        "ttft": first_token,
        "compile_exposed": sample_start - (prefill_start + prefill),
    }
    return events, log, measured


def _warm(rng, batch: int):
    """The warm batch's trace, its per-step table, and the per-step measurements."""
    forward_base = rng.uniform(13_500, 15_500) * (1.22 if batch > 64 else 1.0)
    stall_base = rng.uniform(1_500, 5_500)
    fill_base = forward_base + stall_base
    copy = round(batch * MASK_BYTES / H2D_BYTES_PER_US)
    gc_step = rng.randrange(5, WARM_STEPS - 5)
    events, rows, stalls, steps, fills, forwards = [], [], [], [], [], []
    t = 0
    for step in range(WARM_STEPS):
        schedule = _us(rng, 250, 450)
        forward_start = t + schedule + _us(rng, 60, 120)
        forward = int(forward_base * rng.uniform(0.97, 1.03))
        fill_start = t + schedule + 20
        fill = int(fill_base * rng.uniform(0.96, 1.04))
        copy_start = fill_start + fill + 15
        apply_start = max(forward_start + forward, copy_start + copy) + 10
        apply = _us(rng, 40, 60)
        sample = _us(rng, 180, 260)
        sample_end = apply_start + apply + sample
        process = _us(rng, 600, 900)
        detokenize = _us(rng, 300, 500)
        events += [
            TraceEvent("schedule", t, schedule, ENGINE, SCHEDULER, "cpu", {"step": step}),
            TraceEvent("forward", forward_start, forward, GPU, COMPUTE, "kernel", {"batch": batch, "step": step}),
            TraceEvent("fill_bitmask", fill_start, fill, ENGINE, GRAMMAR, "cpu", {"requests": batch}),
            TraceEvent("bitmask_h2d", copy_start, copy, GPU, COPY, "memcpy", {"bytes": batch * MASK_BYTES}),
            TraceEvent("apply_bitmask", apply_start, apply, GPU, COMPUTE, "kernel"),
            TraceEvent("sample", apply_start + apply, sample, GPU, COMPUTE, "kernel"),
            TraceEvent("process_outputs", sample_end + 30, process, FRONTEND, OUTPUT, "cpu"),
            TraceEvent("detokenize", sample_end + 30 + process, detokenize, FRONTEND, OUTPUT, "cpu"),
        ]
        if step == gc_step:
            events.append(TraceEvent("gc.collect", sample_end + 30 + process + detokenize + 20,
                                     _us(rng, 7_000, 11_000), FRONTEND, OUTPUT, "cpu", {"generation": 2}))
        stall = apply_start - (forward_start + forward)
        stalls.append(stall)
        steps.append(sample_end - t)
        fills.append(fill)
        forwards.append(forward)
        rows.append((step, t / 1000, forward_start / 1000, (forward_start + forward) / 1000, fill_start / 1000,
                     (fill_start + fill) / 1000, (copy_start + copy) / 1000, apply_start / 1000, sample_end / 1000,
                     detokenize / 1000))
        t = sample_end + 40
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    measured = {
        "stall_mean": mean(stalls), "stall_min": min(stalls), "stall_max": max(stalls), "stall_total": sum(stalls),
        "step_mean": mean(steps), "fill_mean": mean(fills), "forward_mean": mean(forwards), "copy": copy,
        "gc": next(event.dur for event in events if event.name == "gc.collect"), "wall": t - 40,
    }
    columns = ("step", "step_start_ms", "forward_start_ms", "forward_end_ms", "bitmask_fill_start_ms",
               "bitmask_fill_end_ms", "bitmask_copy_end_ms", "apply_bitmask_start_ms", "sample_end_ms",
               "detokenize_ms")
    return events, columns, rows, measured


def generate(variant) -> LabOutput:
    rng = variant.rng
    prompt_tokens = int(variant.choices["prompt_tokens"])
    batch = int(variant.choices["batch"])
    cold_events, log, cold = _cold(rng, prompt_tokens)
    warm_events, columns, rows, warm = _warm(rng, batch)
    artifacts = (
        TraceArtifact("cold-schema", cold_events, COLD_TRACKS,
                      title="Cold schema: the first request with a new JSON schema"),
        EventLogArtifact("cold-engine", log, title="Cold schema: the engine's log lines for that request"),
        TraceArtifact("warm-batch", warm_events, WARM_TRACKS,
                      title=f"Warm batch: {WARM_STEPS} decode steps of {batch} constrained requests"),
        TableArtifact("warm-steps", columns, rows, title="Warm batch: the trace's spans per step (times in ms)"),
    )
    values = {
        "prompt_tokens": prompt_tokens,
        "compile": _ms(cold["compile"]),
        "prefill": _ms(cold["prefill"]),
        "compile_start": _ms(cold["compile_start"]),
        "compile_end": _ms(cold["compile_end"]),
        "prefill_end": _ms(cold["prefill_end"]),
        "first_sample_start": _ms(cold["first_sample_start"]),
        "ttft": _ms(cold["ttft"]),
        "compile_exposed": _ms(cold["compile_exposed"]),
        "compile_hidden": _ms(cold["compile"] - cold["compile_exposed"]),
        "steps": WARM_STEPS,
        "batch": batch,
        "stall": _ms(warm["stall_mean"]),
        "stall_min": _ms(warm["stall_min"]),
        "stall_max": _ms(warm["stall_max"]),
        "stall_total": _ms(warm["stall_total"]),
        "fill": _ms(warm["fill_mean"]),
        "fill_per_request": f"{warm['fill_mean'] / batch:.1f} us",
        "forward": _ms(warm["forward_mean"]),
        "step": _ms(warm["step_mean"]),
        "copy": f"{warm['copy']} us",
        "gc": _ms(warm["gc"]),
        "stall_share": round(warm["stall_mean"] / warm["step_mean"], 6),
        "stall_share_of_forward": round(warm["stall_mean"] / warm["forward_mean"], 6),
        "fill_share": round(warm["fill_mean"] / warm["step_mean"], 6),
        "step_without_stall": _ms(warm["step_mean"] - warm["stall_mean"]),
        "throughput_gain": round(warm["step_mean"] / (warm["step_mean"] - warm["stall_mean"]) - 1, 6),
    }
    return LabOutput(artifacts, values)
