"""Lab data for 91: three CUDA-graph capture policies, one memory ledger, one matched workload.

The same Llama 3.3 70B FP8 deployment (TP 2, BF16 KV cache) is started three times, once
per capture policy: eager (no graphs), PIECEWISE and FULL_AND_PIECEWISE, the latter two
over vLLM's default 51 capture sizes for max_num_seqs 256. The engine sizes the KV cache
as vLLM's worker does with the CUDA-graph estimate applied: requested memory (utilisation
x total) less the weights, the profiled activation peak, the non-PyTorch memory and the
graph estimate, floored to whole pages. The ledger row of the FULL_AND_PIECEWISE start has
no KV lines (they were lost), so its page count must be recovered from the other columns.

A production trace was replayed under eager (the largest pool, so nothing was preempted);
its periodic stats lines give the peak KV usage and the largest running batch. A matched
benchmark (the same context mix) timed decode steps per captured batch size under each
policy, and one step at the replay's padded peak batch was traced under each.

Every value below is measured from the printed artifacts, the way a candidate would:
the ledger's rounded GiB figures, the log's rounded percentages, the table's rounded
milliseconds, the trace's whole microseconds.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import NamedTuple

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

GIB = 2**30
MAX_NUM_SEQS = 256
# vLLM's default capture list for max_num_seqs 256: [1, 2, 4] + range(8, 256, 8) + range(256, 513, 16)
CAPTURE_SIZES = (1, 2, 4, *range(8, 256, 8), *range(256, 513, 16))
# Full decode graphs stop at max_num_seqs (vLLM's CudagraphDispatcher keeps only the capture
# sizes up to uniform_decode_query_len * max_num_seqs for them): 35 of the 51 sizes here.
FIXTURE_SIZES = tuple(size for size in CAPTURE_SIZES if size <= MAX_NUM_SEQS)
LOG_INTERVAL_S = 10
LOG_LINES = 120
REPLAY_START = datetime(2025, 3, 11, 14, 0, 4)
BANDWIDTH_EFFICIENCY = 0.82  # achieved share of peak HBM bandwidth on large decode reads
ALLREDUCES_PER_LAYER = 2  # attention output and MLP output, under TP


class Policy(NamedTuple):  # a NamedTuple: the loader imports this file outside sys.modules, as dataclasses need
    key: str
    mode: str
    graph_sets: int  # 0 eager, 1 piecewise, 2 full decode graphs + piecewise mixed graphs

    @property
    def graphs(self) -> int:
        """Graphs captured: a piecewise one per capture size, and under FULL_AND_PIECEWISE a
        full decode graph per capture size up to max_num_seqs."""
        return (len(CAPTURE_SIZES) if self.graph_sets else 0) + (len(FIXTURE_SIZES) if self.graph_sets == 2 else 0)

    @property
    def capture_sizes(self) -> str:
        if not self.graph_sets:
            return "none"
        mixed = f"{len(CAPTURE_SIZES)} sizes, 1-{CAPTURE_SIZES[-1]}"
        if self.graph_sets == 1:
            return mixed
        return f"{mixed} (full decode graphs: {len(FIXTURE_SIZES)} sizes, 1-{FIXTURE_SIZES[-1]})"


POLICIES = (
    Policy("eager", "NONE (enforce_eager)", 0),
    Policy("piecewise", "PIECEWISE", 1),
    Policy("full_and_piecewise", "FULL_AND_PIECEWISE", 2),
)


def _r2(value: float) -> float:
    return round(value, 2)


def _ms(value_ms: float) -> str:
    return f"{value_ms:.6f} ms"


def _weights_gib(model: dict, tp: int) -> float:
    """An FP8 checkpoint per GPU: the linear layers in 1 byte per parameter, the input
    embedding and the LM head kept in BF16, all split over the TP ranks, plus scales."""
    embed_and_head = 2 * model["vocab"] * model["hidden"]
    linear = model["params"] - embed_and_head
    return (linear * 1 + embed_and_head * 2) / tp / GIB + 0.02


def _ledger(rng, total_gib: float, util: float, weights_gib: float, page_bytes: int):
    """One row per policy, as printed, and what the rows say (measured from the print)."""
    activation = rng.uniform(4.6, 5.0)
    non_torch = rng.uniform(0.50, 0.60)
    piecewise_estimate = rng.uniform(0.45, 0.80)
    estimates = {"eager": 0.0, "piecewise": piecewise_estimate,
                 "full_and_piecewise": piecewise_estimate + rng.uniform(1.10, 1.60)}
    context = rng.uniform(0.46, 0.58)  # CUDA context and NCCL, allocated before the baseline snapshot
    rows, printed = [], {}
    for policy in POLICIES:
        run_activation = activation + rng.uniform(-0.015, 0.015)
        run_non_torch = non_torch + rng.uniform(-0.02, 0.02)
        estimate = estimates[policy.key]
        actual = estimate * rng.uniform(0.72, 0.85)  # the estimate over-reserves a little
        requested = util * total_gib
        available = requested - weights_gib - run_activation - run_non_torch - estimate
        blocks = int(available * GIB // page_bytes)
        graphs = policy.graphs
        capture_s = 0 if not graphs else round(graphs * rng.uniform(0.30, 0.42))
        used = context + weights_gib + run_non_torch + run_activation + blocks * page_bytes / GIB + actual
        values = {
            "requested": _r2(requested), "weights": _r2(weights_gib), "activation": _r2(run_activation),
            "non_torch": _r2(run_non_torch), "estimate": _r2(estimate), "actual": _r2(actual),
            "available": _r2(available), "blocks": blocks,
        }
        lost = policy.key == "full_and_piecewise"
        rows.append((
            policy.key, policy.mode, policy.capture_sizes, graphs,
            _r2(total_gib), values["requested"], values["weights"], values["activation"], values["non_torch"],
            values["estimate"], None if lost else values["available"], None if lost else blocks,
            values["actual"], capture_s, _r2(total_gib - used),
        ))
        printed[policy.key] = values
    columns = ("policy", "cudagraph_mode", "capture_sizes", "graphs_captured", "total_gib", "requested_gib",
               "weights_gib", "peak_activation_gib", "non_torch_gib", "cudagraph_estimate_gib",
               "available_kv_gib", "num_gpu_blocks", "cudagraph_actual_gib", "capture_s",
               "free_after_startup_gib")
    return columns, rows, printed


def _blocks_from(values: dict, page_bytes: int, *, drop=(), requested=None, estimate_key="estimate",
                 gib=GIB) -> float:
    """A page count from printed ledger figures, the way a candidate computes it; the
    keyword arguments make the wrong ways the listed mistakes name."""
    available = values["requested"] if requested is None else requested
    for key in ("weights", "activation", "non_torch"):
        if key not in drop:
            available -= values[key]
    if estimate_key:
        available -= values[estimate_key]
    return math.floor(available * gib / page_bytes)


def _step_model(rng, bandwidth_tbs: float, weights_bytes: float, kv_token_bytes: float, context_tokens: float,
                hidden: int, layers: int):
    """Per-policy decode step times (ms) as a function of batch, and the parameters the
    trace is drawn with, so the benchmark table and the trace agree."""
    bandwidth = bandwidth_tbs * 1e12 * BANDWIDTH_EFFICIENCY
    prepare = rng.uniform(0.35, 0.45)
    sample = rng.uniform(0.25, 0.35)
    piecewise_gap_us = rng.uniform(4.0, 6.0)  # GPU-side gap between a graph piece and an eager attention kernel
    piecewise_prepare = rng.uniform(0.15, 0.25)  # attention metadata built outside the graph
    eager_cpu_us = rng.uniform(150, 200)  # Python and launches per layer
    # Extra GPU time per eager layer, also when the CPU has run ahead: without capture and
    # torch.compile (enforce_eager turns both off) each kernel is launched on its own, with a
    # gap on the stream, and the FP8 activation quantisation runs as kernels of its own
    # rather than fused into the RMSNorm and the SiLU-and-mul.
    eager_exposed_us = rng.uniform(24, 36)

    def layers_ms(batch):
        reads = weights_bytes + batch * context_tokens * kv_token_bytes
        allreduce_us = 7 + batch * hidden * 2 / 450e9 * 1e6
        return reads / bandwidth * 1e3 + layers * ALLREDUCES_PER_LAYER * allreduce_us / 1e3

    def step(policy, batch):
        gpu = layers_ms(batch)
        if policy == "full_and_piecewise":
            return prepare + gpu + sample
        if policy == "piecewise":
            return prepare + piecewise_prepare + gpu + 2 * layers * piecewise_gap_us / 1e3 + sample
        return prepare + max(layers * eager_cpu_us / 1e3 + 0.015, gpu + layers * eager_exposed_us / 1e3) + sample

    knobs = {"prepare": prepare, "sample": sample, "piecewise_gap_us": piecewise_gap_us,
             "piecewise_prepare": piecewise_prepare, "eager_cpu_us": eager_cpu_us,
             "eager_exposed_us": eager_exposed_us, "layers_ms": layers_ms}
    return step, knobs


def _fixture(rng, step):
    """The matched benchmark: p50 and p99 step time per captured batch size, per policy."""
    tails = {"eager": rng.uniform(1.07, 1.10), "piecewise": rng.uniform(1.035, 1.05),
             "full_and_piecewise": rng.uniform(1.03, 1.045)}
    rows, table = [], {}
    for batch in FIXTURE_SIZES:
        row = [batch]
        for policy in POLICIES:
            p50 = step(policy.key, batch) * rng.uniform(0.999, 1.001)
            p99 = p50 * tails[policy.key] * rng.uniform(0.999, 1.001)
            row += [round(p50, 2), round(p99, 2)]
            table[(policy.key, batch)] = (round(p50, 2), round(p99, 2))
        rows.append(tuple(row))
    columns = ("batch", "eager_p50_ms", "eager_p99_ms", "piecewise_p50_ms", "piecewise_p99_ms",
               "full_and_piecewise_p50_ms", "full_and_piecewise_p99_ms")
    return columns, rows, table


def _replay_log(rng, eager_blocks: int, block_size: int, peak_usage: float, peak_running: int, step):
    """The eager run's periodic stats lines while the production trace replays."""
    peak_at = rng.randrange(70, 95)
    lines = []

    def stamp(seconds):
        return (REPLAY_START + timedelta(seconds=seconds)).strftime("%m-%d %H:%M:%S")

    lines.append(f"INFO {stamp(0)} [kv_cache_utils.py:1087] GPU KV cache size: {eager_blocks * block_size:,} tokens")
    lines.append(f"INFO {stamp(0)} [kv_cache_utils.py:1091] Maximum concurrency for 8,192 tokens per request: "
                 f"{eager_blocks * block_size / 8192:.2f}x")
    lines.append(f"INFO {stamp(2)} [replay.py:58] Replaying trace prod-chat-0311 (matched workload, 1,200 s, "
                 f"max_num_seqs={MAX_NUM_SEQS}) against policy eager")
    for index in range(LOG_LINES):
        distance = abs(index - peak_at) / 60
        shape = max(0.12, 1 - distance ** 1.6) if index != peak_at else 1.0
        if index != peak_at:
            shape = min(shape * rng.uniform(0.95, 1.0), 0.985)
        running = peak_running if index == peak_at else max(4, round(peak_running * shape))
        usage = peak_usage if index == peak_at else min(peak_usage * shape ** 1.08 * rng.uniform(0.97, 1.0),
                                                        peak_usage - 0.012)
        waiting = 0 if shape < 0.9 else rng.randrange(0, 5)
        generation = running / step("eager", running) * 1e3
        # Prompt tokens (cached ones included, as vLLM counts them) at about half the generated
        # ones: the prefill FLOPs must fit beside decode steps that already run at the HBM
        # limit. At 2.2-3.4x, as first drawn, the busiest lines asked 60-70% of the FP8 peak.
        prompt = generation * rng.uniform(0.4, 0.7)
        hit = rng.uniform(24, 38)
        lines.append(f"INFO {stamp(4 + LOG_INTERVAL_S * index)} [loggers.py:123] Engine 000: Avg prompt throughput: "
                     f"{prompt:.1f} tokens/s, Avg generation throughput: {generation:.1f} tokens/s, Running: "
                     f"{running} reqs, Waiting: {waiting} reqs, GPU KV cache usage: {usage * 100:.1f}%, "
                     f"Prefix cache hit rate: {hit:.1f}%")
    return lines


