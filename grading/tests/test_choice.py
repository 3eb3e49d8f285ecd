"""Choice parts: one right option, or every right option with partial credit; the answer
is the chosen ids, and the options are shown in a per-variant shuffled order."""

import textwrap

import pytest
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

import grading
from grading.kinds.base import SpecError, variant_key
from grading.kinds.choice import PARTIAL_CREDIT_RULE
from grading.variants import build_context

HTMX = {"HTTP_HX_REQUEST": "true"}

SINGLE = {
    "id": "bound", "kind": "choice", "prompt": "What bounds a batch-1 decode step?",
    "options": [
        {"id": "flops", "text": "Tensor-core FLOPs", "correct": False,
         "feedback": "At batch 1 each weight does two FLOPs per byte read: far below the ridge point."},
        {"id": "hbm", "text": "HBM bandwidth", "correct": True, "feedback": "Every weight is read once per step."},
        {"id": "pcie", "text": "PCIe bandwidth", "correct": False,
         "feedback": "The weights stay in HBM; PCIe carries only the tokens."},
    ],
}

MULTIPLE = {
    "id": "kv", "kind": "choice", "prompt": "Which grow the KV cache?", "multiple": True,
    "options": [
        {"id": "ctx", "text": "A longer context", "correct": True},
        {"id": "batch", "text": "A larger batch", "correct": True},
        {"id": "layers", "text": "More layers", "correct": True},
        {"id": "vocab", "text": "A larger vocabulary", "correct": False,
         "feedback": "The vocabulary sizes the embedding and the logits, not the cache."},
        {"id": "ffn", "text": "A wider FFN", "correct": False,
         "feedback": "The FFN has weights but caches nothing between tokens."},
    ],
}


def _with(part, **changes):
    return {**part, **changes}


def _options(part, *changes):
    """`part`'s options with `changes` (index, {key: value}) applied."""
    options = [dict(option) for option in part["options"]]
    for index, change in changes:
        options[index].update(change)
    return {**part, "options": options}


# --- the spec -----------------------------------------------------------------------------

@pytest.mark.parametrize(("part", "key"), [
    (_with(SINGLE, options=SINGLE["options"][:1]), "options"),
    (_with(SINGLE, options="a, b"), "options"),
    (_options(SINGLE, (0, {"correct": True})), "options"),          # two correct, single answer
    (_options(SINGLE, (1, {"correct": False, "feedback": "x"})), "options"),  # none correct
    (_options(MULTIPLE, (3, {"correct": True}), (4, {"correct": True})), "options"),  # no wrong one
    (_options(MULTIPLE, *((index, {"correct": False, "feedback": "x"}) for index in range(3))), "options"),
    (_options(SINGLE, (2, {"id": "flops"})), "options[2].id"),
    (_options(SINGLE, (0, {"id": "Flops!"})), "options[0].id"),
    (_options(SINGLE, (0, {"feedback": None})), "options[0].feedback"),  # a wrong option needs feedback
    (_options(SINGLE, (0, {"feedback": "  "})), "options[0].feedback"),
    (_options(SINGLE, (0, {"text": ""})), "options[0].text"),
    (_options(SINGLE, (0, {"correct": "no"})), "options[0].correct"),
    (_options(SINGLE, (0, {"why": "typo"})), "options[0]"),
    (_with(SINGLE, multiple="yes"), "multiple"),
    (_with(SINGLE, option=[]), "option"),
])
def test_bad_specs_name_the_key(part, key):
    with pytest.raises(SpecError) as caught:
        grading.get_kind("choice").load_spec(part)
    assert caught.value.key == key


def test_a_correct_option_may_go_without_feedback_and_correct_defaults_to_false():
    part = {"id": "p", "kind": "choice", "options": [
        {"id": "a", "text": "Right", "correct": True}, {"id": "b", "text": "Wrong", "feedback": "Because."}]}
    spec = grading.get_kind("choice").load_spec(part)
    assert [option.correct for option in spec.options] == [True, False]


# --- single answer ------------------------------------------------------------------------

def test_the_right_option_scores_one():
    verdict = grading.grade(SINGLE, "hbm", {})
    assert verdict.valid and verdict.correct and verdict.score == 1.0
    assert verdict.interpreted == "HBM bandwidth" and verdict.expected == "HBM bandwidth"
    assert "read once per step" in verdict.feedback  # a correct option's own note


