"""Choice, order and match parts in the interview room, in real Chromium, by keyboard
only (the helpers are the practice test's: trainer/tests/test_browser_concept_kinds.py);
the panel's transcript then shows the answers and the verdicts' feedback."""

import pytest
from playwright.sync_api import expect

from conftest import log_in
from trainer.interviews.tests.conftest import make_interview, start
from trainer.tests.csp_watch import assert_no_csp_violations, watch_csp
from trainer.tests.test_browser_concept_kinds import (
    ORDER_RIGHT,
    _answer_choice,
    _answer_match,
    _answer_order,
    save_concept_questions,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def concept_questions(transactional_db):
    return save_concept_questions()


def test_the_interview_room_takes_choice_order_and_match_by_keyboard(live_server, two_people, interviewer, candidate,
                                                                     concept_questions, grading_worker):
    host, guest = two_people
    found = watch_csp(guest)
    interview = start(make_interview(interviewer, *concept_questions), candidate)
    log_in(guest, live_server.url, candidate.username)
    room = f"{live_server.url}/interviews/{interview.id}/room/"

    guest.goto(room)
    _answer_choice(guest)
    guest.click(".question-nav >> text=Q2")
    _answer_order(guest)
    guest.click(".question-nav >> text=Q3")
    _answer_match(guest)
    assert_no_csp_violations(guest, found)

    # The panel's transcript shows what was answered, and the verdicts' feedback.
    log_in(host, live_server.url, interviewer.username)
    host.goto(f"{live_server.url}/interviews/{interview.id}/transcript/")
    timeline = host.locator("#transcript-timeline")
    expect(timeline).to_contain_text(", ".join(ORDER_RIGHT))
    expect(timeline).to_contain_text("decode=hbm, prefill=flops")
    expect(timeline).to_contain_text("should come before")
