"""Lab data for 103: a week-long five-arm experiment on a Llama 3.3 70B chat service.

Traffic is split by a hash of the user id: control (H100 SXM, TP4, plain decoding) takes
40%, and four candidate arms 15% each: the cheaper GPU (`cheap_gpu`, as many GPUs as the
weights need), EAGLE speculative decoding on H100 (lossless rejection sampling), the
same draft head with relaxed acceptance (lossy), and EAGLE on the cheaper GPU. Each arm
is autoscaled every hour to 65% utilisation from the previous hour's load (so it lags a
ramp), with at least two replicas.

A replica's work per request is a roofline sketch from the catalogue: prefill at 42-48%
MFU plus ring all-reduces (over NVLink, or over PCIe 4.0 x16 where the GPU has no
NVLink), a decode step at 80% of HBM bandwidth over the streamed weights (FORMAT.md
Conventions) plus the batch's KV at a production batch of 48, plus the all-reduces;
EAGLE divides the decode time by its production speed-up (drawn 1.5-1.7x; relaxed
acceptance a fifth to a quarter more) and adds 3% to prefill for the draft head.
Latency: p99 TTFT is a p99 prompt's prefill plus a queueing term that grows with the
hour's utilisation; p99 TPOT is the decode step per token, inflated by prefill
interference and load.

The artifacts: the cost ledger (one serving row per arm per day, plus the experiment's
one-off load-test and eval line items), the eval table, the busiest day's hourly p99
TTFT and TPOT per arm, and the review thread whose claims the candidate audits. Every
value the answers use is measured from these rows, the way a candidate would.
"""

from __future__ import annotations

import math
from datetime import date, timedelta

from questions.labs import ChartArtifact, EventLogArtifact, LabOutput, Series, TableArtifact

ARMS = ("control", "cheap-gpu", "eagle", "eagle-relaxed", "cheap-gpu-eagle")
EAGLE_ARMS = ("eagle", "eagle-relaxed", "cheap-gpu-eagle")
SHARES = {"control": 0.40, "cheap-gpu": 0.15, "eagle": 0.15, "eagle-relaxed": 0.15, "cheap-gpu-eagle": 0.15}
DAYS = 7
FIRST_DAY = date(2026, 3, 2)  # a Monday
BATCH = 48  # decode batch at the production operating point
TARGET_UTILISATION = 0.65
MIN_REPLICAS = 2

SUITES = (("mmlu-pro", 1200, 0.68), ("gsm8k", 1319, 0.93), ("json-schema", 1000, 0.985), ("humaneval", 164, 0.80))


def _magnitude(value, unit: str) -> float:
    return float(value.m_as(unit))


def _replica(gpu, tp: int, model, link, prompt: int, output: int, mfu: float, speedup: float) -> dict:
    """Replica-seconds of work per mean request, and the latency inputs, from the catalogue.
    `link` is the scale-up link's (bandwidth per direction, latency) for the all-reduces."""
    bandwidth_per_direction, latency = link

    def all_reduce(size_bytes: float) -> float:  # a ring: 2 (tp - 1) hops of a 1/tp share each
        return 2 * (tp - 1) * (latency + size_bytes / tp / bandwidth_per_direction)

    compute = tp * _magnitude(gpu["bf16_dense"], "FLOP/s") * mfu
    hbm = tp * _magnitude(gpu["hbm_bandwidth"], "B/s") * 0.8
    reductions = 2 * model["layers"]  # after attention and after the MLP, every layer
    prefill = (2 * model["params"] * prompt / compute * (1.03 if speedup > 1 else 1.0)
               + reductions * all_reduce(prompt * model["hidden"] * 2))
    streamed = (model["params"] - model["vocab"] * model["hidden"]) * 2
    kv_per_token = 2 * model["layers"] * model["kv_heads"] * model["head_dim"] * 2
    step = ((streamed + BATCH * (prompt + output / 2) * kv_per_token) / hbm
            + reductions * all_reduce(BATCH * model["hidden"] * 2))
    per_token = step / speedup
    return {"gpu": gpu["key"], "tp": tp, "price": _magnitude(gpu["price_per_hour"], "USD/hour"),
            "prefill": prefill, "per_token": per_token, "work": prefill + output * per_token / BATCH}


