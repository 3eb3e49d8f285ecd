"""Trusted judge for 038-coalesced-gemv-kernel (part ``kernel``): reviewed code, never
sent to the sandbox.

y = W x with W float16 [N, K] row-major and x float16 [K]; y is float32. The reference
is float64 over the float16 values, so only the candidate's accumulation order and
precision differ from it.
"""

import numpy as np

from gpu_runner.timing import Work
from grading.judge import Case
from grading.kinds.kernel.problem import KernelJudge, TensorRecipe, TimedShape, check_sum_of_products


def gemv_case(rng, name: str, group: str, rows: int, cols: int) -> Case:
    weight = rng.normal(0.0, 1.0, size=(rows, cols)).astype(np.float16)
    x = rng.normal(0.0, 1.0, size=cols).astype(np.float16)
    return Case(name, group, (weight, x))


def gemv_work(rows: int, cols: int) -> Work:
    # W and x read once, y (float32) written once; a multiply and an add per weight.
    return Work(bytes=rows * cols * 2 + cols * 2 + rows * 4, flops=2 * rows * cols)


class GemvJudge(KernelJudge):
    # Each product may be rounded to float16 on the way (2**-11 relative), so the error
    # of a row is bounded by a multiple of sum |w x|, whatever the row's result.
    rtol = 2e-3

    def check(self, case, got, expected):
        weight, x = case.args
        magnitude = np.abs(weight.astype(np.float64)) @ np.abs(x.astype(np.float64))
        return check_sum_of_products(got, expected, magnitude, self.rtol)

    def interpreter_cases(self, rng):
        return [
            gemv_case(rng, "fewer rows and columns than one block", "basic",
                      int(rng.integers(1, 8)), int(rng.integers(3, 30))),
            gemv_case(rng, "sizes that are not powers of two", "basic",
                      int(rng.integers(300, 400)), int(rng.integers(700, 800))),
            gemv_case(rng, "K not a multiple of any tile", "basic", 64, 1000 + 2 * int(rng.integers(1, 50)) + 1),
            gemv_case(rng, "one row", "basic", 1, 1024),
            gemv_case(rng, "a tall matrix", "basic", 2048, 96),
        ]

    def gpu_cases(self, rng):
        return self.interpreter_cases(rng) + [
            gemv_case(rng, "Llama 3 8B's down projection, 4,096 x 14,336", "full", 4096, 14336),
        ]

    def reference(self, case):
        weight, x = case.args
        return (weight.astype(np.float64) @ x.astype(np.float64)).astype(np.float32)

    def timed_shapes(self):
        shapes = []
        for rows, cols, what in ((8192, 8192, "Llama 3 70B's o_proj"), (28672, 8192, "Llama 3 70B's up_proj")):
            shapes.append(TimedShape(
                name=f"{what}, {rows:,} x {cols:,} float16",
                args=(TensorRecipe((rows, cols), "float16"), TensorRecipe((cols,), "float16")),
                work=gemv_work(rows, cols),
            ))
        return shapes


JUDGES = {"kernel": GemvJudge()}
