"""The panel's pages: the list, creating an interview, the live page and its timeline."""

import pytest
from django.urls import reverse

from trainer.interviews import services, template_services
from trainer.interviews.models import Interview, InterviewEvent, InterviewTemplate
from trainer.interviews.tests.conftest import make_interview, start

HTMX = {"HTTP_HX_REQUEST": "true"}


def create_data(**overrides):
    data = {"title": "Screen", "time_limit_minutes": "30", "hints_allowed": "on", "topic": "", "difficulty": ""}
    data.update(overrides)
    return data


def test_list_reads_a_constant_number_of_queries(client, login_as, interviewer, decode_question, candidate,
                                                 django_assert_max_num_queries, django_assert_num_queries):
    login_as(interviewer)
    start(make_interview(interviewer, decode_question), candidate)
    client.get(reverse("interview-list"))  # warm the session and permission caches
    with django_assert_max_num_queries(8) as one_row:
        client.get(reverse("interview-list"))
    for _ in range(5):
        make_interview(interviewer, decode_question)
    with django_assert_num_queries(len(one_row.captured_queries)):
        response = client.get(reverse("interview-list"))
    assert len(response.context["panel_rows"]) == 6


def test_create_form_filters_the_bank_by_htmx(client, login_as, interviewer, decode_question, code_question):
    login_as(interviewer)
    page = client.get(reverse("interview-create"))
    assert page.status_code == 200 and b"Decode floor" in page.content and b"Sum the list" in page.content
    assert "HX-Request" in page["Vary"]
    partial = client.get(reverse("interview-create"), {"topic": "kernels"}, **HTMX)
    assert b'id="question-choices"' in partial.content and b"<html" not in partial.content
    assert b"Sum the list" in partial.content and b"Decode floor" not in partial.content
    kept = client.get(reverse("interview-create"), {"topic": "kernels", "questions": [decode_question.question_id]},
                      **HTMX)
    assert b"Decode floor" in kept.content  # a ticked question stays while filtering


def test_create_pins_the_questions_and_can_save_a_template(client, login_as, interviewer, decode_question,
                                                           code_question):
    login_as(interviewer)
    response = client.post(reverse("interview-create"), create_data(
        questions=[code_question.question_id, decode_question.question_id], save_as_template="Two-question screen",
    ))
    interview = Interview.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("interview-monitor", args=[interview.id])
    assert interview.hints_allowed and not interview.solutions_allowed and interview.time_limit_minutes == 30
    assert set(interview.questions.values_list("question_version", flat=True)) == {decode_question.id, code_question.id}
    template = InterviewTemplate.objects.get()
    assert template.name == "Two-question screen" and template.questions.count() == 2


def test_create_from_a_template(client, login_as, interviewer, decode_question):
    template = template_services.template_save(name="Roofline", created_by=interviewer,
                                               questions=[decode_question.question])
    login_as(interviewer)
    client.post(reverse("interview-create"), create_data(template=template.id))
    assert list(Interview.objects.get().questions.values_list("question_version", flat=True)) == [decode_question.id]


def test_create_without_questions_shows_the_error(client, login_as, interviewer, decode_question):
    login_as(interviewer)
    response = client.post(reverse("interview-create"), create_data())
    assert response.status_code == 200 and b"form-errors" in response.content
    assert not Interview.objects.exists()


def test_monitor_shows_the_invitation_until_it_is_used(client, login_as, interview, interviewer, candidate):
    login_as(interviewer)
    page = client.get(reverse("interview-monitor", args=[interview.id])).content.decode()
    assert reverse("interview-join", args=[interview.invite_token]) in page
    assert "Worked solution" in page  # the panel sees the solutions
    services.invite_accept(token=interview.invite_token, user=candidate)
    assert interview.invite_token not in client.get(reverse("interview-monitor", args=[interview.id])).content.decode()


def test_timeline_polls_cheaply_and_stops_when_closed(client, login_as, started_interview, interviewer, candidate):
    login_as(interviewer)
    url = reverse("interview-timeline", args=[started_interview.id])
    started_interview.refresh_from_db()
    latest = started_interview.last_sequence
    assert client.get(url, {"after": latest}, **HTMX).status_code == 204
    services.hint_take(interview=started_interview, user=candidate, question=started_interview.questions.get())
    update = client.get(url, {"after": latest}, **HTMX)
    assert update.status_code == 200 and b'data-kind="hint"' in update.content
    assert f"after={latest + 1}".encode() in update.content  # the next poll asks from here
    services.interview_end(interview=started_interview, ended_by=interviewer)
    final = client.get(url, {"after": latest + 1}, **HTMX)
    assert final.status_code == 286 and b'data-kind="closed"' in final.content
    assert b"hx-trigger" not in final.content


def test_note_by_htmx_returns_the_timeline_with_the_note(client, login_as, started_interview, interviewer):
    login_as(interviewer)
    response = client.post(reverse("interview-note", args=[started_interview.id]),
                           {"text": "Asked a sharp question about KV"}, **HTMX)
    assert response.status_code == 200 and b"Asked a sharp question about KV" in response.content
    assert InterviewEvent.objects.filter(kind="note", actor=interviewer).count() == 1
    assert client.post(reverse("interview-note", args=[started_interview.id]), {"text": ""}).status_code == 400


def test_the_candidate_never_sees_notes(client, login_as, started_interview, interviewer, candidate):
    services.note_add(interview=started_interview, author=interviewer, text="Secret impression")
    login_as(candidate)
    assert b"Secret impression" not in client.get(reverse("interview-room", args=[started_interview.id])).content


def test_end_closes_the_interview(client, login_as, started_interview, interviewer):
    login_as(interviewer)
    response = client.post(reverse("interview-end", args=[started_interview.id]))
    assert response.status_code == 302
    started_interview.refresh_from_db()
    assert started_interview.status == Interview.Status.CLOSED


def test_reading_an_expired_interview_closes_it(client, login_as, started_interview, interviewer):
    from datetime import timedelta

    from django.utils import timezone

    services.move_deadline(interview=started_interview, deadline=timezone.now() - timedelta(seconds=1))
    login_as(interviewer)
    page = client.get(reverse("interview-monitor", args=[started_interview.id]))
    assert b'id="interview-status">Closed' in page.content
    started_interview.refresh_from_db()
    assert started_interview.status == Interview.Status.CLOSED


@pytest.mark.parametrize("bad_username", ["nobody", "cand"])
def test_adding_someone_who_is_not_an_interviewer_is_refused(client, login_as, interview, interviewer, candidate,
                                                            bad_username):
    login_as(interviewer)
    response = client.post(reverse("interview-add-interviewer", args=[interview.id]), {"username": bad_username})
    assert response.status_code == 403 and not interview.interviewers.exists()
