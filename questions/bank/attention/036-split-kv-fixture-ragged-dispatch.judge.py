"""Trusted judge for 036-split-kv-fixture-ragged-dispatch (part ``reference``): reviewed
code, never sent to the sandbox.

The candidate writes the CPU reference a decode-attention kernel is checked against:
one query token per sequence, keys and values in a paged cache (``[pages, page_size,
kv_heads, head_dim]``, NHD), a block table that maps each sequence's logical pages to
physical ones, and each sequence's own length. Every hidden case fills the slots no
sequence owns (after a sequence's end in its last page, and the pages nobody uses) with
large stale values, so a reference that reads past a sequence's own length (the fixture
kernel's bug: masking with the batch's longest length) is visibly wrong, not wrong by a
rounding.
"""

import numpy as np

from grading.judge import Case, Judge, Tolerance, compare_arrays

TOLERANCE = Tolerance(rtol=1e-4, atol=1e-5, norm_rtol=1e-4)
# Scores near 1000 carry about 1e-4 of float32 rounding, which moves the softmax weights
# by that much relative: a stable reference computed in float32 (as the inputs are) is off
# by up to ~5e-5 of the largest output there. The overflow this group is for gives inf or
# NaN, which no tolerance lets through, so a looser one costs nothing.
LARGE_SCORE_TOLERANCE = Tolerance(rtol=1e-3, atol=1e-3, norm_rtol=1e-3)
STALE = 40.0  # stale slots hold values this large: a leak of one slot moves the output


def reference_decode(q, k_cache, v_cache, block_table, seq_lens, scale):
    """float64 decode attention per sequence over its own ``seq_lens[b]`` keys; a
    sequence of length 0 (a padding row) gives zeros."""
    batch, q_heads, dim = q.shape
    page_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    group = q_heads // kv_heads
    out = np.zeros((batch, q_heads, dim))
    for b in range(batch):
        length = int(seq_lens[b])
        if length == 0:
            continue
        pages = block_table[b, : -(-length // page_size)]
        keys = k_cache[pages].reshape(-1, kv_heads, dim)[:length].astype(np.float64)
        values = v_cache[pages].reshape(-1, kv_heads, dim)[:length].astype(np.float64)
        for h in range(q_heads):
            scores = keys[:, h // group] @ q[b, h].astype(np.float64) * scale
            weights = np.exp(scores - scores.max())
            out[b, h] = weights @ values[:, h // group] / weights.sum()
    return out.astype(np.float32)


def paged_case(rng, name, group, lengths, *, q_heads=8, kv_heads=2, dim=32, page_size=16, q_scale=1.0,
               spare_pages=3, table_pad=-1):
    """A case: random q, K, V for ``lengths`` tokens laid out on shuffled physical pages,
    every unowned slot and spare page filled with stale values, the block table padded
    past each sequence's last page with ``table_pad``."""
    needed = [-(-length // page_size) for length in lengths]
    total_pages = sum(needed) + spare_pages
    k_cache = rng.normal(0.0, STALE, size=(total_pages, page_size, kv_heads, dim))
    v_cache = rng.normal(0.0, STALE, size=(total_pages, page_size, kv_heads, dim))
    physical = rng.permutation(total_pages)
    width = max(max(needed), 1) + 1
    table = np.full((len(lengths), width), table_pad, dtype=np.int32)
    cursor = 0
    for b, (length, count) in enumerate(zip(lengths, needed)):
        pages = physical[cursor:cursor + count]
        cursor += count
        table[b, :count] = pages
        for slot in range(length):  # the sequence's own tokens: ordinary magnitudes
            page, offset = pages[slot // page_size], slot % page_size
            k_cache[page, offset] = rng.normal(size=(kv_heads, dim))
            v_cache[page, offset] = rng.normal(size=(kv_heads, dim))
    q = rng.normal(0.0, q_scale, size=(len(lengths), q_heads, dim))
    args = (q.astype(np.float32), k_cache.astype(np.float32), v_cache.astype(np.float32), table,
            np.array(lengths, dtype=np.int32), float(1.0 / np.sqrt(dim)))
    return Case(name, group, args)


class PagedDecodeJudge(Judge):
    def examples(self):
        # One sequence of 3 tokens on pages [1, 0] of size 2: the 4th slot (page 0,
        # offset 1) is stale and must be ignored.
        k = np.array([[[[1.0, 0.0]], [[9.0, 9.0]]], [[[0.0, 1.0]], [[1.0, 1.0]]]], dtype=np.float32)
        v = np.array([[[[0.0, 2.0]], [[50.0, 50.0]]], [[[2.0, 0.0]], [[4.0, 4.0]]]], dtype=np.float32)
        one = (np.array([[[0.0, 0.0]]], dtype=np.float32), k, v, np.array([[1, 0]], dtype=np.int32),
               np.array([3], dtype=np.int32), 1.0)
        two = (np.array([[[0.0, 0.0]], [[0.0, 0.0]]], dtype=np.float32), k, v,
               np.array([[1, 0], [0, -1]], dtype=np.int32), np.array([3, 1], dtype=np.int32), 1.0)
        return [
            Case("three tokens on two shuffled pages", "uniform", one),
            Case("a ragged pair: the second sequence owns one slot", "ragged", two),
        ]

    def hidden_cases(self, rng):
        base = int(rng.integers(40, 90)) * 16
        ragged = [int(n) for n in rng.integers(3, 300, size=5)]
        ragged[int(rng.integers(0, 5))] = 333  # one long sequence sets the batch's longest
        mostly_long = [int(n) for n in rng.integers(200, 320, size=3)] + [int(rng.integers(2, 15))]
        scored = int(rng.integers(60, 120)) * 2 + 1  # mid-page
        return [
            paged_case(rng, "uniform lengths, whole pages", "uniform", [base] * 3),
            paged_case(rng, "uniform lengths ending mid-page", "uniform", [base + 7] * 2, kv_heads=1, q_heads=4),
            paged_case(rng, "ragged lengths, partial last pages", "ragged", ragged),
            paged_case(rng, "long sequences beside one of a few tokens", "ragged", mostly_long, page_size=32),
            paged_case(rng, "a sequence of one token and a padding row of zero", "short",
                       [int(rng.integers(20, 60)), 1, 0], table_pad=0),
            paged_case(rng, "scores near +-1000: exp overflows without the maximum", "large_scores",
                       [scored, scored], q_scale=600.0),
        ]

    def reference(self, case):
        return reference_decode(*case.args)

    def check(self, case, got, expected):
        tolerance = LARGE_SCORE_TOLERANCE if case.group == "large_scores" else TOLERANCE
        return compare_arrays(got, expected, tolerance, "out")


JUDGES = {"reference": PagedDecodeJudge()}
