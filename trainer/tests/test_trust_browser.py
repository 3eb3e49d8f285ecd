"""What a new candidate saw, walked again in Chromium with a real worker (issue 14): a solve
survives a later failure, an answer copied from the solution earns nothing, "idk" opens no
rubric, a double-click is one attempt, a reload restores code typed but not submitted, a
code part shows its visible examples before any run, a correct kernel on this CPU grader
earns full credit with speed marked not measured, and an interview answer leaves practice
untouched."""

import time

import pytest

from conftest import log_in
from grading.models import Attempt
from grading.sandbox import sandbox_available
from trainer.interviews.tests.conftest import (  # kernel_question is a fixture
    code_solution,
    editor_replace,
    kernel_question,  # noqa: F401
    make_interview,
    start,
)
from trainer.models import Draft
from trainer.tests.test_code_editor import code_question  # noqa: F401 (a fixture)
from trainer.tests.test_practice_browser import _mastery, _reference

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SANDBOX, WHY_NO_SANDBOX = sandbox_available()


def _answer(page, part_id, text, verdict):
    page.locator(f"#part-{part_id} input[name=answer]").fill(text)
    page.locator(f"#part-{part_id} button[type=submit]").click()
    return page.locator(f'#verdict-{part_id} [data-verdict="{verdict}"]').wait_for()


def test_a_solve_survives_a_worse_answer_and_a_copied_answer_earns_nothing(
    live_server, page, candidate, decode_question, kv_formula_question, grading_worker  # noqa: F811
):
    base = live_server.url
    log_in(page, base, candidate.username)
    page.goto(f"{base}/questions/test-decode-floor/")
    page.locator("#part-floor input[name=answer]").fill("1 s")
    page.locator("#part-floor button[type=submit]").click()
    page.locator('#verdict-floor [data-verdict="wrong"]').wait_for()
    seed = Attempt.objects.latest("id").variant_seed
    _answer(page, "floor", _reference(decode_question, "floor", seed), "correct")
    _answer(page, "floor", "1000 ms", "wrong")  # a worse answer after the solve
    page.reload()
    page.locator("#solution").wait_for()  # still solved
    page.locator("#history-floor summary").click()
    assert page.locator("#history-floor tbody tr").count() == 3
    page.goto(f"{base}/me/")
    assert _mastery(page, "Roofline and hardware") == pytest.approx(1.0, abs=0.01)
    assert page.locator("#scoring-model").get_by_text("best graded score").count() == 1

    # Give up on the formula question, then type the answer the solution shows.
    page.goto(f"{base}/questions/test-kv-per-token/")
    page.click("text=Give up and show the solution")
    page.locator("#solution").wait_for()
    _answer(page, "kv", "2*L*h*d*b", "correct")
    page.locator('#verdict-kv [data-mark="after-solution"]').wait_for()
    page.goto(f"{base}/me/")
    assert _mastery(page, "KV cache and memory") == 0.0


def test_idk_opens_no_rubric_and_a_double_click_is_one_attempt(
    live_server, page, candidate, decode_question, grading_worker  # noqa: F811
):
    log_in(page, live_server.url, candidate.username)
    page.goto(f"{live_server.url}/questions/test-decode-floor/")
    page.locator("#part-why textarea[name=answer]").fill("idk")
    page.locator("#part-why button[type=submit]").click()
    page.locator('#verdict-why [data-verdict="invalid"]').get_by_text("at least 8 words").wait_for()
    assert page.locator("#verdict-why .rubric-item").count() == 0 and not Attempt.objects.exists()

    page.locator("#part-floor input[name=answer]").fill("1000 ms")
    page.locator("#part-floor button[type=submit]").dblclick()
    page.locator('#verdict-floor [data-verdict="wrong"]').wait_for()
    assert Attempt.objects.count() == 1


def _wait_for_draft(text, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if Draft.objects.filter(text=text).exists():
            return
        time.sleep(0.1)
    raise AssertionError(f"no draft {text!r} was saved")


def test_a_reload_restores_a_code_draft_and_a_new_variant_asks_first(live_server, page, candidate,
                                                                     code_question):  # noqa: F811
    log_in(page, live_server.url, candidate.username)
    page.goto(f"{live_server.url}/questions/test-code-editor/")
    # Its visible example is on the page before any run.
    examples = page.locator("#part-echo").get_by_text("echo(1)")
    examples.first.wait_for()
    page.locator("#part-echo .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.type("def echo(x):\n")
    page.keyboard.type("return [x]")
    typed = "def echo(x):\n    return [x]"
    _wait_for_draft(typed)

    page.reload()
    page.locator("#part-echo .cm-editor").wait_for()
    assert page.evaluate('document.querySelector("#part-echo textarea.code").editorView.state.doc.toString()') == typed

    dialogs = []
    page.once("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.click("text=Practise another variant")
    assert dialogs and "discarded" in dialogs[0] and Draft.objects.count() == 1  # dismissed: kept

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("text=Practise another variant")
    page.locator("#part-echo .cm-editor").wait_for()
    assert not Draft.objects.exists()
    assert "return [x]" not in page.locator("#part-echo .cm-content").inner_text()


@pytest.mark.skipif(not SANDBOX, reason=f"sandbox: {WHY_NO_SANDBOX}")
def test_a_correct_kernel_on_a_cpu_grader_earns_full_credit_with_speed_not_measured(
    live_server, page, candidate, kernel_question, grading_worker  # noqa: F811
):
    log_in(page, live_server.url, candidate.username)
    page.goto(f"{live_server.url}/questions/{kernel_question.question.slug}/")
    page.locator("#part-kernel .cm-editor").wait_for()
    editor_replace(page, "kernel", code_solution(kernel_question))
    page.locator("#part-kernel button[type=submit]").first.click()
    verdict = page.locator('#verdict-kernel [data-verdict="correct"]')
    verdict.wait_for(timeout=120_000)  # Triton's interpreter in the sandbox
    assert "score 1.00" in verdict.inner_text()
    assert page.locator('#verdict-kernel [data-speed="not_measured"]').get_by_text("Speed not measured here").count()


def test_an_interview_answer_leaves_the_practice_list_and_mastery_untouched(
    live_server, page, candidate, interviewer, decode_question, grading_worker  # noqa: F811
):
    from trainer.interviews import services as interview_services

    interview = start(make_interview(interviewer, decode_question), candidate)
    seed = interview.questions.get(position=1).variant_seed
    log_in(page, live_server.url, candidate.username)
    page.goto(f"{live_server.url}/interviews/{interview.id}/room/?q=1")
    _answer(page, "floor", _reference(decode_question, "floor", seed), "correct")
    interview_services.interview_end(interview=interview, ended_by=interviewer)

    page.goto(f"{live_server.url}/questions/")
    row = page.locator("tr", has_text="Decode floor (test question)")
    assert row.locator("td.status").inner_text().strip() == "new"
    page.goto(f"{live_server.url}/me/")
    assert _mastery(page, "Roofline and hardware") == 0.0
