"""Trusted judge for 124-token-bucket-admission (part ``bucket``): reviewed code, never
sent to the sandbox.

Each case is a script of admit / complete / available calls at non-decreasing times,
replayed on the trusted ``ReferenceBucket``. Scripts are drawn per group so that each
group exercises one rule: ``basic`` never refunds, never hits the capacity cap and never
sees an oversized request; ``refund`` adds partial use; ``fail_fast`` adds requests
larger than the capacity; ``cap`` adds idle gaps and refunds that would overflow, each
such refund followed by ``available`` at the same instant (where a bucket that refills
only when time has passed would still show the uncapped level).

Refills are fractional: rates are multiples of 1/4 token/s that are not multiples of
whole tokens per step, and times are multiples of 1/8 s, so a refill is a multiple of
1/32 token (exact in binary: every level stays exact) and rarely whole. Each script is
redrawn until a bucket that truncates its refills to whole tokens (``int()``) answers
differently, so that mistake fails every group on every seed; ``basic`` also holds a
slow bucket (under 4 tokens/s) polled every 1/8 s, where such a bucket never refills.
"""

from grading.judge import Call, Case, Judge
from grading.judge.compare import compare_call_results


class ReferenceBucket:
    """The bucket the statement describes; ``truncate=True`` is the mistake of adding
    only whole tokens per refill (the judge makes sure its scripts tell the two apart)."""

    def __init__(self, capacity, refill_per_second, truncate=False):
        self.capacity = float(capacity)
        self.rate = float(refill_per_second)
        self.truncate = truncate
        self.tokens = self.capacity
        self.last = 0.0
        self.reserved = {}
        self.capped = False  # did the capacity cap ever bind (refill or refund)?
        self.refund_overflows = 0  # refunds the cap cut short

    def _refill(self, now):
        refill = self.rate * (now - self.last)
        level = self.tokens + (int(refill) if self.truncate else refill)
        self.capped |= level > self.capacity
        self.tokens = min(self.capacity, level)
        self.last = now

    def admit(self, request_id, max_tokens, now):
        self._refill(now)
        if max_tokens > self.capacity:
            return "reject"
        if self.tokens >= max_tokens:
            self.tokens -= max_tokens
            self.reserved[request_id] = max_tokens
            return "admit"
        return "wait"

    def complete(self, request_id, used_tokens, now):
        self._refill(now)
        if request_id not in self.reserved:
            return 0
        reserved = self.reserved.pop(request_id)
        refund = reserved - min(used_tokens, reserved)
        level = self.tokens + refund
        self.capped |= level > self.capacity
        self.refund_overflows += level > self.capacity
        self.tokens = min(self.capacity, level)
        return refund

    def available(self, now):
        self._refill(now)
        return self.tokens


def replay(case, truncate=False):
    bucket = ReferenceBucket(*case.args, truncate=truncate)
    return [getattr(bucket, call.method)(*call.args) for call in case.calls], bucket


STEP = 0.125  # seconds: times are multiples of 1/8


def _rate(rng, low: float, high: float) -> float:
    """A rate in [low, high) tokens/s, a multiple of 1/4 but not of 1 (so no refill of
    one step, or of a few, is whole)."""
    return (2 * int(rng.integers(2 * low, 2 * high)) + 1) / 4


