"""Match parts: one left=right per left; score pairs right ÷ pairs; feedback per wrong
pair; the rights shown in a per-variant shuffle."""

import textwrap

import pytest
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

import grading
from grading.kinds.base import SpecError
from grading.kinds.match import rule_text
from grading.variants import build_context

HTMX = {"HTTP_HX_REQUEST": "true"}

BOUNDS = {
    "id": "bounds", "kind": "match", "prompt": "Match each phase with what bounds it.",
    "pairs": [
        {"left": {"id": "decode", "text": "Batch-1 decode step"}, "right": {"id": "hbm", "text": "HBM bandwidth"}},
        {"left": {"id": "prefill", "text": "32K-token prefill"}, "right": {"id": "flops", "text": "Tensor-core FLOPs"}},
        {"left": {"id": "load", "text": "Streaming weights in at startup"},
         "right": {"id": "storage", "text": "Storage and PCIe"}},
        {"left": {"id": "allreduce", "text": "TP all-reduce"}, "right": {"id": "nvlink", "text": "NVLink"}},
        {"left": {"id": "spec", "text": "Draft verification at batch 1"}, "right": "hbm"},  # a shared right
    ],
    "distractors": [{"id": "l2", "text": "L2 cache capacity"}],
    "mistakes": [
        {"left": "decode", "right": "flops", "feedback": "At batch 1 each weight byte feeds two FLOPs."},
        {"left": "spec", "right": "flops", "feedback": "Verifying k tokens reads the weights once: still HBM."},
    ],
}
REFERENCE = "decode=hbm, prefill=flops, load=storage, allreduce=nvlink, spec=hbm"
LEFTS = ["decode", "prefill", "load", "allreduce", "spec"]
RIGHTS = ["hbm", "flops", "storage", "nvlink", "l2"]
ANSWER = dict(pair.split("=") for pair in REFERENCE.split(", "))


def _with(part, **changes):
    return {**part, **changes}


def _pair(index, **changes):
    pairs = [dict(pair) for pair in BOUNDS["pairs"]]
    pairs[index].update(changes)
    return _with(BOUNDS, pairs=pairs)


# --- the spec -----------------------------------------------------------------------------

@pytest.mark.parametrize(("part", "key"), [
    (_with(BOUNDS, pairs=BOUNDS["pairs"][:1]), "pairs"),
    (_with(BOUNDS, pairs="decode=hbm"), "pairs"),
    (_pair(1, left={"id": "decode", "text": "Again"}), "pairs[1].left.id"),
    (_pair(1, right={"id": "hbm", "text": "HBM again"}), "pairs[1].right.id"),
    (_pair(4, right="pcie"), "pairs[4].right"),                 # names no right
    (_pair(4, right="l2"), "pairs[4].right"),                   # a distractor is no pair's answer
    (_pair(0, left={"id": "Decode!", "text": "x"}), "pairs[0].left.id"),
    (_pair(0, left={"id": "decode", "text": ""}), "pairs[0].left.text"),
    (_pair(0, right={"id": "hbm"}), "pairs[0].right.text"),
    (_pair(0, left="decode"), "pairs[0].left"),
    (_pair(0, why="typo"), "pairs[0]"),
    (_with(BOUNDS, distractors=[{"id": "hbm", "text": "HBM"}]), "distractors[0].id"),
    (_with(BOUNDS, distractors={"id": "x"}), "distractors"),
    (_with(BOUNDS, mistakes=[{"left": "nope", "right": "hbm", "feedback": "x"}]), "mistakes[0].left"),
    (_with(BOUNDS, mistakes=[{"left": "decode", "right": "nope", "feedback": "x"}]), "mistakes[0].right"),
    (_with(BOUNDS, mistakes=[{"left": "decode", "right": "hbm", "feedback": "x"}]), "mistakes[0].right"),  # right pair
    (_with(BOUNDS, mistakes=[BOUNDS["mistakes"][0]] * 2), "mistakes[1]"),
    (_with(BOUNDS, mistakes=[{"left": "decode", "right": "flops"}]), "mistakes[0].feedback"),
    (_with(BOUNDS, mistakes=[{"left": "decode", "right": "flops", "feedback": "x", "score": 0}]), "mistakes[0]"),
    (_with(BOUNDS, pair=[]), "pair"),
])
def test_bad_specs_name_the_key(part, key):
    with pytest.raises(SpecError) as caught:
        grading.get_kind("match").load_spec(part)
    assert caught.value.key == key


