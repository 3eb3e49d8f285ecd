"""Order parts: the ids from first to last; score 1 − (pairs out of order ÷ all pairs);
the first pair out of order named; shown in a per-variant shuffle never already right."""

import itertools
import textwrap

import pytest
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

import grading
from grading.kinds.base import SpecError
from grading.kinds.order import rule_text
from grading.variants import build_context

HTMX = {"HTTP_HX_REQUEST": "true"}

KNOBS = {
    "id": "knobs", "kind": "order", "prompt": "In which order does the sampler apply these?",
    "items": [
        {"id": "penalties", "text": "Repetition penalty"},
        {"id": "temperature", "text": "Temperature"},
        {"id": "min-p", "text": "Min-p"},
        {"id": "top-k", "text": "Top-k"},
        {"id": "top-p", "text": "Top-p"},
    ],
    "pair_feedback": [
        {"before": "top-k", "after": "top-p", "feedback": "Top-p is measured on the renormalized top-k survivors."},
        {"before": "penalties", "after": "temperature", "feedback": "Penalties act on the raw logits."},
    ],
    "mistakes": [
        {"order": ["penalties", "temperature", "top-k", "top-p", "min-p"],
         "feedback": "Min-p last is the V0 sampler's order."},
        {"order": "penalties, min-p, top-k, top-p, temperature", "feedback": "Temperature last is llama.cpp's chain."},
    ],
}
IDS = [item["id"] for item in KNOBS["items"]]
REFERENCE = ", ".join(IDS)


def _with(part, **changes):
    return {**part, **changes}


# --- the spec -----------------------------------------------------------------------------

@pytest.mark.parametrize(("part", "key"), [
    (_with(KNOBS, items=KNOBS["items"][:2]), "items"),                                 # too few to order
    (_with(KNOBS, items="a, b, c"), "items"),
    (_with(KNOBS, items=[*KNOBS["items"], {"id": "top-k", "text": "Top-k again"}]), "items[5].id"),
    (_with(KNOBS, items=[{"id": "Top K!", "text": "x"}, *KNOBS["items"]]), "items[0].id"),
    (_with(KNOBS, items=[{"id": "a", "text": " "}, *KNOBS["items"]]), "items[0].text"),
    (_with(KNOBS, items=[{"id": "a", "text": "A", "why": "typo"}, *KNOBS["items"]]), "items[0]"),
    (_with(KNOBS, pair_feedback=[{"before": "top-k", "after": "nucleus", "feedback": "x"}]), "pair_feedback[0].after"),
    (_with(KNOBS, pair_feedback=[{"before": "top-p", "after": "top-k", "feedback": "x"}]), "pair_feedback[0].after"),
    (_with(KNOBS, pair_feedback=[{"before": "top-k", "after": "top-p"}]), "pair_feedback[0].feedback"),
    (_with(KNOBS, pair_feedback=[KNOBS["pair_feedback"][0]] * 2), "pair_feedback[1]"),
    (_with(KNOBS, pair_feedback={"before": "top-k"}), "pair_feedback"),
    (_with(KNOBS, mistakes=[{"order": REFERENCE, "feedback": "x"}]), "mistakes[0].order"),       # the right order
    (_with(KNOBS, mistakes=[{"order": "top-p, top-k", "feedback": "x"}]), "mistakes[0].order"),  # not every item
    (_with(KNOBS, mistakes=[{"order": "top-p, top-k, nope, min-p, penalties", "feedback": "x"}]), "mistakes[0].order"),
    (_with(KNOBS, mistakes=[{"order": "top-p, top-p, temperature, min-p, penalties", "feedback": "x"}]),
     "mistakes[0].order"),
    (_with(KNOBS, mistakes=[KNOBS["mistakes"][0], KNOBS["mistakes"][0]]), "mistakes[1].order"),
    (_with(KNOBS, mistakes=[{"order": 3, "feedback": "x"}]), "mistakes[0].order"),
    (_with(KNOBS, mistakes=[{"order": "top-p, top-k, temperature, min-p, penalties"}]), "mistakes[0].feedback"),
    (_with(KNOBS, mistakes=[{"answer": "x", "feedback": "x"}]), "mistakes[0]"),
    (_with(KNOBS, item=[]), "item"),
])
def test_bad_specs_name_the_key(part, key):
    with pytest.raises(SpecError) as caught:
        grading.get_kind("order").load_spec(part)
    assert caught.value.key == key


