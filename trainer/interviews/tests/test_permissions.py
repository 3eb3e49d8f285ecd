"""Who reaches which interview URL, direct and through htmx.

A candidate sees only their own interviews; an interviewer only the ones they created
or were added to; an admin all of them. For one interview, anyone else gets 404 (its
existence is not revealed); anonymous users are sent to log in.
"""

import pytest
from django.urls import reverse

from trainer.interviews import services
from trainer.interviews.models import InterviewEvent
from trainer.interviews.tests.conftest import make_interview, start
from trainer.roles import Role

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def outsider_interviewer(db):
    from trainer.services import user_create

    return user_create(username="interviewer-outside", password="a-long-test-password-1", role=Role.INTERVIEWER)


@pytest.fixture
def panel_member(db, started_interview, interviewer):
    from trainer.services import user_create

    member = user_create(username="interviewer-added", password="a-long-test-password-1", role=Role.INTERVIEWER)
    services.interviewer_add(interview=started_interview, added_by=interviewer, username=member.username)
    return member


def panel_requests(interview):
    """(method, url, data) of every panel endpoint of `interview`."""
    return [
        ("get", reverse("interview-monitor", args=[interview.id]), None),
        ("get", reverse("interview-timeline", args=[interview.id]), None),
        ("post", reverse("interview-note", args=[interview.id]), {"text": "a note"}),
        ("post", reverse("interview-add-interviewer", args=[interview.id]), {"username": "nobody"}),
        ("get", reverse("interview-transcript", args=[interview.id]), None),
        ("get", reverse("interview-export", args=[interview.id, "md"]), None),
        ("get", reverse("interview-export", args=[interview.id, "json"]), None),
        ("get", reverse("interview-scorecard", args=[interview.id]), None),
        ("post", reverse("interview-scorecard", args=[interview.id]), {"action": "save"}),
        ("post", reverse("interview-end", args=[interview.id]), {}),
    ]


def candidate_requests(interview, attempt_id):
    part = [interview.id, 1, "floor"]
    return [
        ("get", reverse("interview-room", args=[interview.id]), None),
        ("post", reverse("interview-start", args=[interview.id]), {}),
        ("post", reverse("interview-hint", args=[interview.id, 1]), {}),
        ("post", reverse("interview-interpret", args=part), {"answer": "5 ms"}),
        ("post", reverse("interview-answer", args=part), {"answer": "5 ms"}),
        ("post", reverse("interview-snapshot", args=[interview.id, 1, "floor"]), {"source": "x"}),
        ("post", reverse("interview-run", args=[interview.id, 1, "floor"]), {"answer": "x"}),
        ("get", reverse("interview-attempt-status", args=[interview.id, attempt_id]), None),
    ]


def send(client, method, url, data, htmx=False):
    extra = HTMX if htmx else {}
    return client.get(url, **extra) if method == "get" else client.post(url, data or {}, **extra)


@pytest.fixture
def attempt_id(started_interview, candidate):
    question = started_interview.questions.get(position=1)
    result = services.answer_submit(interview=started_interview, user=candidate, question=question,
                                    part_id="floor", answer="1000 ms")
    return result.attempt.id


@pytest.mark.parametrize("htmx", [False, True])
def test_people_off_the_panel_get_404_from_every_panel_url(client, login_as, started_interview, candidate,
                                                           other_candidate, outsider_interviewer, htmx):
    events_before = InterviewEvent.objects.count()
    for user in (candidate, other_candidate, outsider_interviewer):
        login_as(user)
        for method, url, data in panel_requests(started_interview):
            assert send(client, method, url, data, htmx).status_code == 404, (user.username, method, url)
    assert InterviewEvent.objects.count() == events_before  # no note, no close


