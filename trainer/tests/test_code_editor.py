"""The code editor in a real browser: CodeMirror replaces each code textarea, keeps it in
sync, indents with Tab and submits the form on Ctrl-Enter.

No worker runs here: a readable answer stays queued, which is enough to show that the
editor's text reached the server as the form's ``answer``.
"""

import textwrap

import pytest

from conftest import PASSWORD
from grading.models import Attempt
from trainer.tests.csp_watch import assert_no_csp_violations, watch_csp

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

JUDGE_FILE = "editor/echo.judge.py"

CODE_QUESTION_YAML = textwrap.dedent(
    f"""\
    slug: test-code-editor
    seed: 1
    title: Echo (code editor test)
    topic: serving
    difficulty: 1
    summary: Return the argument.
    statement: |
      Write a function that returns its argument.
    parts:
      - id: echo
        kind: code
        prompt: Write `echo(x)`.
        entrypoint: echo
        judge: {JUDGE_FILE}
        starter: |
          def echo(x):
              raise NotImplementedError
        examples:
          - {{name: one, call: echo(1), result: "1"}}
        solutions:
          - verdict: accepted
            code: |
              def echo(x):
                  return x
      - id: again
        kind: code
        prompt: Once more.
        entrypoint: echo
        judge: {JUDGE_FILE}
        starter: "def echo(x): ..."
        examples:
          - {{name: one, call: echo(1), result: "1"}}
        solutions:
          - verdict: accepted
            code: "def echo(x): return x"
    solution: |
      `return x`.
    """
)


@pytest.fixture
def code_question(db, tmp_path, monkeypatch):
    """A question with two code parts, stored directly: its judge is an empty file in a
    temporary bank (the spec only needs it to exist; nothing is graded in these tests), so
    it is not run through the bank's validation, which would execute its solutions."""
    from questions.loader import load_text
    from questions.tests.factories import store_version

    monkeypatch.setattr("grading.judge.contract.BANK_ROOT", tmp_path)
    (tmp_path / JUDGE_FILE).parent.mkdir()
    (tmp_path / JUDGE_FILE).write_text("# never loaded by these tests\n")
    return store_version(load_text(CODE_QUESTION_YAML).data, source_text=CODE_QUESTION_YAML)


@pytest.fixture
def csp_violations(page):
    return watch_csp(page)


@pytest.fixture
def code_page(live_server, page, csp_violations, candidate, code_question):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", candidate.username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/questions/")
    page.goto(f"{live_server.url}/questions/test-code-editor/")
    page.locator("#part-echo .cm-editor").wait_for()
    return page


def _textarea_value(page) -> str:
    return page.locator("#part-echo textarea.code").input_value()


def _clear_editor(page):
    page.locator("#part-echo .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")


def test_editor_replaces_the_textarea_and_starts_from_its_text(code_page):
    textarea = code_page.locator("#part-echo textarea.code")
    assert textarea.is_hidden()
    assert code_page.locator("#part-echo .cm-editor").count() == 1
    assert code_page.locator("#part-again .cm-editor").count() == 1  # every code part gets its own
    assert code_page.locator("#part-echo .cm-lineNumbers").is_visible()
    # Python highlighting: the keyword `def` is its own styled token.
    assert code_page.locator("#part-echo .cm-line").first.locator("span", has_text="def").count() == 1
    editor_text = code_page.evaluate(
        'document.querySelector("#part-echo textarea.code").editorView.state.doc.toString()'
    )
    assert editor_text == _textarea_value(code_page) == "def echo(x):\n    raise NotImplementedError\n"


def test_typing_keeps_the_textarea_in_sync(code_page):
    _clear_editor(code_page)
    assert _textarea_value(code_page) == ""
    code_page.keyboard.type("def echo(x):")
    code_page.keyboard.press("Enter")  # Python indentation continues the block
    code_page.keyboard.type("return x")
    assert _textarea_value(code_page) == "def echo(x):\n    return x"


def test_tab_indents_with_four_spaces(code_page):
    _clear_editor(code_page)
    code_page.keyboard.press("Tab")
    assert _textarea_value(code_page) == "    "
    code_page.keyboard.type("x")
    code_page.keyboard.press("Tab")  # to the next multiple of four columns
    assert _textarea_value(code_page) == "    x   "
    assert code_page.evaluate("document.activeElement.classList.contains('cm-content')")  # focus stayed
    code_page.keyboard.press("Control+a")
    code_page.keyboard.press("Shift+Tab")
    assert _textarea_value(code_page) == "x   "


def test_ctrl_enter_submits_the_editor_text(code_page):
    _clear_editor(code_page)
    code_page.keyboard.type("x = 1")
    code_page.keyboard.press("Control+Enter")
    code_page.locator('#verdict-echo [data-verdict="invalid"]').wait_for()  # no `echo` defined
    assert Attempt.objects.count() == 0
    assert _textarea_value(code_page) == "x = 1"  # Ctrl-Enter submitted; it did not add a line

    _clear_editor(code_page)
    code_page.keyboard.type("def echo(x):\n")
    code_page.keyboard.type("return x")
    code_page.keyboard.press("Control+Enter")
    code_page.locator("#verdict-echo .verdict.pending").wait_for()
    attempt = Attempt.objects.get()
    assert (attempt.part_id, attempt.answer) == ("echo", "def echo(x):\n    return x")


def test_textareas_that_htmx_swaps_in_get_an_editor(code_page):
    code_page.evaluate(
        """() => {
            document.querySelector("article").insertAdjacentHTML("beforeend", '<div id="swap-target"></div>');
            htmx.swap("#swap-target", '<textarea class="code" id="late">print(1)</textarea>', {swapStyle: "innerHTML"});
        }"""
    )
    code_page.locator("#swap-target .cm-editor").wait_for()
    assert code_page.locator("#late").is_hidden()
    assert code_page.evaluate('document.querySelector("#late").editorView.state.doc.toString()') == "print(1)"


def test_the_editor_works_under_the_content_security_policy(code_page, csp_violations):
    """CodeMirror's theme is a <style> element it writes at run time: it carries the
    page's nonce, and nothing the page does is refused by the policy."""
    _clear_editor(code_page)
    code_page.keyboard.type("def echo(x):\n")
    code_page.keyboard.type("return x")
    assert_no_csp_violations(code_page, csp_violations)
    assert code_page.evaluate("""() => {
        const style = [...document.querySelectorAll("head style")].find((s) => s.textContent.includes(".cm-scroller"));
        return Boolean(style && style.nonce);
    }""")
    # The theme applied: the editor has its border, which only that <style> gives it.
    assert code_page.locator("#part-echo .cm-editor").evaluate("e => getComputedStyle(e).borderTopStyle") == "solid"


def test_only_pages_with_code_load_the_editor_once(login_as, candidate, code_question, decode_question):
    client = login_as(candidate)
    script = 'src="/static/vendor/codemirror/editor.js"'
    assert client.get("/questions/test-code-editor/").content.decode().count(script) == 1  # two code parts
    assert script not in client.get("/questions/test-decode-floor/").content.decode()
