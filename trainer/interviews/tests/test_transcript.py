"""The transcript: code diffs between submissions, the editor playback, the exports."""

from datetime import timedelta

import pytest

from grading.models import Attempt
from trainer.interviews import scorecards, selectors, services, transcript
from trainer.interviews.models import InterviewAttempt, InterviewEvent
from trainer.interviews.tests.conftest import CODE_QUESTION_DATA, make_interview, start

Kind = InterviewEvent.Kind
FIRST = "def total(xs):\n    return 0\n"
SECOND = "def total(xs):\n    return sum(xs)\n"


def record_code_submission(interview, question, user, source):
    """What answer_submit records for a code part. Grading does not take code parts yet
    (another module), so the attempt is stored here the way attempt_submit stores one."""
    attempt = Attempt.objects.create(user=user, question_version=question.question_version, part_id="impl",
                                     variant_seed=question.variant_seed, answer=source)
    InterviewAttempt.objects.create(attempt=attempt, question=question)
    services.event_append(interview.id, Kind.ANSWER, actor=user, question=question, part_id="impl",
                          data={"answer": source, "attempt_id": attempt.id, "kind": "code"})
    return attempt


@pytest.fixture
def coded(interviewer, code_question, decode_question, candidate):
    """An interview where the candidate typed, checked and submitted code twice,
    answered the decode question wrongly, took a hint, and the panel wrote a note."""
    interview = start(make_interview(interviewer, code_question, decode_question), candidate)
    code, decode = interview.questions.select_related("question_version").order_by("position")
    write = dict(interview=interview, user=candidate, question=code, part_id="impl")
    services.question_open(interview=interview, user=candidate, question=code)
    services.code_snapshot(**write, source="def total(xs):\n")
    services.code_snapshot(**write, source=FIRST)
    record_code_submission(interview, code, candidate, FIRST)
    services.code_run(**write, source=SECOND)
    record_code_submission(interview, code, candidate, SECOND)
    services.hint_take(interview=interview, user=candidate, question=decode)
    services.answer_submit(interview=interview, user=candidate, question=decode, part_id="floor", answer="1000 ms")
    services.note_add(interview=interview, author=interviewer, text="Wrote the loop before the signature")
    return interview


def test_each_code_submission_is_diffed_against_the_previous_one(coded):
    entries = selectors.timeline(coded)
    transcript.attach_code_diffs(entries)
    first, second = [entry for entry in entries if entry.event.kind == Kind.ANSWER and entry.event.part_id == "impl"]
    assert first.diff[0] == "--- starter code"
    assert "-    raise NotImplementedError" in first.diff and "+    return 0" in first.diff
    assert "-    return 0" in second.diff and "+    return sum(xs)" in second.diff
    assert not [
        entry for entry in entries if entry.event.kind == Kind.ANSWER and entry.event.part_id == "floor"
    ][0].diff


def test_snapshots_are_left_out_of_the_timeline_unless_asked(coded):
    assert Kind.CODE_SNAPSHOT not in [entry.event.kind for entry in selectors.timeline(coded)]
    assert [
        entry.event.kind for entry in selectors.timeline(coded, include_snapshots=True)
    ].count(Kind.CODE_SNAPSHOT) == 2


def test_playback_holds_every_recorded_editor_state_in_order(coded):
    (playback,) = transcript.playbacks(coded)
    assert (playback.question_position, playback.part_id) == (1, "impl")
    assert [frame["source"] for frame in playback.frames] == ["def total(xs):\n", FIRST, FIRST, SECOND, SECOND]
    assert [frame["kind"] for frame in playback.frames] == [
        Kind.CODE_SNAPSHOT, Kind.CODE_SNAPSHOT, Kind.ANSWER, Kind.CODE_RUN, Kind.ANSWER
    ]
    offsets = [frame["offset"] for frame in playback.frames]
    assert offsets == sorted(offsets) and offsets[0] >= 0


def test_code_diff_is_empty_for_equal_text():
    assert transcript.code_diff("a\n", "a\n", before_name="x", after_name="y") == []


