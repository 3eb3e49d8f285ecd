"""Turn a question and a variant seed into the HTML a candidate sees.

Two layers:
- `render_markdown(text)`: Markdown (markdown-it-py, CommonMark, raw HTML off) with
  `$inline$` and `$$display$$` LaTeX converted server-side to MathML by latex2mathml.
  The MathML is rebuilt from latex2mathml's element tree through an allow-list, so
  `\\text{<script>}` or `\\href{javascript:...}` in a question cannot inject markup.
  LaTeX that fails to convert is shown as escaped source and reported in `errors`
  (validation turns those into problems).
- `render_template(text, context)`: the grading engine's `{{ }}` templates, plus two
  for wording that depends on the variant: `{{ n | plural: GPU }}` and
  `{% if expr %}...{% else %}...{% endif %}` (see FORMAT.md).
- `render_question(question, seed)`: draws the variant, fills the templates and renders
  every piece of Markdown.
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, tostring

from latex2mathml.converter import convert_to_element
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from grading import registry, templating
from grading.expressions import ExpressionError, evaluate
from questions.labs import RenderedArtifact
from questions.schema import Question
from questions.variants import draw_variant, reference_values, solution_context

# ---------------------------------------------------------------- Markdown and math

MATHML_TAGS = frozenset(
    "math mrow mi mn mo ms mtext mspace mfrac msqrt mroot msub msup msubsup munder mover "
    "munderover mtable mtr mtd mstyle mpadded mphantom menclose merror semantics annotation".split()
)
MATHML_ATTRIBUTES = frozenset(
    "xmlns display mathvariant stretchy fence form separator lspace rspace width height depth "
    "columnalign rowalign columnspacing rowspacing columnlines rowlines frame framespacing "
    "displaystyle scriptlevel linethickness accent accentunder movablelimits minsize maxsize "
    "notation symmetric largeop mathsize mathcolor".split()
)
# latex2mathml writes a command it does not know as an identifier holding its name.
UNKNOWN_COMMAND = re.compile(r"^\\[A-Za-z]+$")


class MathError(ValueError):
    """LaTeX that latex2mathml cannot turn into MathML."""


@dataclass(frozen=True)
class MarkdownResult:
    html: str
    errors: tuple[str, ...] = ()


def latex_to_mathml(latex: str, display: bool) -> str:
    """Convert LaTeX to safe MathML markup; raises MathError on LaTeX it cannot convert."""
    try:
        root = convert_to_element(latex, display="block" if display else "inline")
    except Exception as error:  # latex2mathml raises many unrelated exception classes
        reason = type(error).__name__ + (f": {error}" if str(error) else "")
        raise MathError(f"cannot convert ${latex}$ ({reason})") from error
    _sanitize(root, latex)
    return tostring(root, encoding="unicode")


def _sanitize(element: Element, latex: str) -> None:
    """Keep only MathML tags and presentational attributes; make text plain characters.

    latex2mathml stores symbols as character references ("&#x02248;") in element text and
    relies on unescaping the whole serialization, which would also unescape `<` typed in
    `\\text{}`. Decoding the text here and letting ElementTree escape it keeps both right.
    """
    if element.tag not in MATHML_TAGS:
        raise MathError(f"cannot convert ${latex}$ (produces <{element.tag}>)")
    for name in list(element.attrib):
        if name not in MATHML_ATTRIBUTES:
            del element.attrib[name]
    if element.text:
        if element.tag in ("mi", "mo") and UNKNOWN_COMMAND.match(element.text):
            raise MathError(f"unknown LaTeX command {element.text} in ${latex}$")
        if element.tag == "mi" and element.text == "&":
            raise MathError(f"'&' outside an array or matrix environment in ${latex}$")
        element.text = html.unescape(element.text)
    if element.tail:
        element.tail = html.unescape(element.tail)
    for child in element:
        _sanitize(child, latex)


def _math_rule(display: bool, tag: str, css_class: str):
    """A markdown-it render rule for one dollarmath token type; errors go to env."""

    def render(renderer, tokens, index, options, env) -> str:
        latex = tokens[index].content.strip()
        try:
            markup = latex_to_mathml(latex, display)
        except MathError as error:
            env.setdefault("math_errors", []).append(str(error))
            markup = f'<code class="math-error">{html.escape(latex)}</code>'
        return f'<{tag} class="{css_class}">{markup}</{tag}>' + ("\n" if tag == "div" else "")

    return render


@functools.cache
def _markdown() -> MarkdownIt:
    # allow_space/allow_digits off: "$2.50 per hour and $3" stays prose, not math.
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True, allow_labels=False)
    md.add_render_rule("math_inline", _math_rule(False, "span", "math inline"))
    md.add_render_rule("math_inline_double", _math_rule(True, "div", "math display"))
    md.add_render_rule("math_block", _math_rule(True, "div", "math display"))
    return md


def render_markdown(text: str) -> MarkdownResult:
    """Markdown with dollar math to HTML; never raises on bad LaTeX (see `errors`)."""
    env: dict = {}
    rendered = _markdown().render(text or "", env)
    return MarkdownResult(rendered, tuple(env.get("math_errors", ())))


def render_inline_markdown(text: str) -> MarkdownResult:
    """Like `render_markdown` but without the surrounding paragraph (for short items)."""
    env: dict = {}
    rendered = _markdown().renderInline(text or "", env)
    return MarkdownResult(rendered, tuple(env.get("math_errors", ())))


# ---------------------------------------------------------------- wording templates

# `{{ n | plural: GPU }}` and `{{ n | plural: query, queries }}`.
_PLURAL_RE = re.compile(r"\{\{([^{}|]*)\|\s*plural\s*:([^{}]*)\}\}")
# `{% if expr %}...{% endif %}`, with an optional `{% else %}`; not nested.
_IF_RE = re.compile(r"\{%\s*if\s+(.+?)\s*%\}(.*?)(?:\{%\s*else\s*%\}(.*?))?\{%\s*endif\s*%\}", re.DOTALL)
_STRAY_TAG_RE = re.compile(r"\{%.*?%\}", re.DOTALL)


def _value(expression: str, context, template: str):
    try:
        return evaluate(expression.strip(), context)
    except ExpressionError as error:
        raise templating.TemplateError(f"{template}: {error}") from None


def _is_zero(value) -> bool:
    return getattr(value, "magnitude", value) == 0


def _plural(match: re.Match, context) -> str:
    expression, forms = match.group(1), [form.strip() for form in match.group(2).split(",")]
    if not expression.strip() or not 1 <= len(forms) <= 2 or not all(forms):
        raise templating.TemplateError(f"{match.group(0)}: write {{{{ count | plural: word }}}} or "
                                       f"{{{{ count | plural: word, words }}}}")
    singular, plural = forms if len(forms) == 2 else (forms[0], forms[0] + "s")
    count = _value(expression, context, match.group(0))
    number = templating.render_template("{{" + expression + "}}", context)
    return f"{number} {singular if getattr(count, 'magnitude', count) == 1 else plural}"


def _conditional(match: re.Match, context) -> str:
    value = _value(match.group(1), context, match.group(0).split("%}")[0] + "%}")
    return (match.group(3) or "") if _is_zero(value) else match.group(2)


def render_template(text: str, context) -> str:
    """Fill `text`'s templates for one variant; raises `templating.TemplateError`.

    Besides the engine's `{{ expr | unit | format }}`:
    - `{{ count | plural: GPU }}` prints the count and the word, with an `s` unless the
      count is exactly 1 (`1 GPU`, `8 GPUs`); `{{ count | plural: query, queries }}`
      names an irregular plural;
    - `{% if expr %}A{% else %}B{% endif %}` keeps A when `expr` is not zero and B (or
      nothing, without `else`) when it is: a term that is zero in some variants is
      dropped or reworded there. Conditionals do not nest.
    """
    text = _IF_RE.sub(lambda match: _conditional(match, context), text or "")
    stray = _STRAY_TAG_RE.search(text)
    if stray:
        raise templating.TemplateError(f"{stray.group(0)}: unmatched or nested {{% if %}}")
    text = _PLURAL_RE.sub(lambda match: _plural(match, context), text)
    return templating.render_template(text, context)


# ---------------------------------------------------------------- whole question


@dataclass(frozen=True)
class RenderedSymbol:
    name: str
    description: str
    unit: str | None


@dataclass(frozen=True)
class RenderedPart:
    id: str
    kind: str
    points: float
    prompt_html: str
    unit: str | None = None
    symbols: tuple[RenderedSymbol, ...] = ()
    rubric: tuple[dict, ...] = ()  # explain: {"id", "text_html"} per item
    model_answer_html: str = ""  # explain: shown with the solution
    display: dict = field(default_factory=dict)  # the kind's display_context, for its answer form

    @functools.cached_property
    def engine(self):
        """The part's answer kind: templates ask it (`part.engine.uses_editor`) and
        include its answer form (`part.engine.answer_template`)."""
        return registry.get_kind(self.kind)


@dataclass(frozen=True)
class RenderedQuestion:
    slug: str
    title: str
    topic: str
    topic_label: str
    difficulty: int
    seed: int
    choices: dict
    statement_html: str
    parts: tuple[RenderedPart, ...]
    hints_html: tuple[str, ...]
    solution_html: str
    followups_html: tuple[str, ...]
    math_errors: tuple[str, ...] = field(default=())
    artifacts: tuple[RenderedArtifact, ...] = ()  # a lab's data, shown under the statement

    def artifact(self, file_name: str) -> RenderedArtifact | None:
        """The artifact a download link names (`cold-trace.json`), or None."""
        return next((artifact for artifact in self.artifacts if artifact.filename == file_name), None)


def render_question(question: Question, seed: int, *, choices: dict | None = None, catalogue=None) -> RenderedQuestion:
    """Everything the candidate page shows for this question and variant.

    Raises whatever the grading engine raises for a broken question (validation is where
    those are reported as problems); bad LaTeX is not an exception but `math_errors`.
    """
    variant = draw_variant(question, seed, choices=choices, catalogue=catalogue)
    context = variant.context
    errors: list[str] = []

    def markdown(template: str, ctx=context, inline: bool = False) -> str:
        filled = render_template(template, ctx)
        result = render_inline_markdown(filled) if inline else render_markdown(filled)
        errors.extend(result.errors)
        return result.html

    parts = tuple(
        RenderedPart(
            id=part.id,
            kind=part.kind,
            points=part.points,
            prompt_html=markdown(part.prompt),
            unit=part.unit,
            symbols=tuple(
                RenderedSymbol(name, str((spec or {}).get("description", "")), (spec or {}).get("unit"))
                for name, spec in part.symbols.items()
            ),
            rubric=tuple(
                {"id": item.get("id", ""), "text_html": markdown(item.get("text", ""), inline=True)}
                for item in part.rubric
            ),
            model_answer_html=markdown(part.model_answer) if part.model_answer else "",
            # A stored version may hold a kind no longer registered (its page says so).
            display=part.engine.display_context(part.raw, context) if part.kind in registry.kinds() else {},
        )
        for part in question.parts
    )
    with_answers = solution_context(context, reference_values(question, context))
    return RenderedQuestion(
        slug=question.slug,
        title=question.title,
        topic=question.topic.value,
        topic_label=question.topic.label,
        difficulty=question.difficulty,
        seed=seed,
        choices=dict(variant.choices),
        statement_html=markdown(question.statement),
        parts=parts,
        hints_html=tuple(markdown(hint) for hint in question.hints),
        solution_html=markdown(question.solution, with_answers),
        followups_html=tuple(markdown(followup, inline=True) for followup in question.followups),
        math_errors=tuple(errors),
        artifacts=variant.lab.rendered if variant.lab else (),
    )
