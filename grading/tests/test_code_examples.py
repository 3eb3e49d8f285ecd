"""Program parts' visible examples: what the answer form is given to show before a run
(``display_context``), and a run's per-example results, kept as data in the verdict."""

import json

import numpy as np
import pytest

from grading.judge import Case
from grading.judge.contract import Judge, load_judge
from grading.judge.runner import RunWords
from grading.kinds.code import CodeKind
from grading.kinds.kernel import KernelKind
from grading.kinds.programs import EXAMPLE_TEXT_CHARS, judge_example_rows, shorten
from grading.sandbox import sandbox_available
from grading.verdict import ExampleResult, Verdict
from questions.loader import load_file

AVAILABLE, WHY_NOT = sandbox_available()
TOP_P = "questions/bank/speculative/119-top-p-sampler.yaml"
SOFTMAX_KERNEL = "questions/bank/kernels/123-looped-softmax-vocab.yaml"


def bank_part(path: str) -> dict:
    return load_file(path).data["parts"][0]


def test_a_code_part_gives_its_form_each_examples_call_and_result():
    examples = CodeKind().display_context(bank_part(TOP_P), {})["examples"]
    assert [example["name"] for example in examples] == ["three distinct logits", "a tie at the cutoff",
                                                        "temperature zero"]
    first = examples[0]
    assert first["inputs"] == ("top_p_keep(np.array([[2.0, 1.0, 0.0]], dtype=np.float32), p=0.7, "
                               "temperature=1.0)")
    assert first["expected"] == "array([[ True,  True, False]])  # probabilities 0.665, 0.245, 0.090"


def test_the_examples_shown_hold_nothing_of_the_hidden_cases():
    raw = bank_part(TOP_P)
    shown = json.dumps(CodeKind().display_context(raw, {"judge_seed": 12345}))
    hidden = load_judge(raw["judge"], raw["id"]).hidden_cases(np.random.default_rng(12345))
    assert hidden and not any(case.name in shown for case in hidden)
    assert "12345" not in shown


def test_long_example_text_is_cut_on_one_line():
    assert shorten("a" * 500) == "a" * (EXAMPLE_TEXT_CHARS - 1) + "…"
    assert len(shorten("x" * 1000)) == EXAMPLE_TEXT_CHARS
    assert shorten("array([[1,  2],\n       [3,  4]])") == "array([[1,  2], [3,  4]])"
    raw = {**bank_part(TOP_P)}
    raw["examples"] = [{**raw["examples"][0], "result": "[" + ", ".join(["True"] * 200) + "]"}] + raw["examples"][1:]
    expected = CodeKind().display_context(raw, {})["examples"][0]["expected"]
    assert len(expected) <= EXAMPLE_TEXT_CHARS and expected.endswith("True,…")


def test_a_code_part_without_examples_shows_none():
    assert CodeKind().display_context({"id": "impl", "kind": "code"}, {}) == {"examples": []}


def test_bank_kernel_parts_have_no_visible_examples():
    assert KernelKind().display_context(bank_part(SOFTMAX_KERNEL), {}) == {"examples": []}


class ScaleJudge(Judge):
    """A judge with one visible example (as a kernel judge could define) and hidden cases."""

    def examples(self):
        return [Case("a row of four", "basic", (np.arange(4, dtype=np.float16).reshape(1, 4), 2.0))]

    def hidden_cases(self, rng):
        return [Case("secret wide row", "basic", (rng.normal(size=(1, 9000)).astype(np.float16), 3.0))]

    def reference(self, case):
        x, factor = case.args
        return (x * factor).astype(np.float16)


def test_examples_from_a_judge_show_shapes_a_preview_and_the_reference():
    (row,) = judge_example_rows(ScaleJudge())
    assert row["name"] == "a row of four"
    assert row["shapes"] == "float16[1, 4], float"
    assert "np.array([[0., 1., 2., 3.]], dtype=float16)" in row["inputs"] and "2.0" in row["inputs"]
    assert row["expected"] == "array([[0., 2., 4., 6.]], dtype=float16)"
    assert "secret" not in json.dumps(row)


def test_per_example_results_survive_the_database_round_trip():
    verdict = Verdict(valid=True, correct=None, score=0.0, feedback="wrong answer: a", examples=(
        ExampleResult(name="a", outcome="wrong_answer", got="array([1])", expected="array([2])",
                      detail="the result differs"),
        ExampleResult(name="b", outcome="passed")))
    stored = json.loads(json.dumps(verdict.to_dict()))
    assert stored["examples"][0] == {"name": "a", "outcome": "wrong_answer", "got": "array([1])",
                                     "expected": "array([2])", "detail": "the result differs"}
    assert Verdict.from_dict(stored) == verdict
    assert Verdict.from_dict({"valid": True, "correct": None, "score": 0}).examples == ()  # older rows
    with pytest.raises(ValueError):
        Verdict.from_dict({**stored, "examples": [{"name": "a"}]})


@pytest.mark.sandbox
@pytest.mark.skipif(not AVAILABLE, reason=f"sandbox: {WHY_NOT}")
def test_a_run_keeps_what_each_example_returned_beside_what_was_expected():
    raw = bank_part(TOP_P)
    kind = CodeKind()
    spec = kind.load_spec(raw)
    # Keeps only the single most probable token (by first position, so one of the ties).
    one_token = ("import numpy as np\n\n\ndef top_p_keep(logits, p, temperature):\n"
                 "    keep = np.zeros(logits.shape, dtype=bool)\n"
                 "    keep[np.arange(len(logits)), logits.argmax(axis=-1)] = True\n    return keep\n")
    verdict = kind.try_examples(spec, one_token)
    results = {result.name: result for result in verdict.examples}
    assert list(results) == ["three distinct logits", "a tie at the cutoff", "temperature zero"]
    tie = results["a tie at the cutoff"]
    assert tie.outcome == "wrong_answer"
    assert tie.got == "array([[ True, False, False, False]])"
    assert tie.expected.startswith("array([[ True,  True,  True, False]])")
    assert tie.detail
    assert results["three distinct logits"].outcome == "wrong_answer"
    crash = kind.try_examples(spec, "def top_p_keep(logits, p, temperature):\n    raise KeyError('nope')\n")
    assert {result.outcome for result in crash.examples} == {"runtime_error"}
    assert all("KeyError" in result.detail and result.got == "" for result in crash.examples)


def test_only_a_run_of_the_visible_examples_alone_quotes_what_they_returned():
    # A run that also holds hidden cases is sealed: what the code returned, even for a
    # visible example, may spell hidden inputs it read from its working directory.
    value = np.array([[True, False]])
    assert RunWords("", sealed=False).returned(value) == "array([[ True, False]])"
    assert RunWords("", sealed=True).returned(value) == ""
