"""A kernel answer must launch a Triton kernel, and that is decided where the candidate's
code cannot write: by reading its source on the trusted side, before anything runs. The
run-time launch count comes from the candidate's own process, so it can only reject,
and a verdict never calls a launch proven.

The static check's cases need nothing but ``ast``; the end-to-end ones run the real
harness in a plain child process under Triton's interpreter (as test_kernel_judging.py does).
"""

import textwrap
from pathlib import Path

import pytest

from gpu_runner.process import plain_runner
from grading.judge.contract import load_judge
from grading.kinds.kernel import feedback
from grading.kinds.kernel.judging import KernelOutcome, LaunchCheck, SpeedSpec, judge_kernel, launch_problem
from grading.sandbox.results import Limits
from grading.verdict import SpeedCheckStatus
from questions.loader import BANK_DIR, load_file

DATA = Path(__file__).parent / "data" / "kernel"
# Outcomes must not depend on how busy the machine is: a cold child imports torch and
# triton before the answer's first line runs.
GENEROUS = Limits(cpu_seconds=600, wall_seconds=600, memory_bytes=4 << 30)
SPEED = SpeedSpec(metric="bandwidth", threshold=0.5, share=0.5)

KERNEL = """
        @triton.jit
        def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offsets < n
            tl.store(y_ptr + offsets, 2 * tl.load(x_ptr + offsets, mask=mask), mask=mask)
"""  # indented as the bodies below, which _source dedents together with it


def _source(body: str, imports: str = "import torch\nimport triton\nimport triton.language as tl\n") -> str:
    return imports + textwrap.dedent(body)


# ---------------------------------------------------------------- the static check


@pytest.mark.parametrize("source", [
    pytest.param(_source(KERNEL + """
        def double(x):
            y = torch.empty_like(x)
            double_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
            return y
    """), id="decorated-and-launched"),
    pytest.param(_source(KERNEL + """
        launch = double_kernel
        again = launch

        def double(x):
            y = torch.empty_like(x)
            again[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel(), BLOCK=128)
            return y
    """), id="launched-via-an-alias"),
    pytest.param(_source(KERNEL.replace("@triton.jit", "@compile_kernel") + """
        def double(x):
            y = torch.empty_like(x)
            double_kernel[(1,)](x, y, x.numel(), BLOCK=128)
            return y
    """, imports="import torch\nfrom triton import jit as compile_kernel\nimport triton.language as tl\n"),
        id="jit-imported-from-triton-under-another-name"),
    pytest.param(_source("""
        @triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["n"])
        @triton.jit(do_not_specialize=["n"])
        def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            pass

        def double(x):
            y = torch.empty_like(x)
            double_kernel[(1,)](x, y, x.numel())
            return y
    """), id="autotune-over-jit-with-options"),
    pytest.param(_source("""
        def double_body(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            pass

        double_kernel = triton.autotune(configs=[], key=["n"])(triton.jit(double_body))

        class Doubler:
            kernel = double_kernel

            def __call__(self, x):
                y = torch.empty_like(x)
                self.kernel[(1,)](x, y, x.numel(), BLOCK=128)
                return y

        double = Doubler()
    """), id="jit-called-on-a-function-and-launched-as-an-attribute"),
])
def test_a_launched_triton_kernel_passes_the_static_check(source):
    assert launch_problem(source) == ""