def _trace(step_knobs, batch: int, layers: int, rng):
    """One decode step at `batch` under each policy, each run's step aligned at 0."""
    events, tracks, durations = [], [], {}
    layer_ms = step_knobs["layers_ms"](batch) / layers
    for pid, policy in enumerate(POLICIES, start=1):
        cpu, gpu = 1, 7
        label = policy.mode if policy.graph_sets else "eager"
        tracks += [Track(pid, cpu, label, "engine CPU"), Track(pid, gpu, label, "GPU stream 7")]
        schedule = round(rng.uniform(180, 260))
        prepare = round(step_knobs["prepare"] * 1e3 - schedule + 200)
        if policy.key == "piecewise":
            prepare += round(step_knobs["piecewise_prepare"] * 1e3)
        events.append(TraceEvent("schedule", 0, schedule, pid, cpu, "cpu", {"batch": batch}))
        events.append(TraceEvent("prepare_inputs", schedule, prepare, pid, cpu, "cpu"))
        t_cpu = schedule + prepare
        gpu_free = 0
        layer_us = [layer_ms * 1e3 * rng.uniform(0.99, 1.01) for _ in range(layers)]
        if policy.key == "full_and_piecewise":
            launch = round(rng.uniform(25, 40))
            events.append(TraceEvent("cudaGraphLaunch", t_cpu, launch, pid, cpu, "cuda_runtime",
                                     {"graph": f"FULL batch={batch}"}))
            t_gpu = t_cpu + launch + 8
            for index, duration in enumerate(layer_us):
                events.append(TraceEvent("layer", t_gpu, round(duration), pid, gpu, "kernel", {"layer": index}))
                t_gpu += round(duration)
            gpu_free = t_gpu
            sync_from = t_cpu + launch
        elif policy.key == "piecewise":
            gap = step_knobs["piecewise_gap_us"]
            for index, duration in enumerate(layer_us):
                replay = round(rng.uniform(12, 16))
                events.append(TraceEvent("graph replay", t_cpu, replay, pid, cpu, "cuda_runtime", {"layer": index}))
                t_cpu += replay
                start = max(gpu_free + round(gap), t_cpu + 4)
                piece = round(duration * 0.72)
                events.append(TraceEvent("graph piece", start, piece, pid, gpu, "kernel", {"layer": index}))
                gpu_free = start + piece
                attention_launch = round(rng.uniform(9, 12))
                events.append(TraceEvent("attention launch", t_cpu, attention_launch, pid, cpu, "cuda_runtime",
                                         {"layer": index}))
                t_cpu += attention_launch
                start = max(gpu_free + round(gap), t_cpu + 4)
                attention = round(duration) - piece
                events.append(TraceEvent("attention", start, attention, pid, gpu, "kernel", {"layer": index}))
                gpu_free = start + attention
            sync_from = t_cpu
        else:
            for index, duration in enumerate(layer_us):
                ops = round(step_knobs["eager_cpu_us"] * rng.uniform(0.95, 1.05))
                events.append(TraceEvent("layer ops + launches", t_cpu, ops, pid, cpu, "cpu_op", {"layer": index}))
                start = max(gpu_free, t_cpu + 15)
                run = round(duration + step_knobs["eager_exposed_us"] * rng.uniform(0.9, 1.1))
                events.append(TraceEvent("layer", start, run, pid, gpu, "kernel", {"layer": index}))
                gpu_free = start + run
                t_cpu += ops
            sync_from = t_cpu
        sample = round(step_knobs["sample"] * 1e3)
        events.append(TraceEvent("compute_logits+sample", gpu_free, sample, pid, gpu, "kernel"))
        end = gpu_free + sample
        if end > sync_from:
            events.append(TraceEvent("cudaStreamSynchronize", sync_from, end - sync_from, pid, cpu, "cuda_runtime"))
        durations[policy.key] = end
    return events, tracks, durations


