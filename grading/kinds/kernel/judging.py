"""Judge one kernel submission: correctness (anywhere), then speed (on a GPU).

``judge_kernel`` is the whole trip on the trusted side: draw the cases from the secret
seed, compute the references here, send the inputs, the harness and the candidate's file
to a fresh process (``gpu_runner.process``), read the outputs back as plain data with
the code judge's ``decode_output`` and check every case with the code judge's
``judge_case`` (on a GPU: before and after timing). On a GPU it then turns the raw
samples into medians (``gpu_runner.timing``), times the reference kernel the same way in
a process of its own, reads the GPU's clocks and temperature before and after
(``gpu_runner.devices``), and judges each timed shape against the catalogue peak of the
detected GPU. It returns a ``KernelReport``; ``feedback`` turns that into the
candidate's verdict.

Speed is scored only where it can be: on a GPU in the catalogue (a peak to compare
with), in a run that times, and only once every hidden test passed. Each report says
which as data (``KernelReport.speed``, a ``grading.verdict.SpeedCheck``): ``measured``
(timed and scored), ``skipped`` (this grader scores speed, but a hidden test failed
first, so it was not timed and earns nothing) or ``not_measured`` (this grader cannot
score speed: no GPU, a GPU outside the catalogue, a correctness-only run), which leaves
speed out of the score rather than counting it as zero.

That the answer is a Triton kernel is decided here, before anything runs, by reading
its source (``launch_problem``): it must define a ``@triton.jit`` function and launch it
as ``kernel[grid](...)``. The harness also counts launches at run time, but it shares the
candidate's process, which can rewrite that record; the count can reject an answer
(none reported) and never proves a launch, and the report says so (``LaunchCheck``).
Every kernel run holds hidden cases, so its details quote nothing the candidate's
process wrote (``grading.judge.runner.RunWords``).
"""

from __future__ import annotations

import ast
import enum
import functools
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from gpu_runner import devices, harness, timing
from grading.judge.cases import Case, MalformedOutput, case_id, decode_output, encode_cases
from grading.judge.runner import (
    HARNESS_SOURCE as JUDGE_HARNESS_SOURCE,
)
from grading.judge.runner import (
    WHOLE_RUN_OUTCOMES,
    JudgeReport,
    Outcome,
    RunWords,
    judge_case,
    plain_text,
)
from grading.kinds.kernel.problem import KernelJudge, TimedShape
from grading.verdict import SpeedCheck, SpeedCheckStatus

HARNESS_FILE = "kernel_harness.py"
OUT_DIR = "/sandbox/out"
# What runs in the sandbox beside the candidate's file: the device side's harness and
# its timing rule (gpu_runner), and the code judge's result encoding that the harness reuses.
_SENT_FILES = {
    HARNESS_FILE: Path(harness.__file__).read_bytes(),
    "judge_harness.py": JUDGE_HARNESS_SOURCE,
    "timing.py": Path(timing.__file__).read_bytes(),
}
MAX_SAMPLES_READ = 100_000
# A program's tensors live in the registers of the one SM it runs on, and each element
# of a tile costs a 32-bit register for its value and at least one more for what comes
# with it (the address or mask it was loaded through, the result of the next operation).
# So the largest tile one program can hold without spilling to local memory (DRAM) is
# half an SM's register file, in 32-bit registers: 32,768 elements on every NVIDIA GPU
# in the catalogue, 65,536 on MI300X. The limit is the largest in the catalogue, so only
# a tile no GPU there can hold is flagged; this constant (MI300X's) is used when the
# catalogue is not at hand. Shared memory does not raise it: Triton keeps a tile in
# registers and stages through shared memory only for layout changes and dot operands.
DEFAULT_TILE_LIMIT = 131_072 // 2
REGISTERS_PER_TILE_ELEMENT = 2


class KernelOutcome(enum.StrEnum):
    """Kernel verdicts; the value is what ``Verdict.mistake`` holds. The code verdicts
    (wrong_answer, runtime_error, time_limit, ...) keep their names."""

    ACCEPTED = "accepted"  # correct, and every timed shape reached the threshold
    SPEED_NOT_SCORED = "speed_not_scored"  # correct; speed not measured here (left out of the score)
    TOO_SLOW = "too_slow"  # correct; a timed shape fell short of the threshold
    INVALID_TIMING = "invalid_timing"  # correct; a time below the physical floor
    WRONG_ANSWER = "wrong_answer"
    RUNTIME_ERROR = "runtime_error"
    TIME_LIMIT = "time_limit"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    REJECTED = "rejected"

    @property
    def correct(self) -> bool:
        return self in _CORRECT


