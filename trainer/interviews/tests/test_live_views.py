"""The polled partials that keep both sides live: the panel's view of the candidate's
code, and the room's status, each stopped by the server (286) once the interview closes."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from trainer.interviews import services
from trainer.interviews.tests.conftest import code_solution, make_interview, start

HTMX = {"HTTP_HX_REQUEST": "true"}
STOP_POLLING = 286


@pytest.fixture
def coding(interviewer, runnable_code_question, candidate):
    return start(make_interview(interviewer, runnable_code_question), candidate)


def question(interview):
    return interview.questions.select_related("question_version").get(position=1)


def snapshot(interview, candidate, source):
    services.code_snapshot(interview=interview, user=candidate, question=question(interview), part_id="keep",
                           source=source)


def live_code(client, interview, **params):
    return client.get(reverse("interview-live-code", args=[interview.id]), params, **HTMX)


def room_status(client, interview):
    return client.get(reverse("interview-room-status", args=[interview.id]), **HTMX)


def test_the_live_page_shows_code_as_typed_and_marks_it_unsubmitted(client, login_as, coding, candidate,
                                                                   interviewer):
    login_as(interviewer)
    page = client.get(reverse("interview-monitor", args=[coding.id])).content.decode()
    assert 'id="live-code-q1-keep"' in page and "nothing typed yet" in page
    assert reverse("interview-live-code", args=[coding.id]) in page

    snapshot(coding, candidate, "def top_p(logits, p):\n    return logits\n")
    response = live_code(client, coding)
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body
    assert 'data-unsubmitted="true"' in body and "unsubmitted changes" in body
    assert "return logits" in body
    assert 'hx-trigger="every 2s"' in body


def test_code_as_submitted_has_no_marker(client, login_as, coding, candidate, interviewer, runnable_code_question):
    code = code_solution(runnable_code_question)
    snapshot(coding, candidate, code)
    services.answer_submit(interview=coding, user=candidate, question=question(coding), part_id="keep", answer=code)
    login_as(interviewer)
    body = live_code(client, coding).content.decode()
    assert 'data-unsubmitted="false"' in body and "as submitted" in body


def test_live_code_answers_204_when_nothing_was_recorded_since(client, login_as, coding, candidate, interviewer):
    login_as(interviewer)
    coding.refresh_from_db()
    assert live_code(client, coding, after=coding.last_sequence).status_code == 204
    snapshot(coding, candidate, "x = 1\n")
    assert live_code(client, coding, after=coding.last_sequence).status_code == 200


def test_live_code_stops_polling_once_the_interview_is_closed(client, login_as, coding, candidate, interviewer,
                                                              runnable_code_question):
    snapshot(coding, candidate, code_solution(runnable_code_question))
    services.interview_end(interview=coding, ended_by=interviewer)
    login_as(interviewer)
    response = live_code(client, coding, after=coding.last_sequence)
    body = response.content.decode()
    assert response.status_code == STOP_POLLING
    assert "hx-get" not in body and "submitted when the interview closed" in body


def test_live_code_is_for_the_panel_only(client, login_as, coding, candidate, other_interviewer):
    for outsider in (candidate, other_interviewer):
        login_as(outsider)
        assert live_code(client, coding).status_code == 404


def test_the_end_button_asks_first(client, login_as, coding, interviewer):
    login_as(interviewer)
    page = client.get(reverse("interview-monitor", args=[coding.id])).content.decode()
    form_start = page.index(f'action="{reverse("interview-end", args=[coding.id])}"')
    assert "data-confirm=" in page[form_start:page.index("</form>", form_start)]
    assert "interviews/monitor.js" in page


def test_room_status_is_204_while_open(client, login_as, coding, candidate):
    login_as(candidate)
    page = client.get(reverse("interview-room", args=[coding.id])).content.decode()
    assert reverse("interview-room-status", args=[coding.id]) in page and 'id="room-status"' in page
    assert room_status(client, coding).status_code == 204


def test_room_status_says_the_interviewer_ended_it_and_stops(client, login_as, coding, candidate, interviewer):
    services.interview_end(interview=coding, ended_by=interviewer)
    login_as(candidate)
    response = room_status(client, coding)
    body = response.content.decode()
    assert response.status_code == STOP_POLLING
    assert 'data-ended="ended_by_interviewer"' in body and "your interviewer ended it" in body
    assert "hx-get" not in body


def test_room_status_at_the_deadline_closes_and_lists_the_code_submitted(client, login_as, coding, candidate,
                                                                         runnable_code_question):
    snapshot(coding, candidate, code_solution(runnable_code_question))
    services.move_deadline(interview=coding, deadline=timezone.now() - timedelta(seconds=1))
    login_as(candidate)
    response = room_status(client, coding)  # the poll is what notices the clock ran out
    body = response.content.decode()
    assert response.status_code == STOP_POLLING
    assert 'data-ended="expired"' in body and "the time ran out" in body
    assert "submitted as your final answer (Q1 / keep)" in body
    coding.refresh_from_db()
    assert coding.is_closed


def test_room_status_is_the_candidates_only(client, login_as, coding, other_candidate, interviewer):
    for outsider in (other_candidate, interviewer):
        login_as(outsider)
        assert room_status(client, coding).status_code == 404


def test_the_room_loads_the_code_editor_with_the_pages_nonce(client, login_as, coding, candidate):
    login_as(candidate)
    response = client.get(reverse("interview-room", args=[coding.id]))
    page = response.content.decode()
    assert 'class="code"' in page and "data-snapshot-url=" in page
    assert "vendor/codemirror/editor.js" in page
    nonce = response.wsgi_request.csp_nonce
    assert f'editor.js" nonce="{nonce}"' in page
