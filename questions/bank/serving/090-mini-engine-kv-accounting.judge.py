"""Trusted judge for 090-mini-engine-kv-accounting (part ``engine``): reviewed code,
never sent to the sandbox.

Each case replays a workload on ``ReferenceEngine``, the simulator the statement
defines: ``add`` calls arrive between ``step`` calls, and ``free_blocks`` is read after
most steps so the KV accounting is checked as it moves, not only at the end. Workloads
are drawn per group so each group exercises its own rules:

- ``basic``: a pool and a token budget too large to bind; the running cap binds and
  some requests sample the end-of-sequence token before ``max_tokens``;
- ``chunk``: a small token budget, so prompts are split across steps and running
  requests go first; nothing is preempted and no request samples end-of-sequence;
- ``pool``: a small pool, so it runs dry: preemption from the tail of the running list,
  recompute of prompt and outputs. (No admissions in a step that preempted is a rule
  of the reference, as of vLLM's, but no workload here can separate it: prompts are
  never chunked in this group, so the one victim a decode step needs holds one block
  fewer than its own recompute, and it heads the waiting queue.)

A workload is kept only if breaking each rule of its own group (one mutant at a time,
``MUTANTS``) changes its results and breaking any other group's rule does not.
"""

from grading.judge import Call, Case, Judge
from grading.judge.compare import compare_call_results

EOS = 0


class _Request:
    def __init__(self, request_id, prompt_len, max_tokens, outputs):
        self.request_id = request_id
        self.prompt_len = prompt_len
        self.max_tokens = max_tokens
        self.outputs = list(outputs)
        self.sampled = []
        self.computed = 0
        self.blocks = 0

    @property
    def num_tokens(self):
        return self.prompt_len + len(self.sampled)