_CORRECT = {KernelOutcome.ACCEPTED, KernelOutcome.SPEED_NOT_SCORED, KernelOutcome.TOO_SLOW,
            KernelOutcome.INVALID_TIMING}


class LaunchCheck(enum.StrEnum):
    """What the host knows about the answer launching a Triton kernel."""

    NOT_IN_SOURCE = "not_in_source"  # the source launches no @triton.jit kernel: rejected, never run
    # The source launches one; that it ran is the candidate's own process's report
    # (it can rewrite the record), which can only reject: advisory, not proven.
    ADVISORY = "advisory"


@dataclass(frozen=True)
class SpeedSpec:
    """A part's speed test: ``metric`` (bandwidth or flops), ``peak_field`` (the
    catalogue FLOP/s field for the flops metric), the ``threshold`` fraction of peak that
    every timed shape must reach, and the ``share`` of the part's score speed earns."""

    metric: str = "bandwidth"
    peak_field: str = "fp16_dense"
    threshold: float = 0.5
    share: float = 0.5


@dataclass(frozen=True)
class ShapeTiming:
    """One timed shape, judged on the host from the raw samples."""

    name: str
    work: timing.Work
    samples: int = 0
    median_seconds: float | None = None
    relative_error: float | None = None
    stop: str = ""
    judgement: timing.SpeedJudgement | None = None
    reference: timing.SpeedJudgement | None = None
    do_bench_seconds: float | None = None
    error: str = ""


NOT_TIMED = SpeedCheck(SpeedCheckStatus.NOT_MEASURED, reason="the kernel was not timed")


@dataclass(frozen=True)
class KernelReport:
    """The judgement of one kernel submission. ``correctness`` holds the case results
    (on a GPU the after-timing pass is in it too, named so); ``shapes`` is empty unless
    it was timed; ``speed`` says whether speed was measured and counted, and in words
    why (or why not)."""

    outcome: KernelOutcome
    correctness: JudgeReport
    on_gpu: bool
    device_name: str | None = None
    catalogue_key: str | None = None
    readings: tuple = ()  # DeviceReading before and after, when the host could read them
    shapes: tuple[ShapeTiming, ...] = ()
    speed: SpeedCheck = NOT_TIMED
    launch_check: LaunchCheck = LaunchCheck.ADVISORY


Runner = Callable[..., object]  # gpu_runner.process: run_python's signature


def plan_for(entrypoint: str, on_gpu: bool, shapes: list[TimedShape], *, seed: int, check: bool = True,
             policy: timing.TimingPolicy = timing.TimingPolicy(), l2_bytes: int = 0,
             do_bench: bool = False) -> dict:
    """The harness's ``kernel_plan.json``."""
    plan = {"mode": "gpu" if on_gpu else "interpret", "entrypoint": entrypoint, "check": check}
    if on_gpu and shapes:
        plan.update(timed=[shape.to_json() for shape in shapes], policy=policy.to_json(),
                    timing_seed=seed % (2**31), l2_bytes=l2_bytes, do_bench=do_bench)
    return plan


def run_files(cases: list[Case], plan: dict, source: str) -> dict[str, bytes]:
    files = encode_cases(cases, plan["entrypoint"])
    files.update(_SENT_FILES)
    files["kernel_plan.json"] = json.dumps(plan).encode()
    files["solution.py"] = source.encode("utf-8", errors="surrogatepass")
    return files


