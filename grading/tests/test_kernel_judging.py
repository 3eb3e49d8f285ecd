"""judge_kernel on the trusted side: what it concludes from what a run wrote.

The GPU branch is driven by a fake run that writes what the harness would (outputs
before and after timing, raw samples, launch counts), so every verdict the host can
reach is pinned without a GPU. The interpreter branch runs the real harness in a plain
child process on a bank question (the sandbox tests run the same through bubblewrap).
"""

import io
import json
from pathlib import Path

import numpy as np
import pytest

from gpu_runner.devices import DeviceReading
from gpu_runner.process import plain_runner
from gpu_runner.timing import Work
from grading.judge import Case, Tolerance
from grading.judge.contract import load_judge
from grading.kinds.kernel.feedback import verdict_from_kernel_report
from grading.kinds.kernel.judging import KernelOutcome, SpeedSpec, judge_kernel
from grading.kinds.kernel.problem import KernelJudge, TensorRecipe, TimedShape
from grading.sandbox.results import Limits, SandboxResult, Status
from grading.verdict import SpeedCheckStatus
from questions.catalogue import load_catalogue
from questions.loader import BANK_DIR, load_file

H200_FLOOR_MS = 1.0  # the test shape moves 4.8 GB: 1 ms at H200's 4.8 TB/s
SPEED = SpeedSpec(metric="bandwidth", threshold=0.5, share=0.5)
# What the fake runs stand in for: a source that launches a Triton kernel (the static
# check reads it; the fakes never run it).
CANDIDATE = "import triton\n\n@triton.jit\ndef k(x_ptr):\n    pass\n\ndef double(x):\n    k[(1,)](x)\n    return x\n"
# An outcome must not depend on how busy the machine is: a cold child imports torch and
# triton before the answer's first line runs, which can take longer than the default
# 10 s wall limit (the kind's own interpreter limits are larger still; see kernel.py).
GENEROUS = Limits(cpu_seconds=600, wall_seconds=600, memory_bytes=4 << 30)


class DoublingJudge(KernelJudge):
    tolerance = Tolerance(rtol=1e-6, atol=1e-6, norm_rtol=1e-6)

    def interpreter_cases(self, rng):
        return [Case("a short vector", "basic", (rng.normal(size=5).astype(np.float32),))]

    def gpu_cases(self, rng):
        return self.interpreter_cases(rng) + [Case("a long vector", "full", (rng.normal(size=300).astype(np.float32),))]

    def reference(self, case):
        return case.args[0] * 2

    def timed_shapes(self):
        return [TimedShape("4.8 GB", args=(TensorRecipe((10,), "float32"),), work=Work(bytes=int(4.8e9), flops=0))]


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


class FakeGpuRun:
    """Writes what the harness writes, from ``samples_ms`` (candidate), ``reference_ms``
    (the reference's own process) and ``answer`` (input -> output, per pass)."""

    def __init__(self, samples_ms, reference_ms=None, answer=lambda x, when: 2 * x, launches=1, timing=None):
        self.samples_ms, self.reference_ms, self.answer = samples_ms, reference_ms, answer
        self.launches, self.timing = launches, timing
        self.plans = []

    def __call__(self, *, files, entry, args, limits=None):
        plan = json.loads(files["kernel_plan.json"])
        self.plans.append(plan)
        out = {}
        manifest = json.loads(files["cases.json"])["cases"]
        counts = {}
        passes = ("c", "a") if plan.get("timed") else ("c",)
        for prefix in passes if plan["check"] else ():
            for case in manifest:
                cid = prefix + case["id"][1:]
                x = np.load(io.BytesIO(files[case["args"][0]["npy"]]))
                out[f"{cid}.0.npy"] = npy(self.answer(x, prefix))
                out[f"{cid}.json"] = json.dumps({"value": {"__ndarray__": f"{cid}.0.npy"}}).encode()
                counts[cid] = self.launches
        if plan.get("timed"):
            samples = self.samples_ms if plan["check"] else self.reference_ms
            record = self.timing or {"shapes": [{"name": shape["name"], "samples_ms": samples, "stop": "stable"}
                                                for shape in plan["timed"]]}
            out["_timing.json"] = json.dumps({"value": record}).encode()
        out["_launches.json"] = json.dumps({"value": counts}).encode()
        return SandboxResult(status=Status.OK, exit_code=0, signal=None, stdout="", stderr="", files=out,
                             wall_seconds=1.0, cpu_seconds=1.0, peak_memory_bytes=None, note="")


