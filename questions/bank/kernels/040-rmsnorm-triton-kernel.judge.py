"""Trusted judge for 040-rmsnorm-triton-kernel (part ``kernel``): reviewed code, never
sent to the sandbox.

Activations are float16 with the outlier channels real LLM activations have (a few
channels in the hundreds), so a sum of squares kept in float16 overflows; one case is
tiny values where eps is a large part of the mean square, one a row of zeros.
"""

import numpy as np

from gpu_runner.timing import Work
from grading.judge import Case, Tolerance
from grading.kinds.kernel.problem import KernelJudge, TensorRecipe, TimedShape

EPS = 1e-5


def activations(rng, rows: int, hidden: int, outliers: int = 0) -> np.ndarray:
    x = rng.normal(0.0, 1.0, size=(rows, hidden))
    if outliers:
        channels = rng.choice(hidden, size=outliers, replace=False)
        x[:, channels] = rng.choice([-1.0, 1.0], size=(rows, outliers)) * rng.uniform(200, 600, size=(rows, outliers))
    return x.astype(np.float16)


def weights(rng, hidden: int) -> np.ndarray:
    return rng.uniform(0.5, 1.5, size=hidden).astype(np.float16)


def case(rng, name: str, group: str, x: np.ndarray) -> Case:
    return Case(name, group, (x, weights(rng, x.shape[1]), EPS))


class RmsNormJudge(KernelJudge):
    # float16 output: half an ulp is 4.9e-4 relative; the reference is float64.
    tolerance = Tolerance(rtol=2e-3, atol=1e-3, norm_rtol=2e-3)

    def interpreter_cases(self, rng):
        tiny = (rng.normal(0.0, 1e-3, size=(2, 1536))).astype(np.float16)
        zeros = activations(rng, 3, 768)
        zeros[1] = 0
        return [
            case(rng, "a hidden size below one block", "basic", activations(rng, 3, int(rng.integers(3, 40)))),
            case(rng, "a hidden size that is not a power of two", "basic",
                 activations(rng, 4, int(rng.integers(1000, 1100)))),
            case(rng, "DeepSeek V3's hidden size, 7,168", "basic", activations(rng, 2, 7168)),
            case(rng, "outlier channels in the hundreds", "outliers", activations(rng, 4, 4096, outliers=3)),
            case(rng, "tiny activations: eps is part of the mean square", "eps", tiny),
            case(rng, "a row of zeros", "eps", zeros),
        ]

    def gpu_cases(self, rng):
        return self.interpreter_cases(rng) + [
            case(rng, "1,024 tokens of Llama 3 70B (hidden 8,192) with outliers", "full",
                 activations(rng, 1024, 8192, outliers=4)),
            case(rng, "Llama 3 405B's hidden size, 16,384", "full", activations(rng, 64, 16384, outliers=4)),
        ]

    def reference(self, case):
        x, weight, eps = case.args
        x = x.astype(np.float64)
        scale = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)
        return (x * scale * weight.astype(np.float64)).astype(np.float16)

    def timed_shapes(self):
        rows, hidden = 8192, 8192
        return [TimedShape(
            name=f"{rows:,} tokens x hidden {hidden:,}, float16",
            args=(TensorRecipe((rows, hidden), "float16"), TensorRecipe((hidden,), "float16"), EPS),
            # x read once, y written once, the weight read once; ~4 FLOPs per element.
            work=Work(bytes=2 * rows * hidden * 2 + hidden * 2, flops=4 * rows * hidden),
        )]


JUDGES = {"kernel": RmsNormJudge()}
