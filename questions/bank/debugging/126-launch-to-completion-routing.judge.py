"""Trusted judge for 126-launch-to-completion-routing (part ``router``): reviewed code,
never sent to the sandbox.

Each case is a script of ``start`` / ``finish`` / ``launch`` / ``complete`` calls made by
a small simulated engine: a persistent batch of ``ROWS`` rows, padded with ``None``;
finished requests leave holes, new requests fill the lowest holes first, then the
highest live row moves into each remaining lower hole (the compaction the statement
describes). Steps complete in launch order, one at a time (``depth`` 1) or with a
second step launched before the first completes (``depth`` 2, async scheduling).

Groups, each redrawn until the wrong router it is about answers differently, so that
router fails the group on every seed:

- ``basic``: depth 1, with churn between steps; nothing changes while a step is in
  flight, so even a router that reads the batch as it is at completion is right.
- ``overlap``: depth 2; requests finish (a stop found in the previous step's output, or
  a client gone) while a step holding them is in flight, the batch is compacted and new
  requests take freed rows. A router that reads the current batch fails, and so does
  one that routes by the launch snapshot but never drops finished requests.
- ``reused_ids``: depth 2 and, besides, a finished request's id is started again (a
  client retry under the same id) while a step holding the old request is in flight.
  A router that checks only "is this id live?" delivers the old token to the new one.
"""

from grading.judge import Call, Case, Judge

ROWS = 8
VOCAB = 32_000


class ReferenceRouter:
    """The contract; ``mistake`` selects a wrong router the judge keeps its scripts
    honest against: ``"current_batch"`` routes by the rows of the latest launch,
    ``"no_finish_check"`` routes by the launch snapshot but delivers to finished
    requests, ``"id_check"`` drops finished ids but not finished incarnations."""

    def __init__(self, mistake=None):
        self.mistake = mistake
        self.incarnation = {}  # request id -> its live incarnation number
        self.started = 0
        self.in_flight = {}  # step -> [(request id, incarnation) or None per row]
        self.latest_rows = []

    def start(self, request_id):
        self.started += 1
        self.incarnation[request_id] = self.started

    def finish(self, request_id):
        self.incarnation.pop(request_id, None)

    def launch(self, step, rows):
        self.in_flight[step] = [None if rid is None else (rid, self.incarnation.get(rid)) for rid in rows]
        self.latest_rows = list(rows)

    def complete(self, step, tokens):
        snapshot = self.in_flight.pop(step)
        deliveries = []
        for row, row_tokens in enumerate(tokens):
            if self.mistake == "current_batch":
                rid = self.latest_rows[row] if row < len(self.latest_rows) else None
                live = rid is not None and rid in self.incarnation
            else:
                if snapshot[row] is None:
                    continue
                rid, incarnation = snapshot[row]
                if self.mistake == "no_finish_check":
                    live = True
                elif self.mistake == "id_check":
                    live = rid in self.incarnation
                else:
                    live = self.incarnation.get(rid) == incarnation
            if rid is not None and live and row_tokens:
                deliveries.append([rid, list(row_tokens)])
        return deliveries


def replay(args, calls, mistake=None):
    """The return values of ``calls`` on a ``ReferenceRouter`` (``mistake`` as there)."""
    router = ReferenceRouter(mistake)
    return [getattr(router, call.method)(*call.args) for call in calls]


class _Engine:
    """Draws a script: a persistent batch with holes, fill-then-compact, and steps in
    flight. ``reuse`` makes some new requests take a finished request's id."""

    def __init__(self, rng, depth, finish_in_flight, reuse):
        self.rng, self.depth = rng, depth
        self.finish_in_flight, self.reuse = finish_in_flight, reuse
        self.rows = [None] * ROWS
        self.calls = []
        self.in_flight = []  # steps, oldest first, with their rows
        self.next_id = 0
        self.finished_ids = []
        self.step = 0

    def _new_id(self):
        if self.reuse and self.finished_ids and self.rng.random() < 0.5:
            rid = self.finished_ids.pop(int(self.rng.integers(len(self.finished_ids))))
        else:
            rid = f"req-{self.next_id}"
            self.next_id += 1
        self.calls.append(Call("start", (rid,)))
        return rid

    def _in_flight_ids(self):
        return {rid for _, rows in self.in_flight for rid in rows if rid is not None}

    def _finish_some(self):
        live = [rid for rid in self.rows if rid is not None]
        busy = self._in_flight_ids()
        candidates = live if self.finish_in_flight else [rid for rid in live if rid not in busy]
        for rid in candidates:
            if self.rng.random() < 0.25:
                self.calls.append(Call("finish", (rid,)))
                self.rows[self.rows.index(rid)] = None
                self.finished_ids.append(rid)

    def _admit_and_compact(self):
        admitted = int(self.rng.integers(0, 3)) if any(self.rows) else 2
        for _ in range(admitted):
            if None not in self.rows:
                break
            self.rows[self.rows.index(None)] = self._new_id()
        while True:  # the highest live row moves into the lowest hole below it
            holes = [row for row, rid in enumerate(self.rows) if rid is None]
            last = self._live_span()
            if not holes or holes[0] >= last:
                break
            self.rows[holes[0]], self.rows[last] = self.rows[last], None

    def _live_span(self):
        live = [row for row, rid in enumerate(self.rows) if rid is not None]
        return live[-1] if live else -1

    def _complete_oldest(self):
        step, rows = self.in_flight.pop(0)
        tokens = []
        for rid in rows:
            count = 0 if rid is not None and self.rng.random() < 0.1 else int(self.rng.integers(1, 4))
            tokens.append([int(t) for t in self.rng.integers(0, VOCAB, size=count)])
        self.calls.append(Call("complete", (step, tokens)))

    def run(self, steps):
        for _ in range(3):
            self.rows[self.rows.index(None)] = self._new_id()
        for _ in range(steps):
            if len(self.in_flight) >= self.depth:
                self._complete_oldest()
            self._finish_some()
            self._admit_and_compact()
            self.step += 1
            self.calls.append(Call("launch", (self.step, list(self.rows))))
            self.in_flight.append((self.step, list(self.rows)))
        while self.in_flight:
            self._complete_oldest()
        return tuple(self.calls)


