"""Structural checks: each broken field is one problem on the line that holds it."""

import pytest

from questions.loader import load_text
from questions.schema import Question, Topic, check_structure
from questions.tests.factories import question_data, question_yaml


def problems_for(text: str) -> list[str]:
    loaded = load_text(text, "q.yaml")
    return [f"{problem.line}: {problem.message}" for problem in check_structure(loaded.data, loaded.lines, "q.yaml")]


def test_the_factory_question_is_well_formed():
    assert problems_for(question_yaml()) == []


def test_typed_question_from_data():
    question = Question.from_data(question_data())
    assert question.topic is Topic.ROOFLINE
    assert question.topic.label == "Roofline and hardware"
    assert [part.id for part in question.parts] == ["floor", "kv_per_token", "why_above_floor"]
    assert question.part("floor").unit == "ms"
    assert list(question.part("kv_per_token").symbols) == ["L", "h_kv", "d", "b"]
    assert question.part("why_above_floor").rubric[0]["id"] == "kv_reads"
    assert question.params[0].choices == ("h100_sxm", "h200")
    assert question.checks[0].when == {"model": "llama31_8b"}
    assert question.hint_cost == 0.1


def test_every_topic_has_a_label():
    assert all(topic.label for topic in Topic)
    assert len(Topic) == 11


@pytest.mark.parametrize(
    ("original", "bad", "expected"),
    [
        ("seed: 1", "seed: 136", "seed 136 must be a whole number from 1 to 135"),
        ("topic: roofline", "topic: rooflines", "unknown topic 'rooflines'"),
        ("difficulty: 2", "difficulty: 4", "difficulty 4 must be 1, 2 or 3"),
        ("difficulty: 2", "difficulty: true", "difficulty True must be 1, 2 or 3"),
        ("slug: decode-floor-test", "slug: Decode_Floor", "slug 'Decode_Floor' must be lowercase"),
    ],
)
def test_bad_top_level_values_point_at_their_line(original, bad, expected):
    text = question_yaml()
    line = text.splitlines().index(original) + 1
    [problem] = problems_for(text.replace(original, bad))
    assert problem.startswith(f"{line}: {expected}")


def test_missing_keys_and_unknown_keys():
    messages = problems_for(question_yaml().replace("solution:", "solutoin:"))
    assert "1: missing required key 'solution'" in messages
    assert any(message.endswith("unknown key 'solutoin'") for message in messages)


def test_duplicate_part_ids_and_unknown_kind():
    parts = question_data()["parts"]
    parts[1]["id"] = "floor"
    parts[2]["kind"] = "essay"
    messages = problems_for(question_yaml(parts=parts))
    assert any("part id 'floor' is used twice" in message for message in messages)
    assert any("unknown kind 'essay'" in message for message in messages)


def test_a_question_needs_an_auto_graded_part():
    parts = [question_data()["parts"][2]]
    messages = problems_for(question_yaml(parts=parts))
    assert any("at least one part must be auto-graded" in message for message in messages)


def test_check_when_must_name_a_parameter_choice():
    checks = [{"expr": "weight_bytes", "equals": "16 GB", "when": {"model": "gpt5", "batch": 4}}]
    messages = problems_for(question_yaml(checks=checks))
    assert any("'gpt5' is not one of 'model''s choices" in message for message in messages)
    assert any("'when' names 'batch', which is not a parameter" in message for message in messages)


def test_params_need_choices_and_a_known_section():
    params = {"gpu": {"catalogue": "gpuz", "choices": []}}
    messages = problems_for(question_yaml(params=params))
    assert any("needs a non-empty list of 'choices'" in message for message in messages)
    assert any("unknown catalogue section 'gpuz'" in message for message in messages)


def test_derived_name_may_not_shadow_a_parameter():
    messages = problems_for(question_yaml(derived={"gpu": "1"}))
    assert any("derived name 'gpu' is already a parameter" in message for message in messages)


def test_interview_only_is_an_optional_true_or_false_key():
    assert Question.from_data(question_data()).interview_only is False
    assert Question.from_data(question_data(interview_only=True)).interview_only is True
    assert problems_for(question_yaml(interview_only=True)) == []
    [problem] = problems_for(question_yaml(interview_only="yes please"))
    assert problem.endswith("'interview_only' must be true or false")