# --- grading ------------------------------------------------------------------------------

def test_the_right_order_scores_one():
    verdict = grading.grade(KNOBS, REFERENCE, {})
    assert verdict.valid and verdict.correct and verdict.score == 1.0 and verdict.feedback == "Correct."
    assert verdict.interpreted == "Repetition penalty → Temperature → Min-p → Top-k → Top-p"
    assert verdict.expected == verdict.interpreted


@pytest.mark.parametrize("answer", ["penalties,temperature,min-p,top-k,top-p",
                                    "  Penalties  Temperature\nMIN-P ; top-k,top-p ",
                                    "penalties, temperature, min-p, top-k, top-p,"])
def test_spacing_case_and_separators_do_not_matter(answer):
    assert grading.grade(KNOBS, answer, {}).correct


def test_a_fully_reversed_order_scores_zero():
    verdict = grading.grade(KNOBS, ", ".join(reversed(IDS)), {})
    assert verdict.valid and verdict.correct is False and verdict.score == 0.0
    assert "0 of the 10 pairs in the right order" in verdict.feedback


def test_one_swap_of_neighbours_scores_high_but_not_one_and_names_the_pair():
    verdict = grading.grade(KNOBS, "penalties, temperature, min-p, top-p, top-k", {})
    assert verdict.correct is False and verdict.score == pytest.approx(1 - 1 / 10)
    assert "“Top-k” should come before “Top-p”." in verdict.feedback
    assert KNOBS["pair_feedback"][0]["feedback"] in verdict.feedback  # the author's note for this pair
    assert KNOBS["pair_feedback"][1]["feedback"] not in verdict.feedback  # not inverted here
    assert "Score: 9 of the 10 pairs in the right order, 1 − 1 ÷ 10 = 0.90." in verdict.feedback


def test_the_first_pair_out_of_order_is_read_from_the_top():
    # Temperature above the penalties is the first inversion from the top, though the
    # list has others further down.
    verdict = grading.grade(KNOBS, "temperature, penalties, top-p, min-p, top-k", {})
    first = verdict.feedback.split(". ")[0]
    assert "Penalties act on the raw logits." in verdict.feedback
    assert verdict.feedback.index("“Repetition penalty” should come before “Temperature”.") < \
        verdict.feedback.index("Score:")
    assert first.startswith("“Repetition penalty” should come before “Temperature”")
    assert verdict.score == pytest.approx(1 - 3 / 10)  # temperature/penalties, top-p/min-p, top-p/top-k


def test_a_listed_order_gets_its_feedback_first_and_its_label():
    verdict = grading.grade(KNOBS, "penalties, temperature, top-k, top-p, min-p", {})
    assert verdict.feedback.startswith("Min-p last is the V0 sampler's order.")
    assert "“Min-p” should come before “Top-p”." in verdict.feedback  # the first neighbours out of order
    assert verdict.mistake == "mistakes[0]" and verdict.score == pytest.approx(1 - 2 / 10)


def _kendall_score(order):
    """The rule, computed another way: the share of all pairs of the reference that
    keep their relative order in ``order``."""
    position = {item: index for index, item in enumerate(order)}
    pairs = list(itertools.combinations(IDS, 2))
    return sum(position[a] < position[b] for a, b in pairs) / len(pairs)


@settings(max_examples=80, deadline=None)
@given(order=st.permutations(IDS), separator=st.sampled_from([",", ", ", " ", "\n", " ; "]))
def test_every_permutation_scores_the_rule_and_only_the_reference_is_correct(order, separator):
    verdict = grading.grade(KNOBS, separator.join(order), {})
    assert verdict.valid and 0.0 <= verdict.score <= 1.0
    assert verdict.score == pytest.approx(_kendall_score(order))
    assert verdict.correct is (list(order) == IDS) and (verdict.score == 1.0) is (list(order) == IDS)
    if list(order) != IDS:
        assert "should come before" in verdict.feedback


# --- unreadable answers -------------------------------------------------------------------

@pytest.mark.parametrize(("answer", "message"), [
    ("", "give the order"),
    (" , ; ", "give the order"),
    ("penalties, temperature, min-p, top-k", "leaves out 'top-p'"),
    ("penalties, temperature, min-p, top-k, top-p, nucleus", "there is no step 'nucleus'"),
    ("penalties, temperature, temperature, min-p, top-k, top-p", "'temperature' appears twice"),
    ("a" * 2_001, "too long"),
])
def test_unknown_missing_or_repeated_ids_are_invalid_with_a_message(answer, message):
    for method in (grading.grade, grading.interpret):
        verdict = method(KNOBS, answer, {})
        assert not verdict.valid and message in verdict.feedback