@pytest.mark.parametrize("source, words", [
    pytest.param(_source(KERNEL + """
        def double(x):
            return 2 * x
    """), "double_kernel is decorated with @triton.jit but never launched as double_kernel[grid](...)",
        id="decorated-but-never-launched"),
    pytest.param(_source(KERNEL + """
        def double(x):
            launcher = double_kernel
            return 2 * x
    """), "never launched", id="aliased-but-never-launched"),
    pytest.param(_source("""
        @triton.jit
        def double_kernel(x_ptr, n):
            double_kernel[(1,)](x_ptr, n)

        def double(x):
            return 2 * x
    """), "never launched", id="launched-only-inside-its-own-body"),
    pytest.param(_source("""
        from numba import jit

        @jit
        def double_kernel(x):
            return 2 * x

        def double(x):
            return double_kernel[(1,)](x)
    """, imports="import torch\n"), "no function is decorated with @triton.jit", id="a-jit-that-is-not-tritons"),
    pytest.param(_source("""
        def double(x):
            table = {"k": lambda y: 2 * y}
            return table["k"](x)
    """), "no function is decorated with @triton.jit", id="a-subscripted-call-of-something-else"),
    pytest.param((DATA / "torch_softmax_forged_launches.py").read_text(), "unused_kernel is decorated",
                 id="pytorch-with-an-atexit-hook"),
])
def test_an_answer_that_launches_no_triton_kernel_fails_the_static_check(source, words):
    problem = launch_problem(source)
    assert problem.startswith("no Triton kernel is launched") and words in problem
    assert "was not run" in problem


# ---------------------------------------------------------------- end to end, under the interpreter


def softmax_part():
    data = load_file(BANK_DIR / "kernels" / "123-looped-softmax-vocab.yaml").data
    return next(part for part in data["parts"] if part["id"] == "kernel")


def interpret(part, source, run=plain_runner):
    judge = load_judge(part["judge"], part["id"])
    return judge_kernel(judge=judge, source=source, entrypoint=part["entrypoint"], seed=3, speed=SPEED,
                        on_gpu=False, run=run, limits=GENEROUS)


def test_a_pytorch_answer_that_forges_the_launch_record_is_rejected_and_never_run():
    ran = []

    def run(**kwargs):
        ran.append(kwargs)
        return plain_runner(**kwargs)

    report = interpret(softmax_part(), (DATA / "torch_softmax_forged_launches.py").read_text(), run=run)
    assert report.outcome is KernelOutcome.WRONG_ANSWER and report.launch_check is LaunchCheck.NOT_IN_SOURCE
    assert ran == []
    verdict = feedback.verdict_from_kernel_report(report, SPEED, "Python")
    assert verdict.correct is False and verdict.score == 0
    assert verdict.feedback.startswith("Wrong answer: no Triton kernel is launched: unused_kernel is decorated")


def test_a_correct_triton_answer_is_accepted_and_its_launch_called_advisory():
    part = softmax_part()
    reference = next(item["code"] for item in part["solutions"] if item["verdict"] == "accepted")
    report = interpret(part, reference)
    assert report.outcome is KernelOutcome.SPEED_NOT_SCORED, report.correctness
    assert report.launch_check is LaunchCheck.ADVISORY
    verdict = feedback.verdict_from_kernel_report(report, SPEED, "Python")
    assert verdict.correct and feedback.LAUNCH_ADVISORY in verdict.feedback
    assert verdict.score == 1.0 and verdict.speed.status is SpeedCheckStatus.NOT_MEASURED  # no GPU here
    assert "advisory here, not proven" in verdict.feedback


def test_a_forged_record_behind_a_launch_in_dead_code_is_never_called_proven():
    """The limit of this path, pinned: a source that launches a kernel on a line that
    never runs passes the static check, and the record it forges then goes unnoticed;
    the verdict says the launch is the candidate's own report, not proven."""
    forged = (DATA / "torch_softmax_forged_launches.py").read_text().replace(
        "    return torch.softmax(logits, dim=-1)",
        "    if logits.numel() < 0:\n        unused_kernel[(1,)](logits)\n    return torch.softmax(logits, dim=-1)")
    report = interpret(softmax_part(), forged)
    assert report.launch_check is LaunchCheck.ADVISORY
    verdict = feedback.verdict_from_kernel_report(report, SPEED, "Python")
    assert "advisory here, not proven" in verdict.feedback
