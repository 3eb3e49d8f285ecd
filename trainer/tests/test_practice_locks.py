"""Practice keeps interview answers secret: interview-only questions never appear in it,
and a question asked by an interview that is not closed is locked for everyone but that
interview's panel and question authors, on every practice endpoint."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading import services as grading_services
from questions.models import Question
from questions.tests.factories import store_version
from trainer import selectors
from trainer.interviews import services as interview_services
from trainer.interviews.forms import InterviewCreateForm
from trainer.interviews.tests.conftest import make_interview, start

# Long enough to be recorded (MIN_EXPLANATION_WORDS).
EXPLANATION = "KV-cache reads grow with batch and context, and launches add gaps."

HTMX = {"HTTP_HX_REQUEST": "true"}
SLUG = "test-decode-floor"
MODEL_ANSWER = "KV reads add bytes; launch gaps add time."
HINT = "Every weight crosses HBM once per step."

# Every practice endpoint that names a question: (method, url name, extra url args, data).
ENDPOINTS = [
    ("get", "question-detail", [], {}),
    ("post", "new-variant", [], {}),
    ("post", "take-hint", [], {}),
    ("post", "give-up", [], {}),
    ("post", "interpret-answer", ["floor"], {"answer": "5 ms"}),
    ("post", "submit-answer", ["floor"], {"answer": "5 ms"}),
    ("post", "submit-answer", ["why"], {"answer": EXPLANATION}),
    ("post", "run-examples", ["floor"], {"answer": "5 ms"}),
]


def call(client, method, name, args, data, slug=SLUG, **headers):
    url = reverse(name, args=[slug, *args])
    return getattr(client, method)(url, data, **headers)


def assert_no_answers(response):
    body = response.content.decode()
    assert MODEL_ANSWER not in body and HINT not in body and 'id="solution"' not in body
    assert "Worked solution" not in body


@pytest.fixture
def interview(interviewer, decode_question):
    """Created by `interviewer` over the decode question; nobody has joined (invited)."""
    return make_interview(interviewer, decode_question)


@pytest.fixture
def started_interview(interview, candidate):
    return start(interview, candidate)


# --- Interview-only questions ---------------------------------------------------------------

@pytest.fixture
def interview_only_question(decode_question):
    Question.objects.filter(id=decode_question.question_id).update(interview_only=True)
    return decode_question


@pytest.mark.parametrize(("method", "name", "args", "data"), ENDPOINTS)
@pytest.mark.parametrize("role", ["candidate", "interviewer"])
def test_interview_only_questions_are_404_on_every_practice_endpoint(
    client, login_as, request, interview_only_question, role, method, name, args, data
):
    login_as(request.getfixturevalue(role))
    response = call(client, method, name, args, data)
    assert response.status_code == 404
    assert_no_answers(response)


def test_interview_only_questions_are_not_listed_but_interviews_can_ask_them(
    client, login_as, candidate, interviewer, interview_only_question
):
    login_as(candidate)
    assert b"Decode floor" not in client.get(reverse("question-list")).content
    assert b"Decode floor" not in client.get(reverse("dashboard")).content
    assert list(InterviewCreateForm(user=interviewer).fields["questions"].queryset) == [
        interview_only_question.question
    ]
    login_as(interviewer)
    assert b"Decode floor" in client.get(reverse("interview-create")).content


def test_authors_still_practise_interview_only_questions(client, login_as, admin_user, interview_only_question):
    login_as(admin_user)
    assert client.get(reverse("question-detail", args=[SLUG])).status_code == 200
    assert b"Decode floor" in client.get(reverse("question-list")).content


def test_an_old_attempt_on_an_interview_only_question_is_404(client, login_as, candidate, decode_question):
    attempt = grading_services.attempt_submit(
        user=candidate, version=decode_question, part_id="why", seed=3, answer=EXPLANATION
    ).attempt
    Question.objects.filter(id=decode_question.question_id).update(interview_only=True)
    login_as(candidate)
    assert client.get(reverse("attempt-status", args=[attempt.id])).status_code == 404


# --- Questions asked by a live interview ------------------------------------------------------

@pytest.mark.parametrize(("method", "name", "args", "data"), ENDPOINTS)
@pytest.mark.parametrize("role", ["candidate", "other_candidate", "other_interviewer"])
def test_every_practice_endpoint_refuses_a_question_a_live_interview_asks(
    client, login_as, request, interview, role, method, name, args, data
):
    """`interview` is invited, nobody joined yet: an invited candidate must not be able to
    study it before starting the clock. Refused for everyone off its panel."""
    login_as(request.getfixturevalue(role))
    response = call(client, method, name, args, data)
    assert response.status_code == 403
    assert b'id="question-locked"' in response.content
    assert_no_answers(response)


def test_the_invited_candidate_is_locked_out_during_the_interview(client, login_as, started_interview, candidate):
    login_as(candidate)
    response = client.get(reverse("question-detail", args=[SLUG]))
    assert response.status_code == 403 and b"in use in a live interview" in response.content
    response = client.post(reverse("give-up", args=[SLUG]))
    assert response.status_code == 403
    assert client.session.get(f"gave-up:{SLUG}") is None  # nothing was recorded either


def test_hints_taken_in_practice_are_refused_during_the_interview(client, login_as, interviewer, candidate,
                                                                   decode_question):
    interview = start(make_interview(interviewer, decode_question, hints=False), candidate)
    login_as(candidate)
    for headers in ({}, HTMX):
        response = client.post(reverse("take-hint", args=[SLUG]), **headers)
        assert response.status_code == 403
        assert HINT not in response.content.decode()
    assert client.session.get(f"hints:{SLUG}") is None
    # The room refuses too: hints follow the interview's setting.
    assert client.post(reverse("interview-hint", args=[interview.id, 1])).status_code == 403


def test_the_list_shows_a_locked_question_without_a_link(client, login_as, interview, candidate):
    login_as(candidate)
    body = client.get(reverse("question-list")).content.decode()
    assert f'data-locked="{SLUG}"' in body and "in use in a live interview; back when it ends" in body
    assert reverse("question-detail", args=[SLUG]) not in body


def test_the_lock_costs_the_list_no_query(client, login_as, candidate, interviewer, decode_question,
                                          django_assert_num_queries):
    login_as(candidate)
    with CaptureQueriesContext(connection) as unlocked:
        client.get(reverse("question-list"))
    make_interview(interviewer, decode_question)
    with django_assert_num_queries(len(unlocked.captured_queries)):
        body = client.get(reverse("question-list")).content.decode()
    assert f'data-locked="{SLUG}"' in body


@pytest.mark.parametrize("role", ["interviewer", "admin_user"])
def test_the_panel_and_authors_still_practise_it(client, login_as, request, interview, role):
    login_as(request.getfixturevalue(role))
    assert client.get(reverse("question-detail", args=[SLUG])).status_code == 200
    assert f'data-locked="{SLUG}"' not in client.get(reverse("question-list")).content.decode()


def test_an_interviewer_added_to_the_panel_is_let_in(client, login_as, interview, interviewer, other_interviewer):
    login_as(other_interviewer)
    assert client.get(reverse("question-detail", args=[SLUG])).status_code == 403
    interview_services.interviewer_add(interview=interview, added_by=interviewer, username=other_interviewer.username)
    assert client.get(reverse("question-detail", args=[SLUG])).status_code == 200


def test_being_on_one_panel_does_not_open_a_question_another_live_interview_asks(
    client, login_as, interview, decode_question, other_interviewer
):
    make_interview(other_interviewer, decode_question)
    login_as(other_interviewer)
    assert client.get(reverse("question-detail", args=[SLUG])).status_code == 403


def test_the_question_opens_again_when_the_interview_closes(client, login_as, started_interview, interviewer,
                                                            candidate, other_candidate):
    interview_services.interview_end(interview=started_interview, ended_by=interviewer)
    for user in (candidate, other_candidate):
        login_as(user)
        assert client.get(reverse("question-detail", args=[SLUG])).status_code == 200
        assert f'data-locked="{SLUG}"' not in client.get(reverse("question-list")).content.decode()


def test_other_questions_stay_open(client, login_as, interview, candidate, kv_formula_question):
    login_as(candidate)
    assert client.get(reverse("question-detail", args=["test-kv-per-token"])).status_code == 200


def test_an_old_practice_attempt_shows_nothing_while_the_question_is_locked(client, login_as, interviewer,
                                                                           candidate, decode_question):
    """An explain part's verdict shows its model answer: an attempt made before the
    interview existed must not be a way around the lock."""
    attempt = grading_services.attempt_submit(
        user=candidate, version=decode_question, part_id="why", seed=3, answer=EXPLANATION
    ).attempt
    grading_services.attempt_grade(attempt.id)
    login_as(candidate)
    assert MODEL_ANSWER in client.get(reverse("attempt-status", args=[attempt.id]), **HTMX).content.decode()

    make_interview(interviewer, decode_question)
    for response in (
        client.get(reverse("attempt-status", args=[attempt.id]), **HTMX),
        client.post(reverse("self-assess", args=[attempt.id]), {"item": ["kv"]}, **HTMX),
    ):
        assert response.status_code == 403
        assert_no_answers(response)
    attempt.refresh_from_db()
    assert attempt.stored_verdict.rubric_ticked is None


def test_a_closed_interview_does_not_lock(interviewer, candidate, decode_question):
    interview = make_interview(interviewer, decode_question)
    assert selectors.practice_questions(candidate).get(slug=SLUG).practice_locked
    interview_services.interview_end(interview=interview, ended_by=interviewer)
    assert not selectors.practice_questions(candidate).get(slug=SLUG).practice_locked


def test_only_the_asked_question_is_locked(interviewer, candidate, decode_question):
    other = store_version({**decode_question.data, "slug": "test-other", "title": "Another"})
    make_interview(interviewer, decode_question)
    locked = dict(selectors.practice_questions(candidate).values_list("slug", "practice_locked"))
    assert locked == {SLUG: True, other.question.slug: False}
