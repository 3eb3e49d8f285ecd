"""The numeric scratchpad in the interview room, in real Chromium with a real worker: a
guest candidate types working into the room's scratchpad on decode-floor-from-weights
(dividing by one GPU's bandwidth), each line previews through the room's interpret URL,
the submission is graded with the first wrong step named (its expected value withheld
from the candidate), and the interviewer's transcript shows the working as typed with
that step and, for the interviewer, the value expected there."""

import pytest
from django.urls import reverse

from conftest import log_in
from grading.models import Attempt
from questions.variants import draw_variant
from trainer.interviews.models import InterviewEvent
from trainer.interviews.tests.conftest import bank_version, make_interview
from trainer.tests.csp_watch import assert_no_csp_violations, watch_csp

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLOOR_FILE = "questions/bank/roofline/001-decode-floor-from-weights.yaml"
# The variant whose figures the lines below are written for: 4 x H100 at TP 4.
VARIANT = {"gpu": "h100_sxm", "model": "llama33_70b", "dtype": "bf16", "batch": 16, "context": 4096}
ONE_GPU = ["w = (70.6e9 - 128256 * 8192) * 2 B", "t = w / 3.35 TB/s", "floor = t * 1"]


def _seed_of(version) -> int:
    question = version.as_question()
    return next(seed for seed in range(5000)
                if all(draw_variant(question, seed).choices[name] == value for name, value in VARIANT.items()))


def test_room_scratchpad_working_reaches_the_interviewers_transcript(live_server, two_people, interviewer,
                                                                     grading_worker):
    host, guest = two_people
    guest_csp = watch_csp(guest)
    version = bank_version(FLOOR_FILE)
    interview = make_interview(interviewer, version)
    question = interview.questions.get()
    question.variant_seed = _seed_of(version)  # drawn at random on creation; pin the figures above
    question.save(update_fields=["variant_seed"])

    guest.goto(f"{live_server.url}{reverse('interview-join', args=[interview.invite_token])}")
    guest.fill("#id_name", "Grace")
    guest.click("#join")
    guest.click("#start-interview")
    guest.locator("#scratchpad-floor summary").click()

    # Typed, not filled: each keystroke is an input event, and the room previews each line.
    guest.locator("#part-floor textarea[name=scratchpad]").press_sequentially("\n".join(ONE_GPU))
    preview = guest.locator("#scratchpad-lines-floor")
    preview.locator(f'li[data-line="{len(ONE_GPU)}"]').wait_for()
    assert "139 GB" in preview.locator('li[data-line="1"]').inner_text()
    assert "41.5 ms" in preview.locator('li[data-line="2"]').inner_text()
    assert not InterviewEvent.objects.filter(interview=interview, kind=InterviewEvent.Kind.ANSWER).exists()

    guest.locator("#part-floor button[type=submit]").click()
    verdict = guest.locator("#verdict-floor")
    verdict.locator('[data-verdict="wrong"]').wait_for()  # graded by the worker
    wrong = verdict.locator("[data-first-wrong]")
    assert wrong.get_attribute("data-line") == "2"
    assert "bandwidths add up" in wrong.inner_text()
    assert "10.4 ms" not in verdict.inner_text()  # the expected value is not given away in the room

    [answer] = InterviewEvent.objects.filter(interview=interview, kind=InterviewEvent.Kind.ANSWER)
    attempt = Attempt.objects.get(id=answer.data["attempt_id"])
    assert attempt.scratchpad.splitlines() == ONE_GPU

    log_in(host, live_server.url, interviewer.username)
    host.goto(f"{live_server.url}{reverse('interview-transcript', args=[interview.id])}")
    entry = host.locator('#transcript-timeline li[data-kind="answer"]')
    assert entry.locator("[data-scratchpad] pre").inner_text().splitlines() == ONE_GPU
    first_wrong = entry.locator("[data-first-wrong]")
    assert first_wrong.get_attribute("data-line") == "2"
    assert "expected 10.4 ms here" in first_wrong.inner_text()  # interviewers see it
    assert_no_csp_violations(guest, guest_csp)
