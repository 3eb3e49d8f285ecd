"""In real Chromium: while an interview is open, practice gives none of its answers away.

Two people try: a brand-new account signed up through the real signup page, and the
invited candidate, logged in through the real login page, who has joined and started
the interview. Each opens the question list, the dashboard, the interview question's
practice page, and posts give-up, hint, answer and new-variant requests from their
browser session. None of the interview variant's reference values, worked solution,
model answer or follow-ups appears in anything they get back. Once the interview
closes, the practice page is open again (and giving up there shows the solution, which
proves the check above looks for the right text).
"""

import html
import re

import pytest
from django.urls import reverse

import grading
from conftest import DECODE_FLOOR_YAML, log_in
from grading.models import Attempt
from questions.rendering import render_question
from questions.variants import draw_variant, reference_values
from trainer.interviews import services as interview_services
from trainer.interviews.tests.conftest import make_interview

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SLUG = "test-decode-floor"
FOLLOWUP = "What changes with tensor parallelism across 8 GPUs?"


@pytest.fixture
def interview_question(db):
    """The shared decode question, with a follow-up (give-up shows follow-ups too)."""
    from questions.services import question_save_text

    result = question_save_text(DECODE_FLOOR_YAML + f"followups:\n  - {FOLLOWUP}\n", origin="file")
    assert result.version is not None, result.problems
    return result.version


def _text(fragment_html: str) -> str:
    """Rendered HTML as the text a page shows (tags dropped, whitespace collapsed)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment_html)).split())


def interview_secrets(interview) -> list[str]:
    """What must not leak, computed from the interview's pinned version and seed with the
    project's own variant and rendering functions."""
    pinned = interview.questions.select_related("question_version").get()
    question = pinned.question_version.as_question()
    variant = draw_variant(question, pinned.variant_seed)
    rendered = render_question(question, pinned.variant_seed)
    found = []
    for part in question.parts:
        if part.is_auto_graded:
            kind = grading.get_kind(part.kind)
            reference = kind.reference_answer(kind.load_spec(part.raw), variant.context)  # "3.35 ms"
            found += [reference, reference.split()[0]]
    assert set(reference_values(question, variant.context)) == {"floor"}
    found.append(_text(rendered.solution_html))  # "16.1 GB / 4.8 TB/s = 3.35 ms."
    found += [_text(part.model_answer_html) for part in rendered.parts if part.model_answer_html]
    found += [_text(followup) for followup in rendered.followups_html]
    found += [_text(hint) for hint in rendered.hints_html]  # hints are off in this interview
    assert all(found) and FOLLOWUP in found
    return found


def sign_up(page, base, username):
    page.goto(f"{base}/accounts/signup/")
    page.fill("#id_username", username)
    page.fill("#id_password1", "ridge-point-295-flop")
    page.fill("#id_password2", "ridge-point-295-flop")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/questions/")


def _csrf_token(page) -> str:
    return page.locator("input[name=csrfmiddlewaretoken]").first.input_value()


