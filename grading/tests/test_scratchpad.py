"""The numeric scratchpad and credit carried forward, in the engine (no Django).

The decode-floor question is the issue's own example: one variant of it (Llama 3.3 70B
in BF16 on H100s, TP 4) is graded with working that is right all the way, and with
working that divides by one GPU's bandwidth instead of the group's.
"""

from pathlib import Path

import pytest
import yaml

import grading
from grading.kinds.base import GIVEN_KEY
from grading.kinds.numeric.carried import CARRIED_CREDIT
from grading.kinds.numeric.steps import STEP_CREDIT
from grading.kinds.numeric.working import MAX_LINES, read_working
from grading.verdict import Verdict
from questions.schema import Question
from questions.variants import draw_variant

BANK = Path(__file__).resolve().parents[2] / "questions" / "bank"
FLOOR_VARIANT = {"gpu": "h100_sxm", "model": "llama33_70b", "dtype": "bf16", "batch": 16, "context": 4096}
RIGHT = """\
w = (70.6e9 - 128256 * 8192) * 2 B   # every weight but the input-embedding table
bw = 4 * 3.35 TB/s                   # four GPUs read their shards at once
t = w / bw
"""
ONE_GPU = """\
w = (70.6e9 - 128256 * 8192) * 2 B
t = w / 3.35 TB/s
floor = t * 1
"""


def _question(relative: str) -> Question:
    return Question.from_data(yaml.safe_load((BANK / relative).read_text()))


@pytest.fixture(scope="module")
def floor_question():
    question = _question("roofline/001-decode-floor-from-weights.yaml")
    return question, draw_variant(question, 0, choices=FLOOR_VARIANT).context


def test_right_working_is_marked_step_by_step_with_the_intermediates_names(floor_question):
    question, context = floor_question
    verdict = grading.grade(question.part("floor").raw, "", context, scratchpad=RIGHT)
    assert verdict.correct and verdict.score == 1.0
    assert [step.matched for step in verdict.steps] == ["weight bytes", "aggregate bandwidth", "the decode floor"]
    assert verdict.first_wrong_step is None and verdict.step_credit == 0.0
    assert [step.depends_on for step in verdict.steps] == [(), (), (1, 2)]
    assert verdict.steps[-1].is_answer and verdict.steps[0].value == "139 GB"


def test_dividing_by_one_gpu_is_the_second_step_going_wrong_with_the_mistakes_feedback(floor_question):
    question, context = floor_question
    part = question.part("floor").raw
    verdict = grading.grade(part, "", context, scratchpad=ONE_GPU)
    assert verdict.correct is False
    assert verdict.first_wrong_step == 2
    first, second, third = verdict.steps
    assert first.matched == "weight bytes"
    assert second.mistake == "mistakes[4]" and "bandwidths add up" in second.feedback
    assert second.expected == "10.4 ms"  # the reference floor, kept for after the part is solved
    assert third.expected == ""
    assert "first goes wrong at line 2" in verdict.feedback
    # Right up to one slip, carried on correctly: the stated partial credit.
    assert verdict.step_credit == STEP_CREDIT and verdict.score == STEP_CREDIT
    # The same final answer with no working earns nothing: it is the listed mistake.
    bare = grading.grade(part, verdict.interpreted.split(" = ")[0], context)
    assert bare.score == 0.0 and bare.mistake == "mistakes[4]"


def test_a_right_answer_with_no_working_is_not_penalised(floor_question):
    question, context = floor_question
    kind = grading.get_kind("numeric")
    part = question.part("floor").raw
    reference = kind.reference_answer(kind.load_spec(part), context)
    assert grading.grade(part, reference, context).score == 1.0
    assert grading.grade(part, reference, context, scratchpad="").score == 1.0


def test_two_slips_earn_no_working_credit(floor_question):
    question, context = floor_question
    working = "w = 70.6e9 * 1 B\nt = w / 3.35 TB/s"
    verdict = grading.grade(question.part("floor").raw, "", context, scratchpad=working)
    assert verdict.first_wrong_step == 1
    assert verdict.step_credit == 0.0 and verdict.score == 0.0


