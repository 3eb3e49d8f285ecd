"""Trusted judge for 123-looped-softmax-vocab (part ``kernel``): reviewed code, never sent
to the sandbox.

Logits are float32 rows; masked vocabulary entries are -inf, as a structured-output
bitmask or a top-k filter leaves them. Every row keeps at least one finite logit, so
the reference (float64 NumPy) never has NaN and a NaN in the answer always fails.
Masked spans are 8,192 wide and aligned to 8,192, so any tile of up to 8,192 columns
that falls in one is masked whole.
"""

import numpy as np

from gpu_runner.timing import Work
from grading.judge import Case, Tolerance
from grading.kinds.kernel.problem import KernelJudge, TensorRecipe, TimedShape

VOCAB = 128_256  # Llama 3's vocabulary
MASK_SPAN = 8_192
TIMED_ROWS = 1_024


def logits(rng, rows: int, cols: int, scale: float = 3.0) -> np.ndarray:
    return (rng.normal(0.0, scale, size=(rows, cols))).astype(np.float32)


def masked_spans(rng, rows: int, cols: int) -> np.ndarray:
    """Row 0: the first span masked; row 1: a middle span; row 2: everything but a
    random 1% (a grammar bitmask)."""
    x = logits(rng, rows, cols)
    x[0, :MASK_SPAN] = -np.inf
    x[1, MASK_SPAN:2 * MASK_SPAN] = -np.inf
    if rows > 2:
        keep = rng.random(cols) < 0.01
        keep[rng.integers(cols)] = True
        x[2, ~keep] = -np.inf
    return x


class SoftmaxJudge(KernelJudge):
    # float32 output; exp's relative error grows with |x| (about 1e-5 at x = -80).
    tolerance = Tolerance(rtol=1e-4, atol=1e-6, norm_rtol=1e-4)

    def interpreter_cases(self, rng):
        one_token = np.full((2, 3000), -np.inf, dtype=np.float32)
        one_token[0, rng.integers(3000)] = rng.normal()
        one_token[1, rng.integers(3000)] = 50.0
        return [
            Case("a row narrower than one block", "basic", (logits(rng, 3, int(rng.integers(1, 20))),)),
            Case("a width that is not a power of two", "basic", (logits(rng, 4, int(rng.integers(900, 1100))),)),
            Case("the full 128,256-entry vocabulary", "vocab", (logits(rng, 2, VOCAB),)),
            Case("whole tiles masked with -inf", "masked", (masked_spans(rng, 3, 3 * MASK_SPAN + 123),)),
            Case("a row with a single allowed token", "masked", (one_token,)),
            Case("logits near 1e4 (exp overflows without the max)", "basic", (logits(rng, 2, 5000, 3e3) + 1e4,)),
        ]

    def gpu_cases(self, rng):
        return self.interpreter_cases(rng) + [
            Case("32 rows of the full vocabulary", "vocab", (logits(rng, 32, VOCAB),)),
            Case("masked tiles at the full vocabulary", "masked", (masked_spans(rng, 8, VOCAB),)),
        ]

    def reference(self, case):
        x = case.args[0].astype(np.float64)
        top = x.max(axis=1, keepdims=True)
        weights = np.exp(x - top)
        return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)

    def timed_shapes(self):
        rows, cols = TIMED_ROWS, VOCAB
        return [TimedShape(
            name=f"{rows} rows x {cols:,} vocabulary, float32",
            args=(TensorRecipe((rows, cols), "float32", scale=3.0),),
            # Read the logits once, write the probabilities once; ~5 FLOPs per element.
            work=Work(bytes=2 * rows * cols * 4, flops=5 * rows * cols),
        )]


JUDGES = {"kernel": SoftmaxJudge()}
