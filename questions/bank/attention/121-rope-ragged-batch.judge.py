"""Trusted judge for 121-rope-ragged-batch (part ``rope``): reviewed code, never sent to
the sandbox.

The reference rotates in float64 with angles computed in float64 (exact to ~1e-12 rad
at position 100,000) and returns the input's dtype. Activations come in float32 and
float16 (NumPy has no bfloat16, so no bf16 array can cross the sandbox's .npy boundary;
float16 fails the same way, sooner: 100,000 is past its largest finite value, 65,504).

Float32 angles are accepted, as production engines compute them: vLLM's rotary
embedding builds its cos/sin cache in float32 (``inv_freq`` and ``positions * inv_freq``
in float32, cast to the activation dtype after), and so does Hugging Face. The tolerance
therefore grows with the case's largest position ``p``: ``ANGLE_ULPS * p * 2**-24`` of the
largest |x| on top of the output dtype's own (``inv_freq`` rounded to float32, the
product rounded, and the float32 cos/sin each cost about an ulp of the angle). At
100,000 that is 0.024, while a position or an angle held in bfloat16 or float16 is off
by up to 256 positions there (or is infinite), so the mistake the question is about
fails and the engines' recipe passes.
"""

import numpy as np

from grading.judge import Case, Judge, Tolerance, compare_arrays

ANGLE_ULPS = 4.0
FLOAT32_EPS = 2.0 ** -24
OUTPUT_TOLERANCE = {np.dtype(np.float32): Tolerance(rtol=1e-4, atol=1e-4, norm_rtol=1e-4),
                    np.dtype(np.float16): Tolerance(rtol=1e-3, atol=2e-3, norm_rtol=2e-3)}


def rope_tolerance(dtype, max_position: int) -> Tolerance:
    """The output dtype's tolerance widened by float32 angles' error at ``max_position``."""
    base = OUTPUT_TOLERANCE[np.dtype(dtype)]
    angle = ANGLE_ULPS * max_position * FLOAT32_EPS
    return Tolerance(rtol=base.rtol, atol=base.atol + angle, norm_rtol=base.norm_rtol + angle)


def max_position(case) -> int:
    lengths, starts = case.args[1], case.args[2]
    return int(np.max(np.asarray(starts) + np.asarray(lengths) - 1))


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
    return out.astype(x.dtype)


def _case(rng, name, group, lengths, starts, slots, heads=4, dim=64, base=10000.0, dtype=np.float32):
    x = rng.normal(size=(len(lengths), slots, heads, dim)).astype(dtype)
    return Case(name, group, (x, np.asarray(lengths, dtype=np.int64), np.asarray(starts, dtype=np.int64), float(base)))


class RopeJudge(Judge):

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
            _case(rng, "float16 activations, a full batch from position 0", "basic", [slots] * 2, [0, 0],
                  slots, dim=64, base=base, dtype=np.float16),
            _case(rng, "float16 activations, decode near position 100,000", "far_positions", [1, 1, 1],
                  100_000 + rng.integers(-20, 20, size=3), 1, dim=128, base=base, dtype=np.float16),
            _case(rng, "float16 activations, a chunk of 8 tokens from position 99,990", "far_positions",
                  [8, 8], 99_990 + rng.integers(0, 5, size=2), 8, dim=128, base=10000.0, dtype=np.float16),
        ]

    def reference(self, case):
        return reference_rope(*case.args)

    def check(self, case, got, expected):
        x = case.args[0]
        if isinstance(got, np.ndarray) and got.dtype != x.dtype:
            return f"the result has dtype {got.dtype}; return the input's dtype, {x.dtype}"
        return compare_arrays(got, expected, rope_tolerance(x.dtype, max_position(case)))


JUDGES = {"rope": RopeJudge()}