def _diurnal(hour: int) -> float:
    """Load relative to the daily peak (16:00 UTC), never below 0.25."""
    return 0.25 + 0.75 * (0.5 - 0.5 * math.cos(2 * math.pi * (hour - 4) / 24)) ** 1.4


def _quality(rng, max_drop: float, max_z: float) -> list:
    """The eval table. Lossless arms draw their counts from control's rates; relaxed
    acceptance loses points (most on gsm8k). Draws are repeated until the gate outcome
    the data must show holds clearly (lossless arms inside 0.8 of the gate's standard
    errors or its points, relaxed below it on gsm8k by 1.25 times both), so no variant
    sits on the gate's edge."""
    def draw(n: int, rate: float) -> int:
        return max(0, min(n, round(n * rate + math.sqrt(n * rate * (1 - rate)) * rng.gauss(0, 1))))

    def stderr(n: int, correct: int) -> float:
        rate = correct / n
        return math.sqrt(rate * (1 - rate) / n) * 100

    def clearly_passes(drop: float, se: float) -> bool:
        return drop < 0.8 * max_drop or drop < 0.8 * max_z * se

    drops = {"mmlu-pro": 0.004, "gsm8k": 0.042, "json-schema": 0.01, "humaneval": 0.02}
    while True:
        control = {name: draw(n, rate) for name, n, rate in SUITES}
        counts = {"control": control}
        for arm in ARMS[1:]:
            loss = drops if arm == "eagle-relaxed" else {}
            counts[arm] = {name: draw(n, control[name] / n - loss.get(name, 0.0)) for name, n, _ in SUITES}
        # A lossless arm a hair below control on the small suite: more than a point, far inside the noise.
        counts["eagle"]["humaneval"] = control["humaneval"] - rng.choice((2, 3))
        zs = {}
        for arm in ARMS[1:]:
            for name, n, _ in SUITES:
                drop = (control[name] - counts[arm][name]) / n * 100
                se = math.hypot(stderr(n, control[name]), stderr(n, counts[arm][name]))
                zs[(arm, name)] = (drop, se)
        lossless_pass = all(clearly_passes(*z) for (arm, _), z in zs.items() if arm != "eagle-relaxed")
        relaxed_drop, relaxed_se = zs[("eagle-relaxed", "gsm8k")]
        relaxed_others_pass = all(clearly_passes(*z) for (arm, name), z in zs.items()
                                  if arm == "eagle-relaxed" and name != "gsm8k")
        if lossless_pass and relaxed_others_pass and relaxed_drop > 1.25 * max(max_z * relaxed_se, max_drop):
            break
    rows = []
    for arm in ARMS:
        for name, n, _ in SUITES:
            correct = counts[arm][name]
            rows.append((arm, name, n, correct, round(correct / n * 100, 2), round(stderr(n, correct), 2)))
    return rows


def _link(context, gpu) -> tuple[float, float]:
    """NVLink where the GPU has it (half its total, per direction), else PCIe 4.0 x16."""
    if "nvlink_bandwidth" in gpu:
        return _magnitude(gpu["nvlink_bandwidth"], "B/s") / 2, _magnitude(context["links"]["nvlink4"]["latency"], "s")
    pcie = context["links"]["pcie4_x16"]
    return _magnitude(pcie["bandwidth"], "B/s"), _magnitude(pcie["latency"], "s")