def judge_kernel(*, judge: KernelJudge, source: str, entrypoint: str, seed: int, speed: SpeedSpec,
                 on_gpu: bool, run: Runner, limits=None, reference_source: str | None = None,
                 reference_times: dict | None = None, read_device=devices.read_device,
                 policy: timing.TimingPolicy = timing.TimingPolicy(), do_bench: bool = False,
                 timed: bool = True, gpus: Mapping | None = None) -> KernelReport:
    """Judge ``source``. On a GPU the reference kernel is timed from ``reference_source``
    (a fresh process), unless ``reference_times`` (shape name -> median seconds, from an
    earlier run in the same session: the device check) is given. ``timed=False`` checks
    correctness on the GPU's full shapes only (the device check, for answers that must
    fail correctness anyway). A source that launches no Triton kernel is rejected unrun.
    ``gpus`` is the catalogue's GPU section (the part's context has it), for the peaks
    and the L2 size of the detected GPU."""
    gpus = gpus or {}
    problem = launch_problem(source)
    if problem:
        # Never run, so no device is read: where speed counts is judged from on_gpu alone.
        return KernelReport(KernelOutcome.WRONG_ANSWER, JudgeReport(Outcome.WRONG_ANSWER, (), problem), on_gpu,
                            speed=untimed_speed(speed, "" if on_gpu else NO_GPU, "the answer was not run"),
                            launch_check=LaunchCheck.NOT_IN_SOURCE)
    words = RunWords(source, sealed=True)  # every case is hidden
    cases = judge.cases(np.random.default_rng(seed), on_gpu)
    expected = [judge.reference(case) for case in cases]
    shapes = judge.timed_shapes() if on_gpu and timed else []
    before = read_device() if on_gpu else None
    key = devices.catalogue_key(before.name) if before else None
    plan = plan_for(entrypoint, on_gpu, shapes, seed=seed, policy=policy,
                    l2_bytes=devices.catalogue_l2_bytes(gpus, key), do_bench=do_bench)
    result = run(files=run_files(cases, plan, source), entry=HARNESS_FILE, args=(OUT_DIR,),
                 **({"limits": limits} if limits is not None else {}))
    after = read_device() if on_gpu else None
    readings = tuple(reading for reading in (before, after) if reading is not None)
    base = {"on_gpu": on_gpu, "device_name": before.name if before else None, "catalogue_key": key,
            "readings": readings}
    peak = devices.catalogue_peak(gpus, key, speed.peak_field) if on_gpu else None
    unscorable = unscorable_reason(on_gpu, bool(shapes), peak, base["device_name"])
    correctness = check_outputs(judge, cases, expected, result, after_pass=on_gpu and bool(shapes), words=words,
                                max_tile=tile_limit(gpus))
    if correctness.outcome is not Outcome.ACCEPTED:
        return KernelReport(KernelOutcome(correctness.outcome.value), correctness, **base,
                            speed=untimed_speed(speed, unscorable, "a hidden test failed"))
    if not shapes:
        return KernelReport(KernelOutcome.SPEED_NOT_SCORED, correctness, **base,
                            speed=SpeedCheck(SpeedCheckStatus.NOT_MEASURED, reason=unscorable))
    measured = read_timing(result.files, shapes, words)
    failed = next((shape for shape in measured if shape.error), None)
    if failed:
        report = replace(correctness, outcome=Outcome.RUNTIME_ERROR, detail=f"timing {failed.name}: {failed.error}")
        return KernelReport(KernelOutcome.RUNTIME_ERROR, report, **base, shapes=measured,
                            speed=untimed_speed(speed, unscorable, f"timing {failed.name} failed"))
    if reference_times is None and reference_source is not None:
        reference_times = time_reference(judge, reference_source, entrypoint, seed, run, limits, policy,
                                         devices.catalogue_l2_bytes(gpus, key))
    return judge_shapes(correctness, measured, speed, peak, reference_times or {}, base)


NO_GPU = ("no GPU on this grader, so the kernel ran under Triton's interpreter on the CPU, "
          "on shapes sized for it")


def unscorable_reason(on_gpu: bool, timed: bool, peak: devices.Peak | None, device_name: str | None) -> str:
    """Why this run cannot score speed, in words; "" when it can (a timed run on a GPU
    whose catalogue peak is known)."""
    if not on_gpu:
        return NO_GPU
    if not timed:
        return "this run checked correctness only"
    if peak is None:
        return (f"{device_name} is not in the catalogue, so there is no peak to compare with "
                "(raw times are reported)")
    return ""


def untimed_speed(speed: SpeedSpec, unscorable: str, why_untimed: str) -> SpeedCheck:
    """Speed for a kernel that was not timed because it failed first: left out of the
    score where this grader cannot score speed (``unscorable`` says why), else counted
    with its share and earning nothing, since speed is scored only once every hidden
    test passes."""
    if unscorable:
        return SpeedCheck(SpeedCheckStatus.NOT_MEASURED, reason=unscorable)
    return SpeedCheck(SpeedCheckStatus.SKIPPED, share=speed.share,
                      reason=f"not timed: {why_untimed}, and speed is scored only once every hidden test passes")


