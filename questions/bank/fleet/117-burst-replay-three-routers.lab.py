"""Lab data for 117: one recorded burst replayed through three routers, then with local
reservations removed and with an eviction notice delayed.

The fleet is a few replicas of Llama 3.1 8B, one GPU each, that run their prefills one at
a time in arrival order (the per-token cost comes from the question's derived
`us_per_token`). Replica r0 holds the hot agent system prompt in its prefix cache, r1 a
RAG knowledge-base prefix, r2 the support bot's, r3 (when there is one) an eval
harness's; chat sessions with their own history hold nothing anywhere. A load report
reaches the router every 50 ms; a few milliseconds into the burst r1's LRU evicts the RAG
prefix, and the notice reaches the router 1.5 ms later (or, in the last replay, after
the burst). The five replays use `ledger` from the judge file beside this one (the model
the statement and the code part define), so the page and the judge cannot disagree.

A drawn burst is kept only if it shows what the question asks about (the loop in
`generate` redraws it otherwise): predicted-finish has the lowest mean TTFT (by 2% at
least) and a lower worst TTFT than round-robin, and affinity the worst single TTFT; no
request in the affinity or predicted-finish replays is mispredicted; without
reservations at least three decisions change; with the late notice the first RAG
request after the eviction goes to r1 (believed warm) where the prompt notice sent it
elsewhere; and the listed mistakes differ from the references.
Every value is measured from the replays' rows, as a candidate would from the ledger.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from grading.judge import load_judge
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

JUDGE_FILE = "fleet/117-burst-replay-three-routers.judge.py"
REPORT_EVERY_US = 50_000
NOTICE_US = 1_500  # a KV event's normal trip from the replica to the router
LOG_START = datetime(2025, 6, 3, 14, 7, 21, 250_000)

RUNS = (  # (code, what the ledger calls it, policy, reservations, late notice)
    ("affinity", "affinity", "affinity", True, False),
    ("round_robin", "round-robin", "round_robin", True, False),
    ("predicted_finish", "predicted-finish", "predicted_finish", True, False),
    ("pf_no_reservations", "predicted-finish, no local reservations", "predicted_finish", False, False),
    ("pf_late_notice", "predicted-finish, eviction notice late", "predicted_finish", True, True),
)
# (prefix, tokens low, high, suffix tokens low, high, share of the burst, tenant)
PREFIXES = (
    ("sys-agent-v7", 3_000, 5_000, 600, 1_800, 0.45, "acme-agents"),
    ("kb-rag-2025q2", 2_000, 3_500, 300, 900, 0.20, "docs-search"),
    ("support-bot", 1_500, 2_500, 100, 500, 0.15, "helpdesk"),
    ("eval-harness", 1_000, 2_000, 200, 600, 0.08, "ml-eval"),
)
CHAT_SHARE = 0.12  # the rest: chat sessions whose own history is their prefix
EVICTED = 1  # replica r1 evicts its prefix, PREFIXES[1]


def _draw_burst(rng, replicas: int, per_token: int):
    lengths = {name: int(rng.uniform(low, high)) // 16 * 16 for name, low, high, *_ in PREFIXES}
    count = 8 * replicas
    mean_warm_tokens = 900
    gap = mean_warm_tokens * per_token / (rng.uniform(1.2, 1.6) * replicas)  # the burst's load above capacity
    t, requests = 0.0, []
    for serial in range(count):
        t += rng.expovariate(1 / gap)
        pick = rng.random()
        for name, _, _, low, high, share, tenant in PREFIXES[: replicas]:
            if pick < share:
                prefix, prefix_tokens, suffix = name, lengths[name], int(rng.uniform(low, high))
                break
            pick -= share
        else:
            prefix, tenant = f"chat-{rng.randrange(16 ** 6):06x}", "consumer-app"
            prefix_tokens, suffix = int(rng.uniform(800, 2_000)), int(rng.uniform(50, 300))
        requests.append({"id": f"q{serial:02d}", "arrival_us": int(t), "prefix": prefix,
                         "prefix_tokens": prefix_tokens, "prompt_tokens": prefix_tokens + suffix,
                         "tenant": tenant, "max_tokens": rng.choice((256, 512, 1024, 2048))})
    scale = per_token / 28
    busy = [int(rng.uniform(20_000, 60_000) * scale)] + [int(rng.uniform(0, 30_000) * scale)
                                                          for _ in range(replicas - 1)]
    fleet = {"replicas": replicas, "us_per_token": per_token, "report_every_us": REPORT_EVERY_US,
             "cached": [[PREFIXES[replica][0]] for replica in range(replicas)], "busy_until_us": busy}
    return requests, fleet


def _eviction(rng, requests):
    """The eviction of r1's prefix between two requests in the middle of the burst, with
    no request for it inside the notice's normal trip, and the late notice's delay: past
    the burst's last arrival, in whole 100 ms."""
    prefix = PREFIXES[EVICTED][0]
    middle = requests[int(len(requests) * rng.uniform(0.3, 0.5))]["arrival_us"]
    at = middle - 1 - rng.randrange(2_000)
    if any(at < request["arrival_us"] <= at + NOTICE_US for request in requests if request["prefix"] == prefix):
        return None
    last = requests[-1]["arrival_us"]
    late = ((last - at) // 100_000 + 2) * 100_000
    return {"replica": EVICTED, "prefix": prefix, "at_us": at}, late


def _measure(requests, rows):
    ttfts = [row["first_token_us"] - request["arrival_us"] for request, row in zip(requests, rows)]
    return {"mean_ttft": sum(ttfts) / len(ttfts), "worst_ttft": max(ttfts), "ttfts": ttfts,
            "prefill": sum(row["prefill_us"] for row in rows), "hits": sum(row["hit"] for row in rows),
            "mispredicted": sum(row["predicted_first_token_us"] != row["first_token_us"] for row in rows),
            "last_first_token": max(row["first_token_us"] for row in rows)}


def _scenario(rng, replicas: int, per_token: int):
    """(requests, fleet, eviction, late delay, {run: rows}) or None when the burst does not
    show what the question asks about."""
    requests, fleet = _draw_burst(rng, replicas, per_token)
    drawn = _eviction(rng, requests)
    if drawn is None:
        return None
    eviction, late = drawn
    judge = load_judge(JUDGE_FILE, "replay")
    replays = {}
    for code, _, policy, reservations, late_notice in RUNS:
        notice = eviction["at_us"] + (late if late_notice else NOTICE_US)
        replays[code] = judge.ledger(requests, fleet, policy, reservations, [{**eviction, "notice_us": notice}])
    stats = {code: _measure(requests, rows) for code, rows in replays.items()}
    pf, affinity, rr = stats["predicted_finish"], stats["affinity"], stats["round_robin"]
    # The reading part says predicted-finish has the lowest mean and affinity the worst single TTFT: keep
    # both clear of a near tie (a 0.3% win reads as noise), and round-robin's worst above predicted-finish's
    # so that "round-robin has the lowest latency" is false on the worst TTFT as well as on the mean.
    if not (pf["mean_ttft"] < 0.98 * min(affinity["mean_ttft"], rr["mean_ttft"])
            and affinity["worst_ttft"] > max(pf["worst_ttft"], rr["worst_ttft"])
            and rr["worst_ttft"] > pf["worst_ttft"]):
        return None
    if pf["mispredicted"] or affinity["mispredicted"] or rr["prefill"] <= affinity["prefill"]:
        return None
    changed = [index for index, (a, b) in enumerate(zip(replays["predicted_finish"], replays["pf_no_reservations"]))
               if a["replica"] != b["replica"]]
    if len(changed) < 3 or stats["pf_no_reservations"]["mean_ttft"] <= pf["mean_ttft"]:
        return None
    if not _sent_since_report(requests, replays["pf_no_reservations"], changed[0]):
        return None  # the solution says the first changed request goes where the report is stale
    after = [index for index, request in enumerate(requests)
             if request["prefix"] == eviction["prefix"] and request["arrival_us"] > eviction["at_us"]]
    if len(after) < 2:
        return None
    first = after[0]
    late_row, prompt_row = replays["pf_late_notice"][first], replays["predicted_finish"][first]
    if late_row["replica"] != EVICTED or prompt_row["replica"] == EVICTED or late_row["hit"]:
        return None
    error = late_row["first_token_us"] - late_row["predicted_first_token_us"]
    if error != per_token * requests[first]["prefix_tokens"]:
        return None  # the solution says the error is exactly the prefix's prefill
    if not _apart(error, late, late_row["prefill_us"], late_row["first_token_us"] - requests[first]["arrival_us"]):
        return None  # the misprediction part's mistakes: the notice's delay, the whole cold prefill, the TTFT
    if not _apart(len(changed), _on_busiest(replays["pf_no_reservations"], replicas), _changed_between(
            replays["predicted_finish"], replays["pf_late_notice"])):
        return None
    if not _apart(affinity["worst_ttft"], affinity["last_first_token"], affinity["mean_ttft"], pf["worst_ttft"]):
        return None
    if not _apart(rr["prefill"] - affinity["prefill"], rr["prefill"], rr["prefill"] - pf["prefill"]):
        return None
    return requests, fleet, eviction, late, replays, stats, changed, first


def _apart(reference, *mistakes) -> bool:
    """Each listed mistake at least 3% away from the reference (the parts' rtol is 1%)."""
    return all(abs(mistake - reference) > 0.03 * abs(reference) for mistake in mistakes)


def _sent_since_report(requests, rows, index: int) -> bool:
    """Did the run send request ``index`` to a replica it had already sent work to since
    the last load report (whose drain time that report therefore understates)?"""
    now = requests[index]["arrival_us"]
    report = now // REPORT_EVERY_US * REPORT_EVERY_US
    replica = rows[index]["replica"]
    return any(rows[earlier]["replica"] == replica and requests[earlier]["arrival_us"] >= report
               for earlier in range(index))


def _on_busiest(rows, replicas: int) -> int:
    return max(sum(row["replica"] == replica for row in rows) for replica in range(replicas))


def _changed_between(rows, other_rows) -> int:
    return sum(a["replica"] != b["replica"] for a, b in zip(rows, other_rows))


def _ms(microseconds: float) -> str:
    return f"{microseconds / 1000:.3f} ms"


def _stamp(microseconds: int) -> str:
    return (LOG_START + timedelta(microseconds=microseconds)).strftime("%H:%M:%S.%f")[:-3]


def _router_log(rng, requests, fleet, eviction, replays, at_zero):
    """What the router logged during the recorded burst (it runs predicted-finish with
    reservations): its config, the load reports, the KV event and its notice, health
    checks and a metrics scrape (distractors). ``at_zero`` is each replica's (kv usage,
    running decodes) in the fleet table, which the report at time 0 repeats."""
    rows = replays["predicted_finish"]
    lines = [(0, f"{_stamp(0)} INFO  router config policy=predicted_finish local_reservations=on "
                 f"load_report_interval_ms={REPORT_EVERY_US // 1000} prefill_us_per_token={fleet['us_per_token']}")]
    last = requests[-1]["arrival_us"]
    for report in range(0, last + REPORT_EVERY_US, REPORT_EVERY_US):
        for replica in range(fleet["replicas"]):
            sent = [(request, row) for request, row in zip(requests, rows)
                    if row["replica"] == replica and request["arrival_us"] < report]
            drain = max([fleet["busy_until_us"][replica]] + [row["first_token_us"] for _, row in sent])
            waiting = sum(1 for _, row in sent if row["start_us"] > report)
            if report == 0:
                kv, running_decodes = at_zero[replica]
            else:
                running_decodes = rng.randrange(18, 60)
                kv = min(0.97, 0.55 + 0.01 * len(sent) + rng.uniform(0, 0.2))
            lines.append((report, f"{_stamp(report)} INFO  load report replica=r{replica} "
                                  f"queue_drain_ms={max(0, drain - report) / 1000:.3f} waiting_prefills={waiting} "
                                  f"running_decodes={running_decodes} kv_usage={kv:.2f}"))
    for tick in range(0, last + 200_000, 200_000):
        for replica in range(fleet["replicas"]):
            lines.append((tick + 7_000 + replica, f"{_stamp(tick + 7_000 + replica)} DEBUG health replica=r{replica} "
                                                  f"status=200 latency_ms={rng.uniform(0.6, 2.4):.1f}"))
    lines.append((91_000, f"{_stamp(91_000)} DEBUG metrics scrape /metrics replicas={fleet['replicas']} ok"))
    at, prefix = eviction["at_us"], eviction["prefix"]
    blocks = (_prefix_tokens(requests, prefix) + 15) // 16
    lines.append((at, f"{_stamp(at)} INFO  kv-event replica=r{EVICTED} BlockRemoved prefix={prefix} blocks={blocks} "
                      f"reason=lru at_burst_ms={at / 1000:.3f}"))
    lines.append((at + NOTICE_US, f"{_stamp(at + NOTICE_US)} INFO  kv-event applied replica=r{EVICTED} "
                                  f"prefix={prefix} removed from the router's view"))
    lines.sort(key=lambda line: line[0])
    return tuple(text for _, text in lines)


def _prefix_tokens(requests, prefix: str) -> int:
    return next(request["prefix_tokens"] for request in requests if request["prefix"] == prefix)


def _artifacts(rng, requests, fleet, eviction, replays, gpu_name):
    replicas = fleet["replicas"]
    fleet_rows = tuple(
        (f"r{replica}", gpu_name, ", ".join(fleet["cached"][replica]), fleet["busy_until_us"][replica] / 1000,
         round(rng.uniform(0.55, 0.8), 2), rng.randrange(20, 48))
        for replica in range(replicas))
    fleet_table = TableArtifact(
        "fleet", ("replica", "gpu", "cached_prefixes", "queued_prefill_ms_at_0", "kv_usage_at_0", "running_decodes"),
        fleet_rows, title="The fleet at the burst's start (time 0)")
    burst_table = TableArtifact(
        "burst", ("request", "arrival_ms", "tenant", "prefix", "prefix_tokens", "prompt_tokens", "max_tokens"),
        tuple((request["id"], request["arrival_us"] / 1000, request["tenant"], request["prefix"],
               request["prefix_tokens"], request["prompt_tokens"], request["max_tokens"]) for request in requests),
        title=f"The burst: {len(requests)} requests in arrival order")
    ledger_rows = []
    for code, _, _, _, _ in RUNS:
        for request, row in zip(requests, replays[code]):
            ledger_rows.append((
                code, request["id"], request["arrival_us"] / 1000, request["prefix"], f"r{row['replica']}",
                "yes" if row["predicted_hit"] else "no", row["predicted_first_token_us"] / 1000,
                "yes" if row["hit"] else "no", row["start_us"] / 1000, row["prefill_us"] / 1000,
                row["first_token_us"] / 1000, (row["first_token_us"] - request["arrival_us"]) / 1000))
    ledger_table = TableArtifact(
        "replays", ("run", "request", "arrival_ms", "prefix", "replica", "predicted_hit", "predicted_first_token_ms",
                    "hit", "prefill_start_ms", "prefill_ms", "first_token_ms", "ttft_ms"),
        tuple(ledger_rows),
        title="The replays' ledger: one row per request per run (times in ms from the burst's start)")
    tracks, events = [], []
    for pid, (code, label, *_rest) in enumerate(RUNS, start=1):
        for replica in range(replicas):
            tracks.append(Track(pid, replica + 1, label, f"r{replica} prefill"))
        for request, row in zip(requests, replays[code]):
            events.append(TraceEvent(
                f"{request['id']} {request['prefix']}", row["start_us"], row["prefill_us"], pid, row["replica"] + 1,
                "hit" if row["hit"] else "miss",
                {"arrival_ms": request["arrival_us"] / 1000, "hit": "yes" if row["hit"] else "no",
                 "predicted_hit": "yes" if row["predicted_hit"] else "no",
                 "tokens_prefilled": row["prefill_us"] // fleet["us_per_token"]}))
    trace = TraceArtifact("prefills", tuple(events), tuple(tracks),
                          title="Each replay's prefills, one row per replica (a span per request, hover for its times)")
    def ttft_chart(name, codes, title):
        # Two charts of three runs each: five overlapping scatter series hide each other.
        series = tuple(
            Series(label, tuple((request["arrival_us"] / 1000, (row["first_token_us"] - request["arrival_us"]) / 1000)
                                for request, row in zip(requests, replays[code])))
            for code, label, *_rest in RUNS if code in codes)
        return ChartArtifact(name, "arrival (ms from the burst's start)", "time to first token (ms)", series,
                             style="scatter", title=title)

    baselines = ttft_chart("ttft-baselines", ("affinity", "round_robin", "predicted_finish"),
                           "Time to first token of each request: the three policies")
    altered = ttft_chart("ttft-altered", ("predicted_finish", "pf_no_reservations", "pf_late_notice"),
                         "Time to first token of each request: predicted-finish as recorded and altered")
    at_zero = {replica: (row[4], row[5]) for replica, row in enumerate(fleet_rows)}
    log = EventLogArtifact("router", _router_log(rng, requests, fleet, eviction, replays, at_zero),
                           title="The router's log during the recorded burst (it ran predicted-finish)")
    return fleet_table, burst_table, log, ledger_table, trace, baselines, altered


def generate(variant) -> LabOutput:
    rng = variant.rng
    replicas = int(variant.choices["replicas"])
    per_token = int(round(variant.context["us_per_token"].m_as("us")))
    while True:
        scenario = _scenario(rng, replicas, per_token)
        if scenario is not None:
            break
    requests, fleet, eviction, late, replays, stats, changed, first = scenario
    artifacts = _artifacts(rng, requests, fleet, eviction, replays, variant.context["gpu"]["name"])
    late_row = replays["pf_late_notice"][first]
    prompt_row = replays["predicted_finish"][first]
    request = requests[first]
    no_res = replays["pf_no_reservations"]
    busiest = max(range(replicas), key=lambda replica: sum(row["replica"] == replica for row in no_res))
    late_changed = _changed_between(replays["predicted_finish"], replays["pf_late_notice"])
    values = {
        "requests": len(requests),
        "replicas": replicas,
        "us_per_token": f"{per_token} us",
        "report_every": _ms(REPORT_EVERY_US),
        "evicted_prefix_tokens": request["prefix_tokens"],
        "eviction_at": _ms(eviction["at_us"]),
        "notice_delay": _ms(late),
        "last_arrival": _ms(requests[-1]["arrival_us"]),
        "changed": len(changed),
        "first_changed": int(changed[0]),
        "no_res_on_busiest": _on_busiest(no_res, replicas),
        "no_res_busiest": busiest,
        "late_changed": late_changed,
        "late_request": int(first),
        "late_arrival": _ms(request["arrival_us"]),
        "late_prompt_replica": prompt_row["replica"],
        "late_prompt_hit": int(prompt_row["predicted_hit"]),
        "late_predicted": _ms(late_row["predicted_first_token_us"]),
        "late_first_token": _ms(late_row["first_token_us"]),
        "misprediction": _ms(late_row["first_token_us"] - late_row["predicted_first_token_us"]),
        "late_cold_prefill": _ms(late_row["prefill_us"]),
        "late_ttft": _ms(late_row["first_token_us"] - request["arrival_us"]),
        "prompt_ttft": _ms(prompt_row["first_token_us"] - request["arrival_us"]),
    }
    for code, _, _, _, _ in RUNS:
        values[f"{code}_mean_ttft"] = _ms(stats[code]["mean_ttft"])
        values[f"{code}_worst_ttft"] = _ms(stats[code]["worst_ttft"])
        values[f"{code}_prefill"] = _ms(stats[code]["prefill"])
        values[f"{code}_hits"] = stats[code]["hits"]
        values[f"{code}_last_first_token"] = _ms(stats[code]["last_first_token"])
    values["rr_extra_prefill"] = _ms(stats["round_robin"]["prefill"] - stats["affinity"]["prefill"])
    values["rr_extra_vs_pf"] = _ms(stats["round_robin"]["prefill"] - stats["predicted_finish"]["prefill"])
    return LabOutput(artifacts, values)
