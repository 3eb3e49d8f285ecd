"""Issue 18, a grader that cannot be fooled by a near miss: the wrong solutions an expert
review wrote are rejected on every seed, and the right ones (including the engines' own
policies) accepted.

The judges' checking runs in process, on the authors' solutions from each question's
file (trusted code, exec'd here) over 300 seeds; the bank's validation runs the same
solutions in the sandbox on fixed seeds (test_judge_bank.py). The harness's per-call
results run the real harness in a plain child process, and once in the sandbox.
"""

import numpy as np
import pytest

import grading
from gpu_runner.process import plain_runner
from grading.judge import Case, Judge, Outcome, judge_submission
from grading.judge.contract import load_judge
from grading.judge.feedback import verdict_from_report
from grading.kinds.kernel import judging
from grading.machine import sandbox_unavailable_reason
from grading.management.commands.grade import verdict_word
from grading.verdict import Verdict
from questions.loader import BANK_DIR, load_file

SEEDS = range(300)


def _part(path: str, part_id: str) -> dict:
    data = load_file(BANK_DIR / path).data
    return next(part for part in data["parts"] if part["id"] == part_id)


def _solution(part: dict, why_starts: str):
    """The entrypoint defined by the part's solution whose ``why`` starts so."""
    item = next(item for item in part["solutions"] if item.get("why", "").startswith(why_starts))
    namespace = {}
    exec(compile(item["code"], f"<{part['id']} solution>", "exec"), namespace)  # noqa: S102 - the author's code
    return namespace[part["entrypoint"]]


def _play(entrypoint, case: Case):
    """What the harness would return for ``case``, in process."""
    if case.calls is None:
        return entrypoint(*case.args, **case.kwargs)
    instance = entrypoint(*case.args, **case.kwargs)
    return [getattr(instance, call.method)(*call.args, **call.kwargs) for call in case.calls]


def _plain(value):
    """Torch tensors as NumPy, tuples as lists: what the harness writes back."""
    if hasattr(value, "detach"):
        return value.detach().numpy()
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def _failing(judge: Judge, entrypoint, cases) -> list[Case]:
    return [case for case in cases
            if judge.check(case, _plain(_play(entrypoint, case)), judge.reference(case)) is not None]


# ---------------------------------------------------------------- 124: whole-token refills


def test_a_bucket_that_truncates_refills_to_whole_tokens_fails_every_group_on_every_seed():
    part = _part("scheduling/124-token-bucket-admission.yaml", "bucket")
    judge = load_judge(part["judge"], "bucket")
    truncating = _solution(part, "Truncating each refill")
    right = _solution(part, "Refill, then decide")
    groups = {group["id"] for group in part["groups"]}
    for seed in SEEDS:
        cases = judge.hidden_cases(np.random.default_rng(seed))
        assert _failing(judge, right, cases) == [], seed
        assert {case.group for case in _failing(judge, truncating, cases)} == groups, seed


def test_the_slow_bucket_polled_often_never_refills_when_truncated():
    part = _part("scheduling/124-token-bucket-admission.yaml", "bucket")
    judge = load_judge(part["judge"], "bucket")
    truncating = _solution(part, "Truncating each refill")
    for seed in range(20):
        slow = judge.hidden_cases(np.random.default_rng(seed))[0]
        assert slow.name.startswith("a slow refill") and slow.args[1] < 4
        levels = [value for call, value in zip(slow.calls, _play(truncating, slow)) if call.method == "available"]
        assert set(levels) == {0.0}
    example = next(case for case in judge.examples() if case.name.startswith("a slow refill"))
    assert judge.check(example, _play(truncating, example), judge.reference(example)) is not None


# ---------------------------------------------------------------- 121: 16-bit positions, float32 angles


def test_rope_accepts_float32_angles_and_rejects_positions_in_the_activation_dtype_on_every_seed():
    part = _part("attention/121-rope-ragged-batch.yaml", "rope")
    judge = load_judge(part["judge"], "rope")
    engines = _solution(part, "The Hugging Face / vLLM recipe")
    exact = _solution(part, "Positions per row")
    sixteen_bit = _solution(part, "Positions and angles in the activations")
    for seed in SEEDS:
        cases = judge.hidden_cases(np.random.default_rng(seed))
        assert {str(case.args[0].dtype) for case in cases} == {"float32", "float16"}
        far = [case for case in cases if case.group == "far_positions"]
        # Float32 angles matter far out; everywhere else they are checked on fewer seeds.
        assert _failing(judge, engines, cases if seed < 50 else far) == [], seed
        assert {case.name for case in _failing(judge, sixteen_bit, far)} == {
            case.name for case in far if case.args[0].dtype == np.float16}, seed
        if seed < 20:
            assert _failing(judge, exact, cases) == [], seed


