"""``{{ expr | unit | format }}`` templates in statements, prompts and solutions."""

from __future__ import annotations

import re
from collections.abc import Mapping

import pint

from grading.expressions import ExpressionError, evaluate
from grading.quantities import parse_unit, preferred_display
from grading.units import format_number

_TEMPLATE_RE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
# Python format specs an author may use: fill/align, sign, width, grouping, precision, type.
_FORMAT_SPEC_RE = re.compile(r"^[<>=^]?[+\- ]?#?0?\d{0,3}[,_]?(\.\d{1,2})?[deEfFgG%n]?$")


class TemplateError(ValueError):
    """A template that cannot be rendered; the message quotes it and says why."""


def render_template(text: str, context: Mapping) -> str:
    """Replace each ``{{ expr }}`` in ``text``.

    - ``{{ expr }}``: text as it is; ints exactly; other numbers with 3 significant
      figures; quantities in their own unit (compound units converted to a readable
      one), 3 significant figures.
    - ``{{ expr | unit }}``: converted to ``unit`` first (``{{ floor | ms }}`` ->
      ``41.8 ms``).
    - ``{{ expr | unit | spec }}``: a Python format spec for the number (``.4g``,
      ``.2f``, ``,d``); ``{{ batch | | d }}`` prints a plain integer.
    Raises ``TemplateError`` naming the template."""

    def replace(match: re.Match) -> str:
        try:
            return _render_one(match.group(1), context)
        except (ExpressionError, TemplateError, pint.DimensionalityError) as error:
            raise TemplateError(f"{{{{{match.group(1)}}}}}: {error}") from None

    return _TEMPLATE_RE.sub(replace, text or "")


def _render_one(inner: str, context: Mapping) -> str:
    pieces = [piece.strip() for piece in inner.split("|")]
    if len(pieces) > 3:
        raise TemplateError("use at most {{ expr | unit | format }}")
    expression = pieces[0]
    unit_text = pieces[1] if len(pieces) > 1 else ""
    spec = pieces[2] if len(pieces) > 2 else ""
    if not expression:
        raise TemplateError("empty template")
    if spec and not _FORMAT_SPEC_RE.match(spec):
        raise TemplateError(f"unsupported number format {spec!r}")
    value = evaluate(expression, context, allow_text=True)
    if isinstance(value, str):
        if unit_text or spec:
            raise TemplateError("text cannot take a unit or number format")
        return value
    if unit_text:
        unit = parse_unit(unit_text)
        try:
            magnitude = unit.magnitude_of(value)
        except pint.DimensionalityError:
            raise TemplateError(f"the value cannot be shown in {unit_text}") from None
        number = _format(magnitude, spec)
        return f"{number}%" if unit_text == "%" else f"{number} {unit_text}"
    if isinstance(value, pint.Quantity):
        if not spec:
            return preferred_display(value)
        return f"{_format(value.magnitude, spec)} {value.units:~}".replace(" ** ", "^")
    return _format(value, spec)


def _format(number, spec: str) -> str:
    if not spec:
        return format_number(number)
    if spec[-1:] in ("d", "n") and not spec.endswith(("e", "f", "g")):
        number = int(round(number))
    try:
        return format(number, spec)
    except ValueError as error:
        raise TemplateError(f"format {spec!r}: {error}") from None