def test_a_wrong_option_gets_its_misconception():
    verdict = grading.grade(SINGLE, "pcie", {})
    assert verdict.valid and verdict.correct is False and verdict.score == 0.0
    assert verdict.mistake == "pcie" and verdict.feedback == SINGLE["options"][2]["feedback"]
    assert verdict.expected == "HBM bandwidth"


def test_a_single_answer_part_refuses_two_ids_but_not_a_repeated_one():
    verdict = grading.grade(SINGLE, "hbm, pcie", {})
    assert not verdict.valid and "choose one option" in verdict.feedback
    assert grading.grade(SINGLE, " hbm,hbm ", {}).correct


# --- multiple answers ---------------------------------------------------------------------

@pytest.mark.parametrize(("answer", "score"), [
    ("ctx, batch, layers", 1.0),
    ("ctx, batch", 2 / 3),
    ("ctx", 1 / 3),
    ("ctx, batch, layers, vocab", 2 / 3),       # all right and one wrong: (n - 1) / n
    ("ctx, batch, vocab", 1 / 3),
    ("ctx, vocab, ffn", 0.0),                   # never below 0
    ("vocab", 0.0),
    ("ctx, batch, layers, vocab, ffn", 1 / 3),  # everything: (3 - 2) / 3
])
def test_partial_credit_is_right_minus_wrong_over_the_right_ones(answer, score):
    verdict = grading.grade(MULTIPLE, answer, {})
    assert verdict.valid and verdict.score == pytest.approx(score)
    assert verdict.correct is (score == 1.0)


def test_ticking_everything_scores_zero_when_wrong_options_are_as_many_as_right_ones():
    part = _options(MULTIPLE, (2, {"correct": False, "feedback": "Layers are fixed by the model, not the load."}))
    assert grading.grade(part, "ctx, batch, layers, vocab, ffn", {}).score == 0.0
    assert grading.grade(part, "ctx, batch", {}).correct


def test_feedback_names_each_wrong_tick_and_counts_the_missed_without_naming_them():
    verdict = grading.grade(MULTIPLE, "ctx, vocab", {})
    assert MULTIPLE["options"][3]["feedback"] in verdict.feedback and "A larger vocabulary" in verdict.feedback
    assert "missed 2 of the 3 correct options" in verdict.feedback
    assert "A larger batch" not in verdict.feedback and "More layers" not in verdict.feedback
    assert "(1 correct − 1 wrong ticked) ÷ 3" in verdict.feedback
    assert verdict.mistake == "vocab"
    assert verdict.expected == "A longer context; A larger batch; More layers"


@pytest.mark.parametrize("answer", ["layers,ctx,batch", "  batch ,  layers, ctx ", "ctx, ctx, batch, layers, batch",
                                    "CTX, Batch, layers", "ctx batch layers"])
def test_order_whitespace_case_and_repeats_do_not_matter(answer):
    verdict = grading.grade(MULTIPLE, answer, {})
    assert verdict.correct and verdict.interpreted == "A longer context; A larger batch; More layers"


_IDS = [option["id"] for option in MULTIPLE["options"]]
_RIGHT = [option["id"] for option in MULTIPLE["options"] if option.get("correct")]


@settings(max_examples=60, deadline=None)
@given(ticked=st.lists(st.sampled_from(_IDS), min_size=1, max_size=8), separator=st.sampled_from([",", ", ", " ,  "]))
def test_any_spelling_of_a_tick_set_gets_the_rule_score(ticked, separator):
    verdict = grading.grade(MULTIPLE, separator.join(ticked), {})
    right, wrong = len(set(ticked) & set(_RIGHT)), len(set(ticked) - set(_RIGHT))
    assert verdict.valid and verdict.score == pytest.approx(max(0.0, (right - wrong) / len(_RIGHT)))
    assert verdict.correct is (set(ticked) == set(_RIGHT))


# --- unreadable answers -------------------------------------------------------------------

@pytest.mark.parametrize(("part", "answer", "message"), [
    (SINGLE, "", "choose an option"),
    (SINGLE, " , ", "choose an option"),
    (MULTIPLE, "", "choose at least one option"),
    (SINGLE, "x", "there is no option 'x'"),
    (MULTIPLE, "ctx, nope", "there is no option 'nope'"),
    (SINGLE, "a" * 1_001, "too long"),
])
def test_unknown_or_missing_ids_are_invalid_with_a_message(part, answer, message):
    for method in (grading.grade, grading.interpret):
        verdict = method(part, answer, {})
        assert not verdict.valid and message in verdict.feedback


