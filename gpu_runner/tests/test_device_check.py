"""The device check's own logic, without a GPU: which runs it makes for a question, what
it expects of each, how it compares with do_bench, and its exit status. The runs are
replaced by canned reports; on a GPU, test_gpu.py runs it for real."""

import pytest

from gpu_runner import device_check
from gpu_runner.devices import DeviceReading
from gpu_runner.timing import Peak, judge_speed
from grading.judge.runner import JudgeReport, Outcome
from grading.kinds.kernel import judging
from grading.kinds.kernel.judging import KernelOutcome, KernelReport, ShapeTiming

H200 = Peak(4.8e12, 989.4e12)


def canned(outcome, median=None, do_bench=None, timed=True):
    def shape(spec_shape):
        judgement = judge_speed(median, spec_shape.work, H200, "bandwidth", 0.35)
        return ShapeTiming(spec_shape.name, spec_shape.work, samples=50, median_seconds=median, relative_error=0.002,
                           stop="stable", judgement=judgement, do_bench_seconds=do_bench)

    def judge_kernel(*, judge, **options):
        shapes = tuple(shape(item) for item in judge.timed_shapes()) if timed and median else ()
        return KernelReport(outcome, JudgeReport(Outcome.ACCEPTED, (), ""), True, "NVIDIA H200", "h200", (), shapes)

    return judge_kernel


@pytest.fixture
def softmax_only(monkeypatch):
    monkeypatch.setattr("gpu_runner.devices.read_device",
                        lambda index=0: DeviceReading("NVIDIA H200", 1980, 3201, 1980, 40))
    return ["--only", "looped-softmax-vocab"]


def softmax_solutions():
    """The solutions question 123 lists: the device check runs each once."""
    from questions.loader import BANK_DIR, load_file

    part = next(p for p in load_file(BANK_DIR / "kernels/123-looped-softmax-vocab.yaml").data["parts"])
    return part["solutions"]


def scripted(monkeypatch, by_source):
    """judge_kernel answering per solution source, from a dict verdict -> canned()."""
    from grading.kinds.kernel import KernelKind
    from questions.loader import BANK_DIR, load_file

    part = next(p for p in load_file(BANK_DIR / "kernels/123-looped-softmax-vocab.yaml").data["parts"])
    spec = KernelKind().load_spec(part)
    calls = []

    def judge_kernel(*, source, **options):
        verdict = next(item.verdict for item in spec.solutions if item.code == source)
        calls.append((verdict, options.get("timed", True), options.get("do_bench", False)))
        return by_source[verdict](source=source, **options)

    monkeypatch.setattr(judging, "judge_kernel", judge_kernel)
    return calls


def test_everything_as_expected_exits_zero(monkeypatch, softmax_only, capsys):
    calls = scripted(monkeypatch, {
        "accepted": canned(KernelOutcome.ACCEPTED, median=500e-6, do_bench=520e-6),
        "too_slow": canned(KernelOutcome.TOO_SLOW, median=5e-3),
        "wrong_answer": canned(KernelOutcome.WRONG_ANSWER, timed=False),
    })
    assert device_check.main(softmax_only) == 0
    assert calls[0] == ("accepted", True, True)  # the reference is compared with do_bench
    assert ("too_slow", True, False) in calls and ("wrong_answer", False, False) in calls
    out = capsys.readouterr().out
    runs = len(softmax_solutions())
    assert f"{runs} of {runs} runs as expected" in out
    assert "2101 GB/s =  43.8% of peak [pass] do_bench     520.0 us" in out


def test_a_reference_that_disagrees_with_do_bench_fails(monkeypatch, softmax_only, capsys):
    scripted(monkeypatch, {
        "accepted": canned(KernelOutcome.ACCEPTED, median=500e-6, do_bench=600e-6),
        "too_slow": canned(KernelOutcome.TOO_SLOW, median=5e-3),
        "wrong_answer": canned(KernelOutcome.WRONG_ANSWER, timed=False),
    })
    assert device_check.main(softmax_only) == 1
    assert "disagrees with do_bench" in capsys.readouterr().out


def test_a_slow_example_that_passes_the_speed_test_fails_the_check(monkeypatch, softmax_only, capsys):
    scripted(monkeypatch, {
        "accepted": canned(KernelOutcome.ACCEPTED, median=500e-6, do_bench=500e-6),
        "too_slow": canned(KernelOutcome.ACCEPTED, median=500e-6),
        "wrong_answer": canned(KernelOutcome.WRONG_ANSWER, timed=False),
    })
    assert device_check.main(softmax_only) == 1
    assert "FAIL looped-softmax-vocab" in capsys.readouterr().out


def test_without_a_gpu_it_says_so(monkeypatch, capsys):
    monkeypatch.setattr("gpu_runner.devices.read_device", lambda index=0: None)
    assert device_check.main([]) == 2
    assert "needs one" in capsys.readouterr().out


def test_sandbox_mode_refuses_without_a_ready_sandbox(monkeypatch, softmax_only, capsys):
    monkeypatch.setattr("gpu_runner.process.gpu_sandbox_missing",
                        lambda: "no /dev/nvidia* device nodes on this machine")
    assert device_check.main([*softmax_only, "--sandbox"]) == 2
    assert "the sandbox cannot run on this GPU: no /dev/nvidia*" in capsys.readouterr().out


def test_sandbox_mode_sends_every_run_through_the_gpu_sandbox(monkeypatch, softmax_only):
    from gpu_runner.process import plain_runner

    gpu_sandbox = object()
    monkeypatch.setattr("gpu_runner.process.gpu_sandbox_missing", lambda: "")
    monkeypatch.setattr("gpu_runner.process.sandbox_runner", lambda on_gpu: gpu_sandbox if on_gpu else None)
    runners = []
    answer = canned(KernelOutcome.WRONG_ANSWER, timed=False)

    def judge_kernel(**options):
        runners.append(options["run"])
        return answer(**options)

    monkeypatch.setattr(judging, "judge_kernel", judge_kernel)
    device_check.main([*softmax_only, "--sandbox"])
    runs = len(softmax_solutions())  # one run per listed solution
    assert len(runners) == runs and all(run is gpu_sandbox for run in runners)
    runners.clear()
    device_check.main(softmax_only)
    assert len(runners) == runs and all(run is plain_runner for run in runners)
