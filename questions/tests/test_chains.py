"""Validation of chained parts (questions.chains): references that name earlier parts."""

from pathlib import Path

import pytest
import yaml

import grading
from grading.kinds.numeric import carried
from questions.chains import chain_problems
from questions.schema import Question
from questions.validation import validate_text
from questions.variants import draw_variant

BANK = Path(__file__).resolve().parents[2] / "questions" / "bank"
CHAINED = ["kv-cache/010-kv-bytes-and-the-sequence-ceiling.yaml", "kv-cache/019-gqa-vs-mla-under-tp.yaml",
           "quantization/055-fp8-70b-kv-budget.yaml"]


def _problems(data: dict, seed: int = 0) -> list:
    question = Question.from_data(data)
    specs = {part.id: grading.load_part(part.raw) for part in question.parts}
    return list(chain_problems(question, specs, draw_variant(question, seed).context))


def _data(relative: str) -> dict:
    return yaml.safe_load((BANK / relative).read_text())


@pytest.mark.parametrize("relative", CHAINED)
def test_the_converted_bank_questions_carry_every_listed_mistake(relative):
    data = _data(relative)
    assert any("answers." in str(part.get("answer")) for part in data["parts"])
    for seed in range(4):
        assert _problems(data, seed) == []


def test_a_reference_naming_a_later_part_is_reported():
    data = _data(CHAINED[0])
    data["parts"][1]["answer"] = "answers.concurrency * 1 KiB/token"
    assert any("must name an earlier part" in problem.message for problem in _problems(data))


def test_a_reference_from_an_earlier_mistake_that_is_not_graded_consistent_is_reported(monkeypatch):
    monkeypatch.setattr(carried, "carry", lambda verdict, *args: verdict)  # a grader that never carries
    problems = _problems(_data(CHAINED[0]), seed=3)
    assert problems and all("is not graded consistent" in problem.message for problem in problems)
    assert {problem.path for problem in problems} == {("parts", 3, "answer")}  # concurrency


def test_the_near_miss_check_searches_a_chained_part_through_the_earlier_parts_answer():
    """Naming an earlier part (`answers.kv_pool`) must not hide the slips inside it from
    the tolerance check: a too-wide band on the chained part is still caught by them."""
    data = _data(CHAINED[0])
    chained = next(part for part in data["parts"] if part["id"] == "concurrency")
    assert "answers.kv_pool" in chained["answer"]
    chained["rtol"] = 0.4
    report = validate_text(yaml.safe_dump(data, sort_keys=False))
    found = [problem.message for problem in report.problems if "part 'concurrency': near miss" in problem.message]
    assert any("from `kv_pool_gpu`" in message for message in found), found