def test_interpret_shows_the_chosen_texts_and_reveals_nothing():
    verdict = grading.interpret(MULTIPLE, "vocab, ctx", {})
    assert verdict.valid and verdict.correct is None and verdict.score == 0
    assert verdict.interpreted == "A longer context; A larger vocabulary" and verdict.expected == ""


def test_option_texts_and_feedback_may_quote_the_variant():
    part = _options(SINGLE, (2, {"text": "{{ link }} bandwidth", "feedback": "{{ link }} carries only tokens."}))
    verdict = grading.grade(part, "pcie", {"link": "PCIe 5"})
    assert verdict.interpreted == "PCIe 5 bandwidth" and verdict.feedback == "PCIe 5 carries only tokens."


# --- what validation grades ---------------------------------------------------------------

@pytest.mark.parametrize("part", [SINGLE, MULTIPLE])
def test_reference_and_mistakes_are_consistent_with_grading(part):
    kind = grading.get_kind("choice")
    spec = kind.load_spec(part)
    assert grading.grade(spec, kind.reference_answer(spec, {}), {}).score == 1.0
    mistakes = kind.mistake_answers(spec, {})
    assert [text for text, _ in mistakes] == [option["id"] for option in part["options"] if not option.get("correct")]
    for text, feedback in mistakes:
        verdict = grading.grade(spec, text, {})
        assert verdict.correct is False and feedback in verdict.feedback
    assert kind.validate_part(spec, {}) == []


def test_validation_reports_an_option_template_that_does_not_render():
    kind = grading.get_kind("choice")
    spec = kind.load_spec(_options(SINGLE, (0, {"feedback": "{{ nowhere | ms }}"})))
    problems = kind.validate_part(spec, {})
    assert len(problems) == 1 and problems[0].startswith("options[0].feedback")


def test_capabilities():
    kind = grading.get_kind("choice")
    assert kind.auto_graded and not kind.self_assessed and not kind.multiline_answer
    assert kind.max_answer_chars == 1_000 and kind.answer_template == "kinds/choice/answer.html"


# --- the display order --------------------------------------------------------------------

GPUS = ["h100_sxm", "h200", "a100_80gb", "b200", "l40s", "mi300x"]
PARAMS = {"gpu": {"catalogue": "gpus", "choices": GPUS}, "batch": {"choices": [1, 8]}}


def _context(gpu, batch=1):
    from questions.catalogue import load_catalogue

    return build_context(PARAMS, {"floor": "gpu.hbm_bandwidth * batch"}, {"gpu": gpu, "batch": batch},
                         load_catalogue())


def _order(part, context):
    return [option["id"] for option in grading.get_kind("choice").display_context(part, context)["options"]]


def test_the_shuffle_is_stable_for_a_variant_and_differs_across_variants():
    first = _order(MULTIPLE, _context("h200", 8))
    assert _order(MULTIPLE, _context("h200", 8)) == first  # a fresh context for the same variant
    assert sorted(first) == sorted(option["id"] for option in MULTIPLE["options"])
    orders = {tuple(_order(MULTIPLE, _context(gpu, batch))) for gpu in GPUS for batch in (1, 8)}
    assert len(orders) > 1


def test_the_variant_key_ignores_catalogue_sections_and_reads_params_and_derived_values():
    key = variant_key(_context("h200", 8))
    assert "gpu=h200" in key and "batch=8" in key and "floor=" in key and "gpus" not in key


def test_the_display_states_the_rule_only_for_multiple_answers():
    kind = grading.get_kind("choice")
    assert kind.display_context(MULTIPLE, {})["rule"] == PARTIAL_CREDIT_RULE
    assert kind.display_context(SINGLE, {}) | {"options": []} == {"options": [], "multiple": False, "rule": ""}


def test_kinds_without_a_display_of_their_own_need_none():
    assert grading.get_kind("formula").display_context({"id": "f", "kind": "formula", "answer": "x"}, {}) == {}


# --- the pages ----------------------------------------------------------------------------

