"""Lab data for 115: per-expert counts and four replays of one MoE layer under expert parallelism.

DeepSeek-V3 prefill on one 8-GPU node, EP8 with data-parallel attention: every rank
brings the same number of prompt tokens, and holds 32 routed experts. In the old
placement rank r holds experts 32r..32r+31, which is exactly expert group r, so
group-limited routing (8 experts from at most 4 of the 8 groups) sends a token to at
most 4 ranks. The skew is built into the groups: one group's experts are picked more
often by the tokens that choose it, so its rank carries 1.32 to 1.52 times the mean
routed load while every rank receives about the same number of distinct tokens.

The new placement is what a balancer packs (longest-processing-time greedy, 32 experts
per rank, load only) from a noisy window of past counts: it evens the routed load, but
it scatters each group over the ranks, so a token fans out to about 5.2 ranks instead of
3.9, and the dispatch and combine move about a third more bytes.

Each rank's timeline is gate, dispatch, expert work, combine, with no overlap. Dispatch
on a rank ends when its tokens have arrived; the expert GEMM takes a fixed launch cost
plus a time per routed token; the combine on every rank ends only once the slowest
rank's outputs have reached it, so a rank that finishes its experts early spends the
difference inside its combine span. The communication control replays the same routing
with the GEMMs replaced by a no-op kernel: the same bytes move, nobody computes.

Every value returned is measured from the generated rows and spans, as a candidate
measures them from the downloads; times are whole microseconds.
"""

from __future__ import annotations

import math
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

RANKS = 8
FULL, CONTROL = 1, 2  # trace pids: the full replay and the communication control
LAYER = 17
LOG_START = datetime(2025, 6, 2, 14, 3, 11, 204_000)
MAX_TRIES = 50


def _lognormal(rng, sigma: float) -> float:
    return math.exp(rng.gauss(0.0, sigma))


def _round_to_total(weights, total: int) -> list[int]:
    """Integers proportional to `weights` that sum exactly to `total` (largest remainder)."""
    scale = total / sum(weights)
    raw = [weight * scale for weight in weights]
    counts = [int(value) for value in raw]
    order = sorted(range(len(raw)), key=lambda index: (counts[index] - raw[index], index))
    for index in order[: total - sum(counts)]:
        counts[index] += 1
    return counts


def _routing(rng, tokens: int, model):
    """Per-expert routed counts, group by group, and the tokens that chose each group."""
    groups, experts = int(model["expert_groups"]), int(model["experts"])
    per_group = experts // groups
    picks, group_picks = int(model["active_experts"]), int(model["topk_groups"])
    hot_group = rng.randrange(groups)
    hot_load = rng.uniform(1.32, 1.52)  # the hot group's routed load over the mean
    while True:
        others = [_lognormal(rng, 0.16) for _ in range(groups - 1)]
        scale = (picks - hot_load) / sum(others)
        loads = [value * scale for value in others]
        if max(loads) < hot_load - 0.1 and min(loads) > 0.6:
            break
    loads.insert(hot_group, hot_load)  # routed pairs per group, in units of `tokens`
    shares = [_lognormal(rng, 0.06) for _ in range(groups)]
    shares[hot_group] *= rng.uniform(1.08, 1.16)  # the hot domain is chosen a little more often
    choose = [group_picks * share / sum(shares) for share in shares]  # P(a token picks the group)
    group_pairs = _round_to_total(loads, picks * tokens)
    counts = []
    for group in range(groups):
        weights = [_lognormal(rng, 0.55) for _ in range(per_group)]
        counts += _round_to_total(weights, group_pairs[group])
    chosen = [round(tokens * probability) for probability in choose]
    return counts, chosen


