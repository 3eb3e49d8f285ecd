"""Turn a ``KernelReport`` into the candidate's ``Verdict``: the score, and in words what
was checked, what was measured, on which device, and how it compares with the reference.

Scoring (``kernel_score``), for what was measured:

- correctness is scored per hidden test group, as code parts are
  (``grading.judge.feedback.tally_groups``): each group the hidden cases name is worth
  the same, and earns it when all its cases pass (on a GPU, before and after timing).
  A run that fails outside the cases (a limit, a crash, a failure while timing, no
  kernel launched) earns nothing. ``correct`` is true only when every group passes;
- speed is scored only where it was measured (a timed run on a GPU in the catalogue)
  and only once every group passes; then it carries the part's ``speed.share`` and
  earns it when every timed shape reaches the threshold, and correctness carries the
  rest. Where this grader cannot measure speed (no GPU, a GPU outside the catalogue),
  speed is left out of the score, not counted as zero: correctness carries the whole
  part, so a correct kernel scores 1.0 there. The verdict says which in
  ``Verdict.speed`` (``SpeedCheck``) and in words.

Hidden cases are described by name and input shapes only; the secret seed appears
nowhere. That a kernel actually launched is said to be advisory (``LaunchCheck``): only
the source's launch is checked by the host.
"""

from __future__ import annotations

import html

from gpu_runner import timing
from grading.judge.feedback import case_groups, case_records, group_summary, tally_groups
from grading.kinds.kernel.judging import KernelOutcome, KernelReport, LaunchCheck, ShapeTiming, SpeedSpec
from grading.verdict import SpeedCheckStatus, Verdict

_WHOLE_RUN_WORDS = {
    KernelOutcome.TIME_LIMIT: "Time limit exceeded",
    KernelOutcome.MEMORY_LIMIT: "Memory limit exceeded",
    KernelOutcome.OUTPUT_LIMIT: "Output limit exceeded (too much printed)",
    KernelOutcome.REJECTED: "Rejected by the sandbox (the code used a forbidden system call)",
    KernelOutcome.RUNTIME_ERROR: "Runtime error",
    KernelOutcome.WRONG_ANSWER: "Wrong answer",
}
LAUNCH_ADVISORY = ("Your source launches a Triton kernel; that it actually ran is reported by your code's own "
                   "process, so that part is advisory here, not proven.")


def correctness_fraction(report: KernelReport) -> float:
    """The share of hidden test groups passed: 1 for a correct kernel, 0 for a run that
    failed outside the cases, else per group as a code part scores them."""
    if report.outcome.correct:
        return 1.0
    results = report.correctness.results
    if all(result.passed for result in results):
        return 0.0  # no case failed, so the run itself did (a limit, no launch, timing): nothing per group
    return tally_groups(results, case_groups(results)).score


def kernel_score(report: KernelReport) -> float:
    """Correctness per group on the share speed does not carry, plus speed's share when
    measured and passed (see the module docstring); ``report.speed.share`` is 0 where
    speed was not measured, so correctness then carries the whole part."""
    share = report.speed.share
    earned = (1.0 - share) * correctness_fraction(report) + (share if report.speed.passed else 0.0)
    return min(max(earned, 0.0), 1.0)


def verdict_from_kernel_report(report: KernelReport, speed: SpeedSpec, interpreted: str,
                               limits_text: str = "") -> Verdict:
    outcome = report.outcome
    lines = _correctness_lines(report, limits_text)
    if outcome.correct:
        lines += speed_lines(report, speed)
    lines.append(speed_score_line(report))
    return Verdict(valid=True, correct=outcome.correct, score=kernel_score(report),
                   interpreted=interpreted, interpreted_html=html.escape(interpreted),
                   feedback="\n".join(lines), mistake=outcome.value, speed=report.speed,
                   cases=case_records(report.correctness.results))