def test_working_that_stops_short_is_wrong_at_its_answer_line(floor_question):
    question, context = floor_question
    verdict = grading.grade(question.part("floor").raw, "139 GB / (13.4 TB/s) * 2", context,
                            scratchpad="w = (70.6e9 - 128256 * 8192) * 2 B")
    assert verdict.first_wrong_step == 1


def test_a_scratchpad_line_that_does_not_read_is_invalid_and_says_where(floor_question):
    question, context = floor_question
    part = question.part("floor").raw
    verdict = grading.grade(part, "", context, scratchpad="w = 70e9 * 2 B\nt = w / bandwidth")
    assert not verdict.valid
    assert "line 2" in verdict.feedback and "`bandwidth` is neither an earlier step" in verdict.feedback
    assert not grading.interpret(part, "10 ms", context, scratchpad="s = 3").valid  # s is seconds


def test_the_live_preview_shows_values_and_errors_but_compares_nothing(floor_question):
    question, _ = floor_question
    working = "w = 70.6e9 * 2 B\n\n# a note\n> t = w / 3.35 TB/s\nx ="
    lines = grading.read_scratchpad(question.part("floor").raw, working)
    assert [(step.line, step.name, step.value) for step in lines[:2]] == [(1, "w", "141 GB"), (4, "t", "42.1 ms")]
    assert lines[1].is_answer and not lines[0].is_answer
    assert lines[2].error and not any(step.matched or step.mistake or step.expected for step in lines)


def test_reading_rules():
    working = read_working("layers = 80\nkv = 2 * layers * 8 * 128 * 2 B\n> kv\nkv2 = kv")
    assert not working.errors and working.answer == 2
    assert working.depends_on(working.lines[1]) == (1,)
    assert "already an earlier step" in read_working("a = 1\na = 2").errors[0]
    assert "mark one line only" in read_working("> a = 1\n> b = 2").errors[0]
    assert "is a unit" in read_working("B = 2").errors[0]
    assert f"more than {MAX_LINES}" in read_working("\n".join(f"a{i} = {i}" for i in range(MAX_LINES + 1))).problem
    assert read_working("x" * 9000).problem


def test_the_working_round_trips_through_the_stored_verdict(floor_question):
    question, context = floor_question
    verdict = grading.grade(question.part("floor").raw, "", context, scratchpad=ONE_GPU)
    assert Verdict.from_dict(verdict.to_dict()) == verdict


@pytest.fixture(scope="module")
def chained_question():
    question = _question("kv-cache/010-kv-bytes-and-the-sequence-ceiling.yaml")
    return question, draw_variant(question, 3).context


def test_an_answer_consistent_with_a_wrong_earlier_answer_earns_the_carried_credit(chained_question):
    question, context = chained_question
    kind = grading.get_kind("numeric")
    earlier = kind.load_spec(question.part("kv_token_gpu").raw)
    later = question.part("concurrency").raw
    given = kind.given_answer(earlier, "320 KiB/token")  # 20x the reference's 16 KiB/token
    own = {**context, "answers": {**context["answers"], "kv_token_gpu": given.value}}
    consistent = kind.reference_answer(kind.load_spec(later), own)
    verdict = grading.grade(later, consistent, {**context, GIVEN_KEY: {"kv_token_gpu": given}})
    assert verdict.correct is False and verdict.score == CARRIED_CREDIT
    assert verdict.carried.consistent and verdict.carried.values == ("320 KiB/token",)
    assert "Consistent with your earlier 320 KiB/token" in verdict.feedback
    # Without the earlier answer, the same number is simply wrong.
    assert grading.grade(later, consistent, context).score == 0.0


def test_an_inconsistent_later_answer_earns_no_carried_credit(chained_question):
    question, context = chained_question
    kind = grading.get_kind("numeric")
    given = kind.given_answer(kind.load_spec(question.part("kv_token_gpu").raw), "320 KiB/token")
    verdict = grading.grade(question.part("concurrency").raw, "3", context | {GIVEN_KEY: {"kv_token_gpu": given}})
    assert verdict.score == 0.0 and verdict.carried is not None and not verdict.carried.consistent
    assert "not consistent with your earlier 320 KiB/token" in verdict.feedback


