"""Trusted judge for 127-request-addressed-random-draws (part ``draws``): reviewed code,
never sent to the sandbox.

A candidate may hash the address any way they like, so no case compares values with a
reference. Each case checks properties instead:

- every case: a float64 array of the right shape, every value in [0, 1), and the
  values of its distinct addresses spread evenly (16 bins, each count within the
  Hoeffding bound of its expectation): a constant or a coarse value fails;
- ``compaction``, ``drafts``, ``continuation``: every address appears two or three
  times in contexts that differ in one way only (the batch row; the engine step and
  the number of draft tokens proposed in that step; the output index, because a
  continuation's prompt holds the earlier output), and all copies must be equal, bit
  for bit. A row-, step- or output-index-keyed draw fails its group, and a stateful
  stream (a generator per request, advanced once per draw) fails all three;
- ``independence``: pairs of addresses that differ in one field (the position by 1,
  the request seed by 1, the sample index by 1, the purpose, and the seed up by 1 with
  the position down by 1, where adding fields before hashing collides) may be equal in
  at most MAX_EQUAL_PAIRS of a relation's 4,000 pairs (a collision-by-design answer
  makes all of them equal), and each relation's pairs must fill a 4 x 4 grid evenly
  (Hoeffding per cell). Context fields are random there, so only the address design
  is tested.

False rejection: with delta per check below FALSE_REJECTION / CHECKS, a union bound
over every statistical check of a submission gives a correct answer a false-rejection
probability below FALSE_REJECTION = 1e-7 (the question promises below 1e-6). Equal
pairs are allowed up to MAX_EQUAL_PAIRS because a correct answer need not use all 53
bits: independent uniforms with b bits of resolution tie with probability 2**-b, so a
relation's 4,000 pairs expect 4,000 * 2**-b ties (2.4e-4 at b = 24, a float32 draw;
9e-7 at b = 32), and more than MAX_EQUAL_PAIRS of them has probability below
(4,000 * 2**-b)**5 / 5! per relation, under 1e-20 at b = 24.
"""

import math

import numpy as np

from grading.judge import Case, Judge

FALSE_REJECTION = 1e-7
CHECKS = 400  # an upper bound on the statistical checks of one submission (bins and cells)
BINS = 16
GRID = 4
MAX_EQUAL_PAIRS = 4  # ties tolerated per relation: a uniform with fewer than 53 bits ties by chance
PAIRS = 4_000
ADDRESSES = 2_000
FIELDS = ("request_seed", "sample_index", "position", "purpose")
CONTEXT = ("row", "step", "output_index", "drafted")
RELATIONS = ("position + 1", "request_seed + 1", "sample_index + 1", "another purpose",
             "request_seed + 1 with position - 1")


def _bound(n: int) -> float:
    return math.sqrt(n / 2 * math.log(2 * CHECKS / FALSE_REJECTION))


def _addresses(rng, count):
    """Request seeds are half small (people pick 0, 1, 2, ...) and half 63-bit."""
    small = rng.random(count) < 0.5
    seeds = np.where(small, rng.integers(0, 1_000, count), rng.integers(0, 2**63 - 1, count, dtype=np.int64))
    prompt = rng.integers(1, 4_000, count)
    output = rng.integers(0, 2_000, count)
    return {
        "request_seed": seeds.astype(np.int64),
        "sample_index": rng.integers(0, 4, count).astype(np.int64),
        "position": (prompt + output).astype(np.int64),
        "purpose": rng.integers(0, 4, count).astype(np.int64),
        "output_index": output.astype(np.int64),
    }


def _context(rng, count, output_index):
    return {
        "row": rng.integers(0, 256, count).astype(np.int64),
        "step": rng.integers(0, 1_000_000, count).astype(np.int64),
        "output_index": output_index.copy(),
        "drafted": rng.integers(0, 6, count).astype(np.int64),
    }