GPUS = load_catalogue()["gpus"]  # what a question's context hands the kernel kind


def h200(index=0):
    return DeviceReading("NVIDIA H200", 1980, 3201, 1980, 40 + index)


def judge_on_gpu(run, device=h200, **options):
    return judge_kernel(judge=DoublingJudge(), source=CANDIDATE, entrypoint="double", seed=7, speed=SPEED,
                        on_gpu=True, run=run, reference_source="reference", read_device=device,
                        gpus=GPUS, **options)


def test_fast_and_correct_is_accepted_next_to_the_reference():
    run = FakeGpuRun([1.5] * 30, reference_ms=[1.25] * 30)  # 67% and 80% of peak
    report = judge_on_gpu(run)
    assert report.outcome is KernelOutcome.ACCEPTED
    assert (report.speed.status, report.speed.share, report.speed.passed) == (SpeedCheckStatus.MEASURED, 0.5, True)
    shape = report.shapes[0]
    assert shape.median_seconds == pytest.approx(1.5e-3)
    assert shape.judgement.fraction == pytest.approx(H200_FLOOR_MS / 1.5)
    assert shape.reference.fraction == pytest.approx(H200_FLOOR_MS / 1.25)
    assert [reading.temperature_c for reading in report.readings] == [40, 40]
    assert report.catalogue_key == "h200"
    assert [plan["check"] for plan in run.plans] == [True, False]  # the reference ran in its own process


def test_correct_but_slow_is_too_slow():
    report = judge_on_gpu(FakeGpuRun([2.5] * 30, reference_ms=[1.25] * 30))  # 40% < 50%
    assert report.outcome is KernelOutcome.TOO_SLOW
    assert report.outcome.correct
    assert (report.speed.status, report.speed.passed) == (SpeedCheckStatus.MEASURED, False)


def test_a_time_below_the_physical_floor_is_an_invalid_measurement():
    report = judge_on_gpu(FakeGpuRun([0.8] * 30, reference_ms=[1.25] * 30))
    assert report.outcome is KernelOutcome.INVALID_TIMING
    assert report.speed.status is SpeedCheckStatus.MEASURED and not report.speed.passed
    assert "physical floor" in report.speed.reason


def test_a_gpu_outside_the_catalogue_still_grades_correctness_and_reports_raw_times():
    report = judge_on_gpu(FakeGpuRun([1.5] * 30, reference_ms=[1.25] * 30),
                          device=lambda: DeviceReading("NVIDIA GeForce RTX 4090"))
    assert report.outcome is KernelOutcome.SPEED_NOT_SCORED
    assert report.shapes[0].judgement.rate == pytest.approx(4.8e9 / 1.5e-3)
    assert report.speed.status is SpeedCheckStatus.NOT_MEASURED and report.speed.share == 0
    assert "not in the catalogue" in report.speed.reason


def test_a_wrong_answer_after_timing_fails_correctness():
    def answer(x, when):
        return 2 * x if when == "c" else 2 * x + 1  # right before timing, wrong after

    report = judge_on_gpu(FakeGpuRun([1.5] * 30, reference_ms=[1.25] * 30, answer=answer))
    assert report.outcome is KernelOutcome.WRONG_ANSWER
    assert report.correctness.first_failure.case.name.endswith("(after timing)")
    assert report.shapes == ()
    assert (report.speed.status, report.speed.share) == (SpeedCheckStatus.SKIPPED, 0.5)  # counted, not earned


def test_on_a_gpu_the_full_shapes_are_checked():
    run = FakeGpuRun([1.5] * 30, reference_ms=[1.25] * 30)
    report = judge_on_gpu(run)
    names = [result.case.name for result in report.correctness.results]
    assert "a long vector" in names and "a long vector (after timing)" in names


def test_no_triton_launch_is_a_wrong_answer():
    report = judge_on_gpu(FakeGpuRun([1.5] * 30, reference_ms=[1.25] * 30, launches=0))
    assert report.outcome is KernelOutcome.WRONG_ANSWER
    assert "no Triton kernel was launched" in report.correctness.detail