def check_outputs(judge: KernelJudge, cases: list[Case], expected: list, result, after_pass: bool,
                  words: RunWords, max_tile: int = DEFAULT_TILE_LIMIT) -> JudgeReport:
    """The code judge's case checks over the harness's output (both passes on a GPU),
    plus the run-time launch count and, under the interpreter, the largest tile a
    program held (``tile_problem``); both come from the candidate's process, so they
    can only reject (``LaunchCheck``)."""
    status = str(result.status)
    measures = {"wall_seconds": float(result.wall_seconds or 0.0), "peak_memory_bytes": result.peak_memory_bytes}
    if status in WHOLE_RUN_OUTCOMES:
        return JudgeReport(WHOLE_RUN_OUTCOMES[status], (), words.whole_run(status, result), **measures)
    import_error = words.import_error(result.files)
    if import_error:
        return JudgeReport(Outcome.RUNTIME_ERROR, (), import_error, **measures)
    crash = words.crash(result) if status != "ok" else ""
    results = []
    for prefix, suffix in (("c", ""), ("a", " (after timing)")) if after_pass else (("c", ""),):
        for index, case in enumerate(cases):
            cid = prefix + case_id(index)[1:]
            named = replace(case, name=case.name + suffix)
            results.append(judge_case(judge, named, False, cid, expected[index], result.files, crash, words))
    failure = next((item for item in results if not item.passed), None)
    if failure is None and _launch_total(result.files) == 0:
        return JudgeReport(Outcome.WRONG_ANSWER, tuple(results),
                           "no Triton kernel was launched: the answer must be a @triton.jit kernel", **measures)
    too_large = tile_problem(result.files, max_tile) if failure is None else ""
    if too_large:
        return JudgeReport(Outcome.WRONG_ANSWER, tuple(results), too_large, **measures)
    return JudgeReport(failure.outcome if failure else Outcome.ACCEPTED, tuple(results), "", **measures)


def _launch_total(files: dict) -> int:
    try:
        raw = decode_output("_launches", files)
    except MalformedOutput:
        return 0
    counts = raw.value if raw.present else None
    if not isinstance(counts, dict):
        return 0
    return sum(value for value in counts.values() if isinstance(value, int) and not isinstance(value, bool))


# ---------------------------------------------------------------- the tile a program holds



def tile_limit(gpus: Mapping) -> int:
    """The most elements one program's tile may hold: half the largest per-SM register
    file (``registers_per_sm``) among ``gpus``, else ``DEFAULT_TILE_LIMIT``."""
    counts = [int(entry["registers_per_sm"]) for entry in (gpus or {}).values()
              if isinstance(entry, Mapping) and isinstance(entry.get("registers_per_sm"), (int, float))]
    return max(counts) // REGISTERS_PER_TILE_ELEMENT if counts else DEFAULT_TILE_LIMIT


def tile_problem(files: dict, limit: int) -> str:
    """"" unless the harness measured (under the interpreter) a tensor of one program
    larger than ``limit`` elements; then why that is rejected, for the candidate.

    The interpreter runs such a kernel correctly, but on a GPU it either fails to compile
    or spills to local memory and crawls, so a CPU grader must not accept it as correct:
    it is a wrong answer here, told before a GPU ever runs it. Rejection rather than a
    warning, because a warning beside a full score is a pass, and a kernel no GPU in the
    catalogue can run is not a solution. The record comes from the candidate's process:
    it can reject, never prove anything."""
    try:
        raw = decode_output("_tiles", files)
    except MalformedOutput:
        return ""
    record = raw.value if raw.present else None
    largest = record.get("largest") if isinstance(record, dict) else None
    if not isinstance(largest, int) or isinstance(largest, bool) or largest <= limit:
        return ""
    return (f"a program of your kernel holds a tile of {largest:,} elements, more than any GPU here can keep "
            f"in registers (at most {limit:,}: half the largest register file per SM in the catalogue, since "
            "each element needs a register for its value and one for its address or result); on a GPU it "
            "would fail to compile or spill to memory. Loop over the row in tiles of a few thousand elements")


