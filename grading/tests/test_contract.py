"""The contract: verdicts, the registry, the top-level helpers."""

import inspect
import json

import pytest

import grading
from grading.kinds.base import AnswerKind, SpecError
from grading.registry import KIND_PATHS, get_kind, kinds, kinds_with, template_dirs
from grading.verdict import CaseRecord, Outcome, Verdict


def test_verdict_round_trips_through_json():
    verdict = Verdict(valid=True, correct=False, score=0.5, interpreted="41.8 ms",
                      interpreted_html="41.8 ms", feedback="Close.", mistake="slip:sign",
                      expected="41.79 ms")
    assert Verdict.from_dict(json.loads(json.dumps(verdict.to_dict()))) == verdict


def test_verdict_from_dict_ignores_extra_keys_and_checks_types():
    data = Verdict.invalid("empty").to_dict() | {"judged_by": "someone"}
    assert Verdict.from_dict(data) == Verdict.invalid("empty")
    with pytest.raises(ValueError):
        Verdict.from_dict({"valid": "yes", "correct": None, "score": 0})
    with pytest.raises(ValueError):
        Verdict.from_dict({"valid": True, "correct": None, "score": "high"})


def test_a_stored_verdict_says_its_outcome_and_keeps_cases_and_ticks():
    cases = (CaseRecord("tiny", "basics", True, "accepted"),
             CaseRecord("ragged", "offsets", False, "wrong_answer", "out[1] differs"))
    verdict = Verdict(valid=True, correct=False, score=0.5, feedback="1 of 2", mistake="wrong_answer", cases=cases)
    stored = json.loads(json.dumps(verdict.to_dict()))
    assert stored["outcome"] == "partial"
    assert Verdict.from_dict(stored) == verdict
    assert Verdict.from_dict(stored).cases_passed == 1
    assert cases[1].outcome_label == "Wrong answer"
    ticked = Verdict(valid=True, correct=None, score=0.0, rubric_ticked=("a", "b"))
    assert Verdict.from_dict(ticked.to_dict()) == ticked
    with pytest.raises(ValueError):
        Verdict.from_dict({**stored, "cases": [{"name": "x"}]})
    with pytest.raises(ValueError):
        Verdict.from_dict({**stored, "rubric_ticked": "a"})


@pytest.mark.parametrize("verdict, outcome", [
    (Verdict(valid=True, correct=True, score=1.0), Outcome.CORRECT),
    (Verdict(valid=True, correct=False, score=0.25), Outcome.PARTIAL),
    (Verdict(valid=True, correct=False, score=0.0), Outcome.WRONG),
    (Verdict.invalid("no number"), Outcome.INVALID),
    (Verdict(valid=True, correct=None, score=0.0), Outcome.UNJUDGED),
])
def test_each_verdict_has_one_outcome(verdict, outcome):
    assert verdict.outcome is outcome


def test_verdict_invariants():
    with pytest.raises(ValueError):
        Verdict(valid=True, correct=True, score=1.5)
    with pytest.raises(ValueError):
        Verdict(valid=False, correct=True, score=0)


def test_builtin_kinds_are_registered():
    assert {"numeric", "formula", "explain"} <= set(kinds())
    assert get_kind("numeric").name == "numeric"


def test_unknown_kind_is_a_spec_error():
    with pytest.raises(SpecError) as caught:
        get_kind("essay")
    assert caught.value.key == "kind"


def test_every_listed_kind_loads_lazily_as_its_own_class():
    for name, dotted in KIND_PATHS.items():
        kind = get_kind(name)
        assert kind.name == name and f"{type(kind).__module__}.{type(kind).__name__}" == dotted
        assert get_kind(name) is kind  # one instance per process


def test_kinds_are_asked_by_capability():
    assert kinds_with("runs_in_sandbox") == ["code", "kernel"]
    with pytest.raises(AttributeError):
        kinds_with("is_shiny")


def test_each_kind_states_what_it_can_do():
    assert kinds_with("auto_graded") == ["choice", "code", "formula", "kernel", "match", "numeric", "order"]
    assert kinds_with("self_assessed") == ["explain"]
    assert kinds_with("needs_gpu") == ["kernel"]
    assert kinds_with("has_examples") == ["code"]
    assert kinds_with("uses_editor") == ["code", "kernel"]
    assert kinds_with("multiline_answer") == ["code", "explain", "kernel"]


def test_each_kind_ships_its_answer_form():
    for name in kinds():
        template = get_kind(name).answer_template
        assert template == f"kinds/{name}/answer.html"
        assert [folder for folder in template_dirs() if (folder / template).is_file()], template


def test_a_new_kind_gets_its_template_names_from_its_name():
    class EssayKind(AnswerKind):
        name = "essay"

    assert EssayKind.answer_template == "kinds/essay/answer.html"
    assert EssayKind.auto_graded and not EssayKind.uses_editor


def test_grade_accepts_raw_parts_and_loaded_specs():
    part = {"id": "n", "kind": "numeric", "answer": "6 * 7"}
    spec = grading.load_part(part)
    assert grading.grade(part, "42", {}).correct
    assert grading.grade(spec, "42", {}).correct


def test_unexpected_errors_become_invalid_verdicts(monkeypatch, caplog):
    kind = get_kind("numeric")
    monkeypatch.setattr(type(kind), "grade", lambda self, spec, text, context: 1 / 0)
    verdict = grading.grade({"id": "n", "kind": "numeric", "answer": "1"}, "1", {})
    assert not verdict.valid and "could not read" in verdict.feedback
    assert "ZeroDivisionError" in caplog.text


def test_grading_does_not_need_django():
    """The library imports and grades in a fresh interpreter without loading Django."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import sys, grading\n"
        "v = grading.grade({'id': 'n', 'kind': 'numeric', 'answer': '2 * B', 'unit': 'B'},"
        " '16 bit', {})\n"
        "assert v.correct, v\n"
        "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60, env={"PATH": "/usr/bin:/bin"},
                            cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", kinds())
def test_every_kind_takes_the_effects_its_callers_pass(name):
    """Validation and the grading shell pass ``effects=`` to every kind alike."""
    kind = get_kind(name)
    for method in ("grade", "validate_part"):
        assert "effects" in inspect.signature(getattr(kind, method)).parameters, f"{name}.{method}"
