"""The ``kernel`` answer kind: spec loading, reading, where it grades, the verdict's words
and score, and (in the sandbox) grading and validating bank questions end to end."""

import copy
import json

import pytest

import grading
from gpu_runner import process
from gpu_runner.devices import DeviceReading
from gpu_runner.timing import Peak, Work, judge_speed
from grading.judge.runner import JudgeReport, Outcome
from grading.kinds.base import SpecError
from grading.kinds.kernel import KernelKind, feedback, read_kernel_source
from grading.kinds.kernel.judging import KernelOutcome, KernelReport, ShapeTiming, SpeedSpec
from grading.machine import sandbox_unavailable_reason
from grading.registry import get_kind, kinds
from grading.verdict import SpeedCheck, SpeedCheckStatus, Verdict
from questions.loader import BANK_DIR, load_file

KERNEL_QUESTIONS = (
    "kernels/123-looped-softmax-vocab.yaml", "kernels/040-rmsnorm-triton-kernel.yaml",
    "kernels/038-coalesced-gemv-kernel.yaml", "kernels/042-int4-gemv-kernel.yaml",
    "attention/125-split-k-decode-kernel.yaml", "attention/027-flashattention-forward-kernel.yaml",
)


def part_of(path: str) -> dict:
    data = load_file(BANK_DIR / path).data
    return next(part for part in data["parts"] if part["kind"] == "kernel")


def solution(part: dict, verdict: str, index: int = 0) -> str:
    return [item["code"] for item in part["solutions"] if item["verdict"] == verdict][index]


def test_the_kind_is_registered():
    assert "kernel" in kinds()
    assert isinstance(get_kind("kernel"), KernelKind)


@pytest.mark.parametrize("path", KERNEL_QUESTIONS)
def test_every_kernel_question_loads_with_reference_slow_and_wrong_examples(path):
    spec = KernelKind().load_spec(part_of(path))
    verdicts = [item.verdict for item in spec.solutions]
    assert verdicts.count("accepted") == 1 and "too_slow" in verdicts
    assert any(verdict not in ("accepted", "too_slow") for verdict in verdicts)
    assert 0 < spec.speed.threshold <= 1


@pytest.mark.parametrize("change, key", [
    (lambda part: part.pop("speed"), "speed"),
    (lambda part: part["speed"].update(metric="latency"), "speed.metric"),
    (lambda part: part["speed"].update(threshold=1.5), "speed.threshold"),
    (lambda part: part["speed"].update(peak="hbm_bandwidth"), "speed.peak"),
    (lambda part: part.update(solutions=[s for s in part["solutions"] if s["verdict"] != "accepted"]), "solutions"),
    (lambda part: part["solutions"][0].update(verdict="fast"), "solutions[0].verdict"),
    (lambda part: part.update(starter="def softmax(logits):\n    return logits\n"), "starter"),
    (lambda part: part.update(judge="kernels/nothing-here.judge.py"), "judge"),
    (lambda part: part.update(limits={"gpu_count": 2}), "limits.gpu_count"),
])
def test_a_broken_spec_names_the_key(change, key):
    part = copy.deepcopy(part_of(KERNEL_QUESTIONS[0]))
    change(part)
    with pytest.raises(SpecError) as raised:
        KernelKind().load_spec(part)
    assert raised.value.key == key


def test_reading_needs_a_triton_kernel_and_never_runs_the_code():
    reading = read_kernel_source("import torch\n\ndef softmax(x):\n    return torch.softmax(x, -1)\n", "softmax")
    assert not reading.valid and "@triton.jit" in reading.feedback
    text = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n\ndef softmax(x):\n    raise SystemExit\n"
    assert read_kernel_source(text, "softmax").endswith("Triton kernels: k")
    verdict = grading.interpret(part_of(KERNEL_QUESTIONS[0]), text, {})
    assert verdict.valid and verdict.correct is None


def test_without_a_gpu_grading_happens_under_the_interpreter(monkeypatch):
    monkeypatch.setattr("gpu_runner.devices.local_gpu_name", lambda: None)
    assert process.kernel_place() == (False, "")


def test_a_gpu_the_sandbox_cannot_reach_is_named(monkeypatch):
    monkeypatch.setattr("gpu_runner.devices.local_gpu_name", lambda: "NVIDIA H200")
    monkeypatch.setattr("gpu_runner.process.gpu_sandbox_missing", lambda: "the sandbox cannot bind GPU devices yet")
    assert process.kernel_place() == (
        False, "this grader has a NVIDIA H200, but the sandbox cannot bind GPU devices yet")


# ---------------------------------------------------------------- the verdict


def report(outcome, fraction=0.8, reference_fraction=0.85, share=0.5):
    """A GPU report whose speed was measured (what ``judging.judge_shapes`` returns)."""
    work, peak = Work(bytes=int(4.8e9), flops=int(1e9)), Peak(4.8e12, 989.4e12)
    shape = ShapeTiming("1,024 rows", work, samples=40, median_seconds=1e-3 / fraction, relative_error=0.001,
                        stop="stable", judgement=judge_speed(1e-3 / fraction, work, peak, "bandwidth", 0.5),
                        reference=judge_speed(1e-3 / reference_fraction, work, peak, "bandwidth", 0.5))
    correctness = JudgeReport(Outcome.ACCEPTED, (), "")
    readings = (DeviceReading("NVIDIA H200", 1980, 3201, 1980, 38), DeviceReading("NVIDIA H200", 1755, 3201, 1980, 61))
    speed = SpeedCheck(SpeedCheckStatus.MEASURED, share, outcome is KernelOutcome.ACCEPTED, "compared with 50% of peak")
    return KernelReport(outcome, correctness, True, "NVIDIA H200", "h200", readings, (shape,), speed)