def test_an_invalid_answer_does_not_reveal_the_order():
    verdict = grading.grade(KNOBS, "nucleus", {})
    assert "the steps are min-p, penalties, temperature, top-k, top-p" in verdict.feedback  # sorted, not ranked


def test_interpret_shows_the_order_and_reveals_nothing():
    verdict = grading.interpret(KNOBS, "top-p, top-k, min-p, temperature, penalties", {})
    assert verdict.valid and verdict.correct is None and verdict.score == 0 and verdict.expected == ""
    assert verdict.interpreted == "Top-p → Top-k → Min-p → Temperature → Repetition penalty"
    assert verdict.feedback == ""


def test_texts_and_feedback_may_quote_the_variant():
    part = _with(KNOBS, items=[{"id": "penalties", "text": "{{ engine }} penalties"}, *KNOBS["items"][1:]],
                 mistakes=[{"order": "temperature, penalties, min-p, top-k, top-p",
                            "feedback": "Not in {{ engine }}."}])
    verdict = grading.grade(part, "temperature, penalties, min-p, top-k, top-p", {"engine": "vLLM"})
    assert "Not in vLLM." in verdict.feedback and "“vLLM penalties” should come before" in verdict.feedback


# --- what validation grades ---------------------------------------------------------------

def test_reference_and_mistakes_are_consistent_with_grading():
    kind = grading.get_kind("order")
    spec = kind.load_spec(KNOBS)
    assert grading.grade(spec, kind.reference_answer(spec, {}), {}).correct
    mistakes = kind.mistake_answers(spec, {})
    assert len(mistakes) == 4  # two listed orders, one swap per pair note
    assert mistakes[2][0] == "penalties, temperature, min-p, top-p, top-k"
    assert mistakes[3][0] == "temperature, penalties, min-p, top-k, top-p"
    for text, feedback in mistakes:
        verdict = grading.grade(spec, text, {})
        assert verdict.correct is False and 0.0 <= verdict.score < 1.0 and feedback in verdict.feedback
    assert kind.validate_part(spec, {}) == []


def test_validation_reports_a_template_that_does_not_render():
    kind = grading.get_kind("order")
    spec = kind.load_spec(_with(KNOBS, pair_feedback=[{"before": "top-k", "after": "top-p",
                                                        "feedback": "{{ nowhere | ms }}"}]))
    problems = kind.validate_part(spec, {})
    assert len(problems) == 1 and problems[0].startswith("pair_feedback[0].feedback")


def test_capabilities():
    kind = grading.get_kind("order")
    assert kind.auto_graded and not kind.self_assessed and not kind.multiline_answer and not kind.uses_editor
    assert kind.answer_template == "kinds/order/answer.html"


# --- the display order --------------------------------------------------------------------

GPUS = ["h100_sxm", "h200", "a100_80gb", "b200", "l40s", "mi300x"]
PARAMS = {"gpu": {"catalogue": "gpus", "choices": GPUS}, "batch": {"choices": [1, 8]}}


def _context(gpu, batch=1):
    from questions.catalogue import load_catalogue

    return build_context(PARAMS, {}, {"gpu": gpu, "batch": batch}, load_catalogue())


def _shown(part, context):
    return [item["id"] for item in grading.get_kind("order").display_context(part, context)["items"]]


def test_the_shuffle_is_stable_per_variant_differs_across_variants_and_is_never_the_answer():
    first = _shown(KNOBS, _context("h200", 8))
    assert _shown(KNOBS, _context("h200", 8)) == first and sorted(first) == sorted(IDS)
    orders = {tuple(_shown(KNOBS, _context(gpu, batch))) for gpu in GPUS for batch in (1, 8)}
    assert len(orders) > 1 and tuple(IDS) not in orders


@pytest.mark.parametrize("seed", range(40))
def test_three_items_are_never_shown_in_order(seed):
    part = _with(KNOBS, id=f"p{seed}", items=KNOBS["items"][:3], pair_feedback=[], mistakes=[])
    assert _shown(part, {}) != IDS[:3]