def test_rope_asks_for_the_input_dtype_back():
    part = _part("attention/121-rope-ragged-batch.yaml", "rope")
    judge = load_judge(part["judge"], "rope")
    case = next(case for case in judge.hidden_cases(np.random.default_rng(1)) if case.args[0].dtype == np.float16)
    expected = judge.reference(case)
    assert expected.dtype == np.float16
    assert "dtype" in judge.check(case, expected.astype(np.float32), expected)


# ---------------------------------------------------------------- 086: vLLM's holdback


def test_the_detokenizer_accepts_vllms_fixed_holdback_and_rejects_one_more_on_every_seed():
    part = _part("serving/086-streaming-detokenizer.yaml", "stream")
    judge = load_judge(part["judge"], "stream")
    vllm = _solution(part, "vLLM's policy")
    window = _solution(part, "The offset window")
    too_long = _solution(part, "Holding back the longest stop string's full length")
    for seed in SEEDS:
        cases = judge.examples() + judge.hidden_cases(np.random.default_rng(seed))
        assert _failing(judge, vllm, cases) == [], seed
        assert _failing(judge, window, cases) == [], seed
        assert {case.group for case in _failing(judge, too_long, cases)} >= {"stop", "stop_utf8"}, seed


# ---------------------------------------------------------------- 125: averaging fails on the weights first


def test_averaging_the_partials_first_fails_on_unequal_masses_not_on_nan():
    part = _part("attention/125-split-k-decode-merge.yaml", "merge")
    judge = load_judge(part["judge"], "merge")
    for why in ("Averaging the partial outputs ignores", "Averaging the partial outputs, skipping NaN"):
        averaging = _solution(part, why)
        first = _failing(judge, averaging, judge.examples())[0]
        assert first.name == "two splits of unequal mass"
        assert np.isfinite(first.args[1]).all()
        message = judge.check(first, _plain(averaging(*first.args)), judge.reference(first))
        assert "nan" not in message.lower()


# ---------------------------------------------------------------- the harness keeps results call by call


class _Counter(Judge):
    """A class entrypoint whose visible script is add(1), add(2), add(3), total()."""

    def examples(self):
        from grading.judge import Call

        return [Case("adds up", "basic", calls=(Call("add", (1,)), Call("add", (2,)), Call("add", (3,)),
                                                Call("total")))]

    def reference(self, case):
        return [1, 3, 6, 6]


WRONG_THEN_RAISES = """
class Counter:
    def __init__(self):
        self.sum = 0
    def add(self, value):
        if value == 3:
            raise KeyError("three")
        self.sum += 2 * value
        return self.sum
    def total(self):
        return self.sum
"""


def _judge_counter(source, seed=None):
    return judge_submission(judge=_Counter(), source=source, entrypoint="Counter", seed=seed,
                            run_python=plain_runner)


def test_a_wrong_call_before_the_one_that_raises_is_what_the_verdict_names():
    report = _judge_counter(WRONG_THEN_RAISES)
    failure = report.first_failure
    assert report.outcome is Outcome.WRONG_ANSWER and failure.outcome is Outcome.WRONG_ANSWER
    assert failure.detail.startswith("call 1 of 4 (.add) returned 2, expected 1")
    assert "call 3 raised" in failure.detail
    feedback = verdict_from_report(report, [], "Python").feedback
    assert feedback.startswith("Wrong answer on example") and "KeyError" not in feedback


def test_when_every_call_before_it_was_right_the_exception_is_named_with_its_call():
    report = _judge_counter(WRONG_THEN_RAISES.replace("2 * value", "value"))
    failure = report.first_failure
    assert failure.outcome is Outcome.RUNTIME_ERROR
    assert failure.detail.startswith("call 3 of 4 (.add): KeyError: 'three'")


