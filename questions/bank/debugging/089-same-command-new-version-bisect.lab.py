"""Lab data for 89: the same command line on two releases of a serving engine, slower on the new one.

Artifacts: each release's startup log (the same "non-default args" line on both, because
the command line did not change), each release's resolved configuration (every setting
after the defaults were filled in), and the benchmark runs: the old release, the new
one, the new one with every moved setting pinned to its old value, and a bisection over
the moved settings by halves, three repeats each.

The throughput model behind the runs (illustrative magnitudes, see the question's
notes): the new release is slower by a residual that no setting explains (a code
change); the per-step token budget that moved from 8192 to 2048 costs more, the more
prompt-heavy the workload; prefix caching, now on, costs a little hashing on prompts
that never share a prefix; asynchronous scheduling, now on, gains a little; the other
moved settings do not bind on this workload. Each repeat carries up to 0.6% noise.

Every value is measured from the printed repeats, the way a candidate would.
"""

from __future__ import annotations

from questions.labs import ChartArtifact, EventLogArtifact, LabOutput, Series, TableArtifact

# Settings whose default moved between the releases: name -> (old, new).
ALWAYS_MOVED = {
    "async_scheduling": ("False", "True"),
    "enable_prefix_caching": ("False", "True"),
    "max_cudagraph_capture_size": ("512", "256"),
    "max_num_batched_tokens": ("8192", "2048"),
    "max_num_seqs": ("256", "128"),
}
SOMETIMES_MOVED = {
    "gpu_memory_utilization": ("0.9", "0.92"),
    "max_logprobs": ("20", "5"),
}
UNCHANGED = {
    "block_size": "16",
    "dtype": "bfloat16",
    "enable_chunked_prefill": "True",
    "enforce_eager": "False",
    "kv_cache_dtype": "auto",
    "long_prefill_token_threshold": "0",
    "max_model_len": "32768",
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "pipeline_parallel_size": "1",
    "quantization": "None",
    "scheduling_policy": "fcfs",
    "seed": "0",
    "stream_interval": "1",
    "tensor_parallel_size": "1",
}
CULPRIT = "max_num_batched_tokens"
OLD, NEW = "2025.3", "2025.6"
REPEATS = 3
COMMAND = "serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768 --port 8000"


def _mean(values) -> float:
    return sum(values) / len(values)


def _model(rng, prompt_tokens: int, concurrency: int):
    """The throughput of a run, as a function of the release and the pinned settings."""
    base = rng.uniform(2_600, 3_200) * (concurrency / 32) ** 0.6 * (3072 / prompt_tokens) ** 0.5
    residual = rng.uniform(0.02, 0.04)
    budget_cost = rng.uniform(0.10, 0.14) if prompt_tokens <= 3072 else rng.uniform(0.15, 0.20)

    def throughput(release: str, pinned: frozenset) -> float:
        if release == OLD:
            return base
        value = base * (1 - residual)
        if CULPRIT not in pinned:
            value *= 1 - budget_cost
        if "enable_prefix_caching" not in pinned:
            value *= 1 - 0.004
        if "async_scheduling" not in pinned:
            value *= 1 + 0.008
        return value

    return throughput