@pytest.mark.parametrize("timing_record", [
    {"shapes": []},
    {"shapes": [{"name": "4.8 GB", "samples_ms": [1.0, -1.0, 1.0], "stop": "stable"}]},
    {"shapes": [{"name": "4.8 GB", "samples_ms": [float("nan")] * 5, "stop": "stable"}]},
    {"shapes": [{"name": "another shape", "samples_ms": [1.5] * 5, "stop": "stable"}]},
    {"shapes": [{"name": "4.8 GB", "error": {"type": "OutOfResources", "message": "shared memory"}}]},
])
def test_a_missing_or_forged_timing_record_is_never_a_pass(timing_record):
    report = judge_on_gpu(FakeGpuRun([1.5] * 30, reference_ms=[1.25] * 30, timing=timing_record))
    assert report.outcome is KernelOutcome.RUNTIME_ERROR


def test_the_reference_times_may_come_from_an_earlier_run():
    run = FakeGpuRun([1.5] * 30)
    report = judge_on_gpu(run, reference_times={"4.8 GB": 1.25e-3})
    assert report.outcome is KernelOutcome.ACCEPTED
    assert len(run.plans) == 1 and report.shapes[0].reference.fraction == pytest.approx(0.8)


def test_without_a_gpu_nothing_is_timed():
    run = FakeGpuRun([1.5] * 30)
    report = judge_kernel(judge=DoublingJudge(), source=CANDIDATE, entrypoint="double", seed=7, speed=SPEED,
                          on_gpu=False, run=run, reference_source="reference",
                          read_device=lambda: pytest.fail("no device reading without a GPU"))
    assert report.outcome is KernelOutcome.SPEED_NOT_SCORED
    assert report.speed.status is SpeedCheckStatus.NOT_MEASURED and report.shapes == ()
    assert "interpreter" in report.speed.reason
    assert run.plans[0]["mode"] == "interpret" and "timed" not in run.plans[0]


# ---------------------------------------------------------------- the score: what was measured, per group


class SixGroupJudge(DoublingJudge):
    """Six hidden test groups told apart by length (group ``g5`` has two cases)."""

    def interpreter_cases(self, rng):
        cases = [Case(f"length {n}", f"g{n}", (rng.normal(size=n).astype(np.float32),)) for n in range(1, 7)]
        return cases + [Case("length 7", "g5", (rng.normal(size=7).astype(np.float32),))]

    def gpu_cases(self, rng):
        return self.interpreter_cases(rng)


def wrong_on(*lengths):
    return lambda x, when: 2 * x + (1 if x.size in lengths else 0)


def judged(run, on_gpu, judge=None, device=h200):
    report = judge_kernel(judge=judge or DoublingJudge(), source=CANDIDATE, entrypoint="double", seed=7,
                          speed=SPEED, on_gpu=on_gpu, run=run, reference_source="reference", read_device=device,
                          gpus=GPUS)
    return report, verdict_from_kernel_report(report, SPEED, "Python")


def test_a_correct_kernel_without_a_gpu_earns_the_whole_part_with_speed_not_measured():
    report, verdict = judged(FakeGpuRun([1.5] * 30), on_gpu=False)
    assert verdict.correct and verdict.score == 1.0  # was 0.5: speed counted as zero
    assert verdict.speed.status is SpeedCheckStatus.NOT_MEASURED and verdict.speed.share == 0
    assert "no GPU on this grader" in verdict.speed.reason
    assert "Speed was not measured here" in verdict.feedback and "left out of the score" in verdict.feedback


def test_a_correct_kernel_on_a_gpu_outside_the_catalogue_earns_the_whole_part():
    _, verdict = judged(FakeGpuRun([1.5] * 30, reference_ms=[1.25] * 30), on_gpu=True,
                        device=lambda: DeviceReading("NVIDIA GeForce RTX 4090"))
    assert verdict.score == 1.0 and verdict.speed.status is SpeedCheckStatus.NOT_MEASURED
    assert "not in the catalogue" in verdict.feedback


@pytest.mark.parametrize("samples_ms, score, passed", [([1.5] * 30, 1.0, True), ([2.5] * 30, 0.5, False)])
def test_on_a_gpu_speed_counts_its_share(samples_ms, score, passed):
    _, verdict = judged(FakeGpuRun(samples_ms, reference_ms=[1.25] * 30), on_gpu=True)
    assert verdict.correct and verdict.score == pytest.approx(score)
    assert verdict.speed.status is SpeedCheckStatus.MEASURED and verdict.speed.passed is passed
    assert verdict.speed.share == SPEED.share
    assert ("was awarded" if passed else "was not awarded") in verdict.feedback