class ReferenceEngine:
    """The engine the statement defines. Each keyword flag breaks one rule (a mutant);
    the workload generator uses them so that each group tests its own rules."""

    def __init__(self, num_blocks, block_size, token_budget, max_running, *, eos_stops=True, running_cap=True,
                 sample_only_when_caught_up=True, shared_budget=True, preempt_newest=True,
                 keep_outputs_on_preempt=True):
        self.num_blocks, self.block_size = num_blocks, block_size
        self.token_budget, self.max_running = token_budget, max_running
        self.eos_stops, self.running_cap = eos_stops, running_cap
        self.sample_only_when_caught_up, self.shared_budget = sample_only_when_caught_up, shared_budget
        self.preempt_newest = preempt_newest
        self.keep_outputs_on_preempt = keep_outputs_on_preempt
        self.free = num_blocks
        self.waiting, self.running = [], []
        self.ever_preempted = self.ever_chunked = self.ever_capped = self.ever_eos = False

    def add(self, request_id, prompt_len, max_tokens, outputs):
        self.waiting.append(_Request(request_id, prompt_len, max_tokens, outputs))

    def free_blocks(self):
        return self.free

    def _blocks_needed(self, request, new_tokens):
        return -(-(request.computed + new_tokens) // self.block_size) - request.blocks

    def _take(self, request, new_tokens):
        needed = self._blocks_needed(request, new_tokens)
        self.free -= needed
        request.blocks += needed

    def _preempt(self, victim):
        self.running.remove(victim)
        self.free += victim.blocks
        victim.blocks = victim.computed = 0
        if not self.keep_outputs_on_preempt:
            victim.sampled = []
        self.waiting.insert(0, victim)
        self.ever_preempted = True

    def _tokens_for(self, request, budget):
        remaining = request.num_tokens - request.computed
        new_tokens = min(remaining, budget if self.shared_budget else self.token_budget)
        if new_tokens < remaining:
            self.ever_chunked = True
        return new_tokens

    def step(self):
        budget = self.token_budget
        scheduled, preempted = [], []
        index = 0
        while index < len(self.running) and budget > 0:
            request = self.running[index]
            new_tokens = self._tokens_for(request, budget)
            while self._blocks_needed(request, new_tokens) > self.free:
                victim = self.running[-1] if self.preempt_newest else request
                self._preempt(victim)
                preempted.append(victim.request_id)
                if victim is request:
                    break
            if request not in self.running:
                break
            self._take(request, new_tokens)
            scheduled.append((request, new_tokens))
            budget -= new_tokens
            index += 1
        if not preempted:
            while self.waiting and budget > 0:
                if len(self.running) >= self.max_running:
                    self.ever_capped = True
                    if self.running_cap:
                        break
                request = self.waiting[0]
                new_tokens = self._tokens_for(request, budget)
                if self._blocks_needed(request, new_tokens) > self.free:
                    break
                self.waiting.pop(0)
                self.running.append(request)
                self._take(request, new_tokens)
                scheduled.append((request, new_tokens))
                budget -= new_tokens
        streamed = []
        for request, new_tokens in scheduled:
            request.computed += new_tokens
            if request.computed < request.num_tokens and self.sample_only_when_caught_up:
                continue
            token = request.outputs[len(request.sampled)]
            request.sampled.append(token)
            done = len(request.sampled) >= request.max_tokens or (token == EOS and self.eos_stops)
            if token == EOS and len(request.sampled) < request.max_tokens:
                self.ever_eos = True
            if done:
                self.running.remove(request)
                self.free += request.blocks
                request.blocks = 0
            streamed.append([request.request_id, token, done])
        return {"scheduled": [[request.request_id, new_tokens] for request, new_tokens in scheduled],
                "preempted": preempted, "streamed": streamed}

    def idle(self):
        return not self.waiting and not self.running


def replay(case, **mutation):
    engine = ReferenceEngine(*case.args, **mutation)
    results = []
    for call in case.calls:
        results.append(getattr(engine, call.method)(*call.args))
    return results, engine


# The rules each group isolates, as mutants that break one rule each: (group, mutation).
MUTANTS = (
    ("basic", {"eos_stops": False}),
    ("basic", {"running_cap": False}),
    ("chunk", {"sample_only_when_caught_up": False}),
    ("chunk", {"shared_budget": False}),
    ("pool", {"preempt_newest": False}),
    ("pool", {"keep_outputs_on_preempt": False}),
)

SETUPS = {  # group: (num_blocks, block_size, token_budget, max_running, prompt range, max_tokens range)
    "basic": (256, 4, 512, 3, (3, 40), (2, 7)),
    "chunk": (256, 4, 16, 16, (5, 48), (2, 6)),
    "pool": (12, 4, 512, 16, (3, 18), (4, 12)),
}
MAX_STEPS = 80


def _workload(rng, group):
    num_blocks, block_size, token_budget, max_running, (low, high), (few, many) = SETUPS[group]
    count = int(rng.integers(5, 8))
    arrivals = sorted(int(step) for step in rng.integers(0, 6, size=count))
    requests = []
    for serial, arrival in enumerate(arrivals):
        prompt_len = int(rng.integers(low, high + 1))
        max_tokens = int(rng.integers(few, many + 1))
        outputs = [int(token) for token in rng.integers(1, 500, size=max_tokens)]
        if group == "basic" and rng.random() < 0.5:
            outputs[int(rng.integers(0, max_tokens - 1))] = EOS  # stops before max_tokens
        requests.append((arrival, (f"r{serial}", prompt_len, max_tokens, outputs)))
    args = (num_blocks, block_size, token_budget, max_running)
    live = ReferenceEngine(*args)
    calls, pending, step = [], list(requests), 0
    while (pending or not live.idle()) and step < MAX_STEPS:
        while pending and pending[0][0] <= step:
            _, request = pending.pop(0)
            calls.append(Call("add", request))
            live.add(*request)
        calls.append(Call("step"))
        live.step()
        if rng.random() < 0.6:
            calls.append(Call("free_blocks"))
        step += 1
    calls.append(Call("free_blocks"))
    return args, tuple(calls), live


def _exercises(group, engine):
    if group == "basic":
        return engine.ever_capped and engine.ever_eos and not engine.ever_chunked and not engine.ever_preempted
    if group == "chunk":
        return engine.ever_chunked and not engine.ever_preempted
    return engine.ever_preempted and not engine.ever_chunked


class MiniEngineJudge(Judge):
    def examples(self):
        return [
            Case("a chunked prompt", "chunk", (64, 4, 8, 4), calls=(
                Call("add", ("a", 10, 2, [7, 9])),
                Call("step"),
                Call("step"),
                Call("free_blocks"),
                Call("step"),
                Call("free_blocks"),
            )),
            Case("the pool runs dry", "pool", (3, 4, 64, 4), calls=(
                Call("add", ("a", 4, 3, [5, 6, 8])),
                Call("add", ("b", 5, 3, [1, 2, 3])),
                Call("step"),
                Call("step"),
                Call("free_blocks"),
                Call("step"),
                Call("step"),
            )),
        ]

    def hidden_cases(self, rng):
        cases = []
        for group in ("basic", "chunk", "pool"):
            made = 0
            while made < 2:
                args, calls, live = _workload(rng, group)
                if not live.idle() or not _exercises(group, live):
                    continue  # every workload drains, and exercises its own group only
                case = Case(f"{group} workload {made + 1}: {len(calls)} calls", group, args, calls=calls)
                results = replay(case)[0]
                if any((replay(case, **mutation)[0] != results) != (group == name) for name, mutation in MUTANTS):
                    continue  # breaking this group's rules changes the results; breaking another's does not
                cases.append(case)
                made += 1
        return cases

    def reference(self, case):
        return replay(case)[0]

    def check(self, case, got, expected):
        return compare_call_results(case.calls, got, expected)


JUDGES = {"engine": MiniEngineJudge()}