def speed_score_line(report: KernelReport) -> str:
    """How speed entered the score, in words: the line a scorecard reader looks for."""
    check = report.speed
    if check.status is SpeedCheckStatus.NOT_MEASURED:
        return (f"Speed was not measured here: {check.reason}. It is left out of the score, "
                "so correctness counts for the whole part.")
    if check.status is SpeedCheckStatus.SKIPPED:
        return f"Speed ({check.share:.0%} of this part) was {check.reason}; it was not awarded."
    if check.passed:
        return f"Speed ({check.share:.0%} of this part) was awarded: {check.reason}."
    return f"Speed ({check.share:.0%} of this part) was not awarded: {check.reason}."


def _correctness_lines(report: KernelReport, limits_text: str) -> list[str]:
    judged = report.correctness
    where = "on the GPU, before and after timing" if report.on_gpu and report.shapes else (
        "on the GPU" if report.on_gpu else "under Triton's interpreter on the CPU")
    if report.outcome.correct:
        lines = [f"Correct: all {len(judged.results)} hidden tests passed {where}."]
        if report.launch_check is LaunchCheck.ADVISORY:
            lines.append(LAUNCH_ADVISORY)
        return lines
    failure = judged.first_failure
    words = _WHOLE_RUN_WORDS.get(report.outcome, report.outcome.value)
    if failure is None:
        text = f"{words}: {judged.detail}" if judged.detail else f"{words}."
        if limits_text and report.outcome in (KernelOutcome.TIME_LIMIT, KernelOutcome.MEMORY_LIMIT):
            text += f" (limits: {limits_text})"
        return [text]
    passed = sum(1 for result in judged.results if result.passed)
    case = failure.case
    lines = [f'{failure.outcome.label} on hidden test "{case.name}" (group {case.group}; inputs '
             f'{case.describe_shapes()}): {failure.detail}',
             f"{passed} of {len(judged.results)} tests passed ({where})."]
    groups = case_groups(judged.results)
    summary = group_summary(tally_groups(judged.results, groups), groups)
    return lines + [summary] if summary else lines


def speed_lines(report: KernelReport, speed: SpeedSpec) -> list[str]:
    """The speed part of the feedback: one line per timed shape, then the device
    (nothing when the kernel was not timed; ``speed_score_line`` says why)."""
    lines = []
    needed = f"needs {speed.threshold:.0%} of peak" if report.catalogue_key else "not scored"
    for shape in report.shapes:
        lines.append(f"{shape.name}: {describe_shape(shape, speed)}; {needed}.")
    if report.readings:
        states = " -> ".join(reading.describe() for reading in report.readings)
        lines.append(f"Device: {states}.")
    return lines


def describe_shape(shape: ShapeTiming, speed: SpeedSpec) -> str:
    """``42.1 us, 3.98 TB/s = 83% of peak (reference 40.2 us, 87%)`` and the work."""
    work = f"{_bytes(shape.work.bytes)} moved, {_flops(shape.work.flops)}"
    if shape.judgement is None:
        return f"not timed ({shape.error or 'no measurement'}); {work}"
    text = f"{_rate_text(shape.judgement, speed)} ({work})"
    if shape.judgement.status == timing.SpeedStatus.INVALID:
        floor = shape.judgement.floor_seconds
        text += f", below the physical floor of {_time(floor)}: invalid measurement"
    if shape.reference is not None:
        text += f"; reference kernel {_rate_text(shape.reference, speed)}"
    return text


def _rate_text(judgement: timing.SpeedJudgement, speed: SpeedSpec) -> str:
    rate = (f"{judgement.rate / 1e9:.0f} GB/s" if speed.metric == "bandwidth"
            else f"{judgement.rate / 1e12:.1f} TFLOP/s")
    fraction = f" = {judgement.fraction:.0%} of peak" if judgement.fraction is not None else ""
    return f"{_time(judgement.median_seconds)} median, {rate}{fraction}"


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} us"


def _bytes(count: int) -> str:
    return f"{count / 1e9:.3g} GB" if count >= 1e9 else f"{count / 1e6:.3g} MB"


def _flops(count: int) -> str:
    return f"{count / 1e12:.3g} TFLOP" if count >= 1e12 else f"{count / 1e9:.3g} GFLOP"
