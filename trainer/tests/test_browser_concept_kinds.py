"""Choice, order and match parts in real Chromium, answered with the keyboard only, in
practice (the interview room's test, trainer/interviews/tests/test_browser_concept_kinds.py,
drives the same helpers); order also without JavaScript.

A real Celery worker (in a thread) grades every answer. The keyboard is the contract:
radio buttons and checkboxes by arrows and Space, an order's steps by their ↑ and ↓
buttons (Tab or focus, then Enter or Space, focus staying on the pressed button), a
match's selects by arrow keys; forms are sent by Enter on their Check button.
"""

import pytest
from playwright.sync_api import expect

from conftest import log_in
from grading.models import Attempt
from grading.tests.test_choice import CHOICE_QUESTION_YAML
from grading.tests.test_match import MATCH_QUESTION_YAML
from grading.tests.test_order import ORDER_QUESTION_YAML
from trainer.tests.csp_watch import assert_no_csp_violations, watch_csp

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ORDER_RIGHT = ["temperature", "top-k", "top-p"]


def _save(text, path):
    from questions.services import question_save_text

    result = question_save_text(text, origin="file", source_path=path)
    assert result.version is not None, result.problems
    return result.version


def save_concept_questions():
    """The choice, order and match test questions, stored and released, in that order."""
    return [
        _save(CHOICE_QUESTION_YAML, "questions/bank/roofline/003-test-decode-bound.yaml"),
        _save(ORDER_QUESTION_YAML, "questions/bank/speculative/058-test-sampler-order.yaml"),
        _save(MATCH_QUESTION_YAML, "questions/bank/roofline/004-test-phase-bounds.yaml"),
    ]


@pytest.fixture
def concept_questions(transactional_db):
    return save_concept_questions()


def _press(page, locator, key="Enter"):
    locator.focus()
    page.keyboard.press(key)


def _shown_order(page, part_id):
    return page.locator(f"#order-items-{part_id} li").evaluate_all("items => items.map(item => item.dataset.orderId)")


def _sort_with_the_keyboard(page, part_id, target):
    """Selection sort by the ↑ buttons: focus a step's button once, then press Enter
    until the step is in place; focus must stay on that button between presses."""
    for position, item_id in enumerate(target):
        button = page.locator(f'#order-items-{part_id} li[data-order-id="{item_id}"] [data-order-move="up"]')
        current = _shown_order(page, part_id).index(item_id)
        if current == position:
            continue
        button.focus()
        for _ in range(current - position):
            page.keyboard.press("Enter")
            expect(button).to_be_focused()
        assert _shown_order(page, part_id)[position] == item_id


def _answer_order(page, part_id="knobs"):
    """A wrong order first (the shuffle as shown, never right), then the right one."""
    typed = page.locator(f"#order-answer-{part_id}")
    expect(typed).to_be_hidden()  # the script took over: buttons, not typing
    expect(page.locator(f'#order-items-{part_id} [data-order-move="up"]').first).to_be_visible()
    shown = _shown_order(page, part_id)
    assert shown != ORDER_RIGHT and sorted(shown) == sorted(ORDER_RIGHT)
    assert typed.input_value() == ", ".join(shown)

    _press(page, page.locator(f"#part-{part_id} button[type=submit]"))
    wrong = page.locator(f'#verdict-{part_id} [data-verdict="wrong"]')
    wrong.wait_for()
    expect(wrong).to_contain_text("should come before")

    # A step already at the top says so and stays; the live region tells where a step went.
    first = page.locator(f'#order-items-{part_id} li[data-order-id="{shown[0]}"] [data-order-move="up"]')
    _press(page, first)
    expect(page.locator(f"#part-{part_id} [data-order-announce]")).to_contain_text("already first")
    assert _shown_order(page, part_id) == shown

    _sort_with_the_keyboard(page, part_id, ORDER_RIGHT)
    assert typed.input_value() == ", ".join(ORDER_RIGHT)
    expect(page.locator(f"#part-{part_id} [data-order-announce]")).to_contain_text("moved to position")
    expect(page.locator(f"#interpretation-{part_id}")).to_contain_text("Temperature")  # the live preview followed
    expect(page.locator(f"#interpretation-{part_id}")).to_contain_text("→ Top-k → Top-p")
    _press(page, page.locator(f"#part-{part_id} button[type=submit]"))
    page.locator(f'#verdict-{part_id} [data-verdict="correct"]').wait_for()


