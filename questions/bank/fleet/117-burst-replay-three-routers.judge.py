"""Trusted judge for 117-burst-replay-three-routers (part ``replay``): reviewed code, never
sent to the sandbox. The lab generator beside it (``117-...lab.py``) replays its bursts
with the same ``replay`` function, so the page's ledgers and the judge agree by construction.

``replay`` is the model the statement defines: a router (affinity, round-robin or
predicted-finish) in front of replicas that each run their prefills one at a time in the
order they arrive. The router knows each replica's load only from periodic load reports
and, when reservations are on, from the work it has itself sent since the last report;
it knows each replica's prefix cache from the initial snapshot, from its own routing (a
replica it sends a prefix to will hold it) and from eviction notices, which may arrive
late. A replica's real cache decides the real prefill: a hit is decided when the prefill
starts. Times are whole microseconds, so every comparison is exact and ties go to the
lower replica index, as the statement says.

The keyword ``mutant`` switches one rule off (a plausible wrong implementation); the case
generator uses the mutants so that each group tests its own rule:
- ``always_reserve``: the ``reservations`` flag ignored (only ``no_reservations`` differs);
- ``notice_at_eviction``: the router hears an eviction when it happens, not when the
  notice arrives (only ``eviction`` differs: elsewhere notices are immediate or ignored);
- ``hit_at_arrival``: the real hit decided from the replica's cache at the request's
  arrival rather than at its prefill's start (every group is made to catch it);
- ``pf_ignores_cache``: predicted-finish prices every prompt cold (a pure least-loaded
  router; the groups that run predicted-finish catch it).
"""

from grading.judge import Case, Judge

POLICIES = ("affinity", "round_robin", "predicted_finish")


def _holds(cached: set, history: list, prefix: str, at: int) -> bool:
    """Does the replica hold ``prefix`` at time ``at``? ``history`` is its (time, order,
    prefix, held) events: prefills finishing (order 0: insert) and evictions (order 1, so
    an eviction at the same instant as an insert wins)."""
    held = prefix in cached
    for time, _, name, state in sorted(history):
        if time > at:
            break
        if name == prefix:
            held = state
    return held


def replay(requests, fleet, policy, reservations=True, evictions=(), mutant=None):
    """[[replica, first_token_us], ...] for ``requests`` in the order given (by arrival)."""
    return [[row["replica"], row["first_token_us"]]
            for row in ledger(requests, fleet, policy, reservations, evictions, mutant)]


