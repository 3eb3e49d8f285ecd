"""Trusted judge for 124-token-bucket-admission (part ``bucket``): reviewed code, never
sent to the sandbox.

Each case is a script of admit / complete / available calls at non-decreasing times,
replayed on the trusted ``ReferenceBucket``. Scripts are drawn per group so that each
group exercises one rule: ``basic`` never refunds, never hits the capacity cap and never
sees an oversized request; ``refund`` adds partial use; ``fail_fast`` adds requests
larger than the capacity; ``cap`` adds idle gaps and refunds that would overflow, each
such refund followed by ``available`` at the same instant (where a bucket that refills
only when time has passed would still show the uncapped level).
Times are multiples of 1/4 and rates whole numbers, so the arithmetic is exact.
"""

from grading.judge import Call, Case, Judge
from grading.judge.compare import compare_call_results


class ReferenceBucket:
    def __init__(self, capacity, refill_per_second):
        self.capacity = float(capacity)
        self.rate = float(refill_per_second)
        self.tokens = self.capacity
        self.last = 0.0
        self.reserved = {}
        self.capped = False  # did the capacity cap ever bind (refill or refund)?
        self.refund_overflows = 0  # refunds the cap cut short

    def _refill(self, now):
        level = self.tokens + self.rate * (now - self.last)
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


def replay(case):
    bucket = ReferenceBucket(*case.args)
    return [getattr(bucket, call.method)(*call.args) for call in case.calls], bucket


def _script(rng, group: str, steps: int):
    """A script drawn against a live reference bucket, so completions name admitted
    requests and a waiting request is retried under the same id."""
    capacity = int(rng.integers(4, 9)) * 250
    rate = int(rng.integers(1, 5)) * 20 if group != "cap" else int(rng.integers(10, 20)) * 20
    bucket = ReferenceBucket(capacity, rate)
    now, running, waiting, calls, serial = 0.0, [], [], [], 0
    for _ in range(steps):
        now += float(rng.integers(0, 3)) * 0.25
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
        ]

    def hidden_cases(self, rng):
        cases = []
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
                cases.append(case)
                made += 1
        return cases

    def reference(self, case):
        return replay(case)[0]

    def check(self, case, got, expected):
        return compare_call_results(case.calls, got, expected)


JUDGES = {"bucket": BucketJudge()}
