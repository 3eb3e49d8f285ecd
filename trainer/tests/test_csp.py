"""The Content-Security-Policy: every response carries it, nothing in the templates needs
it relaxed, and the pages (the Django admin included) run under it in Chromium without
a single refusal.

The question page's code editor, the interview room and the transcript are checked in
their own browser tests (test_code_editor.py, interviews/tests/test_browser.py).
"""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from conftest import PASSWORD
from trainer.tests.csp_watch import assert_no_csp_violations, watch_csp

EXPECTED = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],  # plus the request's nonce on pages that used it
    "img-src": ["'self'", "data:"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "frame-ancestors": ["'none'"],
    "form-action": ["'self'"],
}


def policy(response) -> dict[str, list[str]]:
    header = response.headers["Content-Security-Policy"]
    directives = {}
    for directive in header.split(";"):
        name, *values = directive.split()
        directives[name] = values
    return directives


def nonces(values: list[str]) -> list[str]:
    return [value[len("'nonce-"):-1] for value in values if value.startswith("'nonce-")]


def without_nonces(directives):
    return {name: [value for value in values if not value.startswith("'nonce-")] for name, values in directives.items()}


# --- The header ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_pages_carry_the_strict_policy(client):
    response = client.get(reverse("login"))
    directives = policy(response)
    assert directives == EXPECTED
    header = response.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in header and "unsafe-eval" not in header
    assert nonces(directives["style-src"]) == []  # no page part asked for one


def test_the_policy_covers_logged_in_pages_the_lockout_page_and_the_admin(client, login_as, candidate, admin_user):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        locked = client.post(reverse("login"), {"username": "nobody", "password": "x"}, REMOTE_ADDR="10.9.0.1")
    assert locked.status_code == 429 and without_nonces(policy(locked)) == EXPECTED

    login_as(candidate)
    for name in ("question-list", "dashboard", "interview-list"):
        assert without_nonces(policy(client.get(reverse(name)))) == EXPECTED, name
    login_as(admin_user)
    admin_index = client.get(reverse("admin:index"))
    assert admin_index.status_code == 200 and without_nonces(policy(admin_index)) == EXPECTED


def test_the_code_editor_page_gets_a_fresh_nonce_for_codemirrors_style(client, login_as, candidate, admin_user):
    from questions.tests.factories import store_version
    from trainer.interviews.tests.conftest import CODE_QUESTION_DATA

    store_version(CODE_QUESTION_DATA, source_text="(test)")
    login_as(candidate)
    url = reverse("question-detail", args=[CODE_QUESTION_DATA["slug"]])
    seen = set()
    for _ in range(2):
        response = client.get(url)
        [nonce] = nonces(policy(response)["style-src"])
        assert nonces(policy(response)["script-src"]) == []  # scripts still come only from 'self'
        assert f'src="/static/vendor/codemirror/editor.js" nonce="{nonce}"' in response.content.decode()
        seen.add(nonce)
    assert len(seen) == 2


# --- The templates ------------------------------------------------------------------------------

TEMPLATE_DIRS = [Path(settings.BASE_DIR) / "templates"] + [
    path for path in Path(settings.BASE_DIR).glob("*/templates") if ".venv" not in path.parts
] + [path for path in Path(settings.BASE_DIR).glob("*/*/templates") if ".venv" not in path.parts]

# What the policy refuses: inline scripts (a <script> without src; JSON data blocks are
# not run, so json_script is fine), <style> elements, style="" attributes, on*= handlers
# and htmx's hx-on (evaluated code), javascript: URLs, js: values and hx-trigger filters
# (also evaluated: with allowEval off htmx would ignore them).
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
FORBIDDEN = {
    "inline <script>": INLINE_SCRIPT,
    "<style> element": re.compile(r"<style\b", re.I),
    "style attribute": re.compile(r"\sstyle\s*=", re.I),
    "on* handler": re.compile(r"\son[a-z]+\s*=", re.I),
    "hx-on": re.compile(r"\s(hx|data-hx)-on", re.I),
    "evaluated value": re.compile(r"(javascript:|[\"']js:)", re.I),
    "hx-trigger filter": re.compile(r"hx-trigger=\"[^\"]*\[", re.I),
}


COMMENTS = re.compile(r"{#.*?#}|{% comment %}.*?{% endcomment %}|<!--.*?-->", re.S)


def _code(path: Path) -> str:
    """The template without its comments (which may well mention <style>), lines kept."""
    return COMMENTS.sub(lambda match: "\n" * match.group().count("\n"), path.read_text())


def template_files():
    files = sorted({path for directory in TEMPLATE_DIRS for path in directory.rglob("*.html")})
    assert len(files) > 10  # the scan found the templates
    return files


