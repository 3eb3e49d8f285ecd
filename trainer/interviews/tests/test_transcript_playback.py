"""The transcript's timeline and playback show each run and submission of code, with its
results and verdict, in line with the editor's snapshots, as the candidate saw them."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from grading.models import Attempt
from trainer.interviews import services, transcript
from trainer.interviews.models import InterviewEvent
from trainer.interviews.tests.conftest import make_interview, start

Kind = InterviewEvent.Kind
RUN_VERDICT = {
    "valid": True, "correct": None, "score": 0.0, "feedback": "passed: first\nwrong answer: second",
    "examples": [{"name": "first", "outcome": "passed"},
                 {"name": "second", "outcome": "wrong_answer", "got": "[9]", "expected": "[0, 1]"}],
}
DRAFT = "def top_p_keep(logits, p, temperature):\n    return [9]\n"
FIXED = "def top_p_keep(logits, p, temperature):\n    return [0, 1]\n"


@pytest.fixture
def replayed(interviewer, candidate, runnable_code_question):
    """Typed, ran (the result came back before the next snapshot), typed, submitted
    (its verdict came back after the last frame)."""
    interview = start(make_interview(interviewer, runnable_code_question), candidate)
    question = interview.questions.select_related("question_version").get()
    write = dict(interview=interview, user=candidate, question=question, part_id="keep")
    services.code_snapshot(**write, source=DRAFT)
    run = services.code_run(**write, source=DRAFT)
    run_at = InterviewEvent.objects.get(kind=Kind.CODE_RUN).at
    Attempt.objects.filter(id=run.attempt.id).update(
        status=Attempt.Status.GRADED, verdict=RUN_VERDICT, correct=None, score=0.0,
        graded_at=run_at + timedelta(microseconds=1))
    services.code_snapshot(**write, source=FIXED)
    answer = services.answer_submit(**write, answer=FIXED)
    Attempt.objects.filter(id=answer.attempt.id).update(
        status=Attempt.Status.GRADED, correct=True, score=1.0, graded_at=timezone.now() + timedelta(seconds=5),
        verdict={"valid": True, "correct": True, "score": 1.0, "feedback": "all hidden tests passed"})
    return interview


def test_each_frame_knows_the_run_and_submission_current_then(replayed):
    (playback,) = transcript.playbacks(replayed)
    assert [frame["kind"] for frame in playback.frames] == [Kind.CODE_SNAPSHOT, Kind.CODE_RUN, Kind.CODE_SNAPSHOT,
                                                            Kind.ANSWER]
    assert [entry.event.kind for entry in playback.results] == [Kind.CODE_RUN, Kind.ANSWER]
    current = [(frame["run"], frame["run_pending"], frame["submission"], frame["submission_pending"])
               for frame in playback.frames]
    assert current == [
        (None, False, None, False),  # nothing run yet
        (0, True, None, False),  # the run just pressed: its result not back yet
        (0, False, None, False),  # the result came back before this snapshot
        (0, False, 1, True),  # submitted; its verdict came later
    ]


def test_the_timeline_interleaves_snapshots_runs_and_verdicts_in_order(client, login_as, replayed, interviewer):
    login_as(interviewer)
    page = client.get(reverse("interview-transcript", args=[replayed.id])).content.decode()
    timeline = page[page.index('id="transcript-timeline"'):]
    positions = [timeline.index(f'data-kind="{kind}"') for kind in ("code_snapshot", "code_run", "answer")]
    assert positions == sorted(positions)
    assert timeline.index('data-kind="code_snapshot"', positions[1]) < positions[2]  # the second snapshot between
    run_item = timeline[positions[1]:timeline.index("data-kind=", positions[1] + 1)]
    assert 'data-outcome="wrong_answer"' in run_item and "[9]" in run_item and "[0, 1]" in run_item
    answer_item = timeline[positions[2]:]
    assert "correct" in answer_item and '<span class="score">1.00</span>' in answer_item
    assert 'data-playback-frame="1"' in timeline and 'href="#playback-q1-keep"' in timeline
    # The playback carries the same results, for the slider to show the one current at each frame.
    playback = page[page.index('id="playback-q1-keep"'):page.index('id="transcript-timeline"')]
    assert playback.count('class="playback-result"') == 2 and "all hidden tests passed" in playback