def _bisect(moved: list[str], recovers) -> list[tuple[str, ...]]:
    """The pinned sets a bisection by halves runs, in order, ending with the culprit alone."""
    runs, candidates = [], list(moved)
    while len(candidates) > 1:
        half = candidates[: len(candidates) // 2]
        runs.append(tuple(half))
        candidates = half if recovers(frozenset(half)) else candidates[len(half):]
    if tuple(candidates) not in runs:
        runs.append(tuple(candidates))
    return runs


def generate(variant) -> LabOutput:
    rng = variant.rng
    prompt_tokens = int(variant.choices["prompt_tokens"])
    concurrency = int(variant.choices["concurrency"])
    extra = sorted(rng.sample(sorted(SOMETIMES_MOVED), rng.randrange(0, len(SOMETIMES_MOVED) + 1)))
    moved = {**ALWAYS_MOVED, **{name: SOMETIMES_MOVED[name] for name in extra}}
    moved_names = sorted(moved)
    old_config = {**UNCHANGED, **{name: values[0] for name, values in moved.items()}}
    new_config = {**UNCHANGED, **{name: values[1] for name, values in moved.items()}}
    throughput = _model(rng, prompt_tokens, concurrency)
    pin_all = frozenset(moved_names)
    half_way = (throughput(NEW, frozenset()) + throughput(NEW, pin_all)) / 2
    plan = [("old release", OLD, ()), ("new release", NEW, ()), ("pin every moved setting", NEW, tuple(moved_names))]
    for number, pinned in enumerate(_bisect(moved_names, lambda names: throughput(NEW, names) > half_way), 1):
        plan.append((f"bisect {number}", NEW, pinned))
    rows, means = [], {}
    for label, release, pinned in plan:
        repeats = [round(throughput(release, frozenset(pinned)) * (1 + rng.uniform(-0.006, 0.006)), 1)
                   for _ in range(REPEATS)]
        rows.append((label, release, ", ".join(pinned) if pinned else "none", *repeats))
        means[label] = _mean(repeats)
    culprit_run = next(row[0] for row in rows if row[2] == CULPRIT)
    old, new, pinned_all = means["old release"], means["new release"], means["pin every moved setting"]
    spreads = [max(row[3:]) / min(row[3:]) - 1 for row in rows]
    logs = []
    for release, stamp in ((OLD, "2025-06-02 10:14:07"), (NEW, "2025-06-02 11:02:51")):
        logs += [
            f"{stamp} INFO [release {release}] {COMMAND}",
            f"{stamp} INFO [release {release}] non-default args: {{'model': 'meta-llama/Llama-3.1-8B-Instruct',"
            " 'max_model_len': 32768, 'port': 8000}",
            f"{stamp} INFO [release {release}] resolved configuration written to /run/engine/config-{release}.json",
        ]
    chart = ChartArtifact(
        "runs-chart", "run (its row number in the runs table)", "output tokens per second",
        tuple(Series(f"repeat {repeat + 1}", tuple((number, row[3 + repeat]) for number, row in enumerate(rows, 1)))
              for repeat in range(REPEATS)),
        style="bar", title="The runs at a glance: each run's three repeats")
    artifacts = (
        EventLogArtifact("startup", tuple(logs), title="Both releases' startup lines, same command line"),
        TableArtifact("config-old", ("setting", "value"), tuple(sorted(old_config.items())),
                      title=f"Resolved configuration, release {OLD}"),
        TableArtifact("config-new", ("setting", "value"), tuple(sorted(new_config.items())),
                      title=f"Resolved configuration, release {NEW}"),
        TableArtifact("runs", ("run", "release", "pinned to the old value", *(f"tok/s #{n}" for n in range(1, 4))),
                      tuple(rows), title=f"Benchmark runs: {concurrency} concurrent requests,"
                      f" {prompt_tokens}-token prompts, 256 output tokens; output tokens per second"),
        chart,
    )
    values = {
        "moved": len(moved_names),
        "old": round(old, 4),
        "new": round(new, 4),
        "pinned_all": round(pinned_all, 4),
        "culprit_alone": round(means[culprit_run], 4),
        "regression": round((old - new) / old, 6),
        "regression_of_new": round((old - new) / new, 6),
        "explained": round((pinned_all - new) / (old - new), 6),
        "pinned_of_old": round(pinned_all / old, 6),
        "residual": round((old - pinned_all) / old, 6),
        "culprit_explained": round((means[culprit_run] - new) / (old - new), 6),
        "bisect_runs": len(plan) - 3,
        "max_spread": round(max(spreads), 6),
    }
    return LabOutput(artifacts, values)
