"""Practice and the interview room show answers through the same partials
(templates/kinds/verdict.html, kinds/program_answer.html): no copy may grow in either page."""

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
PAGES = [TEMPLATES / "trainer/question_detail.html", TEMPLATES / "interviews/room.html"]
# Markup that exists once, in the shared partials: a page that spells it out again is a copy.
SHARED_MARKUP = ['class="interpretation"', "Grading… (", 'data-verdict="{% if attempt.correct %}',
                 "Your answer: {{ verdict.interpreted_html", 'name="answer"']


def test_both_pages_render_the_shared_verdict_and_interpretation():
    for page in PAGES:
        text = page.read_text()
        assert '{% include "kinds/verdict.html#interpretation" %}' in text, page
        assert '{% include "kinds/verdict.html#attempt_state"' in text, page
        assert "{% include part.engine.answer_template" in text, page  # the kind's own form


def test_neither_page_keeps_a_copy_of_the_shared_markup():
    for page in PAGES:
        text = page.read_text()
        for markup in SHARED_MARKUP:
            assert markup not in text, f"{page.name} repeats {markup!r}: render the shared partial instead"
    assert all(markup in (TEMPLATES / "kinds/verdict.html").read_text() for markup in SHARED_MARKUP[:4])