CHOICE_QUESTION_YAML = textwrap.dedent(
    """\
    slug: test-decode-bound
    seed: 3
    title: What bounds decode (test question)
    topic: roofline
    difficulty: 1
    summary: Concepts behind the decode floor.
    params:
      gpu: {catalogue: gpus, choices: [h100_sxm, h200]}
    statement: |
      One {{ gpu.name }} serves a 70B model at batch 1.
    parts:
      - id: bound
        kind: choice
        prompt: What bounds the decode step?
        options:
          - id: flops
            text: Tensor-core FLOPs
            feedback: At batch 1 each weight does two FLOPs per byte.
          - id: hbm
            text: "HBM bandwidth on the {{ gpu.name }}"
            correct: true
          - id: pcie
            text: PCIe bandwidth
            feedback: The weights stay in HBM.
      - id: kv
        kind: choice
        prompt: Which grow the KV cache?
        multiple: true
        options:
          - {id: ctx, text: A longer context, correct: true}
          - {id: batch, text: A larger batch, correct: true}
          - id: vocab
            text: A larger vocabulary
            feedback: "The vocabulary sizes the logits, not the cache."
    solution: |
      Decode reads every weight once per step from HBM; the cache grows with tokens kept.
    """
)


@pytest.fixture
def choice_question(db):
    from questions.services import question_save_text

    result = question_save_text(CHOICE_QUESTION_YAML, origin="file",
                                source_path="questions/bank/roofline/003-test-decode-bound.yaml")
    assert result.version is not None, result.problems
    return result.version


def test_validate_questions_accepts_a_question_with_choice_parts(tmp_path):
    from questions.validation import validate_file

    path = tmp_path / "roofline" / "003-test-decode-bound.yaml"
    path.parent.mkdir()
    path.write_text(CHOICE_QUESTION_YAML, encoding="utf-8")
    report = validate_file(path)
    assert report.ok, report.problems


def test_the_practice_page_shows_the_options_and_grades_two_ticked_boxes(client, login_as, candidate,
                                                                         choice_question):
    from grading import services
    from grading.models import Attempt

    login_as(candidate)
    page = client.get(reverse("question-detail", args=["test-decode-bound"])).content.decode()
    assert 'type="radio" name="answer"' in page and 'value="hbm"' in page
    assert "HBM bandwidth on the NVIDIA" in page  # the option's template filled for the variant
    assert 'type="checkbox" name="answer"' in page and PARTIAL_CREDIT_RULE in page
    assert 'hx-post="/questions/test-decode-bound/parts/kv/answer/"' in page

    url = reverse("submit-answer", args=["test-decode-bound", "kv"])
    response = client.post(url, {"answer": ["batch", "vocab"]}, **HTMX)
    assert response.status_code == 200
    attempt = Attempt.objects.get()
    assert attempt.answer == "batch, vocab"
    services.attempt_grade(attempt.id)
    attempt.refresh_from_db()
    assert attempt.correct is False and attempt.score == 0.0  # (1 - 1) / 2
    poll = client.get(reverse("attempt-status", args=[attempt.id]), **HTMX).content.decode()
    assert "sizes the logits" in poll and "missed 1 of the 2" in poll

    preview = client.post(reverse("interpret-answer", args=["test-decode-bound", "kv"]),
                          {"answer": ["ctx", "batch"]}, **HTMX).content.decode()
    assert "A longer context; A larger batch" in preview
    nothing = client.post(url, {}, **HTMX).content.decode()
    assert 'data-verdict="invalid"' in nothing and "choose at least one option" in nothing


def test_the_interview_room_shows_the_options_and_grades_a_choice(client, login_as, interviewer, candidate,
                                                                    choice_question):
    from grading.models import Attempt
    from grading.services import attempt_grade
    from trainer.interviews.tests.conftest import make_interview, start

    interview = start(make_interview(interviewer, choice_question), candidate)
    login_as(candidate)
    room = client.get(reverse("interview-room", args=[interview.id])).content.decode()
    assert 'type="checkbox" name="answer"' in room and 'value="vocab"' in room
    url = reverse("interview-answer", args=[interview.id, 1, "kv"])
    assert f'hx-post="{url}"' in room

    assert client.post(url, {"answer": ["ctx", "batch"]}, **HTMX).status_code == 200
    attempt = Attempt.objects.get()
    assert attempt.answer == "ctx, batch"
    assert attempt_grade(attempt.id).correct is True
    preview = client.post(reverse("interview-interpret", args=[interview.id, 1, "bound"]),
                          {"answer": ["hbm", "pcie"]}, **HTMX).content.decode()
    assert "choose one option" in preview