def _submit_scorecard(interview, interviewer):
    """Judge every part (confirm the code, tick the explain part's rubric, override the
    decode answer with a reason, confirm the rest) and submit."""
    card = scorecards.scorecard_open(interview=interview, interviewer=interviewer)
    code, decode = interview.questions.order_by("position")
    scorecards.scorecard_save(
        scorecard=card, recommendation="yes", notes="Solid on code.",
        judgements={
            (code.id, "impl"): scorecards.JudgementInput(confirmed=True),
            (code.id, "cost"): scorecards.JudgementInput(rubric_ticked=("linear",)),
            (decode.id, "floor"): scorecards.JudgementInput(override_score=0.25, reason="Right method, slipped a unit"),
            (decode.id, "why"): scorecards.JudgementInput(confirmed=True),
        },
    )
    return scorecards.scorecard_submit(scorecard=card)


def test_markdown_export_holds_the_timeline_diffs_notes_and_submitted_scorecards(coded, interviewer, admin_user):
    services.interview_end(interview=coded, ended_by=interviewer)
    _submit_scorecard(coded, interviewer)
    draft = scorecards.scorecard_open(interview=coded, interviewer=admin_user)
    scorecards.scorecard_save(scorecard=draft, judgements={}, recommendation="strong_no", notes="PRIVATE DRAFT")
    markdown = transcript.export_markdown(coded)
    assert markdown.startswith("# Inference systems screen")
    assert "Wrote the loop before the signature" in markdown
    assert "`1000 ms`" in markdown and "hint 1" in markdown
    assert "  +    return sum(xs)" in markdown
    assert "### interviewer1: Yes" in markdown
    assert "- Q1/cost: rubric ticked 1 of 1, score 1.00" in markdown
    assert "- Q2/floor: overridden to 0.25 (auto score" in markdown and "Right method, slipped a unit" in markdown
    assert "PRIVATE DRAFT" not in markdown and "Strong no" not in markdown


def test_json_export_holds_every_event_with_snapshots_and_the_pinned_questions(coded, interviewer):
    services.interview_end(interview=coded, ended_by=interviewer)
    _submit_scorecard(coded, interviewer)
    data = transcript.export_json(coded)
    sequences = [event["sequence"] for event in data["events"]]
    assert sequences == list(range(1, coded.last_sequence + 1))  # nothing left out, snapshots included
    assert [q["slug"] for q in data["questions"]] == [CODE_QUESTION_DATA["slug"], "test-decode-floor"]
    assert all(isinstance(q["variant_seed"], int) for q in data["questions"])
    (card,) = data["scorecards"]
    assert card["recommendation"] == "yes"
    assert card["rubric_ticked"] == ["Q1/cost/linear"]
    floor = next(item for item in card["judgements"] if item["part"] == "floor")
    assert (floor["state"], floor["override_score"], floor["reason"]) == (
        "overridden", 0.25, "Right method, slipped a unit")
    submissions = [event for event in data["events"] if event["kind"] == "answer" and event["part"] == "impl"]
    assert submissions[1]["diff"] and submissions[1]["data"]["answer"] == SECOND


def test_question_scores_weigh_the_latest_auto_graded_answers(coded):
    from grading.services import attempt_grade

    for attempt in Attempt.objects.filter(part_id="floor"):
        attempt_grade(attempt.id)
    code_score, decode_score = selectors.question_scores(coded)
    assert decode_score.auto_score == 0.0  # one wrong answer
    impl = code_score.parts[0]
    assert (impl.part_id, impl.answers, impl.attempt.answer) == ("impl", 2, SECOND)
    cost = code_score.parts[1]
    assert cost.attempt is None and [item["id"] for item in cost.rubric] == ["linear"]


def test_timeline_offsets_count_from_the_start(coded):
    entry = selectors.timeline(coded)[-1]
    assert entry.offset.startswith("+00:0")
    entry.started_at = entry.event.at - timedelta(minutes=12, seconds=5)
    assert entry.offset == "+12:05"
