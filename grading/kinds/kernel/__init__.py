"""Kernel parts: the candidate writes a Triton kernel and the Python function that
launches it; it is graded for correctness anywhere and for speed on a GPU.

``interpret`` only reads the text (the program kinds' checks, ``grading.kinds.programs``,
plus a ``@triton.jit`` function). ``grade`` runs it through ``judging.judge_kernel`` in
a fresh sandboxed process on hidden cases drawn from a secret seed
(``context["judge_seed"]`` when the caller fixes one). Where it runs:

- no GPU on this grader (CI, the embedded mode, a CPU worker): under Triton's
  interpreter on the CPU, on shapes sized for it; speed is not measured there, so it
  is left out of the score (``Verdict.speed`` says ``not_measured`` and why) and a
  correct kernel scores 1.0;
- a GPU whose sandbox can reach it (a GPU worker consuming ``settings.GPU_QUEUE``):
  correctness on the full shapes before and after timing, then speed against the
  catalogue peak of the detected GPU, next to the reference kernel's; speed carries
  the part's ``speed.share`` of the score (not on a GPU outside the catalogue: no peak,
  so not measured, as without a GPU).

Correctness is scored per hidden test group (each group the cases name is worth the
same; ``correct`` only when all pass), and speed only once every group passes: the
rules are in ``feedback``'s docstring.

The verdict's name (``judging.KernelOutcome``) is ``Verdict.mistake``. FORMAT.md,
"kernel parts", is the spec format.

Everything that judges a kernel is in this package: ``problem`` (what a question's
judge file provides, ``KernelJudge``), ``judging`` (one submission's trip through the
sandbox, ``judge_kernel``), ``feedback`` (its report in words) and ``validation`` (a
part's checks before candidates see it). ``gpu_runner`` is the device side it uses:
the GPU, the timing rule, the harness that runs in the sandbox, and the process a run
gets.
"""

from __future__ import annotations

import ast
import html
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import ClassVar

from grading.effects import Effects
from grading.judge.contract import JudgeNotFound
from grading.kinds.base import AnswerKind, SpecError, common_fields, require_text
from grading.kinds.kernel import validation
from grading.kinds.kernel.feedback import verdict_from_kernel_report
from grading.kinds.kernel.judging import KernelReport, SpeedSpec, judge_kernel
from grading.kinds.kernel.problem import KernelJudge
from grading.kinds.programs import (
    MAX_SOURCE_BYTES,
    ProgramSolution,
    ProgramSpec,
    judge_example_rows,
    load_limits,
    load_program_fields,
    load_solutions,
    read_source,
    submission_seed,
)
from grading.machine import local_effects
from grading.sandbox import Limits, SandboxError
from grading.verdict import Verdict

# Under the interpreter: a cold sandbox imports torch and triton (seconds) and the
# interpreter runs each Triton program in NumPy; a sound answer takes a few seconds.
DEFAULT_LIMITS = {"cpu_seconds": 40.0, "wall_seconds": 80.0, "memory_mb": 2048}
# On a GPU: compiling, timing every shape for up to a second each, the reference too.
GPU_LIMITS = {"cpu_seconds": 240.0, "wall_seconds": 300.0, "memory_mb": 32768}
GPU_MAX_PROCESSES = 96  # CUDA's threads and Triton's compiler subprocesses
GPU_MAX_RESULT_BYTES = 512 << 20  # full-shape outputs, before and after timing
SPEED_METRICS = ("bandwidth", "flops")
SOLUTION_VERDICTS = ("accepted", "too_slow", "wrong_answer", "runtime_error", "time_limit", "memory_limit")
NOT_A_KERNEL_JUDGE = "the judge must be a grading.kinds.kernel.problem.KernelJudge"


@dataclass(frozen=True)
class KernelSpec(ProgramSpec):
    """Solutions' verdicts on a GPU: ``accepted`` (the reference: reaches the
    threshold), ``too_slow`` (correct, fails the speed test), or a correctness failure.
    Under the interpreter the first two are both correct, speed not measured."""

    default_limits: ClassVar[dict] = DEFAULT_LIMITS

    speed: SpeedSpec | None = None


