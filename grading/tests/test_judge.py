"""The code judge's trusted side, without the sandbox: comparisons, the files that cross
the boundary, the runner's reading of a run's results, and the verdicts it builds.

The runner is fed hand-made sandbox results (a stand-in for ``run_python`` that runs
nothing), so every hostile output a submission could leave behind is exercised here on
any machine.
"""

import io
import json
import pickle

import numpy as np
import pytest

from grading.judge import Call, Case, Judge, Outcome, Tolerance, compare_values, judge_submission
from grading.judge.cases import MalformedOutput, decode_output, encode_cases
from grading.judge.compare import compare_call_results
from grading.judge.contract import JudgeNotFound, judge_path, load_judge
from grading.judge.feedback import GroupSpec, tally_groups, verdict_from_report
from grading.judge.runner import CaseResult, JudgeReport
from grading.verdict import Verdict


def _npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


# ---------------------------------------------------------------- comparisons


def test_floats_within_tolerance_match_and_beyond_it_do_not():
    expected = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    assert compare_values(expected * (1 + 1e-6), expected) is None
    problem = compare_values(expected + np.float32(0.01), expected)
    assert problem and "max error" in problem


def test_nan_and_infinity_must_sit_where_the_reference_has_them():
    expected = np.array([1.0, -np.inf, np.nan])
    assert compare_values(np.array([1.0, -np.inf, np.nan]), expected) is None
    assert "nan" in compare_values(np.array([np.nan, -np.inf, np.nan]), expected)
    assert compare_values(np.array([1.0, np.inf, np.nan]), expected)


def test_the_norm_check_stops_all_zeros_under_a_loose_elementwise_tolerance():
    loose = Tolerance(rtol=0.5, atol=1.0, norm_rtol=0.01)
    expected = np.linspace(0.1, 1.0, 10)
    assert compare_values(expected, expected, loose) is None
    assert "all zeros" in compare_values(np.zeros(10), expected, loose)


def test_shapes_dtypes_and_containers_are_compared():
    assert "shape" in compare_values(np.zeros((2, 3)), np.zeros((3, 2)))
    assert "bool" in compare_values(np.zeros(3, dtype=np.int8), np.zeros(3, dtype=bool))
    assert "integer" in compare_values(np.zeros(3), np.zeros(3, dtype=np.int64))
    assert compare_values([np.ones(2), "x"], [np.ones(2), "x"]) is None
    assert compare_values(["x"], ["y"])
    assert compare_values({"a": 1}, {"a": 1}) is None
    assert compare_values(True, 1)  # a bool is not the int 1
    assert compare_values(2, 2.0) is None  # an int against a float reference is a number
    assert compare_values(2.0, 2) is not None  # a float where an int is expected is not


def test_call_results_compare_numbers_as_numbers_and_name_the_call_not_its_arguments():
    calls = (Call("admit", ("secret-id", 500, 1.0)), Call("complete", ("secret-id", 3, 2.0)))
    assert compare_call_results(calls, ["admit", 30.0], ["admit", 30]) is None
    problem = compare_call_results(calls, ["wait", 30], ["admit", 30])
    assert "call 1 of 2 (.admit)" in problem and "secret-id" not in problem
    assert "recorded 1 results" in compare_call_results(calls, ["admit"], ["admit", 30])


# ---------------------------------------------------------------- files across the boundary


def test_inputs_go_in_as_npy_without_pickle_and_json():
    case = Case("c", "g", (np.arange(3), 0.5, "text"), kwargs={"k": [1, 2]})
    files = encode_cases([case], "entry")
    manifest = json.loads(files["cases.json"])
    assert manifest["entrypoint"] == "entry"
    entry = manifest["cases"][0]
    assert entry["args"][1:] == [{"json": 0.5}, {"json": "text"}] and entry["kwargs"] == {"k": {"json": [1, 2]}}
    array = np.load(io.BytesIO(files[entry["args"][0]["npy"]]), allow_pickle=False)
    assert array.tolist() == [0, 1, 2]


def test_an_input_that_is_neither_array_nor_json_is_a_judge_bug():
    with pytest.raises(TypeError):
        encode_cases([Case("c", "g", (object(),))], "entry")
    with pytest.raises(TypeError):
        encode_cases([Case("c", "g", (np.array([object()], dtype=object),))], "entry")


def test_outputs_come_back_as_data():
    files = {"c000.json": json.dumps({"value": [{"__ndarray__": "c000.0.npy"}, 3, "s"]}).encode(),
             "c000.0.npy": _npy(np.eye(2))}
    outcome = decode_output("c000", files)
    assert outcome.present and outcome.value[0].tolist() == [[1, 0], [0, 1]] and outcome.value[1:] == [3, "s"]
    assert not decode_output("c001", files).present