def test_a_sealed_run_names_the_wrong_call_without_its_values():
    class Sealed(_Counter):
        def hidden_cases(self, rng):
            return self.examples()

    report = judge_submission(judge=Sealed(), source=WRONG_THEN_RAISES, entrypoint="Counter", seed=1,
                              run_python=plain_runner)
    detail = report.first_failure.detail
    assert detail == "call 1 of 4 (.add) returned the wrong value (and call 3 raised)"


SANDBOX = sandbox_unavailable_reason()


@pytest.mark.sandbox
@pytest.mark.skipif(bool(SANDBOX), reason=f"needs the sandbox: {SANDBOX}")
def test_in_the_sandbox_a_bucket_that_raises_later_is_told_its_first_wrong_call():
    part = _part("scheduling/124-token-bucket-admission.yaml", "bucket")
    right = next(item["code"] for item in part["solutions"] if item["verdict"] == "accepted")
    # Wrong from the first fractional refill on (whole tokens), and raising on the
    # repeated completion that ends every random script.
    source = right.replace("self.rate * (now - self.last)", "int(self.rate * (now - self.last))").replace(
        "reserved = self.reserved.pop(request_id, None)", "reserved = self.reserved.pop(request_id)")
    judge = load_judge(part["judge"], "bucket")
    report = judge_submission(judge=judge, source=source, entrypoint="TokenBucket", seed=124)
    scripts = [result for result in report.results if "script" in result.case.name]
    assert scripts and all(result.outcome is Outcome.WRONG_ANSWER for result in scripts), report.results
    assert all(result.detail.endswith("raised)") for result in scripts if result.case.group == "refund")
    verdict = grading.grade(part, source, {"judge_seed": 124})
    assert verdict.mistake == "wrong_answer"
    assert verdict.feedback.startswith('Wrong answer on example "a slow refill polled often'), verdict.feedback
    assert "call 2 of 6 (.available) returned the wrong value" in verdict.feedback


# ---------------------------------------------------------------- kernels: a tile no GPU can hold


GPUS = {"h100_sxm": {"registers_per_sm": 65536}, "mi300x": {"registers_per_sm": 131072}}


def test_the_tile_limit_is_half_the_largest_register_file_in_the_catalogue():
    assert judging.tile_limit(GPUS) == 65536
    assert judging.tile_limit({"h100_sxm": GPUS["h100_sxm"]}) == 32768
    assert judging.tile_limit({}) == judging.DEFAULT_TILE_LIMIT == 65536


def test_a_tile_record_over_the_limit_rejects_and_a_missing_or_odd_one_does_not():
    def files(value):
        import json

        return {"_tiles.json": json.dumps({"value": value}).encode()}

    assert "131,072 elements" in judging.tile_problem(files({"largest": 131072}), 65536)
    assert judging.tile_problem(files({"largest": 65536}), 65536) == ""
    assert judging.tile_problem(files({"largest": True}), 1) == ""
    assert judging.tile_problem(files("lots"), 1) == ""
    assert judging.tile_problem({}, 1) == ""


def test_the_tutorial_softmax_that_loads_a_whole_vocabulary_row_is_rejected_under_the_interpreter():
    from grading.tests.test_kernel_launch_check import interpret, softmax_part

    part = softmax_part()
    tutorial = next(item["code"] for item in part["solutions"]
                    if item.get("why", "").startswith("The tutorial kernel as written"))
    report = interpret(part, tutorial)
    assert report.outcome is judging.KernelOutcome.WRONG_ANSWER
    assert all(result.passed for result in report.correctness.results)  # right values, impossible tile
    assert "tile of 131,072 elements" in report.correctness.detail


# ---------------------------------------------------------------- grade --json: one vocabulary


@pytest.mark.parametrize(("verdict", "word"), [
    (Verdict(valid=True, correct=True, score=1.0, mistake="accepted"), "correct"),
    (Verdict(valid=True, correct=True, score=1.0, mistake="speed_not_scored"), "correct"),
    (Verdict(valid=True, correct=False, score=0.0, mistake="wrong_answer"), "wrong"),
    (Verdict(valid=True, correct=False, score=0.0), "wrong"),
    (Verdict.invalid("empty"), "invalid"),
    (Verdict(valid=True, correct=None, score=0.0), "ungraded"),
])
def test_grade_names_every_kinds_verdict_in_one_vocabulary(verdict, word):
    assert verdict_word(verdict) == word
