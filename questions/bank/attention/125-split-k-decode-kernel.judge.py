"""Trusted judge for 125-split-k-decode-kernel (part ``kernel``): reviewed code, never
sent to the sandbox.

One decode step: each request has one query per head and ``seq_lens[b]`` cached keys
(the rest of the cache is garbage the kernel must not read as keys). The caller fixes
the split grid, as CUDA graphs do, so a request shorter than the grid has splits with
no keys; a padding request has none at all and its output must be zeros. The
reference is float64 NumPy over the float16 inputs.
"""

import numpy as np

from gpu_runner.timing import Work
from grading.judge import Case, Tolerance
from grading.kinds.kernel.problem import KernelJudge, TensorRecipe, TimedShape


def decode_case(rng, name: str, group: str, *, heads: int, kv_heads: int, dim: int, max_len: int,
                lens: list[int], splits: int, query_scale: float = 1.0) -> Case:
    batch = len(lens)
    q = (rng.normal(0.0, query_scale, size=(batch, heads, dim))).astype(np.float16)
    k_cache = rng.normal(0.0, 1.0, size=(batch, max_len, kv_heads, dim)).astype(np.float16)
    v_cache = rng.normal(0.0, 1.0, size=(batch, max_len, kv_heads, dim)).astype(np.float16)
    for request, length in enumerate(lens):  # garbage past the end: huge values, never keys
        k_cache[request, length:] = 1e4
        v_cache[request, length:] = -1e4
    return Case(name, group, (q, k_cache, v_cache, np.array(lens, dtype=np.int32), splits))


class DecodeAttentionJudge(KernelJudge):
    # float32 output; probabilities rounded to float16 for a tl.dot cost ~5e-4 relative.
    tolerance = Tolerance(rtol=1e-2, atol=2e-3, norm_rtol=2e-3)

    def interpreter_cases(self, rng):
        ragged = [300, int(rng.integers(2, 7)), int(rng.integers(100, 250))]
        return [
            decode_case(rng, "one key and four splits", "empty_split",
                        heads=2, kv_heads=2, dim=64, max_len=1, lens=[1], splits=4),
            decode_case(rng, "a ragged batch with grouped heads; one request shorter than the grid", "empty_split",
                        heads=4, kv_heads=2, dim=64, max_len=300, lens=ragged, splits=8),
            decode_case(rng, "a padding request with no keys at all", "no_keys",
                        heads=2, kv_heads=1, dim=64, max_len=77, lens=[0, 77], splits=3),
            decode_case(rng, "splits that are no multiple of the tile", "basic",
                        heads=2, kv_heads=2, dim=128, max_len=1000, lens=[999], splits=7),
            decode_case(rng, "scores in the hundreds (exp overflows without the max)", "basic",
                        heads=2, kv_heads=1, dim=64, max_len=200, lens=[200, 150], splits=4, query_scale=40.0),
        ]

    def gpu_cases(self, rng):
        return self.interpreter_cases(rng) + [
            decode_case(rng, "Llama 3 8B heads (32 over 8), 8K context, batch 2", "full",
                        heads=32, kv_heads=8, dim=128, max_len=8192, lens=[8192, int(rng.integers(3000, 5000))],
                        splits=16),
        ]

    def reference(self, case):
        q, k_cache, v_cache, lens, _ = case.args
        batch, heads, dim = q.shape
        group = heads // k_cache.shape[2]
        out = np.zeros((batch, heads, dim))
        for request in range(batch):
            length = int(lens[request])
            if length == 0:
                continue
            keys = np.repeat(k_cache[request, :length].astype(np.float64), group, axis=1)  # [n, H, D]
            values = np.repeat(v_cache[request, :length].astype(np.float64), group, axis=1)
            scores = np.einsum("hd,nhd->hn", q[request].astype(np.float64), keys) / np.sqrt(dim)
            weights = np.exp(scores - scores.max(axis=1, keepdims=True))
            out[request] = np.einsum("hn,nhd->hd", weights / weights.sum(axis=1, keepdims=True), values)
        return out.astype(np.float32)

    def timed_shapes(self):
        heads, dim, length, splits = 32, 128, 16384, 16
        cache = (1, length, heads, dim)
        return [TimedShape(
            name=f"batch 1, {heads} heads x {dim}, {length:,} cached tokens, {splits} splits",
            args=(TensorRecipe((1, heads, dim), "float16"), TensorRecipe(cache, "float16"),
                  TensorRecipe(cache, "float16"),
                  TensorRecipe((1,), "int32", fill="integers", low=length, high=length + 1), splits),
            # K and V read once, q read, the float32 output written; 4 FLOPs per key and dim.
            work=Work(bytes=2 * length * heads * dim * 2 + heads * dim * 2 + heads * dim * 4,
                      flops=4 * heads * length * dim),
        )]


JUDGES = {"kernel": DecodeAttentionJudge()}
