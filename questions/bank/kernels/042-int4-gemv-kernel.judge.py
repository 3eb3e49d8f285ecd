"""Trusted judge for 042-int4-gemv-kernel (part ``kernel``): reviewed code, never sent to
the sandbox.

Weights are unsigned 4-bit codes q in 0..15 with zero point 8, so w = (q - 8) * scale,
one float16 scale per row and group of ``group_size`` consecutive K; two codes per byte,
the even k in the low nibble. The reference dequantizes in float64.
"""

import numpy as np

from gpu_runner.timing import Work
from grading.judge import Case
from grading.kinds.kernel.problem import KernelJudge, TensorRecipe, TimedShape, check_sum_of_products


def quantized(rng, rows: int, cols: int, group: int):
    codes = rng.integers(0, 16, size=(rows, cols))
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    scales = rng.uniform(0.005, 0.02, size=(rows, cols // group)).astype(np.float16)
    return packed, scales


def dequantize(packed: np.ndarray, scales: np.ndarray, group: int) -> np.ndarray:
    codes = np.empty((packed.shape[0], packed.shape[1] * 2), dtype=np.int64)
    codes[:, 0::2] = packed & 0x0F
    codes[:, 1::2] = packed >> 4
    return (codes - 8) * np.repeat(scales.astype(np.float64), group, axis=1)


def int4_case(rng, name: str, rows: int, cols: int, group: int = 128) -> Case:
    packed, scales = quantized(rng, rows, cols, group)
    x = rng.normal(0.0, 1.0, size=cols).astype(np.float16)
    return Case(name, "basic", (packed, scales, x, group))


def int4_work(rows: int, cols: int, group: int) -> Work:
    # Packed codes, scales and x read once, y (float32) written once; ~2 FLOPs per weight.
    return Work(bytes=rows * cols // 2 + rows * (cols // group) * 2 + cols * 2 + rows * 4, flops=2 * rows * cols)


class Int4GemvJudge(KernelJudge):
    # Dequantized weights or products may be rounded to float16 on the way (2**-11
    # relative), so a row's error is bounded by a multiple of sum |w x|.
    rtol = 2e-3

    def check(self, case, got, expected):
        weight = dequantize(*case.args[:2], case.args[3])
        magnitude = np.abs(weight) @ np.abs(case.args[2].astype(np.float64))
        return check_sum_of_products(got, expected, magnitude, self.rtol)

    def interpreter_cases(self, rng):
        return [
            int4_case(rng, "fewer rows than one block, one group", int(rng.integers(1, 7)), 128),
            int4_case(rng, "a row count and group count that are not powers of two",
                      int(rng.integers(300, 400)), 128 * int(rng.integers(9, 15))),
            int4_case(rng, "groups of 64", 96, 64 * 13, group=64),
            int4_case(rng, "one row, a long K", 1, 128 * 40),
            int4_case(rng, "a tall matrix", 2000, 256),
        ]

    def gpu_cases(self, rng):
        return self.interpreter_cases(rng) + [
            int4_case(rng, "Llama 3 8B's down projection, 4,096 x 14,336", 4096, 14336),
        ]

    def reference(self, case):
        packed, scales, x, group = case.args
        return (dequantize(packed, scales, group) @ x.astype(np.float64)).astype(np.float32)

    def timed_shapes(self):
        group = 128
        shapes = []
        for rows, cols, what in ((28672, 8192, "Llama 3 70B's up_proj"), (8192, 28672, "Llama 3 70B's down_proj")):
            shapes.append(TimedShape(
                name=f"{what}, {rows:,} x {cols:,} int4, groups of {group}",
                args=(TensorRecipe((rows, cols // 2), "uint8", fill="integers", low=0, high=256),
                      TensorRecipe((rows, cols // group), "float16", scale=0.01),
                      TensorRecipe((cols,), "float16"), group),
                work=int4_work(rows, cols, group),
            ))
        return shapes


JUDGES = {"kernel": Int4GemvJudge()}
