"""The candidate's pages: joining, the timed room, answers, hints, the code editor."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from grading.models import Attempt
from grading.services import attempt_grade
from trainer.interviews import services
from trainer.interviews.models import Interview, InterviewEvent
from trainer.interviews.tests.conftest import make_interview, start

Kind = InterviewEvent.Kind
HTMX = {"HTTP_HX_REQUEST": "true"}


def room_url(interview, position=None):
    url = reverse("interview-room", args=[interview.id])
    return url if position is None else f"{url}?q={position}"


def answer_url(interview, part_id="floor", position=1):
    return reverse("interview-answer", args=[interview.id, position, part_id])


def expire(interview):
    services.move_deadline(interview=interview, deadline=timezone.now() - timedelta(seconds=1))


def test_joining_with_an_account_binds_the_interview(client, login_as, interview, candidate):
    login_as(candidate)
    url = reverse("interview-join", args=[interview.invite_token])
    page = client.get(url)
    assert page.status_code == 200 and b"Join as cand" in page.content
    assert b"Decode floor" not in page.content  # the questions stay hidden until it starts
    response = client.post(url)
    assert response.status_code == 302 and response["Location"] == room_url(interview)
    interview.refresh_from_db()
    assert interview.candidate == candidate and not interview.candidate_is_guest
    assert client.get(url).status_code == 302  # the candidate's own used link leads back to the room


def test_joining_as_a_guest_logs_the_guest_in(client, interview):
    response = client.post(reverse("interview-join", args=[interview.invite_token]), {"name": "Grace"})
    assert response.status_code == 302
    interview.refresh_from_db()
    assert interview.candidate_is_guest and interview.candidate.first_name == "Grace"
    assert client.get(room_url(interview)).status_code == 200


def test_unknown_invitation_is_404(client, db):
    assert client.get(reverse("interview-join", args=["no-such-token"])).status_code == 404


def test_before_the_start_the_room_shows_no_question(client, login_as, interview, candidate):
    services.invite_accept(token=interview.invite_token, user=candidate)
    login_as(candidate)
    page = client.get(room_url(interview))
    assert b"start-interview" in page.content and b"Decode floor" not in page.content
    assert client.post(answer_url(interview), {"answer": "5 ms"}).status_code == 409
    response = client.post(reverse("interview-start", args=[interview.id]))
    assert response.status_code == 302
    interview.refresh_from_db()
    assert interview.status == Interview.Status.ACTIVE


def test_the_room_shows_the_clock_and_records_the_opening(client, login_as, started_interview, candidate):
    login_as(candidate)
    page = client.get(room_url(started_interview))
    assert page.status_code == 200
    assert f'data-deadline="{started_interview.deadline.isoformat()}"'.encode() in page.content
    assert b"Decode floor" in page.content and b"Worked solution" not in page.content
    assert InterviewEvent.objects.filter(kind=Kind.QUESTION_OPENED).count() == 1


def test_a_returning_candidate_resumes_on_the_question_they_had_open(client, login_as, interviewer, candidate,
                                                                      decode_question, code_question):
    interview = start(make_interview(interviewer, decode_question, code_question), candidate)
    login_as(candidate)
    client.get(room_url(interview, 2))
    services.code_snapshot(interview=interview, user=candidate, question=interview.questions.get(position=2),
                           part_id="impl", source="def total(xs):\n    return 42\n")
    page = client.get(room_url(interview)).content.decode()
    assert "Sum the list" in page
    assert "return 42" in page and "NotImplementedError" not in page  # the editor resumes from the record


def test_a_code_part_gets_an_editor_with_its_starter(client, login_as, interviewer, candidate, code_question):
    interview = start(make_interview(interviewer, code_question), candidate)
    login_as(candidate)
    page = client.get(room_url(interview)).content.decode()
    assert 'class="code"' in page and "raise NotImplementedError" in page
    assert reverse("interview-snapshot", args=[interview.id, 1, "impl"]) in page


def test_answer_by_htmx_returns_the_polling_verdict(client, login_as, started_interview, candidate):
    login_as(candidate)
    response = client.post(answer_url(started_interview), {"answer": "1000 ms"}, **HTMX)
    attempt = Attempt.objects.get()
    assert response.status_code == 200
    assert reverse("interview-attempt-status", args=[started_interview.id, attempt.id]).encode() in response.content
    assert b"<html" not in response.content and "HX-Request" in response["Vary"]
    status_url = reverse("interview-attempt-status", args=[started_interview.id, attempt.id])
    assert client.get(status_url).status_code == 200  # still queued: keep polling
    attempt_grade(attempt.id)
    finished = client.get(status_url)
    assert finished.status_code == 286 and b'data-verdict="wrong"' in finished.content


def test_answer_without_htmx_redirects_back_to_the_question(client, login_as, started_interview, candidate):
    login_as(candidate)
    response = client.post(answer_url(started_interview), {"answer": "1000 ms"})
    assert response.status_code == 302 and response["Location"] == room_url(started_interview, 1)


def test_unreadable_answer_uses_no_attempt(client, login_as, started_interview, candidate):
    login_as(candidate)
    response = client.post(answer_url(started_interview), {"answer": "12 GB"}, **HTMX)
    assert b'data-verdict="invalid"' in response.content
    assert Attempt.objects.count() == 0
    assert InterviewEvent.objects.filter(kind=Kind.ANSWER_INVALID).count() == 1


def test_unknown_part_is_refused_and_htmx_shows_why(client, login_as, started_interview, candidate):
    login_as(candidate)
    assert client.post(answer_url(started_interview, "nope"), {"answer": "1"}).status_code == 400
    shown = client.post(answer_url(started_interview, "nope"), {"answer": "1"}, **HTMX)
    assert b'data-verdict="refused"' in shown.content and b"no part" in shown.content
    assert not InterviewEvent.objects.filter(kind__in=[Kind.ANSWER, Kind.ANSWER_INVALID]).exists()


def test_interpret_previews_without_recording(client, login_as, started_interview, candidate):
    login_as(candidate)
    url = reverse("interview-interpret", args=[started_interview.id, 1, "floor"])
    response = client.post(url, {"answer": "12 GB"}, **HTMX)
    assert response.status_code == 200 and b"interpretation-floor" in response.content
    assert not InterviewEvent.objects.filter(kind__in=[Kind.ANSWER, Kind.ANSWER_INVALID]).exists()


def test_hint_by_htmx_returns_the_hints_partial(client, login_as, started_interview, candidate):
    login_as(candidate)
    response = client.post(reverse("interview-hint", args=[started_interview.id, 1]), **HTMX)
    assert response.status_code == 200 and b"Every weight crosses HBM" in response.content
    assert "HX-Request" in response["Vary"]
    assert b'id="take-hint"' not in response.content  # that was the only hint
    assert client.post(reverse("interview-hint", args=[started_interview.id, 1])).status_code == 403


def test_hints_off_means_no_hint_button_and_a_refusal(client, login_as, interviewer, decode_question, candidate):
    interview = start(make_interview(interviewer, decode_question, hints=False), candidate)
    login_as(candidate)
    assert b'id="take-hint"' not in client.get(room_url(interview)).content
    assert client.post(reverse("interview-hint", args=[interview.id, 1])).status_code == 403


def test_snapshot_and_run_are_recorded(client, login_as, interviewer, candidate, code_question):
    interview = start(make_interview(interviewer, code_question), candidate)
    login_as(candidate)
    snapshot = client.post(reverse("interview-snapshot", args=[interview.id, 1, "impl"]), {"source": "def total"})
    assert snapshot.status_code == 204
    run = client.post(reverse("interview-run", args=[interview.id, 1, "impl"]), {"answer": "def total(xs): ..."},
                      **HTMX)
    assert run.status_code == 200 and b"code-run-impl" in run.content
    sources = list(InterviewEvent.objects.filter(kind__in=[Kind.CODE_SNAPSHOT, Kind.CODE_RUN])
                   .order_by("sequence").values_list("data__source", flat=True))
    assert sources == ["def total", "def total(xs): ..."]


@pytest.mark.parametrize("write", ["answer", "hint", "snapshot", "run"])
def test_every_write_after_the_deadline_is_refused_with_a_refresh(client, login_as, interviewer, candidate,
                                                                  code_question, decode_question, write):
    interview = start(make_interview(interviewer, decode_question, code_question), candidate)
    login_as(candidate)
    expire(interview)
    before = InterviewEvent.objects.count()
    url, data = {
        "answer": (answer_url(interview), {"answer": "1000 ms"}),
        "hint": (reverse("interview-hint", args=[interview.id, 1]), {}),
        "snapshot": (reverse("interview-snapshot", args=[interview.id, 2, "impl"]), {"source": "late"}),
        "run": (reverse("interview-run", args=[interview.id, 2, "impl"]), {"answer": "late"}),
    }[write]
    response = client.post(url, data, **HTMX)
    assert response.status_code == 409 and response["HX-Refresh"] == "true"
    interview.refresh_from_db()
    assert interview.status == Interview.Status.CLOSED
    assert list(InterviewEvent.objects.filter(sequence__gt=before).values_list("kind", flat=True)) == [Kind.CLOSED]
    assert Attempt.objects.count() == 0


def test_after_the_end_questions_stay_hidden_unless_solutions_are_shared(client, login_as, interviewer, candidate,
                                                                        other_candidate, decode_question):
    hidden = start(make_interview(interviewer, decode_question), candidate)
    shared = start(make_interview(interviewer, decode_question, solutions=True), other_candidate)
    for interview, user in ((hidden, candidate), (shared, other_candidate)):
        expire(interview)
    login_as(candidate)
    page = client.get(room_url(hidden)).content
    assert b"interview-closed" in page and b"Decode floor" not in page and b"Worked solution" not in page
    login_as(other_candidate)
    page = client.get(room_url(shared)).content
    assert b"Worked solution" in page and b"<form" not in page.split(b"<main>")[1]


def test_a_closed_interviews_link_says_it_is_over_and_makes_no_guest(client, interview, interviewer,
                                                                     django_user_model):
    services.interview_end(interview=interview, ended_by=interviewer)  # before anyone joined
    url = reverse("interview-join", args=[interview.invite_token])
    page = client.get(url)
    assert page.status_code == 403 and b'id="invite-closed"' in page.content and b'id="join"' not in page.content
    users_before = django_user_model.objects.count()
    response = client.post(url, {"name": "Mallory"})
    assert response.status_code == 403 and b'id="invite-closed"' in response.content
    assert django_user_model.objects.count() == users_before
    interview.refresh_from_db()
    assert interview.candidate is None and interview.invite_used_at is None


def test_a_used_link_says_so_and_makes_no_guest(client, login_as, interview, candidate, other_candidate,
                                                django_user_model):
    services.invite_accept(token=interview.invite_token, user=candidate)
    url = reverse("interview-join", args=[interview.invite_token])
    users_before = django_user_model.objects.count()
    response = client.post(url, {"name": "Mallory"})
    assert response.status_code == 403 and b'id="invite-used"' in response.content
    assert django_user_model.objects.count() == users_before
    login_as(other_candidate)
    response = client.post(url)
    assert response.status_code == 403 and b'id="invite-used"' in response.content
    interview.refresh_from_db()
    assert interview.candidate == candidate
