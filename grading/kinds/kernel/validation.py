"""Checking a kernel part before it reaches candidates.

On the trusted side (``check_kernel_judge``): the part lists a reference (accepted), a
correct-but-slow solution (too_slow) and at least one that fails correctness; on several
seeds the interpreter's hidden cases are drawn deterministically from the seed (and
differ between seeds: the code judge's seed checks, ``grading.judge.validation``) and
each reference passes the judge's own check; the GPU's cases draw and encode; every
timed shape states positive bytes.

In the sandbox, under Triton's interpreter (no GPU needed): the reference and the slow
solution are correct (speed not scored), and every wrong one gets its stated verdict
(``solution_problem``, over each run that ``grading.kinds.kernel.validate_kernel_part``
makes). Whether the reference reaches its threshold and the slow one falls short can
only be checked on a GPU: ``python -m gpu_runner.device_check``.
"""

from __future__ import annotations

import numpy as np

from grading.judge.cases import Case, encode_cases
from grading.judge.validation import check_reference, check_seeded_draws
from grading.kinds.kernel.judging import KernelReport
from grading.kinds.kernel.problem import KernelJudge

CHECK_SEEDS = (11, 12)  # fixed: validation gives the same answer on every run
MAX_OUTPUT_FILES = 200  # out/ is a tmpfs with 256 inodes: outputs before and after timing


def check_kernel_judge(spec, judge: KernelJudge, seeds: tuple[int, ...] = CHECK_SEEDS) -> list[str]:
    """The trusted-side problems of kernel part ``spec`` (a loaded ``KernelSpec``) with
    its ``judge`` (see the module docstring); empty when sound."""
    problems = []
    verdicts = [solution.verdict for solution in spec.solutions]
    if "too_slow" not in verdicts:
        problems.append("no solution with verdict too_slow (a correct kernel that must fail the speed test)")
    if not any(verdict not in ("accepted", "too_slow") for verdict in verdicts):
        problems.append("no solution that must fail correctness (wrong_answer, runtime_error, ...)")

    def check_cases(seed: int, cases: list[Case]) -> list[str]:
        found = [problem for _, problem in (check_reference(judge, case) for case in cases) if problem]
        if len(cases) * 2 > MAX_OUTPUT_FILES:
            found.append(f"seed {seed}: {len(cases)} cases leave too many output files for the sandbox")
        return found

    seeded, finished = check_seeded_draws(judge.interpreter_cases, seeds, check_cases, "interpreter_cases")
    problems += seeded
    if not finished:
        return problems
    try:
        gpu_cases = judge.gpu_cases(np.random.default_rng(seeds[0]))
        encode_cases(gpu_cases, spec.entrypoint)
    except Exception as error:  # noqa: BLE001
        problems.append(f"gpu_cases raises {type(error).__name__}: {error}")
    else:
        if len(gpu_cases) * 4 > MAX_OUTPUT_FILES:
            problems.append(f"{len(gpu_cases)} GPU cases leave too many output files (before and after timing)")
    try:
        shapes = judge.timed_shapes()
    except Exception as error:  # noqa: BLE001
        return problems + [f"timed_shapes raises {type(error).__name__}: {error}"]
    if not shapes:
        problems.append("no timed shapes: a kernel part is timed on a GPU")
    for shape in shapes:
        if shape.work.bytes <= 0 or shape.work.flops < 0:
            problems.append(f"timed shape {shape.name!r} states no bytes")
    return problems


def solution_problem(solution, report: KernelReport) -> str:
    """"" when ``report``, example ``solution``'s run under Triton's interpreter, is what
    it must get there: correct with speed not scored for ``accepted`` and ``too_slow``
    (speed is for the GPU), else its stated verdict; otherwise what it got, and where."""
    expected = "speed_not_scored" if solution.verdict in ("accepted", "too_slow") else solution.verdict
    if report.outcome.value == expected:
        return ""
    failure = report.correctness.first_failure
    where = f" on {failure.case.name!r}: {failure.detail}" if failure else f": {report.correctness.detail}"
    return f"got {report.outcome.value} under the interpreter{where}"