def try_practice(page, base) -> list[str]:
    """Everything practice answers this browser about the interview question: pages it
    opens and the bodies of the requests it posts with its own session."""
    seen = []
    detail_url = f"{base}{reverse('question-detail', args=[SLUG])}"

    response = page.goto(f"{base}{reverse('question-list')}")
    assert response.status == 200
    row = page.locator(f'[data-locked="{SLUG}"]')
    assert row.count() == 1 and "Decode floor" in row.inner_text()
    assert page.locator(f'a[href="{reverse("question-detail", args=[SLUG])}"]').count() == 0
    assert "in use in a live interview" in page.inner_text("#results")
    seen.append(page.content())

    page.goto(f"{base}{reverse('dashboard')}")
    seen.append(page.content())
    next_link = page.locator("#next a")
    if next_link.count():  # the dashboard suggests it: following the link gets the locked page
        next_link.first.click()
        seen.append(page.content())

    response = page.goto(detail_url)
    assert response.status == 403
    page.locator("#question-locked").wait_for()
    assert page.locator("text=Give up and show the solution").count() == 0
    seen.append(page.content())

    token = _csrf_token(page)
    posts = [
        (reverse("give-up", args=[SLUG]), {}, {}),
        (reverse("take-hint", args=[SLUG]), {}, {}),
        (reverse("take-hint", args=[SLUG]), {}, {"HX-Request": "true"}),
        (reverse("submit-answer", args=[SLUG, "why"]), {"answer": "Tell me the model answer."}, {"HX-Request": "true"}),
        (reverse("submit-answer", args=[SLUG, "floor"]), {"answer": "3 ms"}, {}),
        (reverse("interpret-answer", args=[SLUG, "floor"]), {"answer": "3 ms"}, {"HX-Request": "true"}),
        (reverse("new-variant", args=[SLUG]), {}, {}),
    ]
    for path, form, headers in posts:
        response = page.request.post(f"{base}{path}", form=form, headers={"X-CSRFToken": token, **headers})
        assert response.status == 403, (path, response.status)
        seen.append(response.text())

    # Back on the page after all that: still locked, still nothing.
    response = page.goto(detail_url)
    assert response.status == 403
    seen.append(page.content())
    return seen


def assert_nothing_leaks(bodies: list[str], secrets: list[str]) -> None:
    for body in bodies:
        text = " ".join(html.unescape(body).split())
        for secret in secrets:
            assert secret not in text, f"{secret!r} leaked"
        assert 'id="solution"' not in body


def test_practice_reveals_nothing_of_an_open_interview(live_server, browser, interviewer, candidate,
                                                      interview_question):
    base = live_server.url
    interview = make_interview(interviewer, interview_question, hints=False)
    secrets = interview_secrets(interview)
    join_url = f"{base}{reverse('interview-join', args=[interview.invite_token])}"

    newcomer_context, invited_context = browser.new_context(), browser.new_context()
    try:
        newcomer, invited = newcomer_context.new_page(), invited_context.new_page()
        for page in (newcomer, invited):
            page.set_default_timeout(15_000)

        # The invited candidate uses the link with their own account and starts the clock.
        log_in(invited, base, candidate.username)
        invited.goto(join_url)
        invited.click("#join")
        invited.click("#start-interview")
        invited.locator("#clock").wait_for()
        interview.refresh_from_db()
        assert interview.is_open and interview.candidate == candidate

        sign_up(newcomer, base, "curious-newcomer")

        for page in (newcomer, invited):
            assert_nothing_leaks(try_practice(page, base), secrets)
        assert not Attempt.objects.filter(interview_link__isnull=True).exists()  # practice took nothing

        # The newcomer cannot use the (now used) invitation either.
        newcomer.goto(join_url)
        newcomer.locator("#invite-used").wait_for()
        assert newcomer.locator("#join").count() == 0

        # The interview ends: practice opens again, and giving up shows the solution.
        interview_services.interview_end(interview=interview, ended_by=interviewer)
        for page in (newcomer, invited):
            response = page.goto(f"{base}{reverse('question-detail', args=[SLUG])}")
            assert response.status == 200
            assert page.locator("#question-locked").count() == 0
            page.click("text=Give up and show the solution")
            page.locator("#solution").wait_for()
            solution = page.inner_text("#solution")
            assert "KV reads add bytes; launch gaps add time." in solution and FOLLOWUP in solution
        newcomer.goto(f"{base}{reverse('question-list')}")
        assert newcomer.locator(f'[data-locked="{SLUG}"]').count() == 0
        newcomer.locator(f'#results a[href="{reverse("question-detail", args=[SLUG])}"]').wait_for()

        # A closed interview's link admits no one.
        newcomer.goto(join_url)
        newcomer.locator("#invite-closed").wait_for()
    finally:
        newcomer_context.close()
        invited_context.close()