def test_five_of_six_groups_earn_five_sixths_of_correctness_without_a_gpu():
    report, verdict = judged(FakeGpuRun([1.5] * 30, answer=wrong_on(3)), on_gpu=False, judge=SixGroupJudge())
    assert report.outcome is KernelOutcome.WRONG_ANSWER
    assert verdict.correct is False and verdict.score == pytest.approx(5 / 6)  # was 0.0
    assert verdict.speed.status is SpeedCheckStatus.NOT_MEASURED
    assert "failed: g3." in verdict.feedback and "(5 of 6 points)" in verdict.feedback


def test_a_group_fails_when_any_of_its_cases_fails():
    _, verdict = judged(FakeGpuRun([1.5] * 30, answer=wrong_on(7)), on_gpu=False, judge=SixGroupJudge())
    assert verdict.score == pytest.approx(5 / 6) and "failed: g5." in verdict.feedback


def test_on_a_gpu_five_of_six_groups_earn_five_sixths_of_the_correctness_share_and_no_speed():
    run = FakeGpuRun([1.5] * 30, reference_ms=[1.25] * 30, answer=wrong_on(3))
    report, verdict = judged(run, on_gpu=True, judge=SixGroupJudge())
    assert verdict.score == pytest.approx((1 - SPEED.share) * 5 / 6)
    assert verdict.speed.status is SpeedCheckStatus.SKIPPED and not verdict.speed.passed
    assert "only once every hidden test passes" in verdict.feedback
    assert len(run.plans) == 1  # the reference is not timed for a kernel that failed


def test_a_failure_outside_the_cases_earns_nothing():
    run = FakeGpuRun([1.5] * 30, launches=0)  # every case passes, no kernel was launched
    report, verdict = judged(run, on_gpu=False, judge=SixGroupJudge())
    assert report.correctness.results and all(result.passed for result in report.correctness.results)
    assert verdict.correct is False and verdict.score == 0.0


# ---------------------------------------------------------------- the real harness, interpreted


def softmax_part():
    data = load_file(BANK_DIR / "kernels" / "123-looped-softmax-vocab.yaml").data
    return next(part for part in data["parts"] if part["id"] == "kernel")


def solution(part, verdict, index=0):
    return [item["code"] for item in part["solutions"] if item["verdict"] == verdict][index]


def interpret(part, source):
    judge = load_judge(part["judge"], part["id"])
    return judge_kernel(judge=judge, source=source, entrypoint=part["entrypoint"], seed=3, speed=SPEED,
                        on_gpu=False, run=plain_runner, limits=GENEROUS)


def test_the_harness_runs_a_reference_kernel_under_the_interpreter():
    part = softmax_part()
    report = interpret(part, solution(part, "accepted"))
    assert report.outcome is KernelOutcome.SPEED_NOT_SCORED, report.correctness
    assert len(report.correctness.results) >= 5


def test_the_harness_reports_a_nan_producing_kernel_as_wrong():
    part = softmax_part()
    report = interpret(part, solution(part, "wrong_answer", 0))
    assert report.outcome is KernelOutcome.WRONG_ANSWER
    assert "NaN" in report.correctness.first_failure.detail


def test_a_torch_answer_with_an_unused_kernel_is_refused():
    source = (Path(__file__).parent / "data" / "kernel" / "torch_softmax.py").read_text()
    report = interpret(softmax_part(), source)
    assert report.outcome is KernelOutcome.WRONG_ANSWER
    assert "no Triton kernel" in report.correctness.detail


def test_an_import_error_is_a_runtime_error():
    source = ("import triton\n@triton.jit\ndef k(x): pass\ndef softmax(x):\n    k[(1,)](x)\n"
              "raise ValueError('bo' + 'om')\n")
    report = interpret(softmax_part(), source)
    assert report.outcome is KernelOutcome.RUNTIME_ERROR
    # Every kernel case is hidden: the type and the line (shown from the host's copy of
    # the source), never the message.
    assert "raised ValueError at line 6 of your code" in report.correctness.detail
    assert "boom" not in report.correctness.detail
