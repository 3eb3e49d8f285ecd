"""The question page and the dashboard make a fixed number of queries, however many
attempts the candidate has made."""

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading import services


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def _answer(user, version, count: int):
    for index in range(count):
        attempt = services.attempt_submit(user=user, version=version, part_id="floor", seed=7,
                                          answer=f"{index + 1} ms").attempt
        services.attempt_grade(attempt.id)
    explained = services.attempt_submit(user=user, version=version, part_id="why", seed=7,
                                        answer="KV reads add bytes; launch gaps add time.").attempt
    services.attempt_grade(explained.id)


def test_the_question_page_and_the_dashboard_do_not_grow_with_attempts(
    client, login_as, candidate, other_candidate, decode_question
):
    _answer(candidate, decode_question, 1)
    _answer(other_candidate, decode_question, 12)
    for name, args in (("question-detail", [decode_question.question.slug]), ("dashboard", []),
                       ("question-list", [])):
        url = reverse(name, args=args)
        login_as(candidate)
        few = _queries(client, url)
        login_as(other_candidate)
        many = _queries(client, url)
        assert many == few, f"{name}: {few} queries with 2 attempts, {many} with 13"
        assert few <= 12, f"{name}: {few} queries"