def _different(rng, values, low, high):
    """Values in [low, high) that differ from ``values`` element by element."""
    shifted = values + rng.integers(1, high - low, len(values))
    return (low + (shifted - low) % (high - low)).astype(np.int64)


def _duplicated(rng, group):
    while True:  # distinct base addresses (about 1% of draws repeat one among the small seeds)
        base = _addresses(rng, ADDRESSES)
        if len(np.unique(np.stack([base[name] for name in FIELDS], axis=1), axis=0)) == ADDRESSES:
            break
    context = _context(rng, ADDRESSES, base["output_index"])
    copies = [(base, context)]
    for _ in range(int(rng.integers(1, 3))):
        other = {key: value.copy() for key, value in context.items()}
        if group == "compaction":
            other["row"] = _different(rng, context["row"], 0, 256)
        elif group == "drafts":
            other["step"] = _different(rng, context["step"], 0, 1_000_000)
            other["drafted"] = _different(rng, context["drafted"], 0, 6)
        else:  # continuation: part of the output became prompt, so the output index differs
            other["output_index"] = _different(rng, context["output_index"], 0, 2_000)
            other["step"] = _different(rng, context["step"], 0, 1_000_000)
        copies.append((base, other))
    columns = {name: np.concatenate([address[name] for address, _ in copies]) for name in FIELDS}
    columns.update({name: np.concatenate([ctx[name] for _, ctx in copies]) for name in CONTEXT})
    order = rng.permutation(len(columns["row"]))
    return {name: value[order] for name, value in columns.items()}


def _paired(rng):
    pieces = []
    for relation in RELATIONS:
        base = _addresses(rng, PAIRS)
        base["position"] = np.maximum(base["position"], 1)  # room for position - 1
        partner = {key: value.copy() for key, value in base.items()}
        if relation == "position + 1":
            partner["position"] += 1
        elif relation == "request_seed + 1":
            partner["request_seed"] = base["request_seed"] % (2**62) + 1
            base["request_seed"] = partner["request_seed"] - 1
        elif relation == "sample_index + 1":
            partner["sample_index"] += 1
        elif relation == "another purpose":
            partner["purpose"] = _different(rng, base["purpose"], 0, 4)
        else:
            base["request_seed"] = base["request_seed"] % (2**62)
            partner["request_seed"] = base["request_seed"] + 1
            partner["position"] = base["position"] - 1
        pieces += [base, partner]
    columns = {name: np.concatenate([piece[name] for piece in pieces]) for name in FIELDS}
    count = len(columns["position"])
    # Fresh context for every row, steps and output indices from a range wide enough
    # that two never meet (noise, not a sequence a real engine would make): a draw keyed
    # on the step or the output index instead of the position must not collide here by
    # chance, only fail the duplicate groups.
    columns.update(_context(rng, count, rng.integers(0, 2**40, count).astype(np.int64)))
    columns["step"] = rng.integers(0, 2**40, count).astype(np.int64)
    return columns  # rows: relation r's bases, then its partners, in RELATIONS order


def _kwargs(columns):
    return {name: columns[name] for name in FIELDS + CONTEXT}