def _arms(context, rng) -> dict:
    model = context["model"]
    h100, cheap = context["gpus"]["h100_sxm"], context["cheap_gpu"]
    prompt, output = int(context["prompt_tokens"]), int(context["output_tokens"])
    mfu = rng.uniform(0.42, 0.48)
    eagle = rng.uniform(1.5, 1.7)  # EAGLE's decode speed-up at the production batch
    relaxed = eagle * rng.uniform(1.18, 1.26)
    shapes = {
        "control": (h100, int(context["control_tp"]), 1.0),
        "cheap-gpu": (cheap, int(context["cheap_tp"]), 1.0),
        "eagle": (h100, int(context["control_tp"]), eagle),
        "eagle-relaxed": (h100, int(context["control_tp"]), relaxed),
        "cheap-gpu-eagle": (cheap, int(context["cheap_tp"]), eagle),
    }
    arms = {arm: _replica(gpu, tp, model, _link(context, gpu), prompt, output, mfu, speedup)
            for arm, (gpu, tp, speedup) in shapes.items()}
    for arm, (gpu, _, _) in shapes.items():
        arms[arm]["gpu_name"] = gpu["key"]  # the catalogue key reads like a billing SKU and fits a cell
        arms[arm]["gpu_title"] = gpu["name"]
    return arms


def _hours(rng, arms: dict, prompt: int, output: int, ttft_gate: float) -> dict:
    """Hour by hour for the week: each arm's requests, replicas, utilisation and p99s."""
    peak = rng.uniform(380, 460)  # requests per second over all arms at the daily peak
    hours = {arm: [] for arm in ARMS}
    previous = {}
    for day in range(DAYS):
        day_factor = (0.8 if day >= 5 else 1.0) * rng.uniform(0.96, 1.04)
        for hour in range(24):
            total = peak * _diurnal(hour) * day_factor * (1 + rng.gauss(0, 0.03))
            for arm in ARMS:
                spec = arms[arm]
                rate = total * SHARES[arm] * (1 + rng.gauss(0, 0.01))
                # the autoscaler sizes each hour from the hour before, with 10% headroom for a ramp
                sized_for = previous.get(arm, rate) * 1.1
                replicas = max(MIN_REPLICAS, math.ceil(sized_for * spec["work"] / TARGET_UTILISATION))
                utilisation = min(0.92, rate * spec["work"] / replicas)
                previous[arm] = rate
                queue = spec["prefill"] * utilisation / (1 - utilisation)
                ttft = spec["prefill"] * 3.0 * (1 + rng.gauss(0, 0.04)) + queue  # a p99 prompt is ~2.6x the mean
                spread = 1.08 if arm in EAGLE_ARMS else 1.0  # acceptance varies per request: a wider tail
                tpot = spec["per_token"] * 1000 * (1.35 + 0.3 * utilisation) * spread * (1 + rng.gauss(0, 0.03))
                requests = round(rate * 3600)
                timeouts = 0.0003 + 0.004 * max(0.0, ttft - ttft_gate) / ttft_gate
                failed = round(requests * timeouts * rng.uniform(0.8, 1.2))
                hours[arm].append({
                    "day": day, "hour": hour, "replicas": replicas, "gpu_hours": replicas * spec["tp"],
                    "requests": requests, "failed": failed,
                    "input_tokens": round(requests * prompt * (1 + rng.gauss(0, 0.01))),
                    "output_tokens": round((requests - failed) * output * (1 + rng.gauss(0, 0.01))),
                    "ttft_p99": round(ttft, 2), "tpot_p99": round(tpot, 1),
                })
    return hours


def _ledger(arms: dict, hours: dict) -> list:
    rows = []
    for day in range(DAYS):
        stamp = (FIRST_DAY + timedelta(days=day)).isoformat()
        if day == 0:  # the experiment's one-off line items, billed on its first day
            for arm in ARMS:
                spec = arms[arm]
                for item, replicas, duration in (("load-test", 12, 12), ("eval", 2, 4)):
                    gpu_hours = replicas * spec["tp"] * duration
                    rows.append((stamp, arm, item, spec["gpu_name"], gpu_hours, spec["price"],
                                 round(gpu_hours * spec["price"], 2), None, None, None, None))
        for arm in ARMS:
            spec = arms[arm]
            day_hours = [row for row in hours[arm] if row["day"] == day]
            gpu_hours = sum(row["gpu_hours"] for row in day_hours)
            rows.append((stamp, arm, "serving", spec["gpu_name"], gpu_hours, spec["price"],
                         round(gpu_hours * spec["price"], 2),
                         sum(row["requests"] for row in day_hours), sum(row["failed"] for row in day_hours),
                         sum(row["input_tokens"] for row in day_hours),
                         sum(row["output_tokens"] for row in day_hours)))
    return rows


