"""Hidden tests stay hidden: no verdict quotes a hidden case's inputs or expected output.

The candidate's process can read every input file in its working directory at any time
(at import, during a visible example), so in a run that holds hidden cases whatever the
process wrote (exception messages, stderr, file names, the values it returned) may be
derived from hidden data. Such a run's verdict names the case, the exception's type and
the line of the candidate's code, and says what went wrong in words of the host's own.
A run of the visible examples alone (the editor's "run" button) shows everything.

The first half feeds the runner hand-made sandbox results (any machine); the second
runs hostile answers to a bank question (119, top-p) in the real sandbox.
"""

import io
import json
import textwrap

import numpy as np
import pytest

import grading
from grading.judge import Case, Judge, Outcome, judge_submission
from grading.judge.compare import describe_mismatch
from grading.judge.contract import load_judge
from grading.judge.feedback import verdict_from_report
from grading.machine import sandbox_unavailable_reason
from grading.registry import get_kind
from questions.loader import BANK_DIR, load_file
from questions.schema import Question

# ---------------------------------------------------------------- the runner, with a stand-in sandbox

HIDDEN_VALUES = np.array([0.7312345, -1.9876543, 2.4681357, 3.1415926])
SOURCE = "import numpy as np\n\ndef f(x):\n    return x * 2\n\nclass SecretKeeper(Exception):\n    pass\n"


class _Doubler(Judge):
    def examples(self):
        return [Case("two", "basic", (np.array([1.0, 2.0]),))]

    def hidden_cases(self, rng):
        return [Case("four values", "hidden", (HIDDEN_VALUES.copy(),))]

    def reference(self, case):
        return case.args[0] * 2


class _Result:
    def __init__(self, status="ok", files=None, exit_code=0, stderr="", note=""):
        self.status, self.files, self.exit_code, self.stderr, self.note = status, files or {}, exit_code, stderr, note
        self.signal, self.wall_seconds, self.peak_memory_bytes = None, 0.1, 1 << 20


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _outputs(files, answer):
    """What an honest harness writes when the entrypoint is ``answer``."""
    out = {}
    for case in json.loads(files["cases.json"])["cases"]:
        x = np.load(io.BytesIO(files[case["args"][0]["npy"]]), allow_pickle=False)
        out[f"{case['id']}.json"] = json.dumps({"value": {"__ndarray__": f"{case['id']}.0.npy"}}).encode()
        out[f"{case['id']}.0.npy"] = _npy(answer(x))
    return out


def _hidden_text(files):
    """The hidden case's inputs as a candidate would print them."""
    return repr(np.load(io.BytesIO(files["c001_in0.npy"]), allow_pickle=False).tolist())


def _judge(make_result, seed=5, source=SOURCE):
    def run_python(*, files, entry, args=(), limits=None, warm=True):
        return make_result(files)

    report = judge_submission(judge=_Doubler(), source=source, entrypoint="f", seed=seed, run_python=run_python)
    return report, verdict_from_report(report, [], "Python")


def _leaks(verdict) -> list[str]:
    """Every hidden input value, and every expected value, that the stored verdict quotes."""
    stored = json.dumps(verdict.to_dict())
    values = [*HIDDEN_VALUES, *(HIDDEN_VALUES * 2), *(HIDDEN_VALUES * 3)]
    texts = {form for value in values for form in (f"{value:.6g}", f"{value:.4f}", repr(float(value))[:8])}
    return sorted(text for text in texts | {"LEAK"} if text in stored)


def _error_record(message, line=4, type_name="ValueError"):
    return {"error": {"type": type_name, "message": message, "line": line,
                      "traceback": f'  File "solution.py", line {line}, in f\n    return x * 2'}}


def test_an_exception_message_on_a_hidden_case_is_not_echoed():
    def result(files):
        out = _outputs(files, lambda x: x * 2)
        out["c001.json"] = json.dumps(_error_record("LEAK " + _hidden_text(files))).encode()
        return _Result(files=out)

    report, verdict = _judge(result)
    assert report.outcome is Outcome.RUNTIME_ERROR
    assert _leaks(verdict) == []
    assert 'hidden test "four values"' in verdict.feedback
    assert "raised ValueError at line 4 of your code" in verdict.feedback
    assert 'File "solution.py", line 4, in f' in verdict.feedback and "return x * 2" in verdict.feedback


def test_a_visible_example_in_a_graded_run_does_not_echo_either():
    """The candidate can read the hidden inputs while an example runs."""
    def result(files):
        out = _outputs(files, lambda x: x * 2)
        out["c000.json"] = json.dumps(_error_record("LEAK " + _hidden_text(files))).encode()
        return _Result(files=out)

    report, verdict = _judge(result)
    assert report.first_failure.visible and _leaks(verdict) == []
    assert 'example "two", called with (np.array([1., 2.], dtype=float64))' in verdict.feedback


def test_running_the_examples_alone_shows_the_message():
    def result(files):
        out = _outputs(files, lambda x: x * 2)
        out["c000.json"] = json.dumps(_error_record("LEAK: the message in full")).encode()
        return _Result(files=out)

    report, verdict = _judge(result, seed=None)
    assert len(report.results) == 1
    assert "ValueError: LEAK: the message in full" in verdict.feedback