# --- grading ------------------------------------------------------------------------------

def test_the_right_pairs_score_one():
    verdict = grading.grade(BOUNDS, REFERENCE, {})
    assert verdict.valid and verdict.correct and verdict.score == 1.0 and verdict.feedback == "Correct."
    assert verdict.interpreted.startswith("Batch-1 decode step → HBM bandwidth; 32K-token prefill → Tensor-core FLOPs")
    assert verdict.expected == verdict.interpreted


@pytest.mark.parametrize("answer", [
    "spec=hbm, allreduce=nvlink, load=storage, prefill=flops, decode=hbm",   # any order of pairs
    " DECODE = HBM ;prefill=flops\nload=storage,allreduce=nvlink,, spec=hbm ",
    "decode=hbm, prefill=flops, load=storage, allreduce=nvlink, spec=hbm,",
])
def test_order_spacing_case_and_separators_do_not_matter(answer):
    assert grading.grade(BOUNDS, answer, {}).correct


def test_each_wrong_pair_gets_its_feedback_and_the_score_is_pairs_right_over_pairs():
    verdict = grading.grade(BOUNDS, "decode=flops, prefill=flops, load=l2, allreduce=nvlink, spec=hbm", {})
    assert verdict.valid and verdict.correct is False and verdict.score == pytest.approx(3 / 5)
    assert BOUNDS["mistakes"][0]["feedback"] in verdict.feedback                        # the author's, for this pair
    assert "“Streaming weights in at startup” does not go with “L2 cache capacity”." in verdict.feedback  # generic
    assert "Score: 3 of 5 pairs right = 0.60." in verdict.feedback
    assert "Storage and PCIe" not in verdict.feedback  # the right match is not named
    assert verdict.mistake == "mistakes[0]"


def test_every_pair_wrong_scores_zero():
    verdict = grading.grade(BOUNDS, "decode=l2, prefill=l2, load=l2, allreduce=l2, spec=l2", {})
    assert verdict.score == 0.0 and verdict.correct is False and verdict.mistake is None


@settings(max_examples=80, deadline=None)
@given(choice=st.fixed_dictionaries({left: st.sampled_from(RIGHTS) for left in LEFTS}), shuffle=st.randoms())
def test_any_pairing_scores_its_share_of_right_pairs(choice, shuffle):
    pairs = [f"{left}={right}" for left, right in choice.items()]
    shuffle.shuffle(pairs)
    verdict = grading.grade(BOUNDS, ", ".join(pairs), {})
    right = sum(ANSWER[left] == chosen for left, chosen in choice.items())
    assert verdict.valid and 0.0 <= verdict.score <= 1.0 and verdict.score == pytest.approx(right / 5)
    assert verdict.correct is (choice == ANSWER) and (verdict.score == 1.0) is (choice == ANSWER)


# --- unreadable answers -------------------------------------------------------------------

@pytest.mark.parametrize(("answer", "message"), [
    ("", "choose a match for every item"),
    ("decode=hbm, , load=storage, allreduce=nvlink, spec=hbm", "none for “32K-token prefill”"),
    ("decode hbm", "write each pair as left=right"),
    ("decode=", "write each pair as left=right"),
    ("=hbm", "write each pair as left=right"),
    (REFERENCE + ", ttft=hbm", "there is no item 'ttft' on the left"),
    ("decode=pcie, prefill=flops, load=storage, allreduce=nvlink, spec=hbm", "there is no item 'pcie' on the right"),
    (REFERENCE + ", decode=hbm", "'decode' is matched twice"),
    ("a" * 4_001, "too long"),
])
def test_unknown_missing_or_repeated_pairs_are_invalid_with_a_message(answer, message):
    for method in (grading.grade, grading.interpret):
        verdict = method(BOUNDS, answer, {})
        assert not verdict.valid and message in verdict.feedback