LEDGER_COLUMNS = ("date", "arm", "line_item", "gpu", "gpu_hours", "usd_per_gpu_hour", "usd", "requests",
                  "failed_requests", "input_tokens", "output_tokens")


def _measure_ledger(rows: list) -> dict:
    """Per arm, from the ledger rows as printed: serving and one-off dollars, tokens, price."""
    totals = {arm: {"serving": 0.0, "one_off": 0.0, "requests": 0, "input": 0, "output": 0, "price": 0.0,
                    "by_day": {}} for arm in ARMS}
    for stamp, arm, item, _, _, price, usd, requests, _, input_tokens, output_tokens in rows:
        entry = totals[arm]
        entry["price"] = price
        if item == "serving":
            entry["serving"] += usd
            entry["requests"] += requests
            entry["input"] += input_tokens
            entry["output"] += output_tokens
            entry["by_day"][stamp] = requests
        else:
            entry["one_off"] += usd
    return totals


def _thread(values: dict, cheap_name: str, busiest: str) -> tuple[str, ...]:
    lines = (
        ("09:02:14", "priya", "ledger for the week of 2 March exported (ledger.csv): a serving row per arm per day,"
                              " plus the load tests and evals of the 2nd"),
        ("09:05:40", "priya", f"headline: {cheap_name} rents at ${values['cheap_price']:.2f}/GPU-hour against"
                              f" ${values['h100_price']:.2f} for the H100, {values['cheap_price_saving'] * 100:.0f}%"
                              " cheaper hardware"),
        ("09:07:02", "dmitri", f"and cheap-gpu's serving bill for the week was ${values['cheap_serving']:,.0f}"
                               f" against control's ${values['control_serving']:,.0f}"),
        ("09:09:31", "dmitri", f"the EAGLE vendor benchmark shows {values['bench_speedup']:.1f}x the tokens/s per"
                               " stream (batch 1, 128-token prompts), so eagle should cut serving cost by"
                               f" {values['bench_saving'] * 100:.0f}%"),
        ("09:11:15", "priya", "put the two together, cheap GPU and EAGLE:"
                              f" {values['cheap_price_ratio']:.2f} x 1/{values['bench_speedup']:.1f} ="
                              f" {values['combined_claim'] * 100:.0f}% of today's cost per token"),
        ("09:14:48", "sam", "eagle-relaxed is the cheapest arm per delivered token,"
                            f" {values['relaxed_saving'] * 100:.1f}% below control"),
        ("09:16:20", "sam", f"eagle-relaxed lost {values['relaxed_drop']:.2f} points on gsm8k against control,"
                            " well beyond the noise of the two evals"),
        ("09:18:03", "lena", "eagle's cost per delivered output token is below control's, same traffic mix,"
                             " one-offs left out"),
        ("09:19:42", "lena", "cheap-gpu costs more than control per delivered output token"),
        ("09:21:10", "lena", f"eagle's p99 TPOT was below control's in every hour of {busiest}, the busiest day"),
        ("09:23:55", "priya", "the load-test and eval lines are one-off costs of the experiment, not of serving"),
        ("09:25:30", "sam", "rollout review at 14:00, bring a recommendation"),
    )
    return tuple(f"2026-03-09 {time} <{who}> {text}" for time, who, text in lines)