def _choose_by_arrows(page, select, value):
    """Arrow down through a closed select until it shows ``value`` (a select's own
    keyboard behaviour, no mouse)."""
    select.focus()
    for _ in range(10):
        if select.input_value() == value:
            return
        page.keyboard.press("ArrowDown")
    assert select.input_value() == value


def _answer_match(page, part_id="bounds"):
    decode, prefill = (page.locator(f"#match-{part_id}-{left}") for left in ("decode", "prefill"))
    _choose_by_arrows(page, decode, "decode=hbm")
    expect(page.locator(f"#interpretation-{part_id}")).to_contain_text("none for “Long prefill”")  # a change previews
    _press(page, page.locator(f"#part-{part_id} button[type=submit]"))
    page.locator(f'#verdict-{part_id} [data-verdict="invalid"]').wait_for()  # half answered: no attempt used

    _choose_by_arrows(page, prefill, "prefill=pcie")
    _press(page, page.locator(f"#part-{part_id} button[type=submit]"))
    wrong = page.locator(f'#verdict-{part_id} [data-verdict="wrong"]')
    wrong.wait_for()
    expect(wrong).to_contain_text("“Long prefill” does not go with “PCIe bandwidth”.")
    expect(wrong).to_contain_text("1 of 2 pairs right")

    _choose_by_arrows(page, prefill, "prefill=flops")
    _press(page, page.locator(f"#part-{part_id} button[type=submit]"))
    page.locator(f'#verdict-{part_id} [data-verdict="correct"]').wait_for()


def _answer_choice(page):
    # Single answer: Space checks the focused radio, arrows move the choice within the group.
    radios = page.locator("#part-bound input[type=radio]")
    _press(page, radios.first, " ")
    target = page.locator("#option-bound-hbm")
    for _ in range(3):
        if target.is_checked():
            break
        page.keyboard.press("ArrowDown")
    expect(target).to_be_checked()
    _press(page, page.locator("#part-bound button[type=submit]"))
    page.locator('#verdict-bound [data-verdict="correct"]').wait_for()

    # Multiple answers: Space ticks each box; one wrong tick costs its share.
    for option in ("ctx", "batch", "vocab"):
        _press(page, page.locator(f"#option-kv-{option}"), " ")
    _press(page, page.locator("#part-kv button[type=submit]"))
    wrong = page.locator('#verdict-kv [data-verdict="wrong"]')
    wrong.wait_for()
    expect(wrong).to_contain_text("sizes the logits")
    _press(page, page.locator("#option-kv-vocab"), " ")  # untick it
    _press(page, page.locator("#part-kv button[type=submit]"))
    page.locator('#verdict-kv [data-verdict="correct"]').wait_for()


def test_practice_answers_choice_order_and_match_by_keyboard(live_server, page, candidate, concept_questions,
                                                             grading_worker):
    found = watch_csp(page)
    log_in(page, live_server.url, candidate.username)

    page.goto(f"{live_server.url}/questions/test-decode-bound/")
    _answer_choice(page)
    page.goto(f"{live_server.url}/questions/test-sampler-order/")
    _answer_order(page)
    page.goto(f"{live_server.url}/questions/test-phase-bounds/")
    _answer_match(page)

    assert_no_csp_violations(page, found)
    # choice: 1 single + 2 multiple; order: 2; match: 2 (the half-answered one cost nothing)
    assert Attempt.objects.count() == 7 and Attempt.objects.filter(correct=True).count() == 4


def test_an_order_can_be_answered_without_javascript(live_server, browser, candidate, concept_questions,
                                                    grading_worker):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        log_in(page, live_server.url, candidate.username)
        url = f"{live_server.url}/questions/test-sampler-order/"
        page.goto(url)
        expect(page.locator('#order-items-knobs [data-order-move="up"]').first).to_be_hidden()
        typed = page.locator("#order-answer-knobs")
        expect(typed).to_be_visible()
        typed.fill("top-k, top-p, temperature")
        page.locator("#part-knobs button[type=submit]").click()
        page.wait_for_url(url)
        for _ in range(40):  # no polling without JavaScript: reload until the worker has graded it
            if page.locator('#verdict-knobs [data-verdict="wrong"]').count():
                break
            page.wait_for_timeout(250)
            page.goto(url)
        expect(page.locator('#verdict-knobs [data-verdict="wrong"]')).to_contain_text("llama.cpp")
        assert Attempt.objects.get().answer == "top-k, top-p, temperature"
    finally:
        context.close()