@pytest.mark.parametrize("files, reason", [
    ({"c000.json": b"{not json"}, "not JSON"),
    ({"c000.json": b'{"value": 1, "extra": 2}'}, "not what the harness writes"),
    ({"c000.json": b'{"value": {"__ndarray__": "c000.0.npy"}}'}, "missing"),
    ({"c000.json": b'{"value": {"__ndarray__": "../../etc/passwd"}}'}, "would not write"),
    ({"c000.json": b'{"value": {"__ndarray__": "c001.0.npy"}}', "c001.0.npy": _npy(np.ones(1))}, "would not write"),
    ({"c000.json": b'{"value": {"__ndarray__": "c000.0.npy"}}',
      "c000.0.npy": _npy(np.array([object()], dtype=object), allow_pickle=True)}, "not a plain .npy"),
    ({"c000.json": b'{"value": {"__ndarray__": "c000.0.npy"}}',
      "c000.0.npy": pickle.dumps([1, 2])}, "not a plain .npy"),
    ({"c000.json": b'{"error": "boom"}'}, "error record"),
    ({"c000.json": b" " * (5 * 1024 * 1024)}, "more than the judge reads"),
])
def test_malformed_or_pickled_outputs_are_refused(files, reason):
    with pytest.raises(MalformedOutput, match=reason):
        decode_output("c000", files)


# ---------------------------------------------------------------- the runner, with a stand-in sandbox


class _Doubler(Judge):
    def examples(self):
        return [Case("two", "basic", (np.array([1.0, 2.0]),))]

    def hidden_cases(self, rng):
        return [Case("random", "hidden", (rng.normal(size=4),))]

    def reference(self, case):
        return case.args[0] * 2


class _Result:
    def __init__(self, status="ok", files=None, exit_code=0, stderr="", note=""):
        self.status, self.files, self.exit_code, self.stderr, self.note = status, files or {}, exit_code, stderr, note
        self.signal, self.wall_seconds, self.peak_memory_bytes = None, 0.1, 1 << 20


class _FakeSandbox:
    """Returns a prepared result and records what it was asked to run (it runs nothing)."""

    def __init__(self, make_result):
        self.make_result = make_result
        self.calls = []

    def __call__(self, *, files, entry, args=(), limits=None, warm=True):
        self.calls.append({"files": files, "entry": entry, "args": args})
        return self.make_result(files)


def _doubled_outputs(files, scale=2.0):
    manifest = json.loads(files["cases.json"])
    out = {}
    for case in manifest["cases"]:
        value = np.load(io.BytesIO(files[case["args"][0]["npy"]]), allow_pickle=False) * scale
        out[f"{case['id']}.json"] = json.dumps({"value": {"__ndarray__": f"{case['id']}.0.npy"}}).encode()
        out[f"{case['id']}.0.npy"] = _npy(value)
    return out


def _judge(make_result, seed=5):
    sandbox = _FakeSandbox(make_result)
    report = judge_submission(judge=_Doubler(), source="def f(x): ...", entrypoint="f", seed=seed, run_python=sandbox)
    return report, sandbox


def test_only_the_harness_the_solution_and_the_inputs_enter_the_sandbox():
    report, sandbox = _judge(lambda files: _Result(files=_doubled_outputs(files)))
    assert report.outcome is Outcome.ACCEPTED and len(report.results) == 2
    sent = sandbox.calls[0]
    assert sent["entry"] == "harness.py" and sent["args"] == ("/sandbox/out",)
    assert set(sent["files"]) == {"harness.py", "solution.py", "cases.json", "c000_in0.npy", "c001_in0.npy"}
    assert b"reference" not in sent["files"]["cases.json"]


def test_hidden_inputs_follow_the_seed():
    first = _judge(lambda files: _Result(files=_doubled_outputs(files)), seed=1)[1].calls[0]["files"]
    again = _judge(lambda files: _Result(files=_doubled_outputs(files)), seed=1)[1].calls[0]["files"]
    other = _judge(lambda files: _Result(files=_doubled_outputs(files)), seed=2)[1].calls[0]["files"]
    assert first["c001_in0.npy"] == again["c001_in0.npy"] != other["c001_in0.npy"]


def test_a_wrong_value_is_a_wrong_answer_on_the_first_failing_case():
    report, _ = _judge(lambda files: _Result(files=_doubled_outputs(files, scale=3.0)))
    assert report.outcome is Outcome.WRONG_ANSWER
    assert report.first_failure.case.name == "two" and report.first_failure.visible


@pytest.mark.parametrize("status, outcome", [
    ("time_limit", Outcome.TIME_LIMIT), ("memory_limit", Outcome.MEMORY_LIMIT),
    ("output_limit", Outcome.OUTPUT_LIMIT), ("rejected", Outcome.REJECTED), ("killed", Outcome.RUNTIME_ERROR),
])
def test_a_run_stopped_by_the_sandbox_is_judged_as_a_whole(status, outcome):
    # Even outputs left behind before the limit hit do not count.
    report, _ = _judge(lambda files: _Result(status=status, files=_doubled_outputs(files), note="limit"))
    assert report.outcome is outcome and report.results == ()


def test_an_exit_with_status_zero_before_any_output_is_a_runtime_error():
    report, _ = _judge(lambda files: _Result(status="ok", files={}))
    assert report.outcome is Outcome.RUNTIME_ERROR
    assert "exit code 0" in report.first_failure.detail