class DrawsJudge(Judge):
    def examples(self):
        seeds = np.array([7, 7, 7, 7], dtype=np.int64)
        return [Case("one address in steps 10 and 12, with 0 and 4 drafts", "drafts", (1234,), {
            "request_seed": seeds,
            "sample_index": np.array([0, 0, 0, 0], dtype=np.int64),
            "position": np.array([105, 105, 106, 105], dtype=np.int64),
            "purpose": np.array([0, 0, 0, 1], dtype=np.int64),
            "row": np.array([3, 3, 0, 3], dtype=np.int64),
            "step": np.array([10, 12, 12, 10], dtype=np.int64),
            "output_index": np.array([5, 5, 6, 5], dtype=np.int64),
            "drafted": np.array([0, 4, 4, 0], dtype=np.int64),
        })]

    def hidden_cases(self, rng):
        cases = []
        for group in ("compaction", "drafts", "continuation"):
            columns = _duplicated(rng, group)
            engine_seed = int(rng.integers(0, 2**31))
            cases.append(Case(f"{group}: {len(columns['row'])} draws, each address two or three times", group,
                              (engine_seed,), _kwargs(columns)))
        columns = _paired(rng)
        cases.append(Case(f"independence: {PAIRS} pairs for each of {len(RELATIONS)} one-field changes",
                          "independence", (int(rng.integers(0, 2**31)),), _kwargs(columns),
                          secret={"paired": True}))
        return cases

    def reference(self, case):
        return reference_draws(*case.args, **case.kwargs)

    def check(self, case, got, expected):
        count = len(case.kwargs["position"])
        if not isinstance(got, np.ndarray) or got.dtype != np.float64:
            return "return a float64 NumPy array"
        if got.shape != (count,):
            return f"the result has shape {got.shape}, expected ({count},)"
        if not np.all((got >= 0) & (got < 1)):
            return "a value lies outside [0, 1)"
        address = np.stack([case.kwargs[name] for name in FIELDS], axis=1)
        keys, first, inverse = np.unique(address, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        if not case.secret.get("paired"):
            if not np.array_equal(got, got[first][inverse]):
                changed = {"compaction": "the batch row", "drafts": "the step and the number of drafts",
                           "continuation": "the output index and the step"}.get(case.group, "the context")
                return f"one address (seed, sample, position, purpose) got different values when only {changed} changed"
        problem = _spread(got[first], "the values")
        if problem or not case.secret.get("paired"):
            return problem
        return _pairs_problem(got)


def _spread(values, what):
    counts = np.bincount(np.minimum((values * BINS).astype(np.int64), BINS - 1), minlength=BINS)
    bound = _bound(len(values))
    if np.abs(counts - len(values) / BINS).max() > bound:
        return (f"{what} are not spread evenly over [0, 1) (some sixteenth of it holds {counts.max()} or "
                f"{counts.min()} of {len(values)}, where a uniform draw gives {len(values) / BINS:.0f} +- {bound:.0f})")
    return None


def _pairs_problem(got):
    for index, relation in enumerate(RELATIONS):
        start = 2 * index * PAIRS
        base, partner = got[start:start + PAIRS], got[start + PAIRS:start + 2 * PAIRS]
        equal = int(np.count_nonzero(base == partner))
        if equal > MAX_EQUAL_PAIRS:
            return f"{equal} of {PAIRS} pairs of different addresses ({relation}) got the same value"
        cells = (np.minimum((base * GRID).astype(np.int64), GRID - 1) * GRID
                 + np.minimum((partner * GRID).astype(np.int64), GRID - 1))
        counts = np.bincount(cells, minlength=GRID * GRID)
        bound = _bound(PAIRS)
        if np.abs(counts - PAIRS / GRID**2).max() > bound:
            return (f"the values of addresses that differ by {relation} are not independent (a cell of the "
                    f"{GRID} x {GRID} grid of pairs holds {counts.max()} or {counts.min()} of {PAIRS}, where "
                    f"independent draws give {PAIRS / GRID**2:.0f} +- {bound:.0f})")
    return None


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(x):
    """SplitMix64's finalizer: a bijection on 64-bit words that scrambles every bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def reference_draws(engine_seed, request_seed, sample_index, position, purpose, **context):
    """One uniform per draw, a function of (engine seed, request seed, sample, position,
    purpose) only: each field is absorbed in turn through the finalizer."""
    with np.errstate(over="ignore"):
        h = _mix(np.full(len(position), np.uint64(engine_seed)) + _GOLDEN)
        for field in (request_seed, sample_index, position, purpose):
            h = _mix(h ^ _mix(np.asarray(field).astype(np.uint64) + _GOLDEN))
    return (h >> np.uint64(11)).astype(np.float64) * 2.0**-53


JUDGES = {"draws": DrawsJudge()}
