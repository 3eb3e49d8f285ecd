"""Trusted judge for 122-int4-packing (parts ``pack`` and ``unpack``): reviewed code,
never sent to the sandbox.

The format: groups of 128 consecutive weights along K per row (the last group may be
shorter); scale = max|w| / 7 in float32 (0 for an all-zero group); q = round-half-even
(w / scale) in [-7, 7]; byte j holds q[2j] in its low nibble and q[2j+1] in its high
nibble, as 4-bit two's complement; an odd K leaves the last high nibble 0.

Hidden weights are redrawn until no w / scale lies within 1e-3 of a rounding boundary,
so a float32 division cannot round the other way.
"""

import numpy as np

from grading.judge import Case, Judge, Tolerance, compare_arrays

GROUP = 128
SCALE_TOLERANCE = Tolerance(rtol=1e-6, atol=0.0, norm_rtol=1e-6)
DEQUANT_TOLERANCE = Tolerance(rtol=1e-6, atol=1e-7, norm_rtol=1e-6)


def group_scales(weights: np.ndarray) -> np.ndarray:
    rows, k = weights.shape
    groups = -(-k // GROUP)
    scales = np.zeros((rows, groups), dtype=np.float32)
    for group in range(groups):
        block = np.abs(weights[:, group * GROUP:(group + 1) * GROUP]).max(axis=1)
        scales[:, group] = block.astype(np.float32) / np.float32(7.0)
    return scales


def quantize(weights: np.ndarray, scales: np.ndarray) -> np.ndarray:
    per_weight = np.repeat(scales.astype(np.float64), GROUP, axis=1)[:, : weights.shape[1]]
    ratio = np.divide(weights.astype(np.float64), per_weight, out=np.zeros(weights.shape), where=per_weight > 0)
    return np.clip(np.round(ratio), -8, 7).astype(np.int8)


def pack_nibbles(codes: np.ndarray) -> np.ndarray:
    rows, k = codes.shape
    padded = np.zeros((rows, k + (k % 2)), dtype=np.int16)
    padded[:, :k] = codes
    low = padded[:, 0::2] & 0xF
    high = padded[:, 1::2] & 0xF
    return (low | (high << 4)).astype(np.uint8)


def unpack_nibbles(packed: np.ndarray, k: int) -> np.ndarray:
    low = (packed & 0xF).astype(np.int16)
    high = (packed >> 4).astype(np.int16)
    codes = np.empty((packed.shape[0], packed.shape[1] * 2), dtype=np.int16)
    codes[:, 0::2], codes[:, 1::2] = low, high
    codes = np.where(codes >= 8, codes - 16, codes)  # sign-extend the 4-bit value
    return codes[:, :k]


def reference_pack(weights):
    scales = group_scales(weights)
    return [pack_nibbles(quantize(weights, scales)), scales]


def reference_unpack(packed, scales, k):
    per_weight = np.repeat(scales.astype(np.float64), GROUP, axis=1)[:, :k]
    return (unpack_nibbles(packed, k) * per_weight).astype(np.float32)


def safe_weights(rng, rows: int, k: int, zero_group: int | None = None) -> np.ndarray:
    """Normal weights with no w / scale within 1e-3 of a half-integer."""
    weights = rng.normal(0, 0.05, size=(rows, k)).astype(np.float32)
    if zero_group is not None:
        weights[:, zero_group * GROUP:(zero_group + 1) * GROUP] = 0.0
    for _ in range(100):
        scales = group_scales(weights)
        per_weight = np.repeat(scales.astype(np.float64), GROUP, axis=1)[:, :k]
        ratio = np.divide(weights.astype(np.float64), per_weight, out=np.zeros(weights.shape), where=per_weight > 0)
        near = np.abs(np.abs(ratio - np.floor(ratio)) - 0.5) < 1e-3
        if not near.any():
            return weights
        weights[near] = (weights[near] * np.float32(0.97)).astype(np.float32)  # nudge off the boundary
    raise RuntimeError("could not move the weights off the rounding boundaries")


class PackJudge(Judge):
    def examples(self):
        return [
            Case("four weights, one group", "basic", (np.array([[0.7, -0.2, 0.0, -0.7]], dtype=np.float32),)),
            Case("three weights: K is odd", "odd_k", (np.array([[0.35, 0.1, -0.35]], dtype=np.float32),)),
        ]

    def hidden_cases(self, rng):
        return [
            Case("K = 256: two full groups", "basic", (safe_weights(rng, 8, 256),)),
            Case("K = 1024", "basic", (safe_weights(rng, 4, 1024),)),
            Case("K = 257: odd, and one weight in the last group", "odd_k", (safe_weights(rng, 6, 257),)),
            Case("K = 300: the last group has 44 weights", "partial_group", (safe_weights(rng, 6, 300),)),
            Case("an all-zero group (pruned weights)", "zero_group", (safe_weights(rng, 4, 384, zero_group=1),)),
        ]

    def reference(self, case):
        return reference_pack(*case.args)

    def check(self, case, got, expected):
        if not isinstance(got, list) or len(got) != 2:
            return "return a tuple (packed, scales)"
        packed, scales = got
        if isinstance(packed, np.ndarray) and packed.dtype != np.uint8:
            return f"packed has dtype {packed.dtype}, expected uint8"
        problem = compare_arrays(scales, expected[1], SCALE_TOLERANCE, "scales")
        if problem:
            return problem
        problem = compare_arrays(packed, expected[0], None, "packed")
        if problem and isinstance(packed, np.ndarray) and packed.shape == expected[0].shape:
            wrong = np.argwhere(packed != expected[0])[0]
            byte_got, byte_expected = int(packed[tuple(wrong)]), int(expected[0][tuple(wrong)])
            return f"{problem} (byte 0x{byte_got:02x}, expected 0x{byte_expected:02x})"
        return problem


class UnpackJudge(Judge):
    tolerance = DEQUANT_TOLERANCE

    def examples(self):
        return [
            Case("one byte per sign", "negative",
                 (np.array([[0x21, 0xF7, 0x08]], dtype=np.uint8), np.array([[0.5]], dtype=np.float32), 6)),
            Case("odd K: the last high nibble is padding", "odd_k",
                 (np.array([[0x31, 0x05]], dtype=np.uint8), np.array([[2.0]], dtype=np.float32), 3)),
        ]

    def hidden_cases(self, rng):
        def case(name, group, rows, k, negative):
            codes = rng.integers(-8 if negative else 0, 8, size=(rows, k))
            scales = rng.uniform(0.001, 0.05, size=(rows, -(-k // GROUP))).astype(np.float32)
            return Case(name, group, (pack_nibbles(codes), scales, k))

        return [
            case("K = 256, codes 0..7", "basic", 8, 256, negative=False),
            case("K = 1024, codes 0..7", "basic", 4, 1024, negative=False),
            case("every code from -8 to 7", "negative", 8, 512, negative=True),
            case("K = 257, codes 0..7", "odd_k", 6, 257, negative=False),
            case("K = 300: a 44-weight last group, codes 0..7", "partial_group", 6, 300, negative=False),
        ]

    def reference(self, case):
        return reference_unpack(*case.args)


JUDGES = {"pack": PackJudge(), "unpack": UnpackJudge()}
