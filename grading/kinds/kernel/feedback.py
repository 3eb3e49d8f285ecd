"""Turn a ``KernelReport`` into the candidate's ``Verdict``: the score, and in words what
was checked, what was measured, on which device, and how it compares with the reference.

Scoring: a correct kernel earns the correctness share of the part (``1 - speed.share``);
the speed share is earned only when every timed shape reaches the threshold on a GPU in
the catalogue. A wrong kernel earns nothing. Hidden cases are described by name and
input shapes only; the secret seed appears nowhere. That a kernel actually launched is
said to be advisory (``LaunchCheck``): only the source's launch is checked by the host.
"""

from __future__ import annotations

import html

from gpu_runner import timing
from grading.kinds.kernel.judging import KernelOutcome, KernelReport, LaunchCheck, ShapeTiming, SpeedSpec
from grading.verdict import Verdict

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


def kernel_score(outcome: KernelOutcome, speed: SpeedSpec) -> float:
    if outcome is KernelOutcome.ACCEPTED:
        return 1.0
    return 1.0 - speed.share if outcome.correct else 0.0


def verdict_from_kernel_report(report: KernelReport, speed: SpeedSpec, interpreted: str,
                               limits_text: str = "") -> Verdict:
    outcome = report.outcome
    lines = _correctness_lines(report, limits_text)
    if outcome.correct:
        lines += speed_lines(report, speed)
        if outcome is not KernelOutcome.ACCEPTED:
            lines.append(f"Speed earns {speed.share:.0%} of this part; it was not awarded.")
    return Verdict(valid=True, correct=outcome.correct, score=kernel_score(outcome, speed),
                   interpreted=interpreted, interpreted_html=html.escape(interpreted),
                   feedback="\n".join(lines), mistake=outcome.value)


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
    return [f'{failure.outcome.label} on hidden test "{case.name}" (inputs {case.describe_shapes()}): {failure.detail}',
            f"{passed} of {len(judged.results)} tests passed ({where})."]


def speed_lines(report: KernelReport, speed: SpeedSpec) -> list[str]:
    """The speed part of the feedback: one line per timed shape, then the device."""
    if report.note and not report.shapes:
        return [report.note]
    lines = []
    if report.note:
        lines.append(report.note)
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