def ledger(requests, fleet, policy, reservations=True, evictions=(), mutant=None):
    """Per request, in order: the replica chosen, what the router predicted there (a hit
    or not, the first token's time) and what happened (a hit or not, the prefill's start,
    its length and the first token's time, in microseconds)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}")
    count, per_token, every = fleet["replicas"], fleet["us_per_token"], fleet["report_every_us"]
    view = [set(prefixes) for prefixes in fleet["cached"]]  # what the router believes
    cached = [set(prefixes) for prefixes in fleet["cached"]]  # the replicas' caches at time 0
    history = [[] for _ in range(count)]
    for eviction in evictions:
        history[eviction["replica"]].append((eviction["at_us"], 1, eviction["prefix"], False))
    heard = "at_us" if mutant == "notice_at_eviction" else "notice_us"
    notices = sorted((eviction[heard], eviction["replica"], eviction["prefix"]) for eviction in evictions)
    busy = list(fleet["busy_until_us"])  # when each replica's queue really drains
    estimate = list(busy)  # the router's belief: the load report at time 0
    next_report = every
    reserve = reservations or mutant == "always_reserve"
    rows = []
    for index, request in enumerate(requests):
        now, prefix = request["arrival_us"], request["prefix"]
        if now >= next_report:  # the latest report due: the replicas' real drain times
            estimate = list(busy)
            next_report = (now // every + 1) * every
        while notices and notices[0][0] <= now:
            _, replica, name = notices.pop(0)
            view[replica].discard(name)

        def ready(replica):
            return max(now, estimate[replica])

        def tokens_if_warm(warm):
            return request["prompt_tokens"] - (request["prefix_tokens"] if warm else 0)

        def priced_warm(replica):
            return prefix in view[replica] and mutant != "pf_ignores_cache"

        if policy == "round_robin":
            chosen = index % count
        elif policy == "affinity":
            holders = [replica for replica in range(count) if prefix in view[replica]] or range(count)
            chosen = min(holders, key=lambda replica: (ready(replica), replica))
        else:
            chosen = min(range(count), key=lambda replica: (
                ready(replica) + per_token * tokens_if_warm(priced_warm(replica)), replica))
        predicted_hit = prefix in view[chosen]
        predicted = ready(chosen) + per_token * tokens_if_warm(predicted_hit)
        if reserve:
            estimate[chosen] = predicted
        view[chosen].add(prefix)  # the router's own insert: the replica will hold the prefix
        start = max(now, busy[chosen])
        hit = _holds(cached[chosen], history[chosen], prefix, now if mutant == "hit_at_arrival" else start)
        finish = start + per_token * tokens_if_warm(hit)
        busy[chosen] = finish
        history[chosen].append((finish, 0, prefix, True))
        rows.append({"replica": chosen, "predicted_hit": predicted_hit, "predicted_first_token_us": predicted,
                     "hit": hit, "start_us": start, "prefill_us": finish - start, "first_token_us": finish})
    return rows


# ---------------------------------------------------------------- the cases

PREFIXES = ("sys-agent", "sys-rag", "sys-support", "sys-eval", "chat-1", "chat-2")


def _burst(rng, count: int, replicas: int, span_us: int):
    """A burst of ``count`` requests over ``span_us``, a hot prefix and a few cooler ones,
    and a fleet whose caches and queues differ."""
    lengths = {name: int(rng.integers(10, 60)) * 50 for name in PREFIXES}
    weights = [0.4, 0.2, 0.15, 0.1, 0.1, 0.05]
    arrivals = sorted(int(t) for t in rng.integers(0, span_us, size=count))
    requests = []
    for serial, arrival in enumerate(arrivals):
        prefix = PREFIXES[int(rng.choice(len(PREFIXES), p=weights))]
        suffix = int(rng.integers(2, 40)) * 25
        requests.append({"id": f"q{serial:02d}", "arrival_us": arrival, "prefix": prefix,
                         "prefix_tokens": lengths[prefix], "prompt_tokens": lengths[prefix] + suffix})
    cached = [[PREFIXES[replica % 4]] for replica in range(replicas)]
    fleet = {"replicas": replicas, "us_per_token": int(rng.choice([14, 28, 30, 90])),
             "report_every_us": int(rng.choice([20_000, 50_000, 100_000])), "cached": cached,
             "busy_until_us": [int(rng.integers(0, 4)) * 10_000 for _ in range(replicas)]}
    return requests, fleet


def _eviction(rng, requests, fleet, late: bool):
    """One eviction of a cached prefix on a replica mid-burst, heard at once or late."""
    replica = int(rng.integers(fleet["replicas"]))
    prefix = fleet["cached"][replica][0]
    at = max(0, requests[len(requests) // 3]["arrival_us"] - 1)
    delay = int(rng.integers(100_000, 400_000)) if late else 0
    return [{"replica": replica, "prefix": prefix, "at_us": at, "notice_us": at + delay}]


def _kwargs(requests, fleet, policy, reservations, evictions):
    return {"requests": requests, "fleet": fleet, "policy": policy, "reservations": reservations,
            "evictions": evictions}


def _differs(kwargs, mutant):
    return replay(**kwargs) != replay(**kwargs, mutant=mutant)


GROUP_POLICIES = {
    "round_robin": ("round_robin",),
    "affinity": ("affinity",),
    "predicted_finish": ("predicted_finish",),
    "no_reservations": ("predicted_finish", "affinity"),
    "eviction": ("predicted_finish", "affinity"),
}
# Mutants each group must catch (in at least one of its cases); the others pass by construction.
MUST_CATCH = {
    "round_robin": ("hit_at_arrival",),
    "affinity": ("hit_at_arrival",),
    "predicted_finish": ("hit_at_arrival", "pf_ignores_cache"),
    "no_reservations": ("hit_at_arrival", "always_reserve", "pf_ignores_cache"),
    "eviction": ("hit_at_arrival", "notice_at_eviction", "pf_ignores_cache"),
}


def _group_cases(rng, group: str):
    while True:
        cases = []
        for number, policy in enumerate(GROUP_POLICIES[group] * 2):
            replicas = int(rng.integers(2, 5))
            count = int(rng.integers(12, 31))
            requests, fleet = _burst(rng, count, replicas, span_us=int(rng.integers(60, 300)) * 1_000)
            reservations = group != "no_reservations"
            evictions = []
            if group == "eviction":
                evictions = _eviction(rng, requests, fleet, late=True)
            elif group in ("round_robin", "affinity", "predicted_finish") and rng.random() < 0.5:
                evictions = _eviction(rng, requests, fleet, late=group == "round_robin")
            kwargs = _kwargs(requests, fleet, policy, reservations, evictions)
            name = f"{group} burst {number + 1}: {count} requests, {replicas} replicas, {policy}"
            cases.append(Case(name, group, kwargs=kwargs))
        if all(any(_differs(case.kwargs, mutant) for case in cases) for mutant in MUST_CATCH[group]):
            return cases


def _tie_example():
    requests = [{"id": "a", "arrival_us": 0, "prefix": "p", "prefix_tokens": 1000, "prompt_tokens": 1200},
                {"id": "b", "arrival_us": 5000, "prefix": "p", "prefix_tokens": 1000, "prompt_tokens": 1100}]
    fleet = {"replicas": 2, "us_per_token": 10, "report_every_us": 50_000, "cached": [[], []],
             "busy_until_us": [0, 0]}
    return requests, fleet


def _herd_example():
    requests = [{"id": f"q{n}", "arrival_us": n * 1_000, "prefix": "sys", "prefix_tokens": 2000,
                 "prompt_tokens": 2500} for n in range(4)]
    fleet = {"replicas": 2, "us_per_token": 10, "report_every_us": 50_000, "cached": [["sys"], ["sys"]],
             "busy_until_us": [0, 3_000]}
    return requests, fleet


def _eviction_example():
    requests = [{"id": "a", "arrival_us": 10_000, "prefix": "doc", "prefix_tokens": 3000, "prompt_tokens": 3200},
                {"id": "b", "arrival_us": 11_000, "prefix": "doc", "prefix_tokens": 3000, "prompt_tokens": 3300}]
    fleet = {"replicas": 2, "us_per_token": 10, "report_every_us": 50_000, "cached": [["doc"], []],
             "busy_until_us": [15_000, 0]}
    evictions = [{"replica": 0, "prefix": "doc", "at_us": 5_000, "notice_us": 200_000}]
    return requests, fleet, evictions


def _tie_cases():
    """The same-instant rules the prompt names, one small fixed case each (so every seed
    has them): a notice that lands with a request, a report that lands with a request,
    an eviction at the instant a prefill finishes and one at the instant a prefill starts.
    Replica 1 is kept busy where only replica 0's cache is under test."""
    def request(name, arrival, prefix, prefix_tokens, prompt_tokens):
        return {"id": name, "arrival_us": arrival, "prefix": prefix, "prefix_tokens": prefix_tokens,
                "prompt_tokens": prompt_tokens}

    def fleet(cached, busy, every=50_000):
        return {"replicas": 2, "us_per_token": 10, "report_every_us": every, "cached": cached, "busy_until_us": busy}

    # The notice at 5 ms comes first: r0 is priced cold (19 ms) and r1 wins (16 ms); heard after, r0 (9 ms).
    notice = _kwargs([request("a", 5_000, "doc", 1_000, 1_100)], fleet([["doc"], []], [8_000, 0]),
                     "predicted_finish", True, [{"replica": 0, "prefix": "doc", "at_us": 1_000, "notice_us": 5_000}])
    # The report at 10 ms comes first: r0 drains at 15 ms, so b goes to r1; read after, the two tie on r0.
    report = _kwargs([request("a", 0, "x", 0, 1_500), request("b", 10_000, "y", 0, 500)],
                     fleet([[], []], [0, 0], every=10_000), "predicted_finish", False, [])
    # a's prefill finishes at 11 ms as the eviction lands: the prefix is gone, so b (at 12 ms) misses.
    finish = _kwargs([request("a", 0, "p", 1_000, 1_100), request("b", 12_000, "p", 1_000, 1_100)],
                     fleet([[], []], [0, 1_000_000]), "predicted_finish", True,
                     [{"replica": 0, "prefix": "p", "at_us": 11_000, "notice_us": 500_000}])
    # a's prefill starts at 5 ms as the eviction lands: a miss.
    start = _kwargs([request("a", 5_000, "p", 1_000, 1_100)], fleet([["p"], []], [0, 1_000_000]),
                    "predicted_finish", True, [{"replica": 0, "prefix": "p", "at_us": 5_000, "notice_us": 500_000}])
    return [
        Case("same instant: a notice and an arriving request", "eviction", kwargs=notice),
        Case("same instant: a load report and an arriving request", "no_reservations", kwargs=report),
        Case("same instant: an eviction and a finishing prefill", "eviction", kwargs=finish),
        Case("same instant: an eviction and a starting prefill", "eviction", kwargs=start),
    ]


