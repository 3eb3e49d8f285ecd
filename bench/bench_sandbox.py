"""Latency and throughput of the sandbox on a small torch solution.

Runs a solution that imports torch, does a little attention arithmetic and writes an
.npy to /sandbox/out, through grading.sandbox.run_python as the judge calls it, in these
modes (each with 1 and 2 concurrent callers, threads in one process as in a worker):

  cold     warm=False: a fresh interpreter per run, torch imported by the solution.
  warm     warm=True, back to back: runs as fast as they return.
  paced    warm=True, each run starts once a warm interpreter is ready (the time
           waited is not counted): the latency a candidate sees when the queue is not
           saturated.
  burst    warm=True, --burst submissions (200) as fast as possible: what a class
           submitting at once sees; elapsed is the time until the last verdict.

The warm modes run once per pool kind (--pools): "zygote" (the default pool: one zygote
per slot forks a child per job) and "one-job" (TRAINER_SANDBOX_ZYGOTE=0: an interpreter
per job, whose refilling, a torch import per run, competes with the runs; when it is
empty a run waits up to 5 s for the one being started, then starts cold) as the baseline.

Prints, per mode: median and p99 of the end-to-end wall time of run_python, the mean of
the sandbox's own wall time for the job, throughput (runs per second of elapsed time;
not meaningful for paced), how many runs found torch already imported (warm hits), the
elapsed time and the 1-minute load average when the row finished (the machine may be
shared). Needs the sandbox (scripts/setup-sandbox) and root.

    .venv/bin/python bench/bench_sandbox.py [--runs 10] [--burst 200]
        [--modes cold,warm,paced,burst] [--pools zygote,one-job] [--callers 1,2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grading.sandbox import Limits, Status, run_python, sandbox_available  # noqa: E402
from grading.sandbox import pool as warm_pool  # noqa: E402

SOLUTION = b"""\
import sys
preloaded = "torch" in sys.modules
import numpy as np
import torch

def attention(q, k, v):
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v

torch.manual_seed(0)
q, k, v = (torch.randn(4, 64, 32) for _ in range(3))
out = attention(q, k, v)
np.save("/sandbox/out/result.npy", out.numpy())
print(preloaded, float(out.sum()))
"""
# Generous enough that a cold torch import on a busy machine is not a time limit.
LIMITS = Limits(cpu_seconds=30, wall_seconds=60)


def one_run(warm: bool) -> tuple[float, float, bool]:
    started = time.monotonic()
    result = run_python(files={"solution.py": SOLUTION}, entry="solution.py", limits=LIMITS,
                        warm=warm)
    elapsed = time.monotonic() - started
    if result.status != Status.OK or "result.npy" not in result.files:
        raise RuntimeError(f"benchmark run failed: {result.status} {result.note}\n{result.stderr}")
    return elapsed, result.wall_seconds, result.stdout.startswith("True")


def measure(mode: str, callers: int, runs: int) -> dict:
    warm = mode != "cold"
    pool = warm_pool.get_pool() if warm else None
    if warm and (pool is None or not pool.wait_ready(pool.size, timeout=180)):
        raise RuntimeError("the warm pool did not fill")
    samples: list[tuple[float, float, bool]] = []
    lock = threading.Lock()

    def caller(count: int) -> None:
        for _ in range(count):
            if mode == "paced":
                pool.wait_ready(1, timeout=180)
            sample = one_run(warm)
            with lock:
                samples.append(sample)

    shares = [runs // callers + (1 if i < runs % callers else 0) for i in range(callers)]
    started = time.monotonic()
    with ThreadPoolExecutor(callers) as executor:
        for future in [executor.submit(caller, share) for share in shares]:
            future.result()
    elapsed = time.monotonic() - started
    totals = sorted(sample[0] for sample in samples)
    return {
        "mode": mode, "callers": callers, "runs": len(samples),
        "median": statistics.median(totals),
        "p99": totals[min(len(totals) - 1, round(0.99 * (len(totals) - 1)))],
        "inside": statistics.fmean(sample[1] for sample in samples),
        "throughput": len(samples) / elapsed,
        "warm_hits": sum(sample[2] for sample in samples),
        "elapsed": elapsed, "load": os.getloadavg()[0],
    }


def use_pool(kind: str) -> None:
    """Make the next warm pool of this process one of `kind` (see the module docstring)."""
    warm_pool.shutdown()
    os.environ["TRAINER_SANDBOX_ZYGOTE"] = "1" if kind == "zygote" else "0"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per mode and caller count")
    parser.add_argument("--burst", type=int, default=200, help="submissions in burst mode")
    parser.add_argument("--modes", default="cold,warm,paced,burst")
    parser.add_argument("--pools", default="zygote,one-job", help="pool kinds for warm modes")
    parser.add_argument("--callers", default="1,2", help="concurrent callers to try")
    options = parser.parse_args()
    ok, reason = sandbox_available()
    if not ok:
        print(f"sandbox unavailable: {reason}", file=sys.stderr)
        return 1
    one_run(False)  # fill the page cache: the first torch import reads ~1 GB of files
    print(f"{'mode':<7}{'pool':>8}{'callers':>8}{'runs':>6}{'median s':>10}{'p99 s':>8}"
          f"{'inside s':>10}{'runs/s':>8}{'warm hits':>11}{'elapsed s':>11}{'load':>7}")
    modes = options.modes.split(",")
    plan = [(mode, "-") for mode in modes if mode == "cold"]
    plan += [(mode, kind) for kind in options.pools.split(",") for mode in modes if mode != "cold"]
    for mode, kind in plan:
        if kind != "-":
            use_pool(kind)
        for callers in (int(c) for c in options.callers.split(",")):
            row = measure(mode, callers, options.burst if mode == "burst" else options.runs)
            print(f"{row['mode']:<7}{kind:>8}{row['callers']:>8}{row['runs']:>6}"
                  f"{row['median']:>10.3f}{row['p99']:>8.3f}{row['inside']:>10.3f}"
                  f"{row['throughput']:>8.2f}{row['warm_hits']:>7}/{row['runs']:<3}"
                  f"{row['elapsed']:>11.1f}{row['load']:>7.2f}", flush=True)
    warm_pool.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
