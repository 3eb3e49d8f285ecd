"""Trusted judge for 125-split-k-decode-merge (part ``merge``): reviewed code, never sent
to the sandbox.

Cases are real split-K partials: random q, K, V per head, the sequence cut into splits,
each split's normalized output and log-sum-exp computed in float64 and stored as
float32. An empty split reports lse = -inf and an output of NaN (what 0/0 gives in a
kernel), which must not leak into the merge.
"""

import numpy as np

from grading.judge import Case, Judge, Tolerance, compare_arrays

OUT_TOLERANCE = Tolerance(rtol=1e-4, atol=1e-5, norm_rtol=1e-4)
# atol is relative to the largest |lse|: about 2e-3 at lse ~ 900, where float32 itself
# carries 6e-5 of rounding.
LSE_TOLERANCE = Tolerance(rtol=1e-5, atol=2e-6, norm_rtol=1e-5)


def partials(rng, heads: int, dim: int, lengths: list[int], bias: np.ndarray | None = None):
    """Split-K partial outputs [S, H, D] and lse [S, H] for splits of ``lengths`` keys."""
    total = sum(lengths)
    q = rng.normal(size=(heads, dim))
    keys = rng.normal(size=(total, heads, dim))
    values = rng.normal(size=(total, heads, dim))
    scores = np.einsum("hd,nhd->nh", q, keys) / np.sqrt(dim)
    if bias is not None:
        scores = scores + bias[None, :]
    out = np.full((len(lengths), heads, dim), np.nan)
    lse = np.full((len(lengths), heads), -np.inf)
    start = 0
    for split, length in enumerate(lengths):
        if length:
            block = scores[start:start + length]
            top = block.max(axis=0)
            weights = np.exp(block - top)
            lse[split] = top + np.log(weights.sum(axis=0))
            out[split] = np.einsum("nh,nhd->hd", weights / weights.sum(axis=0), values[start:start + length])
        start += length
    return out.astype(np.float32), lse.astype(np.float32)


def reference_merge(partial_out: np.ndarray, partial_lse: np.ndarray):
    lse = partial_lse.astype(np.float64)
    top = lse.max(axis=0)
    has_keys = np.isfinite(top)
    safe_top = np.where(has_keys, top, 0.0)
    weights = np.where(np.isfinite(lse), np.exp(lse - safe_top), 0.0)  # [S, H]
    total = weights.sum(axis=0)
    contributions = np.where(weights[..., None] > 0, partial_out.astype(np.float64), 0.0)
    out = np.einsum("sh,shd->hd", weights, contributions)
    out = np.where(has_keys[:, None], out / np.where(has_keys, total, 1.0)[:, None], 0.0)
    merged_lse = np.where(has_keys, safe_top + np.log(np.where(has_keys, total, 1.0)), -np.inf)
    return [out.astype(np.float32), merged_lse.astype(np.float32)]


class MergeJudge(Judge):
    def examples(self):
        nan = np.nan
        return [
            Case("two equal splits", "basic",
                 (np.array([[[1.0, 0.0]], [[0.0, 1.0]]], dtype=np.float32),
                  np.array([[0.0], [0.0]], dtype=np.float32))),
            # Unequal masses and no empty split, before the empty split: an answer that
            # averages the partials fails here first, on the weighting, not on NaN.
            Case("two splits of unequal mass", "basic",
                 (np.array([[[1.0, 0.0]], [[0.0, 1.0]]], dtype=np.float32),
                  np.array([[1.0], [0.0]], dtype=np.float32))),
            Case("an empty split", "empty_split",
                 (np.array([[[1.0, 2.0]], [[nan, nan]]], dtype=np.float32),
                  np.array([[1.5], [-np.inf]], dtype=np.float32))),
        ]

    def hidden_cases(self, rng):
        cases = []
        for name, lengths in (("four equal splits", [64] * 4),
                              ("uneven splits, one of a single key", [1, 37, 200, 90, 12])):
            cases.append(Case(name, "basic", partials(rng, 8, 64, lengths)))
        bias = rng.choice([-900.0, 900.0], size=8) + rng.normal(0, 20, size=8)
        cases.append(Case("scores near +-900: exp(lse) overflows or underflows", "large_lse",
                          partials(rng, 8, 64, [50, 50, 50], bias)))
        lengths = [int(n) for n in rng.integers(20, 80, size=6)]
        for empty in rng.choice(6, size=2, replace=False):
            lengths[int(empty)] = 0
        cases.append(Case("two of six splits have no keys", "empty_split", partials(rng, 8, 64, lengths)))
        cases.append(Case("the last split has no keys", "empty_split", partials(rng, 4, 32, [100, 100, 0])))
        cases.append(Case("a padding row: no split has any key", "no_keys", partials(rng, 4, 32, [0, 0, 0, 0])))
        return cases

    def reference(self, case):
        return reference_merge(*case.args)

    def check(self, case, got, expected):
        if not isinstance(got, list) or len(got) != 2:
            return "return a tuple (out, lse)"
        problem = compare_arrays(got[0], expected[0], OUT_TOLERANCE, "out")
        if problem:
            return problem
        return compare_arrays(got[1], expected[1], LSE_TOLERANCE, "lse")


JUDGES = {"merge": MergeJudge()}