def test_the_display_gives_the_typed_order_and_states_the_rule():
    display = grading.get_kind("order").display_context(KNOBS, {})
    assert display["typed"] == ", ".join(item["id"] for item in display["items"])
    assert display["rule"] == rule_text(5) and "1 − (pairs out of order ÷ 10)" in display["rule"]


# --- the pages ----------------------------------------------------------------------------

ORDER_QUESTION_YAML = textwrap.dedent(
    """\
    slug: test-sampler-order
    seed: 58
    title: The sampler's order (test question)
    topic: speculative
    difficulty: 1
    summary: The order of the sampling knobs.
    params:
      temp: {choices: [0.7, 1.5]}
    statement: |
      A request sets temperature {{ temp }}, top-k and top-p.
    parts:
      - id: knobs
        kind: order
        prompt: In which order are they applied?
        items:
          - {id: temperature, text: "Temperature ({{ temp }})"}
          - {id: top-k, text: Top-k}
          - {id: top-p, text: Top-p}
        pair_feedback:
          - {before: top-k, after: top-p, feedback: Top-p sees the renormalized top-k survivors.}
        mistakes:
          - order: [top-k, top-p, temperature]
            feedback: Temperature last is llama.cpp's chain.
    solution: |
      Temperature, then top-k, then top-p.
    """
)


@pytest.fixture
def order_question(db):
    from questions.services import question_save_text

    result = question_save_text(ORDER_QUESTION_YAML, origin="file",
                                source_path="questions/bank/speculative/058-test-sampler-order.yaml")
    assert result.version is not None, result.problems
    return result.version


def test_validate_questions_accepts_a_question_with_an_order_part(tmp_path):
    from questions.validation import validate_file

    path = tmp_path / "speculative" / "058-test-sampler-order.yaml"
    path.parent.mkdir()
    path.write_text(ORDER_QUESTION_YAML, encoding="utf-8")
    report = validate_file(path)
    assert report.ok, report.problems


def test_the_practice_page_lists_the_steps_with_buttons_and_grades_the_typed_order(client, login_as, candidate,
                                                                                   order_question):
    from grading import services
    from grading.models import Attempt

    login_as(candidate)
    page = client.get(reverse("question-detail", args=["test-sampler-order"])).content.decode()
    assert '<ol class="order-items"' in page and 'data-order-move="up"' in page
    assert 'aria-label="Move “Top-k” down"' in page
    assert "Temperature (0.7)" in page or "Temperature (1.5)" in page  # the item's template filled for the variant
    assert 'name="answer"' in page and "/static/kinds/order.js" in page
    assert rule_text(3) in page

    url = reverse("submit-answer", args=["test-sampler-order", "knobs"])
    assert client.post(url, {"answer": "temperature, top-p, top-k"}, **HTMX).status_code == 200
    attempt = Attempt.objects.get()
    services.attempt_grade(attempt.id)
    attempt.refresh_from_db()
    assert attempt.correct is False and attempt.score == pytest.approx(2 / 3)
    poll = client.get(reverse("attempt-status", args=[attempt.id]), **HTMX).content.decode()
    assert "should come before" in poll and "renormalized top-k survivors" in poll

    preview = client.post(reverse("interpret-answer", args=["test-sampler-order", "knobs"]),
                          {"answer": "top-p, top-k, temperature"}, **HTMX).content.decode()
    assert "Top-p → Top-k → Temperature" in preview
    missing = client.post(url, {"answer": "top-k"}, **HTMX).content.decode()
    assert 'data-verdict="invalid"' in missing and "leaves out" in missing
    assert Attempt.objects.count() == 1  # the unreadable one cost nothing


def test_the_interview_room_shows_the_steps_and_grades_an_order(client, login_as, interviewer, candidate,
                                                                 order_question):
    from grading.models import Attempt
    from grading.services import attempt_grade
    from trainer.interviews.tests.conftest import make_interview, start

    interview = start(make_interview(interviewer, order_question), candidate)
    login_as(candidate)
    room = client.get(reverse("interview-room", args=[interview.id])).content.decode()
    assert 'data-order-id="top-p"' in room and 'data-order-move="down"' in room
    url = reverse("interview-answer", args=[interview.id, 1, "knobs"])
    assert f'hx-post="{url}"' in room

    assert client.post(url, {"answer": "temperature, top-k, top-p"}, **HTMX).status_code == 200
    assert attempt_grade(Attempt.objects.get().id).correct is True