class ReplayJudge(Judge):
    # The lab generator replays its bursts through the same model (see the module docstring).
    ledger = staticmethod(ledger)

    def examples(self):
        tie_requests, tie_fleet = _tie_example()
        herd_requests, herd_fleet = _herd_example()
        late_requests, late_fleet, late_evictions = _eviction_example()
        return [
            Case("a tie goes to replica 0; the follower stays warm there", "predicted_finish",
                 kwargs=_kwargs(tie_requests, tie_fleet, "predicted_finish", True, [])),
            Case("round-robin ignores the caches", "round_robin",
                 kwargs=_kwargs(herd_requests, herd_fleet, "round_robin", True, [])),
            Case("reservations on: the queue spreads", "predicted_finish",
                 kwargs=_kwargs(herd_requests, herd_fleet, "predicted_finish", True, [])),
            Case("reservations off: one stale report, one replica", "no_reservations",
                 kwargs=_kwargs(herd_requests, herd_fleet, "predicted_finish", False, [])),
            Case("a late eviction notice: predicted warm, prefilled cold", "eviction",
                 kwargs=_kwargs(late_requests, late_fleet, "predicted_finish", True, late_evictions)),
        ]

    def hidden_cases(self, rng):
        cases = []
        for group in GROUP_POLICIES:
            cases += _group_cases(rng, group)
        return cases + _tie_cases()

    def reference(self, case):
        return replay(**case.kwargs)

    def check(self, case, got, expected):
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            size = len(got) if isinstance(got, (list, tuple)) else type(got).__name__
            return f"expected one [replica, first_token_us] per request ({len(expected)}), got {size}"
        for index, (item, (replica, first_token)) in enumerate(zip(got, expected)):
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                return f"request {index}: expected [replica, first_token_us], got {item!r}"[:200]
            got_replica, got_time = item
            if isinstance(got_replica, bool) or not isinstance(got_replica, (int, float)) \
                    or got_replica != replica:
                return f"request {index} (by arrival): sent to replica {got_replica!r}, expected {replica}"[:200]
            if isinstance(got_time, bool) or not isinstance(got_time, (int, float)) \
                    or abs(got_time - first_token) > 1e-6 * max(1, abs(first_token)):
                return f"request {index} (by arrival): first token at {got_time!r} us, expected {first_token}"[:200]
        return None


JUDGES = {"replay": ReplayJudge()}
