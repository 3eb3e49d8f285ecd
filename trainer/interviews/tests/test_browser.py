"""An interview end to end in real Chromium, two people in two browser contexts.

The interviewer creates the interview and watches it live; a guest candidate joins by
the link, answers wrongly once (graded by a real Celery worker thread), takes a hint,
types code and runs a solution on its visible examples (in the sandbox, by the same
worker) while the interviewer watches the result arrive; the clock runs out (the
deadline is moved to a few seconds from now through the service, and the page's own
clock closes the room); the interviewer replays the typing and submits a scorecard.
"""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from conftest import log_in
from trainer.interviews import services
from trainer.interviews.models import Interview, InterviewEvent, Scorecard
from trainer.interviews.tests.conftest import code_solution, editor_replace
from trainer.tests.csp_watch import assert_no_csp_violations, watch_csp

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_interview_from_invitation_to_scorecard(live_server, two_people, interviewer, decode_question, code_question,
                                                runnable_code_question, grading_worker):
    host, guest = two_people
    base = live_server.url
    # Every page either of them sees (room, live page, transcript with playback, scorecard)
    # runs under the Content-Security-Policy without a refusal.
    host_csp, guest_csp = watch_csp(host), watch_csp(guest)

    # The interviewer sets up: two questions picked from the bank through the filters.
    log_in(host, base, interviewer.username)
    host.click("text=Interviews")
    host.click("#new-interview")
    host.fill("#id_title", "Inference screen")
    host.select_option("select[name=topic]", "kernels")
    expect(host.locator('#question-choices [data-slug="test-decode-floor"]')).to_have_count(0)
    host.check('[data-slug="test-code-sum"] input')
    host.select_option("select[name=topic]", "roofline")
    host.locator('#question-choices [data-slug="test-decode-floor"]').wait_for()
    host.check('[data-slug="test-decode-floor"] input')
    host.select_option("select[name=topic]", "speculative")
    host.locator('#question-choices [data-slug="top-p-sampler"]').wait_for()
    host.check('[data-slug="top-p-sampler"] input')
    host.fill("#id_time_limit_minutes", "20")
    host.click("#create-interview")
    host.wait_for_url(re.compile(r".*/interviews/\d+/$"))
    invite_link = host.input_value("#invite-link")
    interview = Interview.objects.get()

    # The candidate joins as a guest and starts the clock; Q1 is the numeric question.
    guest.goto(invite_link)
    guest.fill("#id_name", "Grace")
    guest.click("#join")
    guest.click("#start-interview")
    expect(guest.locator("header .who")).to_have_text("Grace")  # the name given, not the guest's id
    guest.locator("#clock").filter(has_text=re.compile(r"^(19|20):\d\d$")).wait_for()
    guest.locator("#part-floor input[name=answer]").fill("1000 ms")
    guest.locator("#part-floor button[type=submit]").click()
    guest.locator('#verdict-floor [data-verdict="wrong"]').wait_for()  # graded by the worker
    guest.click("#take-hint")
    guest.locator("#hints .hint").get_by_text("Every weight crosses HBM").wait_for()

    # The interviewer's page shows it as it happens, and takes a private note.
    host.locator('#timeline [data-kind="verdict"]').wait_for()
    host.locator('#timeline [data-kind="hint"]').wait_for()
    expect(host.locator("#candidate-name")).to_have_text("Grace (guest)")
    host.fill("#note-text", "Forgot bytes per parameter at first")
    host.click("#add-note")
    host.locator('#timeline [data-kind="note"]').get_by_text("Forgot bytes per parameter").wait_for()

    # Code: the editor (CodeMirror, over the recorded textarea) posts a snapshot when the
    # text changed (every 2 s), then a run (this test part has no judge, so nothing runs
    # and the room says why).
    guest.click(".question-nav >> text=Q2")
    editor_replace(guest, "impl", "def total(xs):\n    s = 0\n")
    guest.locator('#part-impl textarea[data-snapshots="1"]').wait_for(state="attached")
    editor_replace(guest, "impl", "def total(xs):\n    return sum(xs)\n")
    guest.locator('#part-impl textarea[data-snapshots="2"]').wait_for(state="attached")
    guest.click("#run-impl")
    guest.locator('#code-run-impl [data-run="unreadable"]').wait_for()

    # A real code question: Run executes the visible examples in the sandbox; the room
    # polls until the result is in, and the interviewer's timeline shows it too.
    guest.click(".question-nav >> text=Q3")
    editor_replace(guest, "keep", code_solution(runnable_code_question))
    guest.click("#run-keep")
    guest.locator('#code-run-keep [data-run="examples"]').get_by_text("passed: three distinct logits").wait_for(
        timeout=60_000)
    assert guest.locator('#verdict-keep [data-verdict]').count() == 0  # a run is not an answer
    host.locator('#timeline [data-kind="code_run"]:has([data-run="graded"]) .run-output').get_by_text(
        "passed: temperature zero").wait_for()
    guest.click(".question-nav >> text=Q2")

    # A reload resumes where the candidate was: the same question, the typed code.
    guest.goto(f"{base}/interviews/{interview.id}/room/")
    assert "return sum(xs)" in guest.locator("#part-impl textarea").input_value()

    # The clock runs out: the page's clock reaches zero and the room's status poll says
    # the interview has ended. The code left unsubmitted on Q3 (the run's) is submitted as
    # its final answer; Q2's part has no judge, so grading could not take it.
    services.move_deadline(interview=interview, deadline=timezone.now() + timedelta(seconds=3))
    guest.reload()
    guest.locator("#interview-closed").get_by_text("Q3 / keep").wait_for()
    assert guest.locator("text=Every weight crosses HBM").count() == 0  # nothing shown after the end
    interview.refresh_from_db()
    assert interview.status == Interview.Status.CLOSED
    host.locator('#timeline [data-kind="closed"]').wait_for()

    # Review: the transcript replays the typing; the interviewer submits a scorecard.
    host.click("#transcript-link")
    assert host.locator('#transcript-timeline [data-kind="answer"]').count() == 2
    assert host.locator('#transcript-timeline [data-kind="answer"] .auto-submitted').count() == 1
    assert host.locator('#transcript-timeline [data-kind="hint"]').count() == 1
    playback = host.locator("#playback-q2-impl")
    playback.locator("select.speed").select_option("16")
    playback.locator("button.play").click()
    host.locator('#playback-q2-impl[data-frame="2"]').wait_for()  # two snapshots and the run
    assert "return sum(xs)" in playback.locator("pre.playback-screen").inner_text()
    assert playback.locator('.playback-result[data-kind="code_run"]').is_visible()  # the run current at that frame
    playback.locator("input[type=range]").fill("0")
    assert "s = 0" in playback.locator("pre.playback-screen").inner_text()
    assert not playback.locator('.playback-result[data-kind="code_run"]').is_visible()  # not run yet then

    host.click("#scorecard-link")
    host.check("text=Linear in the length")
    for confirm in host.locator('input[name$="-confirm"]').all():
        confirm.check()
    host.select_option("#id_recommendation", "no")
    host.fill("#id_notes", "Needs work on the memory roofline.")
    host.click("#submit-scorecard")
    host.wait_for_url(re.compile(r".*/transcript/$"))
    host.locator('.scorecard[data-status="submitted"]').get_by_text("Needs work on the memory roofline.").wait_for()

    card = Scorecard.objects.get()
    assert (card.status, card.recommendation) == ("submitted", "no")
    assert card.judgements.get(part_id="cost").rubric_ticked == ["linear"]
    assert all(judgement.confirmed for judgement in card.judgements.all())
    kinds = list(InterviewEvent.objects.filter(interview=interview).values_list("kind", flat=True))
    for kind in ("joined", "started", "question_opened", "answer", "verdict", "hint", "note", "code_snapshot",
                 "code_run", "closed"):
        assert kind in kinds, kind
    assert_no_csp_violations(host, host_csp)
    assert_no_csp_violations(guest, guest_csp)