def test_interpret_shows_the_pairs_and_reveals_nothing():
    verdict = grading.interpret(BOUNDS, "decode=flops, prefill=flops, load=l2, allreduce=nvlink, spec=hbm", {})
    assert verdict.valid and verdict.correct is None and verdict.score == 0 and verdict.expected == ""
    assert verdict.interpreted.startswith("Batch-1 decode step → Tensor-core FLOPs;") and verdict.feedback == ""


def test_texts_and_feedback_may_quote_the_variant():
    part = _with(_pair(0, right={"id": "hbm", "text": "{{ gpu }} HBM"}),
                 mistakes=[{"left": "decode", "right": "flops", "feedback": "The {{ gpu }} is idle on FLOPs."}])
    verdict = grading.grade(part, REFERENCE.replace("decode=hbm", "decode=flops"), {"gpu": "H100"})
    assert "The H100 is idle on FLOPs." in verdict.feedback
    assert "→ H100 HBM" in verdict.interpreted  # the shared right, for the draft verification


# --- what validation grades ---------------------------------------------------------------

def test_reference_and_mistakes_are_consistent_with_grading():
    kind = grading.get_kind("match")
    spec = kind.load_spec(BOUNDS)
    assert kind.reference_answer(spec, {}) == REFERENCE
    assert grading.grade(spec, REFERENCE, {}).correct
    mistakes = kind.mistake_answers(spec, {})
    assert [text for text, _ in mistakes] == [REFERENCE.replace("decode=hbm", "decode=flops"),
                                              REFERENCE.replace("spec=hbm", "spec=flops")]
    for text, feedback in mistakes:
        verdict = grading.grade(spec, text, {})
        assert verdict.correct is False and verdict.score == pytest.approx(4 / 5) and feedback in verdict.feedback
    assert kind.validate_part(spec, {}) == []


def test_validation_reports_a_template_that_does_not_render():
    kind = grading.get_kind("match")
    spec = kind.load_spec(_pair(1, left={"id": "prefill", "text": "{{ nowhere | ms }}"}))
    problems = kind.validate_part(spec, {})
    assert len(problems) == 1 and problems[0].startswith("lefts[prefill].text")


def test_capabilities():
    kind = grading.get_kind("match")
    assert kind.auto_graded and not kind.self_assessed and not kind.multiline_answer and not kind.uses_editor
    assert kind.answer_template == "kinds/match/answer.html"


# --- the display --------------------------------------------------------------------------

GPUS = ["h100_sxm", "h200", "a100_80gb", "b200", "l40s", "mi300x"]
PARAMS = {"gpu": {"catalogue": "gpus", "choices": GPUS}}


def _context(gpu):
    from questions.catalogue import load_catalogue

    return build_context(PARAMS, {}, {"gpu": gpu}, load_catalogue())


def test_lefts_keep_their_order_and_rights_are_shuffled_per_variant():
    kind = grading.get_kind("match")
    display = kind.display_context(BOUNDS, _context("h200"))
    assert [left["id"] for left in display["lefts"]] == LEFTS
    assert sorted(right["id"] for right in display["rights"]) == sorted(RIGHTS)  # each right once, shared or not
    assert kind.display_context(BOUNDS, _context("h200")) == display
    orders = {tuple(right["id"] for right in kind.display_context(BOUNDS, _context(gpu))["rights"]) for gpu in GPUS}
    assert len(orders) > 1
    assert display["rule"] == rule_text(5) == "Score: the pairs you match right ÷ 5; correct only with all 5 right."


# --- the pages ----------------------------------------------------------------------------