def _trace_readings(events) -> dict:
    """What the traced steps show, read from the spans as a candidate would (microseconds):
    each policy's mean GPU layer, when eager's CPU has issued its last layer and how long
    it then waits, and PIECEWISE's mean gap at a handover."""
    def spans(pid, tid, name):
        return sorted((event for event in events if (event.pid, event.tid, event.name) == (pid, tid, name)),
                      key=lambda event: event.ts)

    eager_layers, full_layers = spans(1, 7, "layer"), spans(3, 7, "layer")
    eager_sync = spans(1, 1, "cudaStreamSynchronize")[0]
    pieces = sorted(spans(2, 7, "graph piece") + spans(2, 7, "attention"), key=lambda event: event.ts)
    gaps = [after.ts - (before.ts + before.dur) for before, after in zip(pieces, pieces[1:])]
    return {
        "eager_layer_us": sum(event.dur for event in eager_layers) / len(eager_layers),
        "full_layer_us": sum(event.dur for event in full_layers) / len(full_layers),
        "eager_issued_us": eager_sync.ts,
        "eager_sync_us": eager_sync.dur,
        "piecewise_gap_us": sum(gaps) / len(gaps),
    }


def _p99_chart(fixture_rows, slo: float) -> ChartArtifact:
    """The benchmark's p99 columns against batch size, with the latency limit as a line."""
    p99_columns = {"eager": 2, "PIECEWISE": 4, "FULL_AND_PIECEWISE": 6}  # indexes into a benchmark row
    series = [Series(f"{label} p99", tuple((row[0], row[column]) for row in fixture_rows))
              for label, column in p99_columns.items()]
    first, last = fixture_rows[0][0], fixture_rows[-1][0]
    series.append(Series(f"latency limit ({slo:.1f} ms)", ((first, slo), (last, slo))))
    return ChartArtifact("p99-step-time", "captured batch size (sequences)", "p99 decode step (ms)", tuple(series),
                         title="p99 decode step per captured batch size (the benchmark table's p99 columns) "
                               "against the latency limit")