def test_the_right_answer_stays_correct_whatever_was_given(chained_question):
    question, context = chained_question
    kind = grading.get_kind("numeric")
    later = question.part("concurrency").raw
    given = kind.given_answer(kind.load_spec(question.part("kv_token_gpu").raw), "320 KiB/token")
    reference = kind.reference_answer(kind.load_spec(later), context)
    verdict = grading.grade(later, reference, {**context, GIVEN_KEY: {"kv_token_gpu": given}})
    assert verdict.correct and verdict.score == 1.0 and verdict.carried is None


def test_validation_reports_a_step_name_for_nothing_the_part_is_built_from(floor_question):
    question, context = floor_question
    kind = grading.get_kind("numeric")
    assert kind.validate_part(kind.load_spec(question.part("floor").raw), context) == []
    raw = {**question.part("floor").raw, "steps": {"bw_totl": "aggregate bandwidth"}}
    assert kind.validate_part(kind.load_spec(raw), context) == [
        "steps names 'bw_totl', which this part's answer and mistakes are not built from"]


def test_with_two_wrong_earlier_answers_the_feedback_names_both_as_off(chained_question):
    question, context = chained_question
    kind = grading.get_kind("numeric")
    token = kind.given_answer(kind.load_spec(question.part("kv_token_gpu").raw), "320 KiB/token")
    pool = kind.given_answer(kind.load_spec(question.part("kv_pool").raw), "10 GB")
    later = question.part("concurrency").raw
    own = {**context, "answers": {**context["answers"], "kv_token_gpu": token.value, "kv_pool": pool.value}}
    consistent = kind.reference_answer(kind.load_spec(later), own)
    verdict = grading.grade(later, consistent, {**context, GIVEN_KEY: {"kv_token_gpu": token, "kv_pool": pool}})
    assert verdict.score == CARRIED_CREDIT and set(verdict.carried.parts) == {"kv_token_gpu", "kv_pool"}
    assert "those were off" in verdict.feedback and "that one was" not in verdict.feedback


# The step floor names the floor part (answers.floor): its working is still marked
# through what the floor is built from, as before the chain was named.
STEP_FLOOR_ONE_GPU = """\
w = (70.6e9 - 128256 * 8192) * 2 B
kv = 16 * 4096 * 2 * 80 * 8 * 128 * 2 B
total = w + kv
t = total / 3.35 TB/s
"""


def test_a_chained_parts_working_meets_the_earlier_parts_intermediates(floor_question):
    question, context = floor_question
    part = question.part("step_floor").raw
    assert "answers.floor" in part["answer"]
    verdict = grading.grade(part, "", context, scratchpad=STEP_FLOOR_ONE_GPU)
    assert [step.matched for step in verdict.steps[:3]] == ["weight bytes", "KV-cache bytes", "bytes read per step"]
    assert [step.mistake for step in verdict.steps[:3]] == [None, None, None]
    assert verdict.first_wrong_step == 4 and verdict.score == STEP_CREDIT
    # Carrying the floor's own figure is a step too, named as that part's answer.
    carried = grading.grade(part, "", context, scratchpad="f = 10.4 ms\nt = f + 21.5 GB / (4 * 3.35 TB/s)\n")
    assert carried.correct and carried.steps[0].matched == "the answer to floor"


def test_a_sub_expression_equal_to_a_derived_value_reads_by_its_name():
    from grading.kinds.numeric.steps import intermediates

    question = _question("attention/027-flashattention-online-softmax.yaml")
    context = draw_variant(question, 0).context
    part = question.part("speedup")
    assert "answers.naive_bytes / gpu.hbm_bandwidth" in part.raw["answer"]
    labels = [item.label for item in intermediates(part.engine.load_spec(part.raw), context)]
    assert "t naive" in labels
    assert not [label for label in labels if label.startswith("answers ")]
