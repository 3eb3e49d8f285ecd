"""Markdown with dollar math renders to safe HTML + MathML; a question renders per variant."""

from questions.rendering import render_markdown, render_question
from questions.schema import Question
from questions.tests.factories import question_data


def test_inline_and_display_math_become_mathml():
    result = render_markdown("Time is $t = W / B$.\n\n$$\\frac{a}{b}$$\n")
    assert result.errors == ()
    assert '<span class="math inline"><math' in result.html
    assert '<div class="math display"><math' in result.html and 'display="block"' in result.html
    assert "<mfrac>" in result.html


def test_dollar_amounts_stay_prose():
    result = render_markdown("It costs $2.50 per hour and $3 more.")
    assert "<math" not in result.html and "$2.50 per hour and $3 more" in result.html


def test_bad_latex_is_reported_and_shown_as_source():
    result = render_markdown("Broken: $\\frac{1}{$ and unknown: $\\foo{x}$.")
    assert len(result.errors) == 2
    assert "NoAvailableTokensError" in result.errors[0] or "cannot convert" in result.errors[0]
    assert "unknown LaTeX command \\foo" in result.errors[1]
    assert '<code class="math-error">\\frac{1}{</code>' in result.html


def test_raw_html_and_script_in_math_are_escaped():
    result = render_markdown("<script>alert(1)</script> $\\text{<script>x</script>}$ [a](javascript:alert(1))")
    assert "<script>" not in result.html
    assert "&lt;script&gt;" in result.html
    assert 'href="javascript' not in result.html


def test_math_links_and_styles_are_dropped():
    result = render_markdown("$\\href{javascript:alert(1)}{x}$ $\\style{color:red}{y}$")
    assert "javascript" not in result.html and "style=" not in result.html


def test_symbols_are_characters_not_double_escaped():
    html = render_markdown("$a \\approx b < c$").html
    assert "≈" in html and "&lt;" in html and "&amp;#x" not in html


def test_render_question_fills_templates_for_the_variant():
    question = Question.from_data(question_data())
    rendered = render_question(question, 0, choices={"gpu": "h200", "model": "llama31_8b"})
    assert rendered.choices == {"gpu": "h200", "model": "llama31_8b", "dtype": "bf16"}
    assert "H200" in rendered.statement_html and "{{" not in rendered.statement_html
    assert [part.id for part in rendered.parts] == ["floor", "kv_per_token", "why_above_floor"]
    assert rendered.parts[0].unit == "ms"
    assert [symbol.name for symbol in rendered.parts[1].symbols] == ["L", "h_kv", "d", "b"]
    assert rendered.parts[2].rubric[0]["id"] == "kv_reads"
    assert len(rendered.hints_html) == 1 and "<mfrac>" in rendered.hints_html[0]
    # 8.03e9 params * 2 B / 4.8 TB/s = 3.35 ms, quoted through {{ answers.floor | ms }}
    assert "3.35 ms" in rendered.solution_html
    assert rendered.math_errors == ()


def test_the_same_seed_gives_the_same_variant():
    question = Question.from_data(question_data())
    assert render_question(question, 7).choices == render_question(question, 7).choices
    drawn = {tuple(render_question(question, seed).choices.items()) for seed in range(12)}
    assert len(drawn) > 1
