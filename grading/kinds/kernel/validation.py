"""Checking a kernel part before it reaches candidates (``validate_kernel_part``).

On the trusted side: the judge file loads and holds a ``KernelJudge`` for the part; on
several seeds the interpreter's hidden cases are drawn deterministically from the seed
(and differ between seeds) and each reference passes the judge's own check; the GPU's
cases draw and encode; every timed shape states positive bytes; the part lists a
reference (accepted), a correct-but-slow solution (too_slow) and at least one that fails
correctness.

In the sandbox, under Triton's interpreter (no GPU needed): the reference and the slow
solution are correct (speed not scored), and every wrong one gets its stated verdict.
Whether the reference reaches its threshold and the slow one falls short can only be
checked on a GPU: ``python -m gpu_runner.device_check``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from grading.judge.cases import encode_cases
from grading.judge.contract import JudgeNotFound, load_judge
from grading.judge.validation import _fingerprint
from grading.kinds.kernel.problem import KernelJudge

CHECK_SEEDS = (11, 12)  # fixed: validation gives the same answer on every run
MAX_OUTPUT_FILES = 200  # out/ is a tmpfs with 256 inodes: outputs before and after timing


def validate_kernel_part(spec, context: Mapping, *, require_sandbox: bool = True,
                         seeds: tuple[int, ...] = CHECK_SEEDS, run=None) -> list[str]:
    """Problems with kernel part ``spec`` (a raw mapping or a loaded ``KernelSpec``), as
    messages that do not repeat the part's id (the bank's validation adds it); empty
    when it is sound. ``run`` replaces the sandbox (tests)."""
    from grading.kinds.base import SpecError
    from grading.kinds.code import sandbox_unavailable_reason
    from grading.kinds.kernel import KernelKind, KernelSpec, run_kernel

    try:
        spec = spec if isinstance(spec, KernelSpec) else KernelKind().load_spec(spec)
        judge = load_judge(spec.judge, spec.id)
    except (SpecError, JudgeNotFound) as error:
        return [str(error)]
    if not isinstance(judge, KernelJudge):
        return ["the judge must be a grading.kinds.kernel.problem.KernelJudge"]
    problems = trusted_side(spec, judge, seeds)
    if problems:
        return problems
    if run is None:
        unavailable = sandbox_unavailable_reason()
        if unavailable:
            message = f"the example solutions were not run: {unavailable}"
            return [message] if require_sandbox else []
    for index, solution in enumerate(spec.solutions):
        report = run_kernel(spec, solution.code, seeds[0], False, run=run)
        expected = "speed_not_scored" if solution.verdict in ("accepted", "too_slow") else solution.verdict
        if report.outcome.value != expected:
            failure = report.correctness.first_failure
            where = f" on {failure.case.name!r}: {failure.detail}" if failure else f": {report.correctness.detail}"
            problems.append(f"solutions[{index}] ({solution.verdict}) got "
                            f"{report.outcome.value} under the interpreter{where}")
    return problems


def trusted_side(spec, judge: KernelJudge, seeds: tuple[int, ...]) -> list[str]:
    problems = []
    verdicts = [solution.verdict for solution in spec.solutions]
    if "too_slow" not in verdicts:
        problems.append("no solution with verdict too_slow (a correct kernel that must fail the speed test)")
    if not any(verdict not in ("accepted", "too_slow") for verdict in verdicts):
        problems.append("no solution that must fail correctness (wrong_answer, runtime_error, ...)")
    draws = []
    for seed in seeds:
        try:
            cases = judge.interpreter_cases(np.random.default_rng(seed))
            again = judge.interpreter_cases(np.random.default_rng(seed))
        except Exception as error:  # noqa: BLE001 - report the judge's bug
            return problems + [f"interpreter_cases({seed}) raises {type(error).__name__}: {error}"]
        if not cases:
            problems.append(f"seed {seed} draws no hidden cases")
            continue
        if _fingerprint(cases) != _fingerprint(again):
            problems.append(f"seed {seed} draws different cases on a second call: use only the rng given")
        draws.append(_fingerprint(cases))
        problems += _references_hold(judge, cases)
        if len(cases) * 2 > MAX_OUTPUT_FILES:
            problems.append(f"seed {seed}: {len(cases)} cases leave too many output files for the sandbox")
    if len(draws) >= 2 and len(set(draws)) < len(draws):
        problems.append("different seeds draw the same hidden cases: draw the inputs from the rng")
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


def _references_hold(judge: KernelJudge, cases) -> list[str]:
    from grading.judge.validation import check_reference

    return [problem for _, problem in (check_reference(judge, case) for case in cases) if problem]