def _balanced_packing(rng, counts, experts_per_rank: int):
    """Longest-processing-time greedy on a noisy window of the counts: the placement a
    balancer fits to past traffic, and the max/mean it predicts on that window."""
    window = [count * _lognormal(rng, 0.12) for count in counts]
    rank_load, rank_size, placement = [0.0] * RANKS, [0] * RANKS, [0] * len(counts)
    for expert in sorted(range(len(counts)), key=lambda index: (-window[index], index)):
        rank = min((r for r in range(RANKS) if rank_size[r] < experts_per_rank), key=lambda r: (rank_load[r], r))
        placement[expert] = rank
        rank_load[rank] += window[expert]
        rank_size[rank] += 1
    old_window = [sum(window[e] for e in range(len(counts)) if e // experts_per_rank == r) for r in range(RANKS)]
    predicted = max(rank_load) / (sum(rank_load) / RANKS)
    return placement, predicted, max(old_window) / (sum(old_window) / RANKS)


def _distinct_tokens(rng, tokens: int, loads, chosen, old: bool, picks: int) -> list[int]:
    """Tokens dispatched to each rank (each token once per rank it has experts on). Old
    placement: the tokens that chose the rank's group, less the few whose top-8 took
    none of its experts. New placement: a token's picks land on a rank about in
    proportion to its routed share."""
    if old:
        return [round(chosen[rank] * rng.uniform(0.965, 0.99)) for rank in range(RANKS)]
    total = sum(loads)
    return [round(tokens * (1 - (1 - load / total) ** picks) * rng.uniform(0.99, 1.01)) for load in loads]


def _replay(rng, hw, loads, received, control: bool):
    """One replay of the layer: per rank (gate, dispatch, expert, combine) spans in us."""
    peer = (RANKS - 1) / RANKS  # the share of a rank's traffic that crosses NVLink
    sent = sum(received) / RANKS  # tokens are spread evenly over the ranks (DP attention)
    gate_start = [rng.randint(0, 18) for _ in range(RANKS)]
    first_gate = min(gate_start)  # the statement and the table put each replay's first gate kernel at 0
    gate_start = [start - first_gate for start in gate_start]
    gate = [rng.randint(42, 58) for _ in range(RANKS)]
    dispatch_start = [gate_start[r] + gate[r] + rng.randint(4, 9) for r in range(RANKS)]
    everyone_in = max(dispatch_start)
    rows = []
    for rank in range(RANKS):
        moved = max(received[rank], sent) * peer * hw["dispatch_bytes"]
        dispatch_end = everyone_in + 18 + round(moved / hw["bandwidth"] * rng.uniform(0.985, 1.015))
        expert_start = dispatch_end + rng.randint(6, 11)
        if control:  # a no-op kernel in the GEMM's place: the combine sends the received rows straight back
            expert = rng.randint(4, 9)
        else:
            expert = 35 + round(loads[rank] * hw["per_pair"] * rng.uniform(0.99, 1.01))
        rows.append([gate_start[rank], gate[rank], dispatch_start[rank], dispatch_end, expert_start, expert])
    ready = [row[4] + row[5] + rng.randint(5, 8) for row in rows]
    last_arrival = max(ready[s] + 12 + received[s] * peer * hw["combine_bytes"] / hw["bandwidth"]
                       for s in range(RANKS))
    for rank, row in enumerate(rows):
        own = ready[rank] + sent * peer * hw["combine_bytes"] / hw["bandwidth"]
        combine_end = round(max(last_arrival, own)) + rng.randint(14, 30)
        row += [ready[rank], combine_end]
    return rows  # gate_start, gate, dispatch_start, dispatch_end, expert_start, expert, combine_start, combine_end


def _hardware(rng, gpu, model):
    hidden, moe = int(model["hidden"]), int(model["moe_intermediate"])
    peak = gpu["fp8_dense"].m_as("TFLOP/s") * 1e12 / 1e6  # FLOP per us
    efficiency = rng.uniform(0.55, 0.65)
    return {
        "per_pair": 2 * 3 * hidden * moe / (efficiency * peak),  # us per routed token: SwiGLU, 3 matrices
        "bandwidth": gpu["nvlink_bandwidth"].m_as("B/s") / 2 * rng.uniform(0.55, 0.65) / 1e6,  # B per us
        "dispatch_bytes": hidden + hidden // 128 * 4,  # FP8 with one FP32 scale per 128 values
        "combine_bytes": 2 * hidden,  # BF16
    }


def _draw(rng, tokens_per_rank: int, gpu, model):
    tokens = tokens_per_rank * RANKS
    experts_per_rank = int(model["experts"]) // RANKS
    picks = int(model["active_experts"])
    counts, chosen = _routing(rng, tokens, model)
    placement, predicted, window_old = _balanced_packing(rng, counts, experts_per_rank)
    old_loads = [sum(counts[e] for e in range(len(counts)) if e // experts_per_rank == r) for r in range(RANKS)]
    new_loads = [sum(counts[e] for e in range(len(counts)) if placement[e] == r) for r in range(RANKS)]
    received = {"old": _distinct_tokens(rng, tokens, old_loads, chosen, True, picks),
                "new": _distinct_tokens(rng, tokens, new_loads, chosen, False, picks)}
    hw = _hardware(rng, gpu, model)
    loads = {"old": old_loads, "new": new_loads}
    runs = {(placement_name, control): _replay(rng, hw, loads[placement_name], received[placement_name], control)
            for placement_name in ("old", "new") for control in (False, True)}
    return counts, placement, predicted, window_old, loads, received, runs


def _moe_time(rows) -> int:
    return max(row[7] for row in rows) - min(row[2] for row in rows)


def _measure(loads, runs):
    """The answers, measured from the rows as the tables print them."""
    mean = sum(loads["old"]) / RANKS
    full_old, control_old = runs[("old", False)], runs[("old", True)]
    combine = [row[7] - row[6] for row in full_old]
    longest = max(range(RANKS), key=lambda r: (combine[r], -r))
    shortest = min(range(RANKS), key=lambda r: (combine[r], r))
    slope = _slope(loads["old"], [row[5] for row in full_old])  # us per routed token
    times = {key: _moe_time(rows) for key, rows in runs.items()}
    mean_combine = {key: sum(row[7] - row[6] for row in rows) / RANKS for key, rows in runs.items()}
    return {
        "mean_load": mean, "longest": longest, "shortest": shortest, "slope": slope,
        "combine_longest": combine[longest], "combine_shortest": combine[shortest],
        "wait": combine[longest] - (control_old[longest][7] - control_old[longest][6]),
        "transfer_longest": control_old[longest][7] - control_old[longest][6],
        "times": times, "mean_combine": mean_combine, "combine": combine,
        "expert_end": [row[4] + row[5] for row in full_old],
    }


def _ms(microseconds: float) -> str:
    return f"{microseconds / 1000:.6f} ms"


def _span_rows(runs):
    rows = []
    for placement_name in ("old", "new"):
        for control in (False, True):
            replay = f"{placement_name} {'control' if control else 'full'}"
            for rank, row in enumerate(runs[(placement_name, control)]):
                rows.append((replay, rank, row[2] / 1000, row[3] / 1000, row[4] / 1000, (row[4] + row[5]) / 1000,
                             row[6] / 1000, row[7] / 1000))
    return rows


def _trace(name: str, placement_name: str, runs, loads, received, title: str) -> TraceArtifact:
    events, tracks = [], []
    for pid, control in ((FULL, False), (CONTROL, True)):
        process = "comm-only control" if control else "full replay"
        for rank, row in enumerate(runs[(placement_name, control)]):
            tracks.append(Track(pid, rank, process, f"rank {rank}"))
            gate_start, gate, dispatch_start, dispatch_end, expert_start, expert, combine_start, combine_end = row
            expert_name = "expert_noop" if control else "grouped_gemm"
            events += [
                TraceEvent("moe_gate", gate_start, gate, pid, rank, "kernel"),
                TraceEvent("dispatch", dispatch_start, dispatch_end - dispatch_start, pid, rank, "comm",
                           {"layer": LAYER, "recv_tokens": received[rank]}),
                TraceEvent(expert_name, expert_start, expert, pid, rank, "kernel",
                           {"routed_tokens": loads[rank]} if not control else {"rows": received[rank]}),
                TraceEvent("combine", combine_start, combine_end - combine_start, pid, rank, "comm",
                           {"layer": LAYER}),
            ]
    events.sort(key=lambda event: (event.pid, event.tid, event.ts))
    return TraceArtifact(name, events, tracks, title=title)


def _chart(loads, runs) -> ChartArtifact:
    """Each rank's routed tokens against when its experts finish and how long its
    combine then lasts, in both full replays: the comparison the question is about."""
    series = []
    for placement_name in ("old", "new"):
        rows = runs[(placement_name, False)]
        order = sorted(range(RANKS), key=lambda r: (loads[placement_name][r], r))
        series.append(Series(f"{placement_name} placement: grouped_gemm end",
                             tuple((loads[placement_name][r], (rows[r][4] + rows[r][5]) / 1000) for r in order)))
        series.append(Series(f"{placement_name} placement: combine span",
                             tuple((loads[placement_name][r], (rows[r][7] - rows[r][6]) / 1000) for r in order)))
    return ChartArtifact("tokens-vs-times", "routed tokens on the rank", "time (ms)", tuple(series), style="scatter",
                         title=f"Layer {LAYER}, full replays: each rank's routed tokens against its expert end"
                               " and its combine span")


def _log(tokens_per_rank: int, predicted: float, window_old: float, measured, moved: int) -> tuple[str, ...]:
    def stamp(seconds: float) -> str:
        return (LOG_START + timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    longest = measured["longest"]
    ratio = measured["combine_longest"] / measured["combine_shortest"]
    return (
        f"{stamp(0)} INFO  [eplb] layer {LAYER}: window 600 s, 8 GPUs x 32 experts, 0 redundant slots;"
        f" max/mean GPU load {window_old:.3f} on the window",
        f"{stamp(0.187)} INFO  [eplb] layer {LAYER}: balanced packing moves {moved} of 256 experts;"
        f" predicted max/mean GPU load {predicted:.3f}",
        f"{stamp(148.914)} INFO  [replay] captured batch b-0419: 8 ranks x {tokens_per_rank} prompt tokens,"
        " routing recorded (topk_idx saved)",
        f"{stamp(151.020)} INFO  [replay] run 1/4 placement=old mode=full",
        f"{stamp(151.433)} WARN  [ep-monitor] layer {LAYER} rank {longest}: combine"
        f" {measured['combine_longest'] / 1000:.2f} ms, {ratio:.1f}x the fastest rank's combine;"
        " check its NVLink links",
        f"{stamp(152.210)} INFO  [replay] run 2/4 placement=old mode=comm-only (grouped_gemm replaced by a"
        " no-op kernel; same routing, same bytes)",
        f"{stamp(153.377)} INFO  [replay] run 3/4 placement=new mode=full",
        f"{stamp(154.561)} INFO  [replay] run 4/4 placement=new mode=comm-only",
        f"{stamp(154.902)} INFO  [replay] nvlink counters: 0 replay errors, 0 CRC errors on all 8 GPUs",
    )


SEPARATED = (  # (reference, listed mistake): a slip the grader names must never pass for the answer
    ("hot_ratio", "received_ratio"), ("hot_ratio", "hot_over_light"), ("slope", "slope_received_us"),
    ("wait", "combine_longest"), ("wait", "transfer_longest"), ("gain", "gemm_max_drop"),
    ("gain", "naive_combine_drop"),
)


def _number(value) -> float:
    return float(str(value).split()[0])


def _acceptable(loads, measured, values) -> bool:
    """The story every variant must tell: the longest combine sits on a rank below the
    mean load and the hottest rank's is the shortest; the new placement is faster
    overall while its communication is slower, each by a margin well above the replay
    noise; this batch's busiest rank under the new placement carries visibly more than
    the balancer predicted; and every listed mistake stays at least 10% from its reference."""
    hottest = max(range(RANKS), key=lambda r: loads["old"][r])
    story = (loads["old"][measured["longest"]] < 0.95 * measured["mean_load"] and measured["shortest"] == hottest
             and values["gain_share"] > 0.06 and _number(values["comm_delta"]) > 0.05 * _number(values["control_old"])
             and values["predicted_ratio"] + 0.008 < values["new_ratio"] < 1.12)
    return story and all(abs(_number(values[wrong]) / _number(values[right]) - 1) > 0.1 for right, wrong in SEPARATED)


def _slope(x, y) -> float:
    """Least-squares slope of y on x."""
    x_mean, y_mean = sum(x) / len(x), sum(y) / len(y)
    return sum((a - x_mean) * (b - y_mean) for a, b in zip(x, y)) / sum((a - x_mean) ** 2 for a in x)


def _values(tokens_per_rank, model, counts, placement, predicted, window_old, loads, received, runs, measured):
    tokens = tokens_per_rank * RANKS
    experts_per_rank = len(counts) // RANKS
    mean, times, longest = measured["mean_load"], measured["times"], measured["longest"]
    full_old, full_new = runs[("old", False)], runs[("new", False)]
    expert_end = measured["expert_end"]
    gain = times[("old", False)] - times[("new", False)]
    comm = times[("new", True)] - times[("old", True)]
    hidden, moe = int(model["hidden"]), int(model["moe_intermediate"])
    return {
        "tokens_per_rank": tokens_per_rank,
        "tokens": tokens,
        "layer": LAYER,
        "mean_load": mean,
        "hot_rank": max(range(RANKS), key=lambda r: loads["old"][r]),
        "light_rank": min(range(RANKS), key=lambda r: loads["old"][r]),
        "hot_load": max(loads["old"]),
        "light_load": min(loads["old"]),
        "hot_ratio": round(max(loads["old"]) / mean, 6),
        "hot_over_light": round(max(loads["old"]) / min(loads["old"]), 6),
        "received_ratio": round(max(received["old"]) / (sum(received["old"]) / RANKS), 6),
        "hot_expert_ratio": round(max(counts) / (sum(counts) / len(counts)), 6),
        "new_ratio": round(max(loads["new"]) / mean, 6),
        "predicted_ratio": round(predicted, 3),
        "window_old_ratio": round(window_old, 3),
        "slope": f"{measured['slope'] * 1000:.6f} us",
        # A plain number (us): it can be negative, and quantity text must start with a digit.
        "slope_received_us": round(_slope(received["old"], [row[5] for row in full_old]) * 1000, 6),
        "achieved": f"{6 * hidden * moe / measured['slope'] / 1e6:.6f} TFLOP/s",
        "longest_rank": longest,
        "longest_load": loads["old"][longest],
        "longest_load_share": round(loads["old"][longest] / mean, 6),
        "combine_longest": _ms(measured["combine_longest"]),
        "combine_shortest": _ms(measured["combine_shortest"]),
        "transfer_longest": _ms(measured["transfer_longest"]),
        "wait": _ms(measured["wait"]),
        "expert_end_gap": _ms(max(expert_end) - expert_end[longest]),
        "fanout_old": round(sum(received["old"]) / tokens, 6),
        "fanout_new": round(sum(received["new"]) / tokens, 6),
        "moe_old": _ms(times[("old", False)]),
        "moe_new": _ms(times[("new", False)]),
        "control_old": _ms(times[("old", True)]),
        "control_new": _ms(times[("new", True)]),
        "gain": _ms(gain),
        "gain_share": round(gain / times[("old", False)], 6),
        "comm_delta": _ms(comm),
        "compute_gain": _ms(gain + comm),
        "gemm_max_drop": _ms(max(row[5] for row in full_old) - max(row[5] for row in full_new)),
        "naive_combine_drop": _ms(measured["mean_combine"][("old", False)] - measured["mean_combine"][("new", False)]),
        "moved": sum(1 for expert, rank in enumerate(placement) if rank != expert // experts_per_rank),
    }


def generate(variant) -> LabOutput:
    rng = variant.rng
    tokens_per_rank = int(variant.choices["tokens_per_rank"])
    gpu, model = variant.context["gpu"], variant.context["model"]
    experts_per_rank = int(model["experts"]) // RANKS
    for _ in range(MAX_TRIES):  # redraw (from the same stream, so still deterministic) until the story holds
        counts, placement, predicted, window_old, loads, received, runs = _draw(rng, tokens_per_rank, gpu, model)
        measured = _measure(loads, runs)
        values = _values(tokens_per_rank, model, counts, placement, predicted, window_old, loads, received, runs,
                         measured)
        if _acceptable(loads, measured, values):
            break
    else:
        raise RuntimeError("no acceptable draw: the generator's ranges need review")
    expert_rows = tuple((expert, expert // experts_per_rank, count, expert // experts_per_rank, placement[expert])
                        for expert, count in enumerate(counts))
    layout_rows = tuple((name, rank, tokens_per_rank, received[name][rank])
                        for name in ("old", "new") for rank in range(RANKS))
    artifacts = (
        TableArtifact("expert-load", ("expert", "group", "tokens_routed", "rank_old", "rank_new"), expert_rows,
                      title=f"Layer {LAYER}, the captured batch: tokens routed to each expert, and where it sits"),
        TableArtifact("dispatch-layout", ("placement", "rank", "prompt_tokens", "tokens_received"), layout_rows,
                      title="Dispatch layout: distinct tokens each rank receives (one copy per token and rank)"),
        _chart(loads, runs),
        _trace("old-placement", "old", runs, loads["old"], received["old"],
               f"Old placement, layer {LAYER}: full replay (top) and comm-only control (bottom)"),
        _trace("new-placement", "new", runs, loads["new"], received["new"],
               f"New placement, layer {LAYER}: full replay (top) and comm-only control (bottom)"),
        TableArtifact("rank-spans", ("replay", "rank", "dispatch_start_ms", "dispatch_end_ms", "expert_start_ms",
                                     "expert_end_ms", "combine_start_ms", "combine_end_ms"), _span_rows(runs),
                      title="The four replays' spans per rank (ms from the layer's first gate kernel)"),
        EventLogArtifact("eplb-replay", _log(tokens_per_rank, predicted, window_old, measured, values["moved"]),
                         title="Balancer, replay and monitor log lines"),
    )
    return LabOutput(artifacts, values)
