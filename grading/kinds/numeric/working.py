"""Reading a numeric part's scratchpad: one named step per line, in the answer language.

A line is ``name = expression`` (or an expression alone), where the expression is what a
numeric answer may be (numbers, units, arithmetic, the functions) plus the names of
earlier steps: ``w = 70.6e9 * 2 B`` then ``t = w / (8 * 3.35 TB/s)``. A step may not take
a unit's name (``B``, ``s``, ``k``) but may take a count word's (``layers``, ``GPUs``),
which then means the step. ``#`` starts a
comment; a line starting with ``>`` is the answer (else the last line is). Reading never
raises because of the text: a line that cannot be read carries its error, saying where.

Only the reading lives here; what each step's value means for the part (which
intermediate it matches, where the working went wrong) is ``steps``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

import pint

from grading.expressions import (
    CANDIDATE_LIMITS,
    ExpressionError,
    Name,
    evaluate_tree,
    normalize,
    parse,
    walk,
)
from grading.expressions.evaluation import unit_value
from grading.quantities import preferred_display
from grading.units import AMBIGUOUS_UNIT_NAMES, UNIT_NAMES

# Bounds that keep grading a scratchpad as fast as grading an answer: each line has the
# answer's own limits (``CANDIDATE_LIMITS``).
MAX_LINES = 40
MAX_CHARS = 8_000
ANSWER_MARK = ">"
_NAMED = re.compile(r"^\s*([^=]*?)\s*=(?!=)\s*(.*)$", re.DOTALL)
_STEP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Line:
    """One step as read: ``number`` is its 1-based line in the scratchpad; ``value`` a
    float or Quantity (None when ``error``); ``uses`` the names of earlier steps its
    expression names."""

    number: int
    name: str
    text: str
    marked: bool
    tree: object = None
    value: object = None
    error: str = ""
    uses: tuple[str, ...] = ()
    shown: str = ""  # the value in sensible units ("139 GB"), "" with an error


@dataclass(frozen=True)
class Working:
    """A whole scratchpad as read: its ``lines`` (blank and comment-only lines left
    out), the ``answer`` line's index in ``lines`` (None when there are no lines), and a
    ``problem`` that stops the whole scratchpad from being read (too long)."""

    lines: tuple[Line, ...]
    answer: int | None
    problem: str = ""

    @property
    def errors(self) -> list[str]:
        """Every line's error, as "line N: why", then the whole scratchpad's problem."""
        found = [f"line {line.number}: {line.error}" for line in self.lines if line.error]
        return found + ([self.problem] if self.problem else [])

    def by_name(self) -> dict[str, Line]:
        return {line.name: line for line in self.lines if line.name}

    def depends_on(self, line: Line) -> tuple[int, ...]:
        """The line numbers of the steps ``line`` uses directly."""
        named = self.by_name()
        return tuple(named[name].number for name in line.uses if name in named)

    def path(self) -> list[Line]:
        """The answer line and every step it depends on, through other steps, in order."""
        if self.answer is None:
            return []
        named = self.by_name()
        needed, pending = set(), [self.lines[self.answer]]
        while pending:
            line = pending.pop()
            if line.number in needed:
                continue
            needed.add(line.number)
            pending.extend(named[name] for name in line.uses if name in named)
        return [line for line in self.lines if line.number in needed]


def read_working(text) -> Working:
    """Read a scratchpad (module docstring). Never raises because of ``text``. Cached:
    one grading reads its scratchpad several times, and a ``Working`` is immutable."""
    if not isinstance(text, str):
        return Working((), None, "the scratchpad must be text")
    return _read_working(text)


@functools.lru_cache(maxsize=256)
def _read_working(text: str) -> Working:
    if len(text) > MAX_CHARS:
        return Working((), None, f"the scratchpad is too long ({len(text):,} characters; the limit is {MAX_CHARS:,})")
    lines: list[Line] = []
    values: dict[str, object] = {}
    marked_at = None
    for number, raw in enumerate(text.splitlines(), start=1):
        content = raw.split("#", 1)[0].strip()
        if not content:
            continue
        if len(lines) == MAX_LINES:
            return Working(tuple(lines), None, f"the scratchpad has more than {MAX_LINES} steps")
        marked = content.startswith(ANSWER_MARK)
        content = content.removeprefix(ANSWER_MARK).strip()
        line = _read_line(number, content, marked, values)
        if marked:
            if marked_at is not None:
                line = Line(number, line.name, line.text, marked, error=(
                    f"line {lines[marked_at].number} is already marked as the answer; mark one line only"))
            else:
                marked_at = len(lines)
        if line.name and not line.error:
            values[line.name] = line.value
        lines.append(line)
    if not lines:
        return Working((), None)
    return Working(tuple(lines), marked_at if marked_at is not None else len(lines) - 1)


def _read_line(number: int, content: str, marked: bool, values: Mapping[str, object]) -> Line:
    name, expression = "", content
    named = _NAMED.match(content)
    if named:
        name, expression = named.group(1), named.group(2).strip()
        problem = _name_problem(name, values)
        if problem:
            return Line(number, name, expression, marked, error=problem)
    if not expression:
        return Line(number, name, expression, marked, error="there is nothing after '=': write the step's value")
    try:
        normalized, _notes = normalize(expression)
        # Rates as in an answer: "w / 3.35 TB/s" is w / (3.35 TB/s).
        tree = parse(normalized, CANDIDATE_LIMITS, rates=True)
    except ExpressionError as error:
        return Line(number, name, expression, marked, error=str(error))
    uses = tuple(dict.fromkeys(node.name for node in walk(tree) if isinstance(node, Name) and node.name in values))
    try:
        value = evaluate_steps(tree, values)
    except ExpressionError as error:
        return Line(number, name, expression, marked, tree=tree, error=str(error), uses=uses)
    return Line(number, name, expression, marked, tree=tree, value=value, uses=uses, shown=preferred_display(value))


def _name_problem(name: str, values: Mapping[str, object]) -> str:
    if not _STEP_NAME.match(name):
        return (f"{name!r} cannot name a step: use letters, digits and _, starting with a letter "
                "(such as w or kv_bytes)")
    # A count word that means 1 (layers, GPUs, x) may name a step: in later lines it
    # is the step. A real unit or a multiplier (B, s, tokens, k) may not.
    count_word = name in UNIT_NAMES and UNIT_NAMES[name].value == 1.0 and not isinstance(
        UNIT_NAMES[name].value, pint.Quantity)
    if (name in UNIT_NAMES and not count_word) or name in AMBIGUOUS_UNIT_NAMES:
        return f"`{name}` is a unit; give the step another name (such as {name.lower()}_1)"
    if name in values:
        return f"`{name}` is already an earlier step; give this one another name"
    return ""


def evaluate_steps(tree, values: Mapping[str, object]):
    """``tree``'s value where names are earlier steps (``values``) or units. Raises
    ``ExpressionError`` saying which name is unknown."""

    def resolve(node: Name):
        if node.name in values:
            return values[node.name]
        try:
            return unit_value(node, trusted=False)
        except ExpressionError as error:
            if node.name in UNIT_NAMES or node.name in AMBIGUOUS_UNIT_NAMES or node.before_bracket:
                raise
            steps = ", ".join(values) or "none yet"
            raise ExpressionError(f"`{node.name}` is neither an earlier step (steps so far: {steps}) nor a unit",
                                  error.position) from None

    value = evaluate_tree(tree, resolve)
    if isinstance(value, pint.Quantity) and value.dimensionless:
        return float(value.m_as("dimensionless"))
    return value


def reevaluate(working: Working, overrides: Mapping[int, object]) -> dict[int, object]:
    """Every readable step's value with the steps in ``overrides`` ({line number:
    value}) replaced, later steps recomputed from them: {line number: value}, without
    the steps that no longer compute."""
    values: dict[str, object] = {}
    results: dict[int, object] = {}
    changed: set[str] = set()
    for line in working.lines:
        if line.error:
            continue
        if line.number in overrides:
            value = overrides[line.number]
            changed.add(line.name)
        elif not changed.intersection(line.uses):
            value = line.value  # nothing it uses changed
        else:
            changed.add(line.name)
            try:
                value = evaluate_steps(line.tree, values)
            except ExpressionError:
                continue
        results[line.number] = value
        if line.name:
            values[line.name] = value
    return results
