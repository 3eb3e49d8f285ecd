"""Trusted judge for 027-flashattention-forward-kernel (part ``kernel``): reviewed code,
never sent to the sandbox.

q, k, v are float16 [B, H, N, D]; the output is float16. The reference is float64
NumPy softmax attention with scale 1/sqrt(D), causal when asked (query i sees keys
0..i). Sequence lengths are chosen to be no multiple of any tile.
"""

import numpy as np

from gpu_runner.timing import Work
from grading.judge import Case, Tolerance
from grading.kinds.kernel.problem import KernelJudge, TensorRecipe, TimedShape


def attention_case(rng, name: str, group: str, batch: int, heads: int, length: int, dim: int, causal: bool,
                   scale: float = 1.0) -> Case:
    def tensor(spread):
        return rng.normal(0.0, spread, size=(batch, heads, length, dim)).astype(np.float16)

    return Case(name, group, (tensor(scale), tensor(1.0), tensor(1.0), causal))


def attention_work(batch: int, heads: int, length: int, dim: int) -> Work:
    # q, k, v read once and o written once; QK^T and PV are 2*N*N*D FLOPs each (non-causal).
    return Work(bytes=4 * batch * heads * length * dim * 2, flops=4 * batch * heads * length * length * dim)


class FlashAttentionJudge(KernelJudge):
    # float16 output (half an ulp is 4.9e-4) and probabilities rounded to float16 for the PV product.
    tolerance = Tolerance(rtol=2e-2, atol=5e-3, norm_rtol=5e-3)

    def interpreter_cases(self, rng):
        odd = int(rng.integers(129, 200))
        return [
            attention_case(rng, "one token", "basic", 1, 2, 1, 64, causal=False),
            attention_case(rng, "a length that is no multiple of any tile", "basic", 1, 2, odd, 64, causal=False),
            attention_case(rng, "causal, one token", "causal", 1, 1, 1, 64, causal=True),
            attention_case(rng, "causal, a length that is no multiple of any tile", "causal", 2, 1, odd, 64,
                           causal=True),
            attention_case(rng, "head dimension 128, scores in the tens", "basic", 1, 1, 100, 128,
                           causal=True, scale=4.0),
        ]

    def gpu_cases(self, rng):
        return self.interpreter_cases(rng) + [
            attention_case(rng, "4 heads x 1,536 tokens, dimension 128", "full", 1, 4, 1536, 128, causal=False),
            attention_case(rng, "causal, 4 heads x 1,536 tokens, dimension 128", "full", 1, 4, 1536, 128, causal=True),
        ]

    def reference(self, case):
        q, k, v, causal = case.args
        q, k, v = (tensor.astype(np.float64) for tensor in (q, k, v))
        scores = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])
        if causal:
            length = q.shape[2]
            scores = np.where(np.tril(np.ones((length, length), dtype=bool)), scores, -np.inf)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        return np.einsum("bhqk,bhkd->bhqd", weights, v).astype(np.float16)

    def timed_shapes(self):
        batch, heads, length, dim = 4, 32, 4096, 128
        shape = (batch, heads, length, dim)
        return [TimedShape(
            name=f"batch {batch}, {heads} heads, {length:,} tokens, dimension {dim}, not causal",
            args=(TensorRecipe(shape, "float16"), TensorRecipe(shape, "float16"), TensorRecipe(shape, "float16"),
                  False),
            work=attention_work(batch, heads, length, dim),
        )]


JUDGES = {"kernel": FlashAttentionJudge()}
