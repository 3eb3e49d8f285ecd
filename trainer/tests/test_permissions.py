"""Each role reaches its own pages and is refused the others'."""

import pytest
from django.urls import reverse

# Long enough to be recorded (MIN_EXPLANATION_WORDS).
EXPLANATION = "KV-cache reads grow with batch and context, and launches add gaps."

CANDIDATE_PAGES = ["question-list"]
INTERVIEWER_PAGES = ["review"]
ADMIN_PAGES = ["admin:index", "admin:questions_question_changelist"]


@pytest.mark.parametrize("name", CANDIDATE_PAGES + INTERVIEWER_PAGES)
def test_anonymous_users_are_sent_to_login(client, db, name):
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("name", INTERVIEWER_PAGES)
def test_candidate_cannot_reach_interviewer_pages(client, login_as, candidate, name):
    login_as(candidate)
    assert client.get(reverse(name)).status_code == 403


@pytest.mark.parametrize("name", ADMIN_PAGES)
def test_candidate_and_interviewer_cannot_reach_admin_pages(client, login_as, candidate, interviewer, name):
    for user in (candidate, interviewer):
        login_as(user)
        response = client.get(reverse(name))
        # The Django admin sends non-staff users to its login page instead of a 403.
        assert response.status_code in (302, 403)
        if response.status_code == 302:
            assert "/admin/login/" in response["Location"]


def test_interviewer_reaches_review_and_questions(client, login_as, interviewer):
    login_as(interviewer)
    assert client.get(reverse("review")).status_code == 200
    assert client.get(reverse("question-list")).status_code == 200


def test_admin_reaches_everything(client, login_as, admin_user):
    login_as(admin_user)
    for name in CANDIDATE_PAGES + INTERVIEWER_PAGES + ADMIN_PAGES:
        assert client.get(reverse(name)).status_code == 200, name


def test_candidate_cannot_poll_another_candidates_attempt(client, login_as, candidate, other_candidate,
                                                          decode_question):
    from grading.services import attempt_submit

    result = attempt_submit(user=other_candidate, version=decode_question, part_id="floor", seed=1, answer="5 ms")
    login_as(candidate)
    assert client.get(reverse("attempt-status", args=[result.attempt.id])).status_code == 404


def test_practice_endpoints_do_not_reveal_interview_attempts(client, login_as, candidate, interviewer, decode_question):
    """An interview's explain attempt must not show its model answer through practice URLs."""
    from datetime import timedelta

    from grading.services import attempt_grade
    from trainer.interviews import services as interviews

    interview = interviews.interview_create(
        created_by=interviewer, title="screen", questions=[decode_question.question],
        time_limit=timedelta(minutes=30), hints_allowed=True, solutions_allowed=False,
    )
    interviews.invite_accept(token=interview.invite_token, user=candidate)
    interview = interviews.interview_start(interview=interview, user=candidate)
    result = interviews.answer_submit(
        interview=interview, user=candidate, question=interview.questions.get(), part_id="why", answer=EXPLANATION
    )
    attempt_grade(result.attempt.id)
    login_as(candidate)
    assert client.get(reverse("attempt-status", args=[result.attempt.id])).status_code == 404
    assert client.post(reverse("self-assess", args=[result.attempt.id]), {"item": ["kv"]}).status_code == 404