def test_an_accepted_kernel_reports_bandwidth_percent_of_peak_reference_and_device():
    verdict = feedback.verdict_from_kernel_report(report(KernelOutcome.ACCEPTED), SpeedSpec(), "Python")
    assert verdict.correct and verdict.score == 1.0 and verdict.mistake == "accepted"
    text = verdict.feedback
    assert "1.25 ms median, 3840 GB/s = 80% of peak" in text
    assert "reference kernel 1.18 ms median, 4080 GB/s = 85% of peak" in text
    assert "needs 50% of peak" in text and "4.8 GB moved" in text
    assert "NVIDIA H200, SM 1980/1980 MHz, memory 3201 MHz, 38 C -> NVIDIA H200, SM 1755/1980 MHz" in text


def test_a_slow_kernel_keeps_the_correctness_share_only():
    speed = SpeedSpec(share=0.4)
    verdict = feedback.verdict_from_kernel_report(report(KernelOutcome.TOO_SLOW, fraction=0.3, share=0.4), speed,
                                                  "Python")
    assert verdict.correct and verdict.score == pytest.approx(0.6) and verdict.mistake == "too_slow"
    assert "30% of peak" in verdict.feedback and "Speed (40% of this part) was not awarded" in verdict.feedback
    assert verdict.speed.status is SpeedCheckStatus.MEASURED and verdict.speed.share == 0.4


def test_a_correct_kernel_whose_speed_was_not_measured_scores_one():
    correct = KernelReport(KernelOutcome.SPEED_NOT_SCORED, JudgeReport(Outcome.ACCEPTED, (), ""), False,
                           speed=SpeedCheck(SpeedCheckStatus.NOT_MEASURED, reason="no GPU on this grader"))
    verdict = feedback.verdict_from_kernel_report(correct, SpeedSpec(share=0.5), "Python")
    assert verdict.correct and verdict.score == 1.0
    assert "Speed was not measured here: no GPU on this grader" in verdict.feedback


def test_the_speed_check_round_trips_through_the_stored_verdict():
    verdict = feedback.verdict_from_kernel_report(report(KernelOutcome.ACCEPTED), SpeedSpec(), "Python")
    stored = json.loads(json.dumps(verdict.to_dict()))
    assert stored["speed"] == {"status": "measured", "share": 0.5, "passed": True,
                               "reason": "compared with 50% of peak"}
    assert Verdict.from_dict(stored) == verdict
    assert Verdict.from_dict({k: v for k, v in stored.items() if k != "speed"}).speed is None  # older rows
    with pytest.raises(ValueError):
        Verdict.from_dict(stored | {"speed": {"status": "fast"}})
    with pytest.raises(ValueError):  # what was not measured cannot carry a share
        SpeedCheck(SpeedCheckStatus.NOT_MEASURED, share=0.5)


def test_a_wrong_kernel_scores_nothing():
    wrong = KernelReport(KernelOutcome.RUNTIME_ERROR, JudgeReport(Outcome.RUNTIME_ERROR, (), "CompilationError: x"),
                         False)
    verdict = feedback.verdict_from_kernel_report(wrong, SpeedSpec(), "Python")
    assert verdict.correct is False and verdict.score == 0.0
    assert verdict.feedback.splitlines()[0] == "Runtime error: CompilationError: x"


# ---------------------------------------------------------------- in the sandbox

REASON = sandbox_unavailable_reason()
needs_sandbox = [pytest.mark.sandbox, pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")]


@pytest.mark.parametrize("verdict, correct, score", [("accepted", True, 1.0), ("too_slow", True, 1.0),
                                                     ("wrong_answer", False, None)])
@pytest.mark.sandbox
@pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")
def test_grading_in_the_sandbox_without_a_gpu(monkeypatch, verdict, correct, score):
    monkeypatch.setattr("gpu_runner.devices.local_gpu_name", lambda: None)
    part = part_of("kernels/040-rmsnorm-triton-kernel.yaml")
    graded = grading.grade(part, solution(part, verdict), {"judge_seed": 99})
    assert graded.correct is correct
    assert graded.score == score if correct else graded.score < 1.0  # a wrong one keeps the groups it passed
    assert graded.speed.status is SpeedCheckStatus.NOT_MEASURED and graded.speed.share == 0
    assert "Speed was not measured here" in graded.feedback
    if correct:
        assert graded.mistake == "speed_not_scored"


@pytest.mark.sandbox
@pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")
def test_validation_runs_every_example_in_the_sandbox(monkeypatch):
    monkeypatch.setattr("gpu_runner.devices.local_gpu_name", lambda: None)
    part = part_of("kernels/038-coalesced-gemv-kernel.yaml")
    kind = KernelKind()
    assert kind.validate_part(kind.load_spec(part), {}) == []
    mislabelled = copy.deepcopy(part)
    mislabelled["solutions"][3]["verdict"] = "runtime_error"  # it is a wrong answer
    problems = kind.validate_part(kind.load_spec(mislabelled), {})
    assert len(problems) == 1 and problems[0].startswith("solutions[3] (runtime_error) got wrong_answer")