def _script(rng, group: str, steps: int):
    """A script drawn against a live reference bucket, so completions name admitted
    requests and a waiting request is retried under the same id."""
    capacity = int(rng.integers(4, 9)) * 250
    rate = _rate(rng, 10, 100) if group != "cap" else _rate(rng, 200, 400)
    bucket = ReferenceBucket(capacity, rate)
    now, running, waiting, calls, serial = 0.0, [], [], [], 0
    for _ in range(steps):
        now += float(rng.integers(0, 5)) * STEP
        if group == "cap" and rng.random() < 0.15:
            now += 30.0  # a long idle gap: the refill must stop at the capacity
        action = rng.random()
        if running and action < 0.35:
            request_id, reserved = running.pop(int(rng.integers(len(running))))
            used = reserved if group in ("basic", "fail_fast") else int(rng.integers(1, reserved + 1))
            call = Call("complete", (request_id, used, now))
        elif action < 0.45:
            call = Call("available", (now,))
        else:
            if waiting and rng.random() < 0.5:
                request_id, size = waiting.pop(0)  # the client retries
            else:
                serial += 1
                request_id = f"r{serial}"
                if group == "fail_fast" and rng.random() < 0.3:
                    size = capacity + int(rng.integers(1, 400))
                else:  # at most the capacity: only fail_fast scripts hold requests that never fit
                    size = min(capacity, int(rng.choice([10, 50, 100, 200, 400]) * rng.integers(1, 4)))
            call = Call("admit", (request_id, size, now))
        overflows = bucket.refund_overflows
        result = getattr(bucket, call.method)(*call.args)
        calls.append(call)
        if bucket.refund_overflows > overflows:
            # Look at the level at the same instant: a bucket that refills lazily (only
            # when time has passed) shows an uncapped refund only here.
            same_time = Call("available", (now,))
            bucket.available(now)
            calls.append(same_time)
        if call.method == "admit":
            if result == "admit":
                running.append((call.args[0], call.args[1]))
            elif result == "wait":
                waiting.append((call.args[0], call.args[1]))
    # A completion delivered twice (a retried message) must refund nothing the second time.
    done = [call for call in calls if call.method == "complete"]
    if done:
        repeat = done[int(rng.integers(len(done)))]
        calls.append(Call("complete", (repeat.args[0], repeat.args[1], now + 0.25)))
    calls.append(Call("available", (now + 0.25,)))
    return (capacity, rate), tuple(calls)


def _slow_refill(rng):
    """A drained bucket refilling at under 4 tokens/s, polled every 1/8 s (each poll
    adds a fraction of a token), with a small request that must wait and then fit."""
    capacity = int(rng.integers(4, 9)) * 250
    rate = _rate(rng, 0.5, 4)
    size = int(4 * rate)  # more than 2 s of refill, less than 6 s
    calls = [Call("admit", ("drain", capacity, 0.0))]
    for tick in range(1, 49):
        now = tick * STEP
        if tick == 16:
            calls.append(Call("admit", ("small", size, now)))
        calls.append(Call("admit", ("small", size, now)) if tick == 48 else Call("available", (now,)))
    calls += [Call("complete", ("drain", capacity, 6.25)), Call("complete", ("small", size, 6.25)),
              Call("available", (6.5,))]
    return (capacity, rate), tuple(calls)


class BucketJudge(Judge):
    def examples(self):
        return [
            Case("admit, wait, refund, admit", "refund", (1000, 100), calls=(
                Call("admit", ("a", 800, 0.0)),
                Call("admit", ("b", 500, 1.0)),
                Call("complete", ("a", 300, 1.0)),
                Call("admit", ("b", 500, 1.0)),
                Call("available", (2.0,)),
            )),
            Case("a request that can never fit", "fail_fast", (1000, 100), calls=(
                Call("admit", ("huge", 1500, 0.0)),
                Call("available", (0.0,)),
            )),
            Case("a slow refill polled often: fractions of a token add up", "basic", (4, 0.75), calls=(
                Call("admit", ("a", 4, 0.0)),
                Call("available", (0.125,)),
                Call("available", (0.25,)),
                Call("admit", ("b", 1, 1.25)),
                Call("admit", ("b", 1, 1.5)),
                Call("available", (1.5,)),
            )),
        ]

    def hidden_cases(self, rng):
        args, calls = _slow_refill(rng)
        cases = [Case(f"a slow refill polled every 1/8 s: {len(calls)} calls", "basic", args, calls=calls)]
        for group, count, steps in (("basic", 2, 40), ("refund", 2, 40), ("fail_fast", 2, 30), ("cap", 2, 40)):
            made = 0
            while made < count:
                args, calls = _script(rng, group, steps)
                case = Case(f"{group} script {made + 1}: {len(calls)} calls", group, args, calls=calls)
                results, bucket = replay(case)
                outcomes = set(results)
                if group == "cap" and not (bucket.capped and bucket.refund_overflows):
                    continue  # cap scripts overflow on a refund, not only on a refill
                if group != "cap" and bucket.capped:
                    continue
                if "wait" not in outcomes or "admit" not in outcomes:
                    continue  # every script must both admit and make someone wait
                if group == "fail_fast" and "reject" not in outcomes:
                    continue
                if replay(case, truncate=True)[0] == results:
                    continue  # whole-token refills must give other answers
                cases.append(case)
                made += 1
        return cases

    def reference(self, case):
        return replay(case)[0]

    def check(self, case, got, expected):
        return compare_call_results(case.calls, got, expected)


JUDGES = {"bucket": BucketJudge()}
