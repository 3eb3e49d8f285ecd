"""The ``code`` answer kind without the sandbox: its spec, ``interpret`` (which must never
run anything), the seed, what ``grade`` does when no sandbox is installed, and the
trusted-side validation of every code part in the bank."""

import copy

import pytest

import grading
from grading.judge.contract import JudgeNotFound
from grading.kinds import code as code_kind
from grading.kinds.base import SpecError
from grading.kinds.code import CodeKind, read_source, submission_seed, validate_code_part
from grading.machine import local_effects
from grading.registry import get_kind
from questions.loader import bank_files, load_file
from questions.schema import Question

KIND = CodeKind()


def _bank_code_parts():
    parts = []
    for path in bank_files():
        data = load_file(path).data
        if not isinstance(data, dict):
            continue
        for part in Question.from_data(data).parts:
            if part.kind == "code":
                parts.append(pytest.param(dict(part.raw), id=f"{path.stem}:{part.id}"))
    return parts


BANK_CODE_PARTS = _bank_code_parts()


@pytest.fixture
def top_p():
    data = load_file(next(path for path in bank_files() if path.name == "119-top-p-sampler.yaml")).data
    return copy.deepcopy(Question.from_data(data).part("keep").raw)


def test_code_is_a_registered_kind():
    assert isinstance(get_kind("code"), CodeKind)
    assert "code" in grading.kinds()


def test_the_bank_has_code_parts():
    assert len(BANK_CODE_PARTS) >= 10


# ---------------------------------------------------------------- the spec


def test_a_real_part_loads(top_p):
    spec = KIND.load_spec(top_p)
    assert spec.entrypoint == "top_p_keep" and [group.id for group in spec.groups][:2] == ["basic", "ties"]
    assert spec.limits_dict["cpu_seconds"] > 0
    assert KIND.reference_answer(spec, {}).startswith("import numpy")
    assert all(name != "accepted" for _, name in KIND.mistake_answers(spec, {}))


@pytest.mark.parametrize("change, key", [
    (lambda part: part.pop("entrypoint"), "entrypoint"),
    (lambda part: part.update(entrypoint="top-p"), "entrypoint"),
    (lambda part: part.update(judge="../../grading/x.judge.py"), "judge"),
    (lambda part: part.update(starter="def top_p_keep(:\n"), "starter"),
    (lambda part: part.update(examples=[]), "examples"),
    (lambda part: part.update(groups=[{"id": "a", "points": 0}]), "groups[0].points"),
    (lambda part: part.update(limits={"gpu_seconds": 1}), "limits.gpu_seconds"),
    (lambda part: part.update(solutions=[s for s in part["solutions"] if s["verdict"] != "accepted"]), "solutions"),
    (lambda part: part["solutions"][1].update(failing_groups=["nope"]), "solutions[1].failing_groups"),
    (lambda part: part["solutions"][1].update(verdict="almost"), "solutions[1].verdict"),
    (lambda part: part.update(hidden_tests=[]), "hidden_tests"),
])
def test_spec_mistakes_name_their_key(top_p, change, key):
    change(top_p)
    with pytest.raises(SpecError) as caught:
        KIND.load_spec(top_p)
    assert caught.value.key == key


# ---------------------------------------------------------------- interpret: read, never run


def test_interpret_describes_valid_code(top_p):
    verdict = grading.interpret(top_p, "import numpy as np\n\ndef top_p_keep(l, p, t):\n    return l > 0\n", {})
    assert verdict.valid and verdict.correct is None and verdict.score == 0
    assert verdict.interpreted == "Python, 5 lines; defines top_p_keep at line 3"


