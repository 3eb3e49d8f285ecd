"""The whole GPU path on one GPU, for every kernel question in the bank, in a few minutes.

    python -m gpu_runner.device_check [--only SLUG ...] [--json OUT.json] [--sandbox]

For each kernel part it runs, each in a fresh process (``gpu_runner.process.plain_runner``:
these are reviewed solutions from the bank, so no sandbox is needed on a lent machine;
with ``--sandbox``, on a GPU worker, each run goes through the sandbox exactly as a
candidate's does, which checks that path too):

- the reference (``accepted``): correctness on the full shapes before and after timing,
  timed with our method and with ``triton.testing.do_bench`` in the same process; it
  must be ACCEPTED (every shape at or above the part's threshold, no time below the
  physical floor), and each shape's median must agree with do_bench's within 10%;
- every ``too_slow`` example: correct and timed, and it must be TOO_SLOW;
- every example that must fail correctness: checked on the full shapes (not timed),
  and it must get its stated verdict.

It prints one line per run and one per timed shape (median, achieved GB/s or TFLOP/s,
percent of the catalogue peak, do_bench's median) and exits 1 if anything did not hold.
Needs an NVIDIA GPU with nvidia-smi, CUDA torch and triton in this Python. On a machine
lent for a session, ``scripts/device-check`` sets it up and runs it (see there).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from gpu_runner import devices, process
from gpu_runner.timing import agrees
from grading.judge.contract import load_judge
from grading.kinds.kernel import KernelKind, judging, sandbox_limits
from questions.catalogue import load_catalogue
from questions.loader import bank_files, load_file
from questions.schema import Question

DO_BENCH_TOLERANCE = 0.10
CHECK_SEED = 20_260_101  # fixed, so a failure can be reproduced


@dataclass
class RunLine:
    question: str
    solution: str
    expected: str
    got: str
    seconds: float
    detail: str = ""
    shapes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.expected == self.got and not self.detail


def kernel_parts():
    """(slug, part spec, judge) for every kernel part in the bank."""
    found = []
    for path in bank_files():
        loaded = load_file(path)
        if not isinstance(loaded.data, dict):
            continue
        question = Question.from_data(loaded.data)
        for part in question.parts:
            if part.engine.needs_gpu:
                spec = KernelKind().load_spec(part.raw)
                found.append((question.slug, spec, load_judge(spec.judge, spec.id)))
    return found


def check_part(slug: str, spec, judge, limits, runner=None) -> list[RunLine]:
    def run(source: str, **options):
        started = time.monotonic()
        report = judging.judge_kernel(judge=judge, source=source, entrypoint=spec.entrypoint, seed=CHECK_SEED,
                                      speed=spec.speed, on_gpu=True, run=runner or process.plain_runner,
                                      limits=limits, gpus=load_catalogue()["gpus"], **options)
        return report, time.monotonic() - started

    lines = []
    reference, seconds = run(spec.reference_source, reference_times={}, do_bench=True)
    line = RunLine(slug, "reference", "accepted", reference.outcome.value, seconds, _failure(reference),
                   _shape_rows(reference, spec, check_do_bench=True))
    if any(row["do_bench_disagrees"] for row in line.shapes):
        line.detail = (line.detail + "; " if line.detail else "") + "median disagrees with do_bench by over 10%"
    lines.append(line)
    reference_times = {shape.name: shape.median_seconds for shape in reference.shapes if shape.median_seconds}
    for index, solution in enumerate(spec.solutions):
        if solution.verdict == "accepted":
            continue
        timed = solution.verdict == "too_slow"
        report, seconds = run(solution.code, reference_times=reference_times, timed=timed)
        expected = solution.verdict
        lines.append(RunLine(slug, f"solutions[{index}]", expected, report.outcome.value, seconds,
                             _failure(report) if report.outcome.value != expected else "",
                             _shape_rows(report, spec, check_do_bench=False)))
    return lines


def _failure(report) -> str:
    failure = report.correctness.first_failure
    if failure is not None:
        return f"{failure.case.name}: {failure.detail}"[:300]
    return (report.correctness.detail or "")[:300]


def _shape_rows(report, spec, check_do_bench: bool) -> list[dict]:
    rows = []
    for shape in report.shapes:
        judgement = shape.judgement
        row = {"shape": shape.name, "median_us": _us(shape.median_seconds), "samples": shape.samples,
               "relative_error": shape.relative_error, "stop": shape.stop,
               "status": judgement.status if judgement else "", "error": shape.error,
               "rate": judgement.rate if judgement else None,
               "fraction": judgement.fraction if judgement else None,
               "reference_fraction": shape.reference.fraction if shape.reference else None,
               "do_bench_us": _us(shape.do_bench_seconds), "do_bench_disagrees": False,
               "bytes": shape.work.bytes, "flops": shape.work.flops}
        if check_do_bench:
            row["do_bench_disagrees"] = not (shape.median_seconds and shape.do_bench_seconds and agrees(
                shape.median_seconds, shape.do_bench_seconds, DO_BENCH_TOLERANCE))
        rows.append(row)
    return rows


def _us(seconds):
    return None if seconds is None else seconds * 1e6


def print_line(line: RunLine, metric: str) -> None:
    mark = "ok  " if line.ok else "FAIL"
    print(f"{mark} {line.question:32} {line.solution:13} expected {line.expected:16} got {line.got:16} "
          f"{line.seconds:6.1f} s  {line.detail}", flush=True)
    for row in line.shapes:
        if row["rate"] is None:
            print(f"       {row['shape']}: {row['error'] or 'not timed'}", flush=True)
            continue
        rate = f"{row['rate'] / 1e9:8.0f} GB/s" if metric == "bandwidth" else f"{row['rate'] / 1e12:6.1f} TFLOP/s"
        fraction = f"{row['fraction']:6.1%}" if row["fraction"] is not None else "   n/a"
        bench = f" do_bench {row['do_bench_us']:9.1f} us" if row["do_bench_us"] else ""
        print(f"       {row['shape']}: {row['median_us']:9.1f} us ({row['samples']} samples, {row['stop']})"
              f" {rate} = {fraction} of peak [{row['status']}]{bench}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="question slugs to check (default: every kernel question)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--sandbox", action="store_true",
                        help="run each solution in the sandbox, as a candidate's answer runs on a GPU worker")
    args = parser.parse_args(argv)
    device = devices.read_device()
    if device is None:
        print("No NVIDIA GPU here (nvidia-smi found none): the device check needs one.")
        return 2
    runner = None
    if args.sandbox:
        missing = process.gpu_sandbox_missing()
        if missing:
            print(f"--sandbox: the sandbox cannot run on this GPU: {missing}")
            return 2
        runner = process.sandbox_runner(on_gpu=True)
    key = devices.catalogue_key(device.name)
    print(f"GPU: {device.describe()}; catalogue key: {key or 'none (times unscored)'}")
    # One compile cache for the whole check: the reference compiles once, not once per run.
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="device-check-triton-"))
    parts = [item for item in kernel_parts() if not args.only or item[0] in args.only]
    started = time.monotonic()
    lines = []
    for slug, spec, judge in parts:
        for line in check_part(slug, spec, judge, sandbox_limits(spec, on_gpu=True), runner):
            print_line(line, spec.speed.metric)
            lines.append(line)
    failed = [line for line in lines if not line.ok]
    print(f"{len(lines) - len(failed)} of {len(lines)} runs as expected in {time.monotonic() - started:.0f} s "
          f"on {devices.read_device().describe() if devices.read_device() else device.name}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"device": device.to_json(), "runs": [vars(line) | {"ok": line.ok} for line in lines]},
                      handle, indent=2, default=_json_default)
    return 1 if failed else 0


def _json_default(value):
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