class KernelKind(AnswerKind):
    """``kernel`` parts (FORMAT.md, "kernel parts")."""

    name = "kernel"
    runs_in_sandbox = True
    needs_gpu = True
    uses_editor = True
    multiline_answer = True
    answer_template = "kinds/kernel/answer.html"
    # Judging runs many sandboxed cases, each under its own wall limit, behind a queue.
    grading_deadline = timedelta(minutes=10)
    max_answer_chars = MAX_SOURCE_BYTES
    keys = frozenset({"entrypoint", "judge", "starter", "speed", "solutions", "limits"})

    def load_spec(self, raw: Mapping) -> KernelSpec:
        common = common_fields(raw, self.name, self.keys)
        entrypoint, judge = load_program_fields(raw, read_kernel_source)
        return KernelSpec(**common, entrypoint=entrypoint, judge=judge, starter=raw["starter"],
                          speed=_load_speed(raw), solutions=_load_solutions(raw, entrypoint),
                          limits=load_limits(raw))

    def interpret(self, spec: KernelSpec, text: str, context: Mapping) -> Verdict:
        reading = read_kernel_source(text, spec.entrypoint)
        if isinstance(reading, Verdict):
            return reading
        return Verdict(valid=True, correct=None, score=0.0, interpreted=reading,
                       interpreted_html=html.escape(reading))

    def grade(self, spec: KernelSpec, text: str, context: Mapping, effects: Effects | None = None) -> Verdict:
        """Run the kernel where this grader can (``effects.kernel_place``). The score counts
        what was measured: per hidden test group for correctness; speed's share only
        where it was timed on a GPU in the catalogue, and only once every group passed;
        where speed cannot be measured it is left out and correctness carries the whole
        part. ``Verdict.speed`` records which (``feedback.kernel_score``)."""
        reading = read_kernel_source(text, spec.entrypoint)
        if isinstance(reading, Verdict):
            return reading
        effects = effects or local_effects()
        unavailable = effects.sandbox_unavailable()
        if unavailable:
            return Verdict.invalid(f"Kernels cannot be run on this server right now ({unavailable}); "
                                   "this answer was not graded.", reading)
        on_gpu, note = effects.kernel_place()
        try:
            report = run_kernel(spec, text, submission_seed(context), on_gpu, effects=effects,
                                gpus=context.get("gpus") or {})
        except SandboxError as error:
            return Verdict.invalid(f"The sandbox failed before running this answer ({error}); "
                                   "it was not graded. Please submit again.", reading)
        if note:  # a GPU this grader could not use: say so where the verdict says speed was not measured
            report = replace(report, speed=replace(report.speed, reason=f"{report.speed.reason} ({note})"))
        return verdict_from_kernel_report(report, spec.speed, reading, limits_text(spec, on_gpu))

    def reference_answer(self, spec: KernelSpec, context: Mapping) -> str:
        return spec.reference_source

    def display_context(self, raw: Mapping, context: Mapping) -> dict:
        """``examples``: the judge's visible examples (``KernelJudge.examples()``, none
        unless the judge defines them), each {name, inputs (a preview of the tensors),
        shapes (their dtypes and shapes), expected (the reference's output)}. Never the
        hidden cases, the timed shapes or a seed."""
        try:
            judge = local_effects().load_judge(require_text(raw, "judge"), str(raw.get("id", "")))
        except JudgeNotFound as error:
            raise SpecError(str(error), "judge") from None
        return {"examples": judge_example_rows(judge)}

    def mistake_answers(self, spec: KernelSpec, context: Mapping) -> list[tuple[str, str]]:
        """Each solution that must fail correctness, with its verdict name."""
        return [(solution.code, solution.verdict) for solution in spec.solutions
                if solution.verdict not in ("accepted", "too_slow")]

    def validate_part(self, spec: KernelSpec, context: Mapping, effects: Effects | None = None) -> list[str]:
        """The judge's cases and every example solution under Triton's interpreter
        (``validate_kernel_part``); speed is checked by ``gpu_runner.device_check``."""
        return validate_kernel_part(spec, context, effects=effects)


# ---------------------------------------------------------------- running


def run_kernel(spec: KernelSpec, source: str, seed: int, on_gpu: bool, *, run=None, effects: Effects | None = None,
               **options) -> KernelReport:
    """``judge_kernel`` for this part; ``run`` defaults to ``effects.kernel_runner(on_gpu)``."""
    effects = effects or local_effects()
    try:
        judge = effects.load_judge(spec.judge, spec.id)
    except JudgeNotFound as error:
        raise SpecError(str(error), "judge") from None
    if not isinstance(judge, KernelJudge):
        raise SpecError(NOT_A_KERNEL_JUDGE, "judge")
    return judge_kernel(judge=judge, source=source, entrypoint=spec.entrypoint, seed=seed, speed=spec.speed,
                        on_gpu=on_gpu, run=run or effects.kernel_runner(on_gpu),
                        limits=sandbox_limits(spec, on_gpu), reference_source=spec.reference_source, **options)