MATCH_QUESTION_YAML = textwrap.dedent(
    """\
    slug: test-phase-bounds
    seed: 4
    title: What bounds each phase (test question)
    topic: roofline
    difficulty: 1
    summary: Phases and their bounds.
    params:
      gpu: {catalogue: gpus, choices: [h100_sxm, h200]}
    statement: |
      A 70B model on one {{ gpu.name }}.
    parts:
      - id: bounds
        kind: match
        prompt: Match each phase with what bounds it.
        pairs:
          - left: {id: decode, text: Batch-1 decode}
            right: {id: hbm, text: "HBM bandwidth ({{ gpu.hbm_bandwidth | TB/s }})"}
          - left: {id: prefill, text: Long prefill}
            right: {id: flops, text: Tensor-core FLOPs}
        distractors:
          - {id: pcie, text: PCIe bandwidth}
        mistakes:
          - {left: decode, right: flops, feedback: At batch 1 each weight byte feeds two FLOPs.}
    solution: |
      Decode streams the weights; prefill multiplies big matrices.
    """
)


@pytest.fixture
def match_question(db):
    from questions.services import question_save_text

    result = question_save_text(MATCH_QUESTION_YAML, origin="file",
                                source_path="questions/bank/roofline/004-test-phase-bounds.yaml")
    assert result.version is not None, result.problems
    return result.version


def test_validate_questions_accepts_a_question_with_a_match_part(tmp_path):
    from questions.validation import validate_file

    path = tmp_path / "roofline" / "004-test-phase-bounds.yaml"
    path.parent.mkdir()
    path.write_text(MATCH_QUESTION_YAML, encoding="utf-8")
    report = validate_file(path)
    assert report.ok, report.problems


def test_the_practice_page_shows_a_select_per_left_and_grades_the_pairs(client, login_as, candidate, match_question):
    from grading import services
    from grading.models import Attempt

    login_as(candidate)
    page = client.get(reverse("question-detail", args=["test-phase-bounds"])).content.decode()
    assert page.count('<select name="answer"') == 2 and 'value="decode=flops"' in page
    assert '<label for="match-bounds-decode">Batch-1 decode</label>' in page
    assert "HBM bandwidth (3.35 TB/s)" in page or "HBM bandwidth (4.8 TB/s)" in page
    assert rule_text(2) in page

    url = reverse("submit-answer", args=["test-phase-bounds", "bounds"])
    assert client.post(url, {"answer": ["decode=flops", "prefill=flops"]}, **HTMX).status_code == 200
    attempt = Attempt.objects.get()
    assert attempt.answer == "decode=flops, prefill=flops"
    services.attempt_grade(attempt.id)
    attempt.refresh_from_db()
    assert attempt.correct is False and attempt.score == 0.5
    poll = client.get(reverse("attempt-status", args=[attempt.id]), **HTMX).content.decode()
    assert "two FLOPs" in poll and "1 of 2 pairs right" in poll

    preview = client.post(reverse("interpret-answer", args=["test-phase-bounds", "bounds"]),
                          {"answer": ["decode=hbm", "prefill=pcie"]}, **HTMX).content.decode()
    assert "Long prefill → PCIe bandwidth" in preview
    half = client.post(url, {"answer": ["decode=hbm", ""]}, **HTMX).content.decode()
    assert 'data-verdict="invalid"' in half and "none for “Long prefill”" in half
    assert Attempt.objects.count() == 1


def test_the_interview_room_shows_the_selects_and_grades_a_match(client, login_as, interviewer, candidate,
                                                                 match_question):
    from grading.models import Attempt
    from grading.services import attempt_grade
    from trainer.interviews.tests.conftest import make_interview, start

    interview = start(make_interview(interviewer, match_question), candidate)
    login_as(candidate)
    room = client.get(reverse("interview-room", args=[interview.id])).content.decode()
    assert room.count('<select name="answer"') == 2 and 'value="prefill=pcie"' in room
    url = reverse("interview-answer", args=[interview.id, 1, "bounds"])
    assert client.post(url, {"answer": ["prefill=flops", "decode=hbm"]}, **HTMX).status_code == 200
    assert attempt_grade(Attempt.objects.get().id).correct is True
