"""Bounds: what a candidate can make the interview record, and the panel's page, carry."""

from django.urls import reverse

from trainer.interviews import services
from trainer.interviews.models import InterviewEvent


def _first_question(interview):
    return interview.questions.select_related("question_version").get(position=1)


def test_unreadable_answers_are_kept_only_as_a_bounded_prefix(
    client, login_as, started_interview, interviewer, candidate
):
    question = _first_question(started_interview)
    huge = "x" * 200_000  # unreadable, so it costs no attempt: nothing else limits how many
    for _ in range(10):
        result = services.answer_submit(interview=started_interview, user=candidate, question=question,
                                        part_id="floor", answer=huge)
        assert result.attempt is None
    events = InterviewEvent.objects.filter(interview=started_interview, kind=InterviewEvent.Kind.ANSWER_INVALID)
    assert events.count() == 10
    for event in events:
        assert len(event.data["answer"]) == services.MAX_UNREADABLE_KEPT
        assert event.data["cut"] is True and event.data["answer_chars"] == 200_000
    # The answer too long for its kind is told so, with the limit.
    assert "the limit is 10,000" in events.first().data["feedback"]
    login_as(interviewer)
    page = client.get(reverse("interview-monitor", args=[started_interview.id]))
    assert len(page.content) < 200_000  # ten answers, each at most 2,000 characters on the page
    assert "of 200000 characters kept" in page.content.decode()


def test_a_nul_typed_into_an_interview_is_recorded_as_a_replacement_character(started_interview, candidate):
    question = _first_question(started_interview)
    services.answer_submit(interview=started_interview, user=candidate, question=question, part_id="floor",
                           answer="4\x00 ms")
    event = InterviewEvent.objects.filter(interview=started_interview, kind=InterviewEvent.Kind.ANSWER_INVALID).get()
    assert event.data["answer"] == "4\ufffd ms"