def sandbox_limits(spec: KernelSpec, on_gpu: bool) -> Limits:
    if not on_gpu:
        limits = spec.limits_dict
        return Limits(cpu_seconds=limits["cpu_seconds"], wall_seconds=limits["wall_seconds"],
                      memory_bytes=int(limits["memory_mb"]) << 20, max_result_bytes=64 << 20)
    return Limits(cpu_seconds=GPU_LIMITS["cpu_seconds"], wall_seconds=GPU_LIMITS["wall_seconds"],
                  memory_bytes=GPU_LIMITS["memory_mb"] << 20, max_processes=GPU_MAX_PROCESSES,
                  max_open_files=1024, max_file_bytes=GPU_MAX_RESULT_BYTES, tmp_bytes=1 << 30,
                  max_result_bytes=GPU_MAX_RESULT_BYTES)


def limits_text(spec: KernelSpec, on_gpu: bool) -> str:
    limits = GPU_LIMITS if on_gpu else spec.limits_dict
    return f"{limits['cpu_seconds']:g} s CPU, {limits['wall_seconds']:g} s wall, {limits['memory_mb']} MB"


# ---------------------------------------------------------------- reading source


def read_kernel_source(text, entrypoint: str) -> str | Verdict:
    """The code kind's reading, and at least one ``@triton.jit`` function (a kernel
    answer must be a kernel). Parses only; never runs anything."""
    reading = read_source(text, entrypoint)
    if isinstance(reading, Verdict):
        return reading
    kernels = [node.name for node in ast.walk(ast.parse(text)) if isinstance(node, ast.FunctionDef)
               and any(_is_triton_decorator(decorator) for decorator in node.decorator_list)]
    if not kernels:
        return Verdict.invalid("Write a Triton kernel: no function is decorated with @triton.jit.", reading)
    return f"{reading}; Triton kernels: {', '.join(kernels)}"


def _is_triton_decorator(node: ast.expr) -> bool:
    if isinstance(node, ast.Call):
        node = node.func
    return ast.unparse(node) in _TRITON_DECORATORS


_TRITON_DECORATORS = frozenset({"triton.jit", "jit", "triton.autotune", "autotune", "triton.heuristics", "heuristics"})


# ---------------------------------------------------------------- spec pieces


def _load_speed(raw: Mapping) -> SpeedSpec:
    item = raw.get("speed")
    allowed = {"metric", "threshold", "peak", "share"}
    if not isinstance(item, Mapping) or not {"metric", "threshold"} <= set(item) <= allowed:
        raise SpecError("must be {metric, threshold, peak, share}", "speed")
    if item["metric"] not in SPEED_METRICS:
        raise SpecError(f"must be one of {', '.join(SPEED_METRICS)}", "speed.metric")
    for key, default in (("threshold", None), ("share", 0.5)):
        value = item.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
            raise SpecError("must be a fraction in (0, 1]", f"speed.{key}")
    peak = item.get("peak", "fp16_dense")
    if not isinstance(peak, str) or not peak.endswith("_dense"):
        raise SpecError("must name a catalogue FLOP/s field such as fp16_dense", "speed.peak")
    return SpeedSpec(metric=item["metric"], peak_field=peak, threshold=float(item["threshold"]),
                     share=float(item.get("share", 0.5)))


def _load_solutions(raw: Mapping, entrypoint: str) -> tuple[ProgramSolution, ...]:
    return load_solutions(raw, entrypoint, verdicts=SOLUTION_VERDICTS, read=read_kernel_source)


def validate_kernel_part(spec, context: Mapping, *, require_sandbox: bool = True,
                         seeds: tuple[int, ...] = validation.CHECK_SEEDS, run=None,
                         effects: Effects | None = None) -> list[str]:
    """Problems with kernel part ``spec`` (a raw mapping or a loaded ``KernelSpec``), as
    messages that do not repeat the part's id (the bank's validation adds it); empty
    when it is sound. The judge's own checks (``validation.check_kernel_judge``) come
    first; then every example solution runs under Triton's interpreter in the sandbox
    (``run`` replaces it: tests) and must get its verdict there. Without a sandbox
    that is one problem when ``require_sandbox``, else those runs are skipped."""
    effects = effects or local_effects()
    try:
        spec = spec if isinstance(spec, KernelSpec) else KernelKind().load_spec(spec)
        judge = effects.load_judge(spec.judge, spec.id)
    except (SpecError, JudgeNotFound) as error:
        return [str(error)]
    if not isinstance(judge, KernelJudge):
        return [NOT_A_KERNEL_JUDGE]
    problems = validation.check_kernel_judge(spec, judge, seeds)
    if problems:
        return problems
    if run is None:
        unavailable = effects.sandbox_unavailable()
        if unavailable:
            message = f"the example solutions were not run: {unavailable}"
            return [message] if require_sandbox else []
    for index, solution in enumerate(spec.solutions):
        problem = validation.solution_problem(solution, run_kernel(spec, solution.code, seeds[0], False, run=run,
                                                                          effects=effects))
        if problem:
            problems.append(f"solutions[{index}] ({solution.verdict}) {problem}")
    return problems
