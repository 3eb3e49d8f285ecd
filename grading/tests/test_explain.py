"""Explain parts: free text, self-assessed against a rubric."""

import pytest

import grading
from grading.kinds.base import SpecError

WHY = {
    "id": "why", "kind": "explain", "prompt": "Why above the floor?",
    "rubric": [{"id": "kv_reads", "text": "KV reads"}, {"id": "launch", "text": "Launch"},
               {"id": "sampling", "text": "Sampling"}, {"id": "comm", "text": "Comms"}],
    "model_answer": "KV-cache reads, kernel launches, sampling, communication.",
}


def test_any_text_is_valid_and_awaits_self_assessment():
    verdict = grading.grade(WHY, "  KV reads grow with the context length and the batch. ", {})
    assert verdict.valid and verdict.correct is None and verdict.score == 0
    assert "model answer" in verdict.feedback
    assert verdict.expected == WHY["model_answer"]


@pytest.mark.parametrize(("text", "message"),
                         [("", "empty"), ("   \n ", "empty"), ("x" * 10_001, "too long")])
def test_empty_or_huge_text_is_invalid(text, message):
    verdict = grading.grade(WHY, text, {})
    assert not verdict.valid and message in verdict.feedback


def test_rubric_score_is_the_ticked_fraction():
    kind = grading.get_kind("explain")
    spec = kind.load_spec(WHY)
    assert kind.score_rubric(spec, ["kv_reads", "comm", "comm"]) == 0.5
    assert kind.score_rubric(spec, []) == 0


def test_unknown_rubric_ids_are_rejected():
    kind = grading.get_kind("explain")
    with pytest.raises(ValueError, match="nope"):
        kind.score_rubric(kind.load_spec(WHY), ["kv_reads", "nope"])


@pytest.mark.parametrize(
    ("change", "key"),
    [({"rubric": []}, "rubric"), ({"rubric": [{"id": "a"}]}, "rubric[0]"),
     ({"rubric": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]}, "rubric"),
     ({"model_answer": ""}, "model_answer")],
)
def test_bad_specs_name_the_key(change, key):
    with pytest.raises(SpecError) as caught:
        grading.load_part({**WHY, **change})
    assert caught.value.key == key


@pytest.mark.parametrize("text", ["idk", "I don't know.", "kv kv kv kv kv kv kv kv kv kv", "Because reads."])
def test_an_answer_without_substance_is_refused_before_the_rubric_opens(text):
    """"idk" plus a tick in every box must not reach full credit: the explanation is not
    recorded (no attempt used), so neither the model answer nor the rubric opens."""
    verdict = grading.interpret(WHY, text, {})
    assert not verdict.valid and "at least 8 words" in verdict.feedback
