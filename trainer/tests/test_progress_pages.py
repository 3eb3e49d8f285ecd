"""The question browser's filters, the dashboard and the exports."""

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from grading import services

HTMX = {"HTTP_HX_REQUEST": "true"}


def _answer(user, version, answer):
    result = services.attempt_submit(user=user, version=version, part_id="floor", seed=3, answer=answer)
    return services.attempt_grade(result.attempt.id)


def _bar_value(html, topic_label):
    match = re.search(rf'data-topic="{re.escape(topic_label)}" data-value="([0-9.]+)"', html)
    return float(match.group(1))


def test_filters_by_topic_kind_and_status(client, login_as, candidate, decode_question):
    login_as(candidate)
    url = reverse("question-list")
    assert "Decode floor" in client.get(url, {"topic": "roofline", "kind": "numeric"}).content.decode()
    assert "Decode floor" not in client.get(url, {"topic": "kv-cache"}).content.decode()
    assert "Decode floor" not in client.get(url, {"kind": "code"}).content.decode()
    assert "Decode floor" in client.get(url, {"status": "new"}).content.decode()
    _answer(candidate, decode_question, "1 s")  # wrong: attempted, in review tomorrow
    assert "Decode floor" not in client.get(url, {"status": "new"}).content.decode()
    assert "Decode floor" in client.get(url, {"status": "attempted"}).content.decode()


def test_filtering_with_htmx_returns_only_the_results_partial(client, login_as, candidate, decode_question):
    login_as(candidate)
    response = client.get(reverse("question-list"), {"topic": "roofline"}, **HTMX)
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="results">')
    assert "<html" not in body
    assert response.headers["Vary"].count("HX-Request") == 1


def test_list_and_dashboard_queries_do_not_grow_with_attempts(
    client, login_as, candidate, decode_question, django_assert_max_num_queries
):
    login_as(candidate)
    for answer in ["1 s", "2 s", "3 s", "4 s"]:
        _answer(candidate, decode_question, answer)
    with django_assert_max_num_queries(8):  # session, user, permissions, questions, attempts
        client.get(reverse("question-list"))
    with django_assert_max_num_queries(8):
        client.get(reverse("dashboard"))


def test_dashboard_mastery_moves_when_a_question_is_solved(client, login_as, candidate, decode_question):
    import grading
    from questions.variants import draw_variant

    login_as(candidate)
    before = client.get(reverse("dashboard")).content.decode()
    assert _bar_value(before, "Roofline and hardware") == 0.0
    assert "test-decode-floor" in before  # what next: the only new question

    question = decode_question.as_question()
    kind = grading.get_kind("numeric")
    right = kind.reference_answer(kind.load_spec(question.part("floor").raw), draw_variant(question, 3).context)
    _answer(candidate, decode_question, right)
    after = client.get(reverse("dashboard")).content.decode()
    assert _bar_value(after, "Roofline and hardware") == pytest.approx(1.0, abs=0.01)
    # One day of history is a point, not a chart: the page says so instead of bare axes.
    assert 'id="history-chart"' not in after and 'id="history-too-short"' in after


def test_dashboard_draws_dated_history_from_two_days_of_practice(client, login_as, candidate, decode_question):
    from datetime import timedelta

    from django.utils import timezone

    from trainer.models import MasterySnapshot

    _answer(candidate, decode_question, "1 s")
    ten_days_ago = timezone.now() - timedelta(days=10)
    MasterySnapshot.objects.create(user=candidate, day=ten_days_ago.date(), taken_at=ten_days_ago,
                                   mastery={"roofline": 0.4})
    body = login_as(candidate).get(reverse("dashboard")).content.decode()
    assert 'id="history-chart"' in body and 'id="history-too-short"' not in body
    ticks = re.findall(r'<text class="date-tick"[^>]*>([^<]+)</text>', body)
    first_day = timezone.localtime(timezone.now() - timedelta(days=30))
    assert len(ticks) == 4 and ticks[0] == f"{first_day.day} {first_day:%b}"


def test_exports_hold_every_attempt(client, login_as, candidate, other_candidate, decode_question):
    _answer(candidate, decode_question, "1 s")
    _answer(other_candidate, decode_question, "2 s")
    login_as(candidate)
    rows = list(csv.DictReader(io.StringIO(client.get(reverse("export-attempts", args=["csv"])).content.decode())))
    assert [row["answer"] for row in rows] == ["1 s"]
    assert rows[0]["question"] == "test-decode-floor" and rows[0]["correct"] == "False"
    records = json.loads(client.get(reverse("export-attempts", args=["json"])).content)
    assert [record["answer"] for record in records] == ["1 s"]


def test_rebuilding_progress_from_attempts_matches_the_incremental_record(candidate, decode_question):
    from grading.models import Attempt
    from trainer.models import Progress
    from trainer.services import progress_rebuild

    for answer in ["1 s", "2 ms", "3 s"]:
        _answer(candidate, decode_question, answer)
    # A run of the examples is graded but never scored: the rebuild must skip it as the
    # live record does (here a perfect one, which would otherwise mark the part solved).
    Attempt.objects.create(user=candidate, question_version=decode_question, part_id="floor", part_kind="numeric",
                           purpose=Attempt.Purpose.EXAMPLES, variant_seed=3, answer="41.8 ms",
                           status=Attempt.Status.GRADED, correct=True, score=1.0, verdict={"correct": True})
    fields = ["part_scores", "solved_parts", "attempted", "solved", "last_attempt_at", "review_cards", "review_due_at"]
    incremental = list(Progress.objects.filter(user=candidate).values(*fields))
    progress_rebuild(candidate)
    assert list(Progress.objects.filter(user=candidate).values(*fields)) == incremental
    assert incremental[0]["attempted"] and set(incremental[0]["review_cards"]) == {"floor"}


def test_sharing_practice_is_off_until_the_candidate_turns_it_on(client, login_as, candidate, decode_question):
    from trainer.models import PracticeSharing

    login_as(candidate)
    page = client.get(reverse("dashboard")).content.decode()
    assert 'data-shared="false"' in page and "Share my practice with interviewers" in page
    assert not PracticeSharing.objects.filter(user=candidate, shared=True).exists()

    response = client.post(reverse("practice-sharing"), {"shared": "true"})
    assert response.status_code == 302 and response["Location"] == reverse("dashboard")
    assert PracticeSharing.objects.get(user=candidate).shared
    assert 'data-shared="true"' in client.get(reverse("dashboard")).content.decode()

    # htmx swaps the section alone.
    response = client.post(reverse("practice-sharing"), {"shared": "false"}, **HTMX)
    body = response.content.decode()
    assert body.lstrip().startswith('<section class="card" id="sharing" data-shared="false"') and "<html" not in body
    assert not PracticeSharing.objects.get(user=candidate).shared


def test_sharing_needs_a_post_and_a_login(client, login_as, candidate):
    assert client.post(reverse("practice-sharing"), {"shared": "true"}).status_code == 302  # to the login page
    login_as(candidate)
    assert client.get(reverse("practice-sharing")).status_code == 405


def test_interview_only_questions_are_not_part_of_the_dashboard(client, login_as, candidate, decode_question):
    from questions.models import Question

    Question.objects.filter(id=decode_question.question_id).update(interview_only=True)
    login_as(candidate)
    assert "test-decode-floor" not in client.get(reverse("dashboard")).content.decode()
