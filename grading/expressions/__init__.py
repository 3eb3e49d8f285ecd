"""The expression language shared by question authors and candidates (see FORMAT.md).

Public entry points:

- ``evaluate(expr_text, context)``: a TRUSTED author expression over the context (derived
  values, answers, mistakes, checks, templates);
- ``read_quantity(text)``: a CANDIDATE's numeric answer (numbers, units, arithmetic),
  returning the value and how it was read;
- ``parse_trusted(text)`` / ``parse(text, limits)``: the tree, for the formula kind;
- ``to_text`` / ``to_latex``: printing a tree back.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from grading.expressions.evaluation import (
    KNOWN_UNITS_SUMMARY,
    context_resolver,
    evaluate_tree,
    unit_value,
)
from grading.expressions.rendering import symbol_latex, to_latex, to_text
from grading.expressions.syntax import (
    CANDIDATE_LIMITS,
    FUNCTIONS,
    TRUSTED_LIMITS,
    Binary,
    Call,
    DimensionError,
    ExpressionError,
    Limits,
    Name,
    Negate,
    Number,
    constant_value,
    names_in,
    normalize,
    parse,
    walk,
)
from grading.units import COUNT_WORDS

__all__ = [
    "CANDIDATE_LIMITS", "FUNCTIONS", "KNOWN_UNITS_SUMMARY", "TRUSTED_LIMITS", "Binary",
    "Call", "DimensionError", "ExpressionError", "Limits", "Name", "Negate", "Number",
    "ReadQuantity", "constant_value", "evaluate", "evaluate_quantity_text",
    "evaluate_tree", "evaluate_unit", "names_in", "normalize", "parse", "parse_trusted",
    "read_quantity", "regrouped_readings", "symbol_latex", "to_latex", "to_text", "walk",
]


@functools.lru_cache(maxsize=4096)
def parse_trusted(text: str):
    """Parse an author expression (normalized first) with the generous author limits.
    Cached: trees are immutable."""
    normalized, _notes = normalize(str(text))
    return parse(normalized, TRUSTED_LIMITS)


def evaluate(expr_text: str, context: Mapping, *, allow_text: bool = False):
    """Evaluate a TRUSTED author expression over ``context`` (a dict of numbers, pint
    Quantities, strings and nested dicts). Names resolve in the context first (dotted
    names walk nested dicts) and then as unit names. Returns an int, a float (every
    dimensionless result, e.g. ``GB / MB``) or a Quantity; with ``allow_text`` a bare
    name may return a string. Raises ``ExpressionError``."""
    return evaluate_tree(parse_trusted(expr_text), context_resolver(context),
                         keep_integers=True, allow_text=allow_text)


def evaluate_unit(text: str):
    """A unit written by an author (``tokens/s``, ``%``): a 1-unit Quantity or a plain
    factor, dimensionless Quantities kept so ``%`` stays a percent."""
    return evaluate_tree(parse_trusted(text), lambda node: unit_value(node, trusted=True),
                         tidy_dimensionless=False)


def evaluate_quantity_text(text: str):
    """A trusted quantity string (``3.35 TB/s``): numbers and unit names only."""
    return evaluate_tree(parse_trusted(text), lambda node: unit_value(node, trusted=True),
                         tidy_dimensionless=False)


@dataclass(frozen=True)
class ReadQuantity:
    """How a candidate's numeric answer was read.

    ``value``: float or Quantity (dimensionless results are floats); ``text``: the
    normalized answer printed back with explicit grouping (``140 GB / (3.35 TB / s)``);
    ``notes``: normalizations applied ("read × as *"); ``has_units``: whether any unit
    name other than a count word (``k``, ``million``) appeared: a bare number may be
    taken in the part's unit."""

    value: object
    text: str
    notes: tuple[str, ...]
    has_units: bool


MAX_ANSWER_CHARACTERS = CANDIDATE_LIMITS.max_length


def read_quantity(text: str) -> ReadQuantity:
    """Read a CANDIDATE's numeric answer: numbers, whitelisted unit names, ``+ - * / ^``,
    brackets and the functions in ``FUNCTIONS``. Raises ``ExpressionError`` saying
    where and why (unknown or ambiguous unit, bad syntax, too long, too large); never
    anything else. Bounded work: the length, node and depth limits apply before any
    evaluation, and every number is a float."""
    if not isinstance(text, str):
        raise ExpressionError("the answer must be text")
    stripped = text.strip()
    if len(stripped) > MAX_ANSWER_CHARACTERS:
        raise ExpressionError(f"the answer is too long ({len(stripped)} characters; the "
                              f"limit is {MAX_ANSWER_CHARACTERS})")
    normalized, notes = normalize(stripped)
    tree = parse(normalized, CANDIDATE_LIMITS, rates=True)
    names = [node for node in walk(tree) if isinstance(node, Name)]
    for node in sorted(names, key=lambda n: n.position):
        unit_value(node, trusted=False)  # raises for unknown or ambiguous names first
    if not any(isinstance(node, Number) for node in walk(tree)):
        # "GB" or "x" alone would otherwise read as 1 GB or 1.
        raise ExpressionError("there is no number in the answer: write the value with its unit, "
                              "such as 12.5 GB")
    value = evaluate_tree(tree, lambda node: unit_value(node, trusted=False))
    has_units = any(node.name not in COUNT_WORDS for node in names)
    return ReadQuantity(value, to_text(tree), tuple(notes), has_units=has_units)


def regrouped_readings(text: str) -> tuple[ReadQuantity, ...]:
    """Other readings of a CANDIDATE's answer where a number juxtaposed with a unit after
    a ``/`` divides only the number: ``128256/8 B`` reads as ``128256 / (8 B)`` (the unit
    binds first), and the regrouping is ``(128256 / 8) B``. One regrouping per ``/`` that
    has such a right-hand side, outermost first; none when the text does not read at all.
    For messages only ("did you mean ...?"): grading never uses them."""
    try:
        read_quantity(text)
        normalized, notes = normalize(text.strip())
        tree = parse(normalized, CANDIDATE_LIMITS, rates=True)
    except ExpressionError:
        return ()
    readings = []
    for rewritten in _regroupings(tree):
        try:
            value = evaluate_tree(rewritten, lambda node: unit_value(node, trusted=False))
        except ExpressionError:
            continue
        readings.append(ReadQuantity(value, to_text(rewritten), tuple(notes), has_units=True))
    return tuple(readings)


def _leading_number(node):
    """``(number, rest)`` when ``node`` is a number followed by units ("8 B", "8 GB/s"),
    else None."""
    if isinstance(node, Binary) and node.op == "*" and node.implicit:
        if isinstance(node.left, Number):
            return node.left, node.right
        split = _leading_number(node.left)
        if split:
            return split[0], Binary("*", split[1], node.right, implicit=True)
    if isinstance(node, Binary) and node.op == "/":  # a rate: "8 GB/s"
        split = _leading_number(node.left)
        if split:
            return split[0], Binary("/", split[1], node.right)
    return None


def _regroupings(node):
    """Every tree that moves one ``/``'s juxtaposed units out of its denominator."""
    if not isinstance(node, Binary):
        if isinstance(node, Negate):
            yield from (Negate(inner) for inner in _regroupings(node.operand))
        return
    if node.op == "/":
        split = _leading_number(node.right)
        if split:
            number, units = split
            yield Binary("*", Binary("/", node.left, number), units, implicit=True)
    for inner in _regroupings(node.left):
        yield Binary(node.op, inner, node.right, node.implicit)
    for inner in _regroupings(node.right):
        yield Binary(node.op, node.left, inner, node.implicit)