@pytest.mark.parametrize("text, words", [
    ("", "Write your code"),
    ("def top_p_keep(:\n    pass\n", "Syntax error at line 1, column"),
    ("def helper():\n    def top_p_keep():\n        pass\n", "at the top level"),
    ("if True:\n    def top_p_keep(): pass\n", "at the top level"),
    ("x = 1\x00\n", "null bytes"),
    ("\ud800 = 1\n", "not valid text"),
    ("top_p_keep = " + "(" * 500_000 + ")" * 500_000, "KB"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\ndef top_p_keep(): pass\n", "too many nested parentheses"),
    ("x = " + "-" * 60000 + "1\ndef top_p_keep(): pass\n", "nested too deeply"),  # MemoryError in the parser
    ("x = " + "+".join(["1"] * 30000) + "\ndef top_p_keep(): pass\n", "nested too deeply"),  # RecursionError
])
def test_unreadable_code_is_invalid_and_says_why(top_p, text, words):
    verdict = grading.interpret(top_p, text, {})
    assert not verdict.valid and words in verdict.feedback


@pytest.mark.parametrize("definition", [
    "class top_p_keep:\n    pass\n", "top_p_keep = lambda l, p, t: l > 0\n",
    "from numpy import isfinite as top_p_keep\n", "top_p_keep: object = print\n",
])
def test_the_entrypoint_may_be_any_top_level_binding(top_p, definition):
    assert grading.interpret(top_p, definition, {}).valid


def test_interpret_runs_nothing(top_p, tmp_path):
    marker = tmp_path / "ran"
    text = f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(3)\ndef top_p_keep(l, p, t): pass\n"
    assert grading.interpret(top_p, text, {}).valid
    assert not marker.exists()


def test_interpret_reads_the_largest_answer(top_p):
    # How fast is bench/bench_grading.py's to say: a timed assertion here failed on a
    # busy machine (1.3 s), which says nothing about the code.
    body = "x = 1 + 2 * 3\n" * 4600 + "def top_p_keep(l, p, t):\n    return l\n"
    assert len(body.encode()) < code_kind.MAX_SOURCE_BYTES
    assert grading.interpret(top_p, body, {}).valid


def test_read_source_reports_line_and_column():
    assert "line 2, column 5: '(' was never closed" in read_source("x = 1\ny = (1 +\n", "f").feedback


# ---------------------------------------------------------------- seeds and a missing sandbox


def test_the_hidden_seed_comes_from_the_context_or_is_fresh():
    assert submission_seed({"judge_seed": 42}) == 42
    assert submission_seed({}) != submission_seed({})  # 63 random bits each
    assert submission_seed({"judge_seed": True}) not in (0, 1)  # a bool is not a seed: a fresh one is drawn


def _no_sandbox(reason):
    """Effects of a machine without a sandbox: anything that tries to run code fails the test."""
    return local_effects().replace(sandbox_unavailable=lambda: reason,
                                   run_python=lambda **kwargs: pytest.fail("must not run code"))


def test_without_a_sandbox_code_is_not_graded_and_nothing_runs(top_p):
    verdict = grading.grade(top_p, "def top_p_keep(l, p, t):\n    return l > 0\n", {},
                            effects=_no_sandbox("bubblewrap is not installed"))
    assert not verdict.valid and "bubblewrap is not installed" in verdict.feedback and verdict.score == 0


def test_validation_without_a_sandbox_says_the_solutions_were_not_run(top_p):
    problems = validate_code_part(top_p, {}, effects=_no_sandbox("no sandbox here"))
    assert problems == ["part 'keep': the example solutions were not run: no sandbox here"]
    assert validate_code_part(top_p, {}, require_sandbox=False, effects=_no_sandbox("no sandbox here")) == []


def test_the_judge_a_code_part_meets_comes_from_its_effects(top_p):
    """The kind reads no bank folder itself: the judge is whatever its effects load."""
    asked = []

    def load_judge(path, part_id):
        asked.append((path, part_id))
        raise JudgeNotFound("no bank on this test machine")

    with pytest.raises(SpecError, match="no bank on this test machine"):
        grading.grade(top_p, "def top_p_keep(l, p, t):\n    return l > 0\n", {},
                      effects=local_effects().replace(sandbox_unavailable=lambda: "", load_judge=load_judge))
    assert asked == [(top_p["judge"], "keep")]


# ---------------------------------------------------------------- validation, trusted side


@pytest.mark.parametrize("part", BANK_CODE_PARTS)
def test_every_bank_code_part_passes_the_trusted_side_checks(part):
    assert validate_code_part(part, {}, run_solutions=False) == []


def test_validation_catches_examples_that_disagree_with_the_judge(top_p):
    top_p["examples"][0]["result"] = "array([[ True, False, False]])"
    top_p["examples"][1]["name"] = "renamed"
    problems = validate_code_part(top_p, {}, run_solutions=False)
    assert any("do not match the part's examples" in problem for problem in problems)
    top_p["examples"][1]["name"] = "a tie at the cutoff"
    problems = validate_code_part(top_p, {}, run_solutions=False)
    assert problems == ["part 'keep': example 'three distinct logits': the result shown has False at value 1; "
                        "the reference has True"]


def test_validation_catches_a_group_no_case_lands_in(top_p):
    top_p["groups"].append({"id": "unused", "points": 1})
    problems = validate_code_part(top_p, {}, run_solutions=False)
    assert any("groups ['unused'] get no cases" in problem for problem in problems)
