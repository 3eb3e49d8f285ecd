"""The panel's pages that list things make a fixed number of queries, however long the
interview's record is: each is measured on a short record, then must match on a long one."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.services import attempt_grade
from trainer.interviews import services
from trainer.interviews.tests.conftest import make_interview, start

PAGES = ["interview-monitor", "interview-transcript", "interview-list"]


def _activity(interview, candidate, interviewer, rounds: int):
    question = interview.questions.select_related("question_version").get(position=1)
    for index in range(rounds):
        result = services.answer_submit(interview=interview, user=candidate, question=question, part_id="floor",
                                        answer=f"{index + 1} ms")
        attempt_grade(result.attempt.id)
        services.answer_submit(interview=interview, user=candidate, question=question, part_id="floor",
                               answer="not a number")
        services.note_add(interview=interview, author=interviewer, text=f"note {index}")
    services.hint_take(interview=interview, user=candidate, question=question)


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


@pytest.mark.parametrize("page", PAGES)
def test_panel_pages_make_the_same_queries_for_a_short_and_a_long_record(
    page, client, login_as, interviewer, candidate, other_candidate, decode_question
):
    short = start(make_interview(interviewer, decode_question), candidate)
    _activity(short, candidate, interviewer, rounds=1)
    long = start(make_interview(interviewer, decode_question), other_candidate)
    _activity(long, other_candidate, interviewer, rounds=8)
    login_as(interviewer)
    args = (lambda interview: []) if page == "interview-list" else (lambda interview: [interview.id])
    few = _queries(client, reverse(page, args=args(short)))
    many = _queries(client, reverse(page, args=args(long)))
    assert many == few, f"{page}: {few} queries for a short record, {many} for a long one"
    assert few <= 25