# ---------------------------------------------------------------- the static launch check

_TRITON_JIT_MODULES = ("triton", "triton.runtime", "triton.runtime.jit")  # where ``jit`` may be imported from
_TRITON_WRAPPERS = ("autotune", "heuristics")  # triton.autotune(...)(kernel) is still that kernel


def launch_problem(source: str) -> str:
    """"" when ``source`` launches a Triton kernel, else why not, for the candidate.

    Trusted and static: the source is parsed, never run. A kernel is a function decorated
    with ``triton.jit`` (also ``@jit`` imported from triton, ``@triton.jit(...)``, under
    ``@triton.autotune``/``@triton.heuristics``), or a name bound to ``triton.jit(fn)``
    (possibly wrapped by ``triton.autotune(...)``), or another name bound to one of those.
    It is launched by a subscripted call, ``kernel[grid](...)``, anywhere outside a kernel
    body. Whether that line runs is not decided here (that is the advisory run-time count).
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "no Triton kernel is launched: the code cannot be read"
    kernels, bodies = _kernel_names(tree)
    if not kernels:
        return ("no Triton kernel is launched: no function is decorated with @triton.jit; "
                "the answer was not run")
    if not _launches(tree, kernels, bodies):
        named = sorted(kernels)
        verb = "is" if len(named) == 1 else "are"
        return (f"no Triton kernel is launched: {', '.join(named)} {verb} decorated with @triton.jit but never "
                f"launched as {named[0]}[grid](...); the answer was not run")
    return ""


def _kernel_names(tree: ast.Module) -> tuple[set[str], list[ast.AST]]:
    """The names bound to Triton kernels, and the kernels' own function bodies."""
    modules, jits = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "triton" or (alias.name.startswith("triton.") and alias.asname is None):
                    modules.add(alias.asname or "triton")
        elif isinstance(node, ast.ImportFrom) and node.module in _TRITON_JIT_MODULES and node.level == 0:
            jits.update(alias.asname or alias.name for alias in node.names if alias.name == "jit")

    def is_jit(node: ast.expr) -> bool:
        if isinstance(node, ast.Call):  # @triton.jit(do_not_specialize=...)
            node = node.func
        if isinstance(node, ast.Name):
            return node.id in jits
        return isinstance(node, ast.Attribute) and node.attr == "jit" and isinstance(node.value, ast.Name) \
            and node.value.id in modules

    def is_wrapper(node: ast.expr) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in _TRITON_WRAPPERS and isinstance(node.func.value, ast.Name) \
            and node.func.value.id in modules

    functions = {node.name: node for node in ast.walk(tree)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    kernels = {name for name, node in functions.items() if any(is_jit(item) for item in node.decorator_list)}
    bodies: list[ast.AST] = [functions[name] for name in kernels]

    def makes_kernel(node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in kernels
        if isinstance(node, ast.Call) and len(node.args) == 1:
            argument = node.args[0]
            if is_jit(node.func):  # triton.jit(fn), triton.jit(...)(fn)
                if isinstance(argument, ast.Name) and argument.id in functions:
                    bodies.append(functions[argument.id])
                    return True
            return is_wrapper(node.func) and makes_kernel(argument)  # triton.autotune(...)(kernel)
        return False

    assignments = [node for node in ast.walk(tree) if isinstance(node, ast.Assign) and len(node.targets) == 1
                   and isinstance(node.targets[0], ast.Name)]
    grew = True
    while grew:  # aliases of aliases
        grew = False
        for node in assignments:
            name = node.targets[0].id
            if name not in kernels and makes_kernel(node.value):
                kernels.add(name)
                grew = True
    return kernels, bodies


def _launches(tree: ast.Module, kernels: set[str], bodies: list[ast.AST]) -> bool:
    inside = {id(node) for body in bodies for node in ast.walk(body)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and id(node) not in inside:
            target = node.func.value
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if name in kernels:
                return True
    return False


def read_timing(files: dict, shapes: list[TimedShape], words: RunWords) -> tuple[ShapeTiming, ...]:
    """Each timed shape's samples, read as untrusted data and summarised here; an error
    in ``words``."""
    try:
        raw = decode_output("_timing", files)
        document = raw.value if raw.present else None
    except MalformedOutput:
        document = None
    records = document.get("shapes") if isinstance(document, dict) else None
    if not isinstance(records, list) or len(records) != len(shapes):
        return tuple(ShapeTiming(shape.name, shape.work, error="the timing run wrote no usable record")
                     for shape in shapes)
    return tuple(_summarise(shape, record, words) for shape, record in zip(shapes, records))


def _summarise(shape: TimedShape, record, words: RunWords) -> ShapeTiming:
    if not isinstance(record, dict) or record.get("name") != shape.name:
        return ShapeTiming(shape.name, shape.work, error="the timing record does not match the plan")
    if "error" in record:
        error = record["error"]
        readable = isinstance(error, dict) and all(isinstance(error.get(key), str) for key in ("type", "message"))
        return ShapeTiming(shape.name, shape.work,
                           error=plain_text(words.error(error) if readable else "it failed", 2000))
    samples = record.get("samples_ms")
    if not isinstance(samples, list) or not 3 <= len(samples) <= MAX_SAMPLES_READ or not all(
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
            for value in samples):
        return ShapeTiming(shape.name, shape.work, error="the timing record holds no valid samples")
    seconds = [value / 1000.0 for value in samples]
    do_bench = record.get("do_bench_ms")
    do_bench = do_bench / 1000.0 if isinstance(do_bench, (int, float)) and do_bench > 0 else None
    return ShapeTiming(shape.name, shape.work, samples=len(seconds), median_seconds=timing.median(seconds),
                       relative_error=timing.median_relative_error(seconds),
                       stop=plain_text(str(record.get("stop", "")), 20), do_bench_seconds=do_bench)


def time_reference(judge: KernelJudge, source: str, entrypoint: str, seed: int, run: Runner, limits,
                   policy: timing.TimingPolicy, l2_bytes: int) -> dict:
    """Median seconds per shape of the reference kernel, timed in its own fresh process
    with the same policy (shape name -> seconds; shapes that failed are left out)."""
    shapes = judge.timed_shapes()
    plan = plan_for(entrypoint, True, shapes, seed=seed + 1, check=False, policy=policy, l2_bytes=l2_bytes)
    result = run(files=run_files([], plan, source), entry=HARNESS_FILE, args=(OUT_DIR,),
                 **({"limits": limits} if limits is not None else {}))
    timings = read_timing(result.files, shapes, RunWords(source, sealed=False))  # reviewed code
    return {shape.name: shape.median_seconds for shape in timings if not shape.error}


def judge_shapes(correctness: JudgeReport, measured, speed: SpeedSpec, peak: devices.Peak | None,
                 reference_times: dict, base: dict) -> KernelReport:
    """The speed verdict over every timed shape (all must pass), beside the reference;
    measured, with the part's share, when ``peak`` is known, else not measured."""
    judged = []
    for shape in measured:
        judgement = timing.judge_speed(shape.median_seconds, shape.work, peak, speed.metric, speed.threshold)
        reference = reference_times.get(shape.name)
        reference_judgement = (timing.judge_speed(reference, shape.work, peak, speed.metric, speed.threshold)
                               if reference else None)
        judged.append(replace(shape, judgement=judgement, reference=reference_judgement))
    statuses = {shape.judgement.status for shape in judged}
    measured = functools.partial(SpeedCheck, SpeedCheckStatus.MEASURED, speed.share)
    if peak is None:
        outcome = KernelOutcome.SPEED_NOT_SCORED
        check = SpeedCheck(SpeedCheckStatus.NOT_MEASURED,
                           reason=unscorable_reason(True, True, None, base["device_name"]))
    elif timing.SpeedStatus.INVALID in statuses:
        outcome = KernelOutcome.INVALID_TIMING
        check = measured(False, "a measured time is below the physical floor (bytes over peak bandwidth): "
                                "the measurement is invalid")
    elif statuses == {timing.SpeedStatus.PASS}:
        outcome = KernelOutcome.ACCEPTED
        check = measured(True, f"every timed shape reached {speed.threshold:.0%} of peak")
    else:
        outcome = KernelOutcome.TOO_SLOW
        check = measured(False, f"a timed shape fell short of {speed.threshold:.0%} of peak")
    return KernelReport(outcome, correctness, **base, shapes=tuple(judged), speed=check)