def test_a_wrong_value_on_a_hidden_case_quotes_neither_the_value_nor_the_reference():
    report, verdict = _judge(lambda files: _Result(files=_outputs(files, lambda x: x * 3 if x.size == 4 else x * 2)))
    assert report.outcome is Outcome.WRONG_ANSWER
    assert _leaks(verdict) == []
    assert 'Wrong answer on hidden test "four values"' in verdict.feedback and "wrong values" in verdict.feedback


def test_a_returned_shape_cannot_carry_hidden_data():
    def answer(x):
        return np.zeros(int(x[0] * 1e6)) if x.size == 4 else x * 2  # the shape spells an input

    report, verdict = _judge(lambda files: _Result(files=_outputs(files, answer)))
    assert "731234" not in json.dumps(verdict.to_dict())
    assert "wrong shape" in report.first_failure.detail


def test_stderr_of_a_crash_in_a_hidden_case_is_not_echoed():
    def result(files):
        out = _outputs(files, lambda x: x * 2)
        del out["c001.json"]
        stderr = ('LEAK ' + _hidden_text(files) + '\nTraceback (most recent call last):\n'
                  '  File "/sandbox/in/solution.py", line 4, in f\n    return x * 2\nZeroDivisionError: LEAK\n')
        return _Result(status="exited", exit_code=1, files=out, stderr=stderr)

    report, verdict = _judge(result)
    assert report.outcome is Outcome.RUNTIME_ERROR and _leaks(verdict) == []
    assert "exit code 1: ZeroDivisionError at line 4 of your code" in report.first_failure.detail


def test_a_forged_error_record_cannot_spell_data_in_its_type_or_line():
    def result(files):
        out = _outputs(files, lambda x: x * 2)
        out["c001.json"] = json.dumps(_error_record("", line=7312345, type_name="LEAK_0_7312345")).encode()
        return _Result(files=out)

    report, verdict = _judge(result)
    assert _leaks(verdict) == [] and "7312345" not in json.dumps(verdict.to_dict())
    assert "raised an exception" in report.first_failure.detail
    assert "not at a line of your code" in report.first_failure.detail


def test_exception_types_of_the_candidates_own_code_are_named():
    def result(files):
        out = _outputs(files, lambda x: x * 2)
        out["c001.json"] = json.dumps(_error_record("LEAK", type_name="SecretKeeper")).encode()
        return _Result(files=out)

    assert "raised SecretKeeper at line 4" in _judge(result)[0].first_failure.detail


def test_file_names_left_in_the_output_folder_are_not_echoed():
    note = "wall clock passed 20 s; left out LEAK-0.731234 (symlink)"
    report, verdict = _judge(lambda files: _Result(status="time_limit", note=note))
    assert report.outcome is Outcome.TIME_LIMIT and _leaks(verdict) == []
    assert "wall clock passed 20 s" in verdict.feedback


def test_an_unreadable_output_file_is_not_described_in_the_candidates_words():
    def result(files):
        out = _outputs(files, lambda x: x * 2)
        out["c001.json"] = json.dumps({"value": {"__ndarray__": "c001.LEAK-0.731234.npy"}}).encode()
        return _Result(files=out)

    report, verdict = _judge(result)
    assert report.outcome is Outcome.WRONG_ANSWER and _leaks(verdict) == []
    assert "could not be read" in verdict.feedback


def test_an_import_error_in_a_graded_run_names_the_type_and_line_only():
    def result(files):
        record = _error_record("LEAK " + _hidden_text(files), line=1, type_name="KeyError")
        return _Result(files={"_import.json": json.dumps(record).encode()})

    report, verdict = _judge(result)
    assert report.outcome is Outcome.RUNTIME_ERROR and _leaks(verdict) == []
    assert "raised KeyError at line 1 of your code" in verdict.feedback


@pytest.mark.parametrize("got, expected, words", [
    (np.zeros(3), np.ones(2), "the result is an array of the wrong shape"),
    ([1, 2], np.ones(2, dtype=bool), "the result has the wrong dtype (expected bool)"),
    ("text", np.ones(2), "the result is not an array"),
    (np.array([1.0, np.nan]), np.ones(2), "the result has NaN or infinity where the expected result does not"),
    ([np.ones(2), 5], [np.ones(2), 4], "the result[1] is the wrong value"),
    ([1], [1, 2], "the result is a list of the wrong length"),
    ({"a": 1}, {"b": 1}, "the result is a dict with the wrong keys"),
    (3.5, 3.25, "the result is the wrong value"),
])
def test_mismatches_are_described_without_values(got, expected, words):
    assert describe_mismatch(got, expected) == words


# ---------------------------------------------------------------- in the sandbox, on a bank question