def _script(rng, group, steps):
    """A script for ``group`` that the group's wrong routers answer differently."""
    wrong = {"basic": (), "overlap": ("current_batch", "no_finish_check"),
             "reused_ids": ("current_batch", "no_finish_check", "id_check")}[group]
    while True:
        engine = _Engine(rng, depth=1 if group == "basic" else 2, finish_in_flight=group != "basic",
                         reuse=group == "reused_ids")
        calls = engine.run(steps)
        right = replay((), calls)
        if group == "overlap" and replay((), calls, "id_check") != right:
            continue  # ids are never reused here, so the id check must be enough
        if group == "basic" and any(replay((), calls, mistake) != right
                                    for mistake in ("current_batch", "no_finish_check", "id_check")):
            continue  # basic is what every router gets right
        if all(replay((), calls, mistake) != right for mistake in wrong):
            return calls


class RouterJudge(Judge):
    def examples(self):
        return [
            Case("a finished request's row is reused while its step is in flight", "overlap", (), calls=(
                Call("start", ("a",)), Call("start", ("b",)),
                Call("launch", (1, ["a", "b", None])),
                Call("launch", (2, ["a", "b", None])),
                Call("complete", (1, [[11], [21], [99]])),
                Call("finish", ("a",)), Call("start", ("c",)),
                Call("launch", (3, ["c", "b", None])),
                Call("complete", (2, [[12], [22, 23], [99]])),
                Call("complete", (3, [[31], [], [99]])),
            )),
            Case("a retry under the same id while the old request's step is in flight", "reused_ids", (), calls=(
                Call("start", ("x",)),
                Call("launch", (1, ["x", None])),
                Call("launch", (2, ["x", None])),
                Call("complete", (1, [[5], [0]])),
                Call("finish", ("x",)), Call("start", ("x",)),
                Call("launch", (3, ["x", None])),
                Call("complete", (2, [[6], [0]])),
                Call("complete", (3, [[7], [0]])),
            )),
        ]

    def hidden_cases(self, rng):
        cases = []
        for group, count, steps in (("basic", 2, 30), ("overlap", 3, 40), ("reused_ids", 3, 40)):
            for index in range(count):
                calls = _script(rng, group, steps)
                cases.append(Case(f"{group} script {index + 1}: {len(calls)} calls", group, (), calls=calls))
        return cases

    def reference(self, case):
        return replay(case.args, case.calls)

    def check(self, case, got, expected):
        if not isinstance(got, list) or len(got) != len(expected):
            recorded = len(got) if isinstance(got, list) else "no"
            return f"the script recorded {recorded} results, expected {len(expected)}"
        return self._first_wrong(case, got, expected)

    def check_partial(self, case, got, expected):
        return self._first_wrong(case, got, expected[: len(got)])

    def _first_wrong(self, case, got, expected):
        for index, (call, got_item, expected_item) in enumerate(zip(case.calls, got, expected)):
            where = f"call {index + 1} of {len(case.calls)} (.{call.method})"
            if call.method != "complete":
                continue  # start, finish and launch may return anything
            deliveries = _normalized(got_item)
            if deliveries is None:
                return f"{where} did not return a list of [request_id, tokens] pairs"
            if deliveries != expected_item:
                return f"{where} delivered {_describe(deliveries, expected_item)}"
        return None


def _normalized(value):
    if not isinstance(value, list):
        return None
    pairs = []
    for item in value:
        if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
            return None
        if not isinstance(item[1], list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in item[1]):
            return None
        pairs.append([item[0], list(item[1])])
    return pairs


def _describe(got, expected):
    """What is wrong, in words that name no request or token (hidden scripts)."""
    got_rows, expected_rows = len(got), len(expected)
    if got_rows != expected_rows:
        return f"{got_rows} deliveries where {expected_rows} were due"
    if sorted(map(str, got)) == sorted(map(str, expected)):
        return "the right deliveries in the wrong order (row order, please)"
    return "tokens to the wrong requests (or the wrong tokens)"


JUDGES = {"router": RouterJudge()}
