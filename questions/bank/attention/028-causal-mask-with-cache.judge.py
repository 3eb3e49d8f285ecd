"""Trusted judge for 028-causal-mask-with-cache (part ``mask``): reviewed code, never
sent to the sandbox.

Row b holds cache_lens[b] cached keys followed by its new_lens[b] new tokens in key
slots 0..cache+new-1 (right-padded to num_keys); its new tokens are query slots
0..new-1 (right-padded to num_queries). Query i sits at absolute position cache + i,
key j at position j.
"""

import numpy as np

from grading.judge import Case, Judge


def reference_mask(cache_lens, new_lens, num_queries, num_keys):
    cache = np.asarray(cache_lens)[:, None, None]
    new = np.asarray(new_lens)[:, None, None]
    query = np.arange(num_queries)[None, :, None]
    key = np.arange(num_keys)[None, None, :]
    return (query < new) & (key < cache + new) & (key <= cache + query)


def _case(name: str, group: str, cache_lens, new_lens, extra_queries: int = 0, extra_keys: int = 0) -> Case:
    cache_lens = np.asarray(cache_lens, dtype=np.int64)
    new_lens = np.asarray(new_lens, dtype=np.int64)
    num_queries = int(new_lens.max()) + extra_queries
    num_keys = int((cache_lens + new_lens).max()) + extra_keys
    return Case(name, group, (cache_lens, new_lens, num_queries, num_keys))


class MaskJudge(Judge):
    def examples(self):
        return [
            _case("prefill of three tokens", "prefill", [0], [3]),
            _case("two new tokens after three cached", "chunked", [3], [2]),
        ]

    def hidden_cases(self, rng):
        prompt = int(rng.integers(5, 40))
        cached = rng.choice(np.arange(1, 60), size=4, replace=False)  # four different lengths
        chunk_cache, chunk_new = int(rng.integers(10, 50)), int(rng.integers(2, 9))
        pair_cache, pair_new = int(rng.integers(10, 50)), int(rng.integers(2, 9))
        ragged_cache = rng.integers(0, 30, size=5)
        ragged_cache[0] = 0  # one row is a fresh prefill
        ragged_new = rng.integers(1, 12, size=5)
        ragged_new[1] = ragged_new.max() + 3  # and the others have padded query rows
        return [
            _case(f"prefill of {prompt} tokens, no cache", "prefill", [0], [prompt]),
            _case("decode: one new token per row, four different cache lengths", "decode", cached, [1, 1, 1, 1]),
            _case(f"chunked prefill: {chunk_new} new tokens after {chunk_cache} cached", "chunked",
                  [chunk_cache], [chunk_new]),
            _case("two rows with the same cache and chunk lengths", "chunked", [pair_cache] * 2, [pair_new] * 2),
            _case("a ragged batch: mixed cache and new lengths, padded queries and keys", "ragged",
                  ragged_cache, ragged_new, extra_queries=1, extra_keys=2),
        ]

    def reference(self, case):
        return reference_mask(*case.args)


JUDGES = {"mask": MaskJudge()}