def generate(variant) -> LabOutput:
    rng = variant.rng
    context = variant.context
    prompt, output = int(context["prompt_tokens"]), int(context["output_tokens"])
    arms = _arms(context, rng)
    ttft_gate = _magnitude(context["ttft_gate"], "s")
    tpot_gate = _magnitude(context["tpot_gate"], "ms")
    hours = _hours(rng, arms, prompt, output, ttft_gate)
    ledger = _ledger(arms, hours)
    quality_rows = _quality(rng, float(context["quality_max_drop"]), float(context["quality_max_z"]))
    bench_speedup = rng.uniform(2.2, 2.6)

    totals = _measure_ledger(ledger)
    million = 1e6

    def cost(arm: str, one_offs: bool = False, all_tokens: bool = False) -> float:
        entry = totals[arm]
        dollars = entry["serving"] + (entry["one_off"] if one_offs else 0.0)
        tokens = entry["output"] + (entry["input"] if all_tokens else 0)
        return dollars / tokens * million

    by_day = {stamp: sum(totals[arm]["by_day"][stamp] for arm in ARMS) for stamp in totals["control"]["by_day"]}
    busiest = max(by_day, key=lambda stamp: by_day[stamp])
    busiest_index = (date.fromisoformat(busiest) - FIRST_DAY).days
    peak_day = {arm: [row for row in hours[arm] if row["day"] == busiest_index] for arm in ARMS}
    ttft_rows = [(hour, *(peak_day[arm][hour]["ttft_p99"] for arm in ARMS)) for hour in range(24)]
    tpot_rows = [(hour, *(peak_day[arm][hour]["tpot_p99"] for arm in ARMS)) for hour in range(24)]

    def column(rows, arm):
        return [row[1 + ARMS.index(arm)] for row in rows]

    def latency_ok(arm) -> bool:
        return max(column(ttft_rows, arm)) <= ttft_gate and max(column(tpot_rows, arm)) <= tpot_gate

    scores = {(row[0], row[1]): row for row in quality_rows}

    def gsm8k(arm):
        _, _, _, _, score, stderr = scores[(arm, "gsm8k")]
        return score, stderr

    control_score, control_se = gsm8k("control")
    relaxed_score, relaxed_se = gsm8k("eagle-relaxed")
    relaxed_drop = control_score - relaxed_score
    se_difference = math.hypot(control_se, relaxed_se)
    humaneval_drop = scores[("control", "humaneval")][4] - scores[("eagle", "humaneval")][4]
    humaneval_se = math.hypot(scores[("control", "humaneval")][5], scores[("eagle", "humaneval")][5])

    cheap_price, h100_price = totals["cheap-gpu"]["price"], totals["control"]["price"]
    values = {
        "control_cost": f"{cost('control'):.6f} USD",
        "control_cost_with_one_offs": f"{cost('control', one_offs=True):.6f} USD",
        "control_cost_all_tokens": f"{cost('control', all_tokens=True):.6f} USD",
        "control_serving": round(totals["control"]["serving"], 2),
        "control_one_off": round(totals["control"]["one_off"], 2),
        "control_output": totals["control"]["output"],
        "cheap_cost": f"{cost('cheap-gpu'):.6f} USD",
        "cheap_serving": round(totals["cheap-gpu"]["serving"], 2),
        "cheap_ratio": round(cost("cheap-gpu") / cost("control"), 6),
        "cheap_ratio_with_one_offs": round(cost("cheap-gpu", one_offs=True) / cost("control", one_offs=True), 6),
        "cheap_spend_ratio": round(totals["cheap-gpu"]["serving"] / totals["control"]["serving"], 6),
        "cheap_price": cheap_price,
        "h100_price": h100_price,
        "cheap_price_ratio": round(cheap_price / h100_price, 6),
        "cheap_price_saving": round(1 - cheap_price / h100_price, 6),
        "cheap_tp": arms["cheap-gpu"]["tp"],
        "eagle_cost": f"{cost('eagle'):.6f} USD",
        "eagle_saving": round(1 - cost("eagle") / cost("control"), 6),
        "eagle_saving_with_one_offs": round(1 - cost("eagle", one_offs=True) / cost("control", one_offs=True), 6),
        "eagle_spend_saving": round(1 - totals["eagle"]["serving"] / totals["control"]["serving"], 6),
        "eagle_one_off": round(totals["eagle"]["one_off"], 2),
        "eagle_serving": round(totals["eagle"]["serving"], 2),
        "relaxed_cost": f"{cost('eagle-relaxed'):.6f} USD",
        "relaxed_saving": round(1 - cost("eagle-relaxed") / cost("control"), 6),
        "cheap_eagle_cost": f"{cost('cheap-gpu-eagle'):.6f} USD",
        "cheap_eagle_ratio": round(cost("cheap-gpu-eagle") / cost("control"), 6),
        "cheap_eagle_vs_eagle": round(cost("cheap-gpu-eagle") / cost("eagle"), 6),
        "bench_speedup": round(bench_speedup, 1),
        "bench_saving": round(1 - 1 / round(bench_speedup, 1), 6),
        "combined_claim": round(round(cheap_price / h100_price, 2) / round(bench_speedup, 1), 6),
        "control_gsm8k": control_score,
        "control_gsm8k_se": control_se,
        "relaxed_gsm8k": relaxed_score,
        "relaxed_gsm8k_se": relaxed_se,
        "relaxed_drop": round(relaxed_drop, 6),
        "relaxed_se_difference": round(se_difference, 6),
        "relaxed_z": round(relaxed_drop / se_difference, 6),
        "relaxed_z_one_se": round(relaxed_drop / relaxed_se, 6),
        "relaxed_z_summed_se": round(relaxed_drop / (control_se + relaxed_se), 6),
        "eagle_humaneval_drop": round(humaneval_drop, 6),
        "eagle_humaneval_z": round(humaneval_drop / humaneval_se, 6),
        "busiest_requests": by_day[busiest],
    }
    for arm, key in (("control", "control"), ("cheap-gpu", "cheap"), ("eagle", "eagle"),
                     ("eagle-relaxed", "relaxed"), ("cheap-gpu-eagle", "cheap_eagle")):
        values[f"{key}_ttft_max"] = f"{max(column(ttft_rows, arm))} s"
        values[f"{key}_tpot_max"] = f"{max(column(tpot_rows, arm))} ms"
        values[f"{key}_tpot_hours_over"] = sum(tpot > tpot_gate for tpot in column(tpot_rows, arm))
        values[f"{key}_ttft_hours_over"] = sum(ttft > ttft_gate for ttft in column(ttft_rows, arm))
        values[f"{key}_latency_ok"] = int(latency_ok(arm))
    values["eagle_tpot_below_control_hours"] = sum(
        e < c for e, c in zip(column(tpot_rows, "eagle"), column(tpot_rows, "control")))

    weekday = date.fromisoformat(busiest).strftime("%A %-d March")
    hour_columns = ("hour_utc", *ARMS)

    def chart(name: str, rows: list, label: str, gate: float, gate_label: str) -> ChartArtifact:
        series = [Series(arm, tuple((hour, value) for hour, value in zip(range(24), column(rows, arm))))
                  for arm in ARMS]
        series.append(Series(gate_label, ((0, gate), (23, gate))))
        return ChartArtifact(name, "hour of the day (UTC)", label, tuple(series),
                             title=f"{label} per hour on {weekday}, the busiest day, against the SLO")
    artifacts = (
        TableArtifact("ledger", LEDGER_COLUMNS, ledger,
                      title="Cost ledger, week of 2 March: serving per arm per day, and the experiment's one-offs"),
        TableArtifact("quality", ("arm", "suite", "items", "correct", "score_pct", "stderr_pct"), quality_rows,
                      title="Quality evals per arm (score and its standard error, in points)"),
        chart("ttft-chart", ttft_rows, "p99 TTFT (s)", ttft_gate, f"SLO {ttft_gate:g} s"),
        chart("tpot-chart", tpot_rows, "p99 TPOT (ms)", tpot_gate, f"SLO {tpot_gate:g} ms"),
        TableArtifact("ttft-p99", hour_columns, ttft_rows,
                      title=f"p99 time to first token per hour on {weekday}, the busiest day (seconds)"),
        TableArtifact("tpot-p99", hour_columns, tpot_rows,
                      title=f"p99 time per output token per hour on {weekday}, the busiest day (ms)"),
        EventLogArtifact("review-thread", _thread(values, arms["cheap-gpu"]["gpu_title"], weekday),
                         title="#inference-cost-review, the morning after the experiment"),
    )
    return LabOutput(artifacts, values)
