"""Trusted judge for 029-tiled-online-softmax (part ``tiled``): reviewed code, never
sent to the sandbox.

The reference is plain attention in float64 with masked scores dropped; a row with no
allowed key is defined as zeros with lse = -inf. The grader sees only outputs, so it
cannot tell a tiled loop from a full softmax; what it can tell is whether the edge
cases of the tiled recurrence (a first tile fully masked, a row fully masked, a last
tile shorter than the others) come out right.
"""

import numpy as np

from grading.judge import Case, Judge, Tolerance, compare_arrays

OUT_TOLERANCE = Tolerance(rtol=1e-4, atol=1e-5, norm_rtol=1e-4)
LSE_TOLERANCE = Tolerance(rtol=1e-5, atol=2e-6, norm_rtol=1e-5)


def reference_attention(q, k, v, mask, tile):
    scores = (q.astype(np.float64) @ k.astype(np.float64).T) / np.sqrt(q.shape[1])
    scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=1)
    has_keys = np.isfinite(top)
    weights = np.exp(scores - np.where(has_keys, top, 0.0)[:, None])  # masked: exp(-inf) = 0
    total = weights.sum(axis=1)
    safe_total = np.where(has_keys, total, 1.0)
    out = np.where(has_keys[:, None], (weights @ v.astype(np.float64)) / safe_total[:, None], 0.0)
    lse = np.where(has_keys, top + np.log(safe_total), -np.inf)
    return [out.astype(np.float32), lse.astype(np.float32)]


def _inputs(rng, rows: int, keys: int, dim: int):
    return tuple(rng.normal(size=shape).astype(np.float32) for shape in ((rows, dim), (keys, dim), (keys, dim)))


def _causal(rows: int, keys: int) -> np.ndarray:
    """Queries are the last `rows` positions of `keys`: bottom-right aligned."""
    return np.arange(keys)[None, :] <= (keys - rows + np.arange(rows))[:, None]


class TiledJudge(Judge):
    def examples(self):
        q = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
        k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=np.float32)
        v = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)
        return [
            Case("no mask, tiles of one key", "basic", (q, k, v, np.ones((2, 3), dtype=bool), 1)),
            Case("the second row fully masked", "fully_masked",
                 (q, k, v, np.array([[True, True, False], [False, False, False]]), 2)),
        ]

    def hidden_cases(self, rng):
        cases = []
        q, k, v = _inputs(rng, 48, 256, 32)
        cases.append(Case("no mask, N a multiple of the tile", "basic", (q, k, v, np.ones((48, 256), dtype=bool), 64)))
        q, k, v = _inputs(rng, 32, 160, 16)
        random_mask = rng.random((32, 160)) < 0.7
        random_mask[:, 0] = True  # no row fully masked here
        cases.append(Case("a random mask", "basic", (q, k, v, random_mask, 32)))
        q, k, v = _inputs(rng, 40, 203, 32)
        cases.append(Case("causal, 203 keys in tiles of 64 (a short last tile)", "ragged",
                          (q, k, v, _causal(40, 203), 64)))
        q, k, v = _inputs(rng, 16, 100, 8)
        cases.append(Case("tile 7 over 100 keys", "ragged", (q, k, v, np.ones((16, 100), dtype=bool), 7)))
        q, k, v = _inputs(rng, 32, 256, 32)
        left_padded = np.ones((32, 256), dtype=bool)
        for row in range(32):  # rows whose first one to three tiles are padding
            left_padded[row, : int(rng.integers(1, 4)) * 64 + int(rng.integers(0, 20))] = False
        cases.append(Case("left padding: the first tiles of each row fully masked", "masked_first_tile",
                          (q, k, v, left_padded, 64)))
        q, k, v = _inputs(rng, 24, 128, 16)
        padded_rows = np.ones((24, 128), dtype=bool)
        padded_rows[rng.choice(24, size=6, replace=False)] = False
        cases.append(Case("six query rows fully masked (padding queries)", "fully_masked", (q, k, v, padded_rows, 32)))
        return cases

    def reference(self, case):
        return reference_attention(*case.args)

    def check(self, case, got, expected):
        if not isinstance(got, list) or len(got) != 2:
            return "return a tuple (out, lse)"
        return (compare_arrays(got[0], expected[0], OUT_TOLERANCE, "out")
                or compare_arrays(got[1], expected[1], LSE_TOLERANCE, "lse"))


JUDGES = {"tiled": TiledJudge()}