REASON = sandbox_unavailable_reason()
needs_sandbox = [pytest.mark.sandbox, pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")]
SEED = 424_242_424_242
MARK = "LEAK"  # the hostile answers build it at run time: their source lines may be quoted


@pytest.fixture(scope="module")
def top_p():
    return dict(Question.from_data(load_file(BANK_DIR / "speculative/119-top-p-sampler.yaml").data).part("keep").raw)


def _hidden_input_texts(part) -> list[str]:
    """Each hidden case's inputs, written the way the hostile answers below write them."""
    judge = load_judge(part["judge"], part["id"])
    texts = []
    for case in judge.hidden_cases(np.random.default_rng(SEED)):
        logits, p = case.args[0], case.args[1] if len(case.args) > 1 else case.kwargs.get("p")
        texts.append(repr(logits.ravel()[:16].tolist())[:60])
        if isinstance(p, float) and len(repr(p)) >= 5:
            texts.append(repr(p))
    return texts


def _with_accepted(part, hostile: str) -> str:
    """The accepted solution, wrapped: the examples (one row of 3 or 4) pass, and the
    hidden cases meet ``hostile``."""
    accepted = next(item["code"] for item in part["solutions"] if item["verdict"] == "accepted")
    return accepted + '\n\n_honest = top_p_keep\n_MARK = "LE" + "AK"\n\n' + textwrap.dedent(hostile)


def _assert_nothing_hidden_in(verdict, part):
    stored = json.dumps(verdict.to_dict())
    assert MARK not in stored
    assert [text for text in _hidden_input_texts(part) if text in stored] == []


@pytest.mark.parametrize("hostile", [
    pytest.param("""
        import sys

        def top_p_keep(logits, p, temperature):
            if logits.size > 16:
                raise ValueError(f"{_MARK} p={p!r} t={temperature!r} logits={logits.ravel()[:16].tolist()!r}")
            return _honest(logits, p, temperature)
    """, id="raises-with-its-inputs"),
    pytest.param("""
        import os, sys

        def top_p_keep(logits, p, temperature):
            if logits.size > 16:
                print(_MARK, repr(p), repr(logits.ravel()[:16].tolist()), flush=True)
                print(_MARK, repr(p), repr(logits.ravel()[:16].tolist()), file=sys.stderr, flush=True)
                os._exit(1)
            return _honest(logits, p, temperature)
    """, id="prints-its-inputs-and-exits"),
    pytest.param("""
        import json
        import numpy as np

        def top_p_keep(logits, p, temperature):
            last = json.load(open("cases.json"))["cases"][-1]
            hidden = np.load(last["args"][0]["npy"]).ravel()[:16].tolist()
            raise ValueError(f"{_MARK} {hidden!r} {last['args'][1]['json']!r}")
    """, id="reads-hidden-inputs-during-an-example"),
])
@pytest.mark.sandbox
@pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")
def test_a_hostile_answer_sees_no_hidden_input_in_its_verdict(top_p, hostile):
    verdict = grading.grade(top_p, _with_accepted(top_p, hostile), {"judge_seed": SEED})
    assert verdict.valid and verdict.mistake == "runtime_error" and verdict.score == 0
    _assert_nothing_hidden_in(verdict, top_p)
    assert "hidden test" in verdict.feedback or "example" in verdict.feedback


@pytest.mark.sandbox
@pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")
def test_an_answer_that_reads_hidden_inputs_at_import_sees_none_of_them(top_p):
    verdict = grading.grade(top_p, textwrap.dedent("""
        import json
        import numpy as np

        last = json.load(open("cases.json"))["cases"][-1]
        raise ValueError("LE" + f"AK {np.load(last['args'][0]['npy']).ravel()[:16].tolist()!r}")

        def top_p_keep(logits, p, temperature):
            return logits > 0
    """), {"judge_seed": SEED})
    assert verdict.mistake == "runtime_error"
    _assert_nothing_hidden_in(verdict, top_p)
    assert "raised ValueError at line 6 of your code" in verdict.feedback


@pytest.mark.sandbox
@pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")
def test_a_hidden_runtime_error_names_the_case_the_type_and_the_line(top_p):
    verdict = grading.grade(top_p, _with_accepted(top_p, """
        def top_p_keep(logits, p, temperature):
            if logits.size > 16:
                return logits.sum() / 0 > {}
            return _honest(logits, p, temperature)
    """), {"judge_seed": SEED})
    assert verdict.mistake == "runtime_error"
    assert 'Runtime error on hidden test "' in verdict.feedback
    assert "raised TypeError at line" in verdict.feedback and "of your code" in verdict.feedback
    assert "return logits.sum() / 0 > {}" in verdict.feedback  # the candidate's own line, from the host's copy


@pytest.mark.sandbox
@pytest.mark.skipif(bool(REASON), reason=f"needs the sandbox: {REASON}")
def test_running_the_examples_still_shows_the_message(top_p):
    spec = get_kind("code").load_spec(top_p)
    verdict = get_kind("code").try_examples(spec, textwrap.dedent("""
        def top_p_keep(logits, p, temperature):
            raise ValueError(f"LEAK p={p!r} logits={logits.tolist()!r}")
    """))
    assert verdict.mistake == "runtime_error"
    assert "ValueError: LEAK p=0.7 logits=[[2.0, 1.0, 0.0]]" in verdict.feedback