def test_a_crash_shows_only_the_candidates_frames():
    stderr = ('Traceback (most recent call last):\n  File "/sandbox/in/harness.py", line 40, in main\n'
              '    value = _run_case(entrypoint, case)\n  File "/sandbox/in/solution.py", line 3, in f\n'
              '    return 1 / 0\nZeroDivisionError: division by zero\n')
    # The examples alone: a run with hidden cases quotes no stderr (test_judge_hidden.py).
    report, _ = _judge(lambda files: _Result(status="exited", exit_code=1, stderr=stderr), seed=None)
    detail = report.first_failure.detail
    assert 'File "solution.py", line 3, in f' in detail and "1 / 0" in detail
    assert "ZeroDivisionError" in detail and "harness" not in detail


def test_an_import_failure_reported_by_the_harness_is_a_runtime_error():
    record = {"error": {"type": "NameError", "message": "name 'x' is not defined",
                        "traceback": '  File "solution.py", line 2'}}
    report, _ = _judge(lambda files: _Result(files={"_import.json": json.dumps(record).encode()}))
    assert report.outcome is Outcome.RUNTIME_ERROR and "NameError" in report.detail and report.results == ()


def test_a_check_that_chokes_on_odd_output_makes_a_wrong_answer_not_a_crash():
    class Fussy(_Doubler):
        def check(self, case, got, expected):
            return None if got.sum() == expected.sum() else "differs"

    files = {"c000.json": b'{"value": "not an array"}', "c001.json": b'{"value": null}'}
    report = judge_submission(judge=Fussy(), source="", entrypoint="f", seed=1,
                              run_python=_FakeSandbox(lambda _: _Result(files=files)))
    assert report.outcome is Outcome.WRONG_ANSWER
    assert "not what was asked for" in report.first_failure.detail


# ---------------------------------------------------------------- verdicts


def _results(*spec):
    return tuple(CaseResult(Case(name, group, (np.zeros(2),)), visible, outcome, detail)
                 for name, group, visible, outcome, detail in spec)


def test_groups_score_all_or_nothing_each():
    groups = [GroupSpec("basic", 2), GroupSpec("edge", 1)]
    results = _results(("a", "basic", True, Outcome.ACCEPTED, ""), ("b", "basic", False, Outcome.ACCEPTED, ""),
                       ("c", "edge", False, Outcome.WRONG_ANSWER, "differs"))
    tally = tally_groups(results, groups)
    assert tally.score == pytest.approx(2 / 3) and tally.passed == ("basic",) and tally.failed == ("edge",)
    assert tally_groups(results, []).score == 0.0  # no groups: all or nothing


def test_a_wrong_answer_verdict_names_the_case_and_shows_hidden_inputs_only_as_shapes():
    results = _results(("shown", "basic", True, Outcome.ACCEPTED, ""),
                       ("tied logits at the cutoff", "edge", False, Outcome.WRONG_ANSWER, "the result differs"))
    report = JudgeReport(Outcome.WRONG_ANSWER, results)
    verdict = verdict_from_report(report, [GroupSpec("basic", 1), GroupSpec("edge", 1)], "Python, 3 lines")
    assert verdict.valid and verdict.correct is False and verdict.score == 0.5 and verdict.mistake == "wrong_answer"
    assert 'hidden test "tied logits at the cutoff" (group edge; inputs float64[2])' in verdict.feedback
    assert "np.array(" not in verdict.feedback
    assert Verdict.from_dict(json.loads(json.dumps(verdict.to_dict()))) == verdict


def test_a_visible_failure_shows_its_inputs():
    results = _results(("shown", "basic", True, Outcome.RUNTIME_ERROR, "ValueError: bad"))
    verdict = verdict_from_report(JudgeReport(Outcome.RUNTIME_ERROR, results), [], "")
    assert 'Runtime error on example "shown", called with (np.array([0., 0.], dtype=float64))' in verdict.feedback


def test_a_whole_run_failure_scores_zero_and_says_why():
    verdict = verdict_from_report(JudgeReport(Outcome.TIME_LIMIT, (), "wall clock limit"), [GroupSpec("g", 1)],
                                  "", "10 s CPU")
    assert verdict.score == 0 and verdict.mistake == "time_limit" and "Time limit exceeded" in verdict.feedback


# ---------------------------------------------------------------- finding judge files


@pytest.mark.parametrize("relative", ["../../grading/verdict.judge.py", "/etc/passwd.judge.py",
                                      "speculative/119-top-p-sampler.yaml", "speculative/missing.judge.py"])
def test_judge_paths_stay_inside_the_bank_and_end_in_judge_py(relative):
    with pytest.raises(JudgeNotFound):
        judge_path(relative)


def test_a_judge_file_must_have_a_judge_for_the_part():
    assert isinstance(load_judge("speculative/119-top-p-sampler.judge.py", "keep"), Judge)
    with pytest.raises(JudgeNotFound, match="no Judge for part 'other'"):
        load_judge("speculative/119-top-p-sampler.judge.py", "other")
