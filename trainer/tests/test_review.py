"""The review page: each interviewer sees the interviews they sit on, and a candidate's
practice only once that candidate shares it."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from conftest import PASSWORD
from grading import services as grading_services
from trainer import services
from trainer.interviews import services as interview_services
from trainer.interviews.tests.conftest import make_interview, start
from trainer.roles import Role


def _interview_answer(interview, candidate, answer):
    interview_services.answer_submit(
        interview=interview, user=candidate, question=interview.questions.get(), part_id="floor", answer=answer
    )


def _rows(client):
    """(interview id or "practice", username, answer) of each row of the review page."""
    body = client.get(reverse("review")).content.decode()
    rows = re.findall(r'<tr data-attempt="\d+">(.*?)</tr>', body, re.S)
    found = set()
    for row in rows:
        interview = re.search(r'data-interview="(\d+)"', row)
        label = int(interview.group(1)) if interview else ("practice" if "data-practice" in row else None)
        username, answer = re.search(r"</td>\s*<td>([^<]+)</td>.*?<code>([^<]*)</code>", row, re.S).groups()
        found.add((label, username, answer))
    return found


@pytest.fixture
def practising_candidate(db):
    return services.user_create(username="cand3", password=PASSWORD, role=Role.CANDIDATE)


@pytest.fixture
def two_interviews(interviewer, other_interviewer, candidate, other_candidate, decode_question):
    """Interview A (by `interviewer`, taken by `candidate`) and interview B (by
    `other_interviewer`, taken by `other_candidate`), one answer each."""
    interview_a = start(make_interview(interviewer, decode_question), candidate)
    interview_b = start(make_interview(other_interviewer, decode_question), other_candidate)
    _interview_answer(interview_a, candidate, "11 ms")
    _interview_answer(interview_b, other_candidate, "22 ms")
    return interview_a, interview_b


def test_each_interviewer_sees_only_their_own_interviews_and_shared_practice(
    client, login_as, two_interviews, interviewer, other_interviewer, practising_candidate, kv_formula_question
):
    interview_a, interview_b = two_interviews
    grading_services.attempt_submit(
        user=practising_candidate, version=kv_formula_question, part_id="kv", seed=1, answer="2*L*h*d*b"
    )
    a_row, b_row = (interview_a.id, "cand", "11 ms"), (interview_b.id, "cand2", "22 ms")
    practice_row = ("practice", "cand3", "2*L*h*d*b")

    login_as(interviewer)
    assert _rows(client) == {a_row}
    login_as(other_interviewer)
    assert _rows(client) == {b_row}

    services.practice_sharing_set(practising_candidate, shared=True)
    login_as(interviewer)
    assert _rows(client) == {a_row, practice_row}
    login_as(other_interviewer)
    assert _rows(client) == {b_row, practice_row}

    services.practice_sharing_set(practising_candidate, shared=False)
    assert _rows(client) == {b_row}


def test_an_interviewer_added_to_a_panel_sees_that_interview(client, login_as, two_interviews, interviewer,
                                                             other_interviewer):
    interview_a, interview_b = two_interviews
    interview_services.interviewer_add(interview=interview_b, added_by=other_interviewer,
                                       username=interviewer.username)
    login_as(interviewer)
    assert {label for label, *_ in _rows(client)} == {interview_a.id, interview_b.id}


def test_admins_see_every_interview_but_not_unshared_practice(client, login_as, two_interviews, admin_user,
                                                              practising_candidate, kv_formula_question):
    interview_a, interview_b = two_interviews
    grading_services.attempt_submit(
        user=practising_candidate, version=kv_formula_question, part_id="kv", seed=1, answer="2*L*h*d*b"
    )
    login_as(admin_user)
    assert {label for label, *_ in _rows(client)} == {interview_a.id, interview_b.id}
    services.practice_sharing_set(practising_candidate, shared=True)
    assert {label for label, *_ in _rows(client)} == {interview_a.id, interview_b.id, "practice"}


def test_an_interview_candidates_practice_is_private_too(client, login_as, two_interviews, interviewer, candidate,
                                                         kv_formula_question):
    grading_services.attempt_submit(user=candidate, version=kv_formula_question, part_id="kv", seed=1, answer="L")
    login_as(interviewer)
    assert "practice" not in {label for label, *_ in _rows(client)}


def test_candidates_are_refused_the_review_page(client, login_as, candidate):
    login_as(candidate)
    assert client.get(reverse("review")).status_code == 403


def test_the_review_page_takes_the_same_queries_whatever_it_lists(
    client, login_as, interviewer, candidate, practising_candidate, decode_question, kv_formula_question,
    django_assert_num_queries,
):
    interview = start(make_interview(interviewer, decode_question), candidate)
    _interview_answer(interview, candidate, "1 ms")
    services.practice_sharing_set(practising_candidate, shared=True)
    grading_services.attempt_submit(user=practising_candidate, version=kv_formula_question, part_id="kv", seed=1,
                                    answer="L")
    login_as(interviewer)
    with CaptureQueriesContext(connection) as few:
        client.get(reverse("review"))

    second = start(make_interview(interviewer, decode_question), services.user_create(
        username="cand4", password=PASSWORD, role=Role.CANDIDATE))
    for answer in ("2 ms", "3 ms", "4 ms"):
        _interview_answer(interview, candidate, answer)
        _interview_answer(second, second.candidate, answer)
        grading_services.attempt_submit(user=practising_candidate, version=kv_formula_question, part_id="kv",
                                        seed=1, answer=f"L*{answer[0]}")
    # session, user, the user's groups' and own permissions, the attempts with their
    # interviews (one query, whatever the count)
    with django_assert_num_queries(len(few.captured_queries)):
        response = client.get(reverse("review"))
    assert response.content.decode().count("<tr data-attempt=") == 11
    assert len(few.captured_queries) == 5