@pytest.mark.parametrize("htmx", [False, True])
def test_anyone_but_the_candidate_gets_404_from_every_candidate_url(client, login_as, started_interview, attempt_id,
                                                                    other_candidate, interviewer, admin_user, htmx):
    events_before = InterviewEvent.objects.count()
    for user in (other_candidate, interviewer, admin_user):
        login_as(user)
        for method, url, data in candidate_requests(started_interview, attempt_id):
            assert send(client, method, url, data, htmx).status_code == 404, (user.username, method, url)
    assert InterviewEvent.objects.count() == events_before


def test_anonymous_users_are_sent_to_log_in(client, started_interview, attempt_id):
    urls = panel_requests(started_interview) + candidate_requests(started_interview, attempt_id)
    urls.append(("get", reverse("interview-list"), None))
    urls.append(("get", reverse("interview-create"), None))
    for method, url, data in urls:
        response = send(client, method, url, data)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url


@pytest.mark.parametrize("who", ["interviewer", "panel_member", "admin_user"])
def test_the_panel_reaches_every_panel_url(client, login_as, started_interview, who, request):
    login_as(request.getfixturevalue(who))
    for method, url, data in panel_requests(started_interview):
        if url.endswith("/end/"):
            continue  # ends the interview: covered in its own test
        status = send(client, method, url, data).status_code
        assert status in (200, 302, 403), (who, url, status)
        assert status != 403 or url.endswith("/interviewers/"), (who, url)  # only adding people is the creator's


def test_the_candidate_reaches_their_own_candidate_urls(client, login_as, started_interview, candidate, attempt_id):
    login_as(candidate)
    for method, url, data in candidate_requests(started_interview, attempt_id):
        assert send(client, method, url, data).status_code in (200, 204, 286, 302, 400), url


def test_candidates_cannot_create_interviews(client, login_as, candidate):
    login_as(candidate)
    assert client.get(reverse("interview-create")).status_code == 403
    assert client.post(reverse("interview-create"), {"title": "x"}).status_code == 403


def test_only_the_creator_adds_interviewers(client, login_as, started_interview, panel_member, outsider_interviewer):
    login_as(panel_member)
    response = client.post(reverse("interview-add-interviewer", args=[started_interview.id]),
                           {"username": outsider_interviewer.username})
    assert response.status_code == 403
    assert not started_interview.interviewers.filter(id=outsider_interviewer.id).exists()


def test_lists_show_each_user_only_their_interviews(client, login_as, interviewer, outsider_interviewer, candidate,
                                                    other_candidate, admin_user, decode_question):
    mine = start(make_interview(interviewer, decode_question), candidate)
    theirs = start(make_interview(outsider_interviewer, decode_question), other_candidate)

    def visible(user):
        login_as(user)
        response = client.get(reverse("interview-list"))
        assert response.status_code == 200
        return ({row.id for row in response.context["panel_rows"]},
                {row.id for row in response.context["candidate_rows"]})

    assert visible(candidate) == (set(), {mine.id})
    assert visible(other_candidate) == (set(), {theirs.id})
    assert visible(interviewer) == ({mine.id}, set())
    assert visible(outsider_interviewer) == ({theirs.id}, set())
    assert visible(admin_user) == ({mine.id, theirs.id}, set())


def test_a_used_invitation_refuses_everyone_else(client, login_as, started_interview, other_candidate):
    login_as(other_candidate)
    url = reverse("interview-join", args=[started_interview.invite_token])
    assert client.get(url).status_code == 403
    assert client.post(url).status_code == 403
    started_interview.refresh_from_db()
    assert started_interview.candidate.username == "cand"


def test_a_guest_reaches_only_their_interview(client, interviewer, decode_question):
    first = make_interview(interviewer, decode_question)
    second = make_interview(interviewer, decode_question)
    response = client.post(reverse("interview-join", args=[first.invite_token]), {"name": "Grace"})
    assert response.status_code == 302
    assert client.get(reverse("interview-room", args=[first.id])).status_code == 200
    assert client.get(reverse("interview-room", args=[second.id])).status_code == 404
    assert client.get(reverse("interview-monitor", args=[first.id])).status_code == 404
    assert client.get(reverse("question-list")).status_code == 403  # a guest is not a practising candidate