@pytest.mark.parametrize("what", sorted(FORBIDDEN))
def test_templates_hold_nothing_the_policy_refuses(what):
    offenders = [
        f"{path.relative_to(settings.BASE_DIR)}:{text[:match.start()].count(chr(10)) + 1}"
        for path in template_files()
        for text in [_code(path)]
        for match in FORBIDDEN[what].finditer(text)
    ]
    assert offenders == [], f"{what} in {offenders}"


@pytest.mark.django_db
def test_htmx_neither_injects_styles_nor_evaluates_code(client):
    html = client.get(reverse("login")).content.decode()
    assert """<meta name="htmx-config" content='{"includeIndicatorStyles": false, "allowEval": false}'>""" in html
    css = (Path(settings.BASE_DIR) / "static/trainer/app.css").read_text()
    assert ".htmx-indicator" in css and ".htmx-request .htmx-indicator" in css


# --- In the browser -----------------------------------------------------------------------------

def _log_in(page, base, username, password=PASSWORD):
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/questions/")


def _log_out(page):
    page.click("header form button")
    page.locator("#id_username").wait_for()


def _solve(user, version):
    """A right answer to the decode question, so the dashboard draws its history lines."""
    import grading
    from grading import services
    from questions.variants import draw_variant

    question = version.as_question()
    kind = grading.get_kind("numeric")
    right = kind.reference_answer(kind.load_spec(question.part("floor").raw), draw_variant(question, 3).context)
    result = services.attempt_submit(user=user, version=version, part_id="floor", seed=3, answer=right)
    services.attempt_grade(result.attempt.id)


def _older_history(user):
    from datetime import timedelta

    from django.utils import timezone

    from trainer.models import MasterySnapshot

    when = timezone.now() - timedelta(days=10)
    MasterySnapshot.objects.create(user=user, day=when.date(), taken_at=when, mastery={"roofline": 0.5})


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_pages_and_the_admin_run_without_a_refusal(live_server, page, candidate, interviewer, decode_question,
                                                       django_user_model):
    from trainer.interviews.tests.conftest import make_interview

    base = live_server.url
    found = watch_csp(page)

    # The candidate: login form, question list (htmx filters), a question (htmx reading
    # of the answer as it is typed), the dashboard's charts.
    _solve(candidate, decode_question)
    _older_history(candidate)  # the history chart draws from two days of practice
    _log_in(page, base, candidate.username)
    page.select_option("select[name=topic]", "roofline")
    page.locator("#results").get_by_text("Decode floor").wait_for()
    page.goto(f"{base}/questions/test-decode-floor/")
    page.locator("#part-floor input[name=answer]").fill("12 GB")
    page.locator("#interpretation-floor").get_by_text("time").wait_for()
    page.goto(f"{base}/me/")
    page.locator("#history-chart").wait_for()
    assert page.locator(".legend .swatch rect").count() >= 1
    assert_no_csp_violations(page, found)
    _log_out(page)

    # The interviewer's live page: a note added by htmx clears its form (what hx-on did).
    interview = make_interview(interviewer, decode_question)
    _log_in(page, base, interviewer.username)
    page.goto(f"{base}{reverse('interview-monitor', args=[interview.id])}")
    page.fill("#note-text", "Knows the roofline")
    page.click("#add-note")
    page.locator('#timeline [data-kind="note"]').get_by_text("Knows the roofline").wait_for()
    assert page.input_value("#note-text") == ""
    assert_no_csp_violations(page, found)
    _log_out(page)

    # The Django admin, JavaScript-heavy pages included (the user form's group filter,
    # the change list's actions), and the authoring pages built on it.
    django_user_model.objects.create_superuser("root", password=PASSWORD)
    _log_in(page, base, "root")
    question = decode_question.question
    for path in ("/admin/", "/admin/questions/question/", f"/admin/questions/question/{question.pk}/change/",
                 "/admin/auth/user/", "/admin/auth/user/add/", f"/admin/auth/user/{candidate.pk}/change/",
                 reverse("questions:preview", args=[question.slug])):
        response = page.goto(f"{base}{path}")
        assert response.ok, path
        page.wait_for_load_state("load")
    page.goto(f"{base}/admin/auth/user/{candidate.pk}/change/")
    page.locator("#id_groups_from").wait_for()  # SelectFilter2 built its widget
    assert_no_csp_violations(page, found)

    # The recorder does see a refusal: an inline style attribute set by script.
    page.evaluate("() => document.body.setAttribute('style', 'color: red')")
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 50))")
    assert any("style-src" in message for message in found)
