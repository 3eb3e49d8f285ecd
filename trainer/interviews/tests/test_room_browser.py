"""The room's editor, the live code and the end of an interview, in real Chromium with
two people side by side: the interviewer's context and a guest candidate's.

The room's code editor is practice's CodeMirror (Tab indents, a space after it does not
submit); the interviewer sees code being typed before it is submitted; "End" asks first
and the candidate's room says the interview has ended without a click; and code left in
the editor at time-out is graded as the final answer (by a real Celery worker thread,
in the sandbox) and shown as such in the transcript.
"""

import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from conftest import log_in
from grading.models import Attempt
from trainer.interviews import services, tasks
from trainer.interviews.models import Interview, InterviewEvent
from trainer.interviews.tests.conftest import code_solution, editor_replace, make_interview
from trainer.tests.csp_watch import assert_no_csp_violations, watch_csp

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIVE_WITHIN_MS = 10_000


def open_both(live_server, host, guest, interviewer, version) -> Interview:
    """The interviewer on the live page of a new interview over `version`; the guest
    candidate in its room with the clock running."""
    interview = make_interview(interviewer, version)
    log_in(host, live_server.url, interviewer.username)
    host.goto(f"{live_server.url}{reverse('interview-monitor', args=[interview.id])}")
    guest.goto(f"{live_server.url}{reverse('interview-join', args=[interview.invite_token])}")
    guest.fill("#id_name", "Grace")
    guest.click("#join")
    guest.click("#start-interview")
    guest.locator("#part-keep .cm-editor").wait_for()
    return interview


def test_the_room_editor_the_live_code_and_ending_the_interview(live_server, two_people, interviewer,
                                                                runnable_code_question):
    host, guest = two_people
    host_csp, guest_csp = watch_csp(host), watch_csp(guest)
    interview = open_both(live_server, host, guest, interviewer, runnable_code_question)
    textarea = guest.locator("#part-keep textarea.code")
    assert textarea.is_hidden()  # CodeMirror stands in for it, and keeps it in step

    # Tab indents and keeps the focus in the editor; the space after it is typed, not a
    # press of Submit.
    guest.locator("#part-keep .cm-content").click()
    guest.keyboard.press("Control+a")
    guest.keyboard.press("Delete")
    guest.keyboard.type("def top_p(logits, p):")
    guest.keyboard.press("Enter")
    guest.keyboard.press("Shift+Tab")
    guest.keyboard.press("Tab")
    guest.keyboard.press("Space")
    guest.keyboard.type("return logits")
    assert textarea.input_value() == "def top_p(logits, p):\n     return logits"
    assert guest.evaluate("document.activeElement.classList.contains('cm-content')")
    assert guest.locator("#verdict-keep [data-verdict]").count() == 0
    assert not InterviewEvent.objects.filter(interview=interview, kind__startswith="answer").exists()

    # The interviewer sees the code as typed, marked as not submitted, without a reload.
    live = host.locator('#live-code-q1-keep[data-unsubmitted="true"]')
    expect(live).to_contain_text("return logits", timeout=LIVE_WITHIN_MS)
    expect(live).to_contain_text("unsubmitted changes")

    # "End the interview now" asks first: dismissed, nothing happens; accepted, it ends.
    host.once("dialog", lambda dialog: dialog.dismiss())
    host.click("#end-interview")
    host.wait_for_timeout(500)
    interview.refresh_from_db()
    assert interview.status == Interview.Status.ACTIVE
    questions = []
    host.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))
    host.click("#end-interview")
    host.locator("#interview-status").filter(has_text="Closed").wait_for()
    assert questions and "End the interview now?" in questions[0]

    # The candidate's room says so within seconds, with no click, and takes no more input.
    ended = guest.locator('#room-status[data-ended="ended_by_interviewer"]')
    expect(ended).to_contain_text("your interviewer ended it", timeout=LIVE_WITHIN_MS)
    expect(guest.locator("#clock")).to_have_text("Ended")
    expect(guest.locator("#part-keep button[type=submit]").first).to_be_disabled()
    # Ended early, the code in the editor was submitted for the candidate as well (it
    # defines no `top_p_keep`, so it is recorded as unreadable, at no cost).
    answer = InterviewEvent.objects.get(interview=interview, kind__startswith="answer")
    assert answer.data["auto_submitted"] and answer.data["reason"] == "ended_by_interviewer"
    assert_no_csp_violations(host, host_csp)
    assert_no_csp_violations(guest, guest_csp)


def test_code_left_in_the_editor_at_time_out_is_graded_as_the_final_answer(
        live_server, two_people, interviewer, runnable_code_question, grading_worker):
    host, guest = two_people
    interview = open_both(live_server, host, guest, interviewer, runnable_code_question)
    solution = code_solution(runnable_code_question)
    editor_replace(guest, "keep", solution)
    guest.locator('#part-keep textarea[data-snapshots="1"]').wait_for(state="attached")

    # The clock runs out with the code never submitted; beat's task closes the interview.
    services.move_deadline(interview=interview, deadline=timezone.now() - timedelta(seconds=1))
    tasks.close_expired_interviews.apply()
    interview.refresh_from_db()
    assert interview.status == Interview.Status.CLOSED
    ended = guest.locator('#room-status[data-ended="expired"]')
    expect(ended).to_contain_text("the time ran out", timeout=LIVE_WITHIN_MS)
    expect(ended).to_contain_text("submitted as your final answer (Q1 / keep)")

    [answer] = InterviewEvent.objects.filter(interview=interview, kind=InterviewEvent.Kind.ANSWER)
    assert answer.data["answer"] == solution and answer.data["auto_submitted"] is True
    attempt = Attempt.objects.get(id=answer.data["attempt_id"])
    deadline = time.monotonic() + 90
    while not attempt.is_finished and time.monotonic() < deadline:  # the worker runs it in the sandbox
        time.sleep(0.5)
        attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.GRADED and attempt.correct

    host.goto(f"{live_server.url}{reverse('interview-transcript', args=[interview.id])}")
    entry = host.locator('#transcript-timeline [data-kind="answer"]')
    expect(entry.locator(".auto-submitted")).to_have_text("submitted at time-out")
    expect(entry.locator(".verdict-status")).to_have_text("correct")
    expect(host.locator("#scores")).to_contain_text("1 answer, last: correct")
