"""Trusted judge for 082-prefix-cache-block-hashing (part ``cache``): reviewed code,
never sent to the sandbox.

Each case replays a script of admit / finish / cached_blocks calls on
``ReferencePrefixCache``. Scripts are drawn per group so each group exercises one rule:
only ``chain`` repeats a block's tokens after a different prefix, only ``last_token``
has prompts whose length is a multiple of the block size and fully cached, and only
``eviction`` runs out of free blocks.
"""

from grading.judge import Call, Case, Judge
from grading.judge.compare import compare_call_results


class ReferencePrefixCache:
    """The model the statement defines. The keyword flags switch one rule off at a time
    (a mutant); the script generator uses them to make each group test its own rule."""

    def __init__(self, block_size, num_blocks, *, chained=True, last_token_rule=True, tail_first=True, lru=True):
        self.chained, self.last_token_rule, self.tail_first, self.lru = chained, last_token_rule, tail_first, lru
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.identity_of = {}  # block id -> identity (registered blocks only)
        self.block_with = {}   # identity -> block id
        self.refs = [0] * num_blocks
        self.released = {}     # free registered block -> (finish sequence, -position)
        self.finishes = 0
        self.holding = {}      # request id -> its blocks in order
        self.evicted_any = False

    def _identities(self, tokens):
        identities, parent = [], None
        for start in range(0, len(tokens) - self.block_size + 1, self.block_size):
            parent = (parent if self.chained else None, tuple(tokens[start:start + self.block_size]))
            identities.append(parent)
        return identities

    def admit(self, request_id, tokens):
        identities = self._identities(tokens)
        hits = []
        limit = (len(tokens) - 1) // self.block_size if self.last_token_rule else len(identities)
        for identity in identities[:limit]:
            block = self.block_with.get(identity)
            if block is None:
                break
            hits.append(block)
        total = -(-len(tokens) // self.block_size)
        free = [block for block in range(self.num_blocks) if self.refs[block] == 0 and block not in hits]
        if total - len(hits) > len(free):
            return None
        empty = sorted(block for block in free if block not in self.identity_of)
        evictable = sorted((block for block in free if block in self.identity_of),
                           key=lambda block: self.released[block] if self.lru else block)
        fresh = (empty + evictable)[: total - len(hits)]
        for block in fresh:
            if block in self.identity_of:
                self.evicted_any = True
                del self.block_with[self.identity_of.pop(block)]
                del self.released[block]
        blocks = hits + fresh
        for block in blocks:
            self.refs[block] += 1
            self.released.pop(block, None)
        for position, identity in enumerate(identities):
            if position >= len(hits) and identity not in self.block_with:
                self.block_with[identity] = blocks[position]
                self.identity_of[blocks[position]] = identity
        self.holding[request_id] = blocks
        return len(hits) * self.block_size

    def finish(self, request_id):
        self.finishes += 1
        for position, block in enumerate(self.holding.pop(request_id, [])):
            self.refs[block] -= 1
            if self.refs[block] == 0 and block in self.identity_of:
                self.released[block] = (self.finishes, -position if self.tail_first else position)
        return None

    def cached_blocks(self):
        return len(self.identity_of)


def replay(case, **mutation):
    cache = ReferencePrefixCache(*case.args, **mutation)
    return [getattr(cache, call.method)(*call.args) for call in case.calls], cache


# The rules each group isolates, as mutants that break one rule each: (group, mutation).
MUTANTS = (
    ("chain", {"chained": False}),
    ("last_token", {"last_token_rule": False}),
    ("eviction", {"tail_first": False}),
    ("eviction", {"lru": False}),
)


def _tokens(rng, count: int) -> list[int]:
    return [int(token) for token in rng.integers(1, 50_000, size=count)]


def _script(rng, group: str):
    block_size = 4
    heads = [_tokens(rng, block_size) for _ in range(2)]
    bodies = [_tokens(rng, block_size * int(rng.integers(1, 3))) for _ in range(2)]
    calls, running, serial = [], [], 0
    num_blocks = 14 if group == "eviction" else 256
    live = ReferencePrefixCache(block_size, num_blocks)  # so only admitted requests finish
    steps = 26 if group == "eviction" else 14
    for _ in range(steps):
        if running and rng.random() < (0.45 if group == "eviction" else 0.3):
            request_id = running.pop(int(rng.integers(len(running))))
            live.finish(request_id)
            calls.append(Call("finish", (request_id,)))
            continue
        if rng.random() < 0.15:
            calls.append(Call("cached_blocks"))
            continue
        serial += 1
        head = heads[int(rng.integers(2))]
        # Chain scripts pair either head with either body, so a body's blocks get
        # cached after one head and looked up after the other.
        body = bodies[int(rng.integers(2))] if group == "chain" else bodies[heads.index(head)]
        if group == "last_token" and rng.random() < 0.5:
            tokens = head + body  # a prompt of whole blocks, likely cached already
        else:
            length = int(rng.integers(1, 3 * block_size))
            length += 1 if length % block_size == 0 else 0
            tokens = head + body + _tokens(rng, length)
        calls.append(Call("admit", (f"q{serial}", tokens)))
        if live.admit(f"q{serial}", tokens) is not None:
            running.append(f"q{serial}")
    calls.append(Call("cached_blocks"))
    return (block_size, num_blocks), tuple(calls)


class PrefixCacheJudge(Judge):
    def examples(self):
        system = [11, 12, 13, 14, 15, 16, 17, 18]
        return [
            Case("a shared system prompt", "basic", (4, 16), calls=(
                Call("admit", ("a", system + [1, 2])),
                Call("finish", ("a",)),
                Call("admit", ("b", system + [3, 4, 5])),
                Call("cached_blocks"),
            )),
            Case("the same prompt twice", "last_token", (4, 16), calls=(
                Call("admit", ("a", system)),
                Call("finish", ("a",)),
                Call("admit", ("b", system)),
            )),
        ]

    def hidden_cases(self, rng):
        cases = []
        for group in ("basic", "chain", "last_token", "eviction"):
            made = 0
            while made < 2:
                args, calls = _script(rng, group)
                case = Case(f"{group} script {made + 1}: {len(calls)} calls", group, args, calls=calls)
                results, cache = replay(case)
                if not any(call.method == "admit" and result for call, result in zip(calls, results)):
                    continue  # every script has cache hits
                refused = any(call.method == "admit" and result is None for call, result in zip(calls, results))
                if (group == "eviction") != (cache.evicted_any and refused):
                    continue  # only eviction scripts evict and run out of blocks
                if any((replay(case, **mutation)[0] != results) != (group == name) for name, mutation in MUTANTS):
                    continue  # breaking this group's rule changes the results; breaking another's does not
                cases.append(case)
                made += 1
        return cases

    def reference(self, case):
        return replay(case)[0]

    def check(self, case, got, expected):
        return compare_call_results(case.calls, got, expected)


JUDGES = {"cache": PrefixCacheJudge()}