def blocks_full_available(values: dict) -> float:
    """The KV memory a ledger row's printed figures leave (GiB)."""
    return values["requested"] - values["weights"] - values["activation"] - values["non_torch"] - values["estimate"]


def _padded(batch: int) -> int:
    return min(size for size in CAPTURE_SIZES if size >= batch)


def _slo(low: float, high: float) -> float | None:
    """A round half-millisecond in [low, high], else the tenth of a millisecond nearest
    the middle (the statement prints the SLO to one decimal), else None."""
    slo = math.floor((low + high) / 2 * 2) / 2
    if not low <= slo <= high:
        slo = round((low + high) / 2, 1)
    return slo if low <= slo <= high else None


def generate(variant) -> LabOutput:
    rng = variant.rng
    context = variant.context
    model, gpu = context["model"], context["gpu"]
    tp = int(context["tp"])
    block_size = int(context["block_size"])
    util = float(context["mem_util"])
    page_bytes = int(round(context["kv_page"].m_as("B")))
    kv_token_bytes = context["kv_per_token_gpu"].m_as("B/token")
    total_gib = gpu["memory_cuda_total"].m_as("GiB")
    weights_gib = _weights_gib(model, tp)

    columns, rows, printed = _ledger(rng, total_gib, util, weights_gib, page_bytes)
    full, piecewise, eager = printed["full_and_piecewise"], printed["piecewise"], printed["eager"]
    blocks_full = _blocks_from(full, page_bytes)
    blocks_piecewise, blocks_eager = piecewise["blocks"], eager["blocks"]

    # The replay's peak demand sits between the two graph pools: FULL_AND_PIECEWISE is short, PIECEWISE holds it.
    demand_target = blocks_full + rng.uniform(0.35, 0.70) * (blocks_piecewise - blocks_full)
    peak_usage = round(demand_target / blocks_eager, 3)
    peak_demand = peak_usage * blocks_eager  # what the log's percentage and the ledger give back
    peak_running = rng.choice([batch for batch in range(161, 240) if batch % 8])
    padded = _padded(peak_running)
    tokens_per_sequence = peak_demand * block_size / peak_running

    embed = model["vocab"] * model["hidden"]
    streamed_bytes = ((model["params"] - 2 * embed) * 1 + embed * 2) / tp  # FP8 linears, BF16 LM head; no embedding
    below = padded - 8
    # The SLO must sit clear of both PIECEWISE's p99 at the padded batch and eager's p99 a
    # row below it. On about one draw in twenty the benchmark leaves no room; draw the step
    # model and the benchmark again (a seed that has room keeps its first draw).
    for _ in range(50):
        step, knobs = _step_model(rng, gpu["hbm_bandwidth"].m_as("TB/s"), streamed_bytes, kv_token_bytes,
                                  tokens_per_sequence, model["hidden"], model["layers"])
        fixture_columns, fixture_rows, fixture = _fixture(rng, step)
        slo = _slo(fixture[("piecewise", padded)][1] + 0.3, fixture[("eager", below)][1] - 0.3)
        if slo is not None:
            break
    else:
        raise ValueError("no benchmark draw leaves room for an SLO")

    events, tracks, durations = _trace(knobs, padded, model["layers"], rng)
    log = _replay_log(rng, blocks_eager, block_size, peak_usage, peak_running, step)

    artifacts = (
        TableArtifact("memory-ledger", columns, rows,
                      title="Startup memory ledger per capture policy, GPU 0 of 2 (GiB; the FULL_AND_PIECEWISE "
                            "start's KV lines were not shipped)"),
        EventLogArtifact("replay-eager", log,
                         title="Matched workload replayed under eager: the engine's stats lines every 10 s"),
        TableArtifact("step-times", fixture_columns, fixture_rows,
                      title="Matched benchmark: decode step time per captured batch size, same context mix "
                            "(2,000 steps per cell, ms)"),
        _p99_chart(fixture_rows, slo),
        TraceArtifact("decode-step", events, tracks,
                      title=f"One decode step at batch {padded} under each policy (each run aligned at 0)"),
    )

    def gib_blocks(gib):
        return gib * GIB / page_bytes

    values = {
        "total": f"{full['requested'] / util:.6f} GiB",
        "page_mib": round(page_bytes / 2**20, 6),
        "blocks_full": blocks_full,
        "blocks_piecewise": blocks_piecewise,
        "blocks_eager": blocks_eager,
        "available_full": f"{blocks_full_available(full):.6f} GiB",
        "requested": f"{full['requested']:.6f} GiB",
        "weights": f"{full['weights']:.6f} GiB",
        "activation_full": f"{full['activation']:.6f} GiB",
        "non_torch_full": f"{full['non_torch']:.6f} GiB",
        "estimate_full": f"{full['estimate']:.6f} GiB",
        "actual_full": f"{full['actual']:.6f} GiB",
        "estimate_piecewise": f"{piecewise['estimate']:.6f} GiB",
        "over_reserved_pages": math.floor(gib_blocks(full["estimate"] - full["actual"])),
        "blocks_full_no_estimate": _blocks_from(full, page_bytes, estimate_key=None),
        "blocks_full_actual": _blocks_from(full, page_bytes, estimate_key="actual"),
        "blocks_full_total": _blocks_from(full, page_bytes, requested=full["requested"] / util),
        "blocks_full_no_activation": _blocks_from(full, page_bytes, drop=("activation",)),
        "blocks_full_decimal": _blocks_from(full, page_bytes, gib=1e9),
        "missing_vs_eager": blocks_eager - blocks_full,
        "missing_vs_piecewise": blocks_piecewise - blocks_full,
        "peak_usage": peak_usage,
        "peak_demand": round(peak_demand),  # whole pages (the solution quotes it as printed)
        "peak_demand_tokens": round(peak_demand * block_size, 3),
        "peak_demand_on_piecewise": round(peak_usage * blocks_piecewise, 3),
        "shortfall_full": round(peak_demand - blocks_full, 3),
        "margin_piecewise": round(blocks_piecewise - peak_demand, 3),
        "margin_piecewise_share": round((blocks_piecewise - peak_demand) / peak_demand, 6),
        "peak_running": peak_running,
        "padded": padded,
        "below": below,
        "tokens_per_sequence": round(tokens_per_sequence, 1),
        "slo": _ms(slo),
    }
    readings = _trace_readings(events)
    values.update({
        "eager_layer": f"{readings['eager_layer_us']:.3f} us",
        "full_layer": f"{readings['full_layer_us']:.3f} us",
        "eager_extra_per_step": f"{(readings['eager_layer_us'] - readings['full_layer_us']) * model['layers']:.1f} us",
        "eager_issued": f"{readings['eager_issued_us']} us",
        "eager_sync": f"{readings['eager_sync_us']} us",
        "piecewise_gap": f"{readings['piecewise_gap_us']:.3f} us",
    })
    for policy in POLICIES:
        p50, p99 = fixture[(policy.key, padded)]
        values[f"p50_{policy.key}"] = _ms(p50)
        values[f"p99_{policy.key}"] = _ms(p99)
        values[f"p99_{policy.key}_below"] = _ms(fixture[(policy.key, below)][1])
        values[f"trace_{policy.key}"] = _ms(durations[policy.key] / 1000)
    values["p99_piecewise_small"] = _ms(fixture[("piecewise", 8)][1])
    values["p99_eager_small"] = _ms(fixture[("eager", 8)][1])
    values["p99_full_small"] = _ms(fixture[("full_and_piecewise", 8)][1])
    return LabOutput(artifacts, values)
