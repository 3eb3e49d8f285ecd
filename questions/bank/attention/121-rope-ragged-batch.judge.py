"""Trusted judge for 121-rope-ragged-batch (part ``rope``): reviewed code, never sent to
the sandbox.

The reference rotates in float64 with angles computed in float64 (exact to ~1e-12 rad
at position 100,000). A float32 angle there is off by several 1e-3 rad; the tolerance
(1e-4 of the largest |x|, elementwise, plus the relative norm) separates the two, while
at positions below 1,000 float32 angles still pass (at 2,000 they failed on 1 seed in
200), so each group tests one thing.
"""

import numpy as np

from grading.judge import Case, Judge, Tolerance

ROPE_TOLERANCE = Tolerance(rtol=1e-4, atol=1e-4, norm_rtol=1e-4)


def reference_rope(x, lengths, start_positions, base):
    batch, slots, _, dim = x.shape
    half = dim // 2
    inv_freq = float(base) ** (-np.arange(half, dtype=np.float64) * 2.0 / dim)
    out = x.astype(np.float64).copy()
    for row in range(batch):
        first = slots - int(lengths[row])
        positions = int(start_positions[row]) + np.arange(slots - first, dtype=np.float64)
        angles = positions[:, None] * inv_freq[None, :]  # [real slots, half]
        cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
        first_half, second_half = out[row, first:, :, :half].copy(), out[row, first:, :, half:].copy()
        out[row, first:, :, :half] = first_half * cos - second_half * sin
        out[row, first:, :, half:] = second_half * cos + first_half * sin
    return out.astype(np.float32)


def _case(rng, name, group, lengths, starts, slots, heads=4, dim=64, base=10000.0):
    x = rng.normal(size=(len(lengths), slots, heads, dim)).astype(np.float32)
    return Case(name, group, (x, np.asarray(lengths, dtype=np.int64), np.asarray(starts, dtype=np.int64), float(base)))


class RopeJudge(Judge):
    tolerance = ROPE_TOLERANCE

    def examples(self):
        x = np.array([[[[1.0, 0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0, 0.0]]]], dtype=np.float32)  # [1, 2, 1, 4]
        padded = np.array([[[[7.0, 7.0, 7.0, 7.0]], [[1.0, 0.0, 0.0, 0.0]]]], dtype=np.float32)
        return [
            Case("positions 0 and 1, head dimension 4", "basic",
                 (x, np.array([2], dtype=np.int64), np.array([0], dtype=np.int64), 10000.0)),
            Case("one left-padding slot, first real token at position 5", "left_padding",
                 (padded, np.array([1], dtype=np.int64), np.array([5], dtype=np.int64), 10000.0)),
        ]

    def hidden_cases(self, rng):
        slots = int(rng.integers(8, 17))
        base = float(rng.choice([10000.0, 500000.0]))
        starts = rng.integers(1, 1000, size=3)
        lengths = rng.integers(1, 12, size=4)
        lengths[0] = 12  # one full row
        return [
            _case(rng, "a full batch from position 0", "basic", [slots] * 2, [0, 0], slots, dim=64, base=base),
            _case(rng, "head dimension 128, base 500,000", "basic", [6, 6], [0, 0], 6, dim=128, base=500000.0),
            _case(rng, "rows continuing from different cached lengths", "offsets", [5] * 3, starts, 5, base=base),
            _case(rng, "a left-padded batch of prompts", "left_padding", lengths, [0, 0, 0, 0], 12),
            _case(rng, "a left-padded batch continuing from cached lengths", "left_padding",
                  lengths[::-1].copy(), rng.integers(1, 1000, size=4), 12),
            _case(rng, "decode near position 100,000", "far_positions", [1, 1, 1],
                  100_000 + rng.integers(-20, 20, size=3), 1, dim=128, base=base),
            _case(rng, "a chunk of 8 tokens from position 99,990", "far_positions", [8, 8],
                  99_990 + rng.integers(0, 5, size=2), 8, dim=128, base=10000.0),
        ]

    def reference(self, case):
        return reference_rope(*case.args)


JUDGES = {"rope": RopeJudge()}
