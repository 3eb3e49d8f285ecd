"""Grading a numeric part's working: each scratchpad step against the reference's
intermediates, the first step that went wrong, and the credit for working right up to
one slip.

The intermediates of a part, on one variant, are the values the reference is built
from: every sub-expression of its answer and of the derived definitions the answer
reaches (``slips.reached_definitions``), down to the params and catalogue fields they
name. Each has a plain name: the part's ``steps`` label for it, else the derived or
catalogue name in words (``weight_bytes`` is "weight bytes"). A listed mistake's own
sub-expressions (those the reference does not share) are its intermediates: a step
that matches one earns that mistake's feedback. Derived values no part of this
reference reaches are named too, as another quantity of the question.

A step matches the intermediate nearest to it among those of its dimension (tokens
count as plain numbers) within the part's tolerance (at least 0.5%, at most 5%); a
reference intermediate wins a tie. The first wrong step is the earliest step the
answer line depends on (through the steps it names) that matches no reference
intermediate, once the final answer is wrong; a right final answer has none. What was
expected there is the reference answer when it is the answer line, else the unmatched
intermediate of its dimension computed from what its own inputs matched, nearest to
its value.

The credit rule (``STEP_CREDIT_RULE``): a wrong final answer earns ``STEP_CREDIT`` of the
part when the working is right except for that one step: put the expected value in its
place, recompute the later steps as written, and the answer line comes out right; and
at least one other step of the working matched a reference intermediate.
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

import pint

from grading.expressions import Binary, Call, ExpressionError, Name, Negate, evaluate, evaluate_tree, to_text, walk
from grading.expressions.evaluation import context_resolver
from grading.kinds.base import render_feedback, variant_key
from grading.kinds.numeric.working import Working, read_working, reevaluate
from grading.kinds.slips import DEFINITIONS_KEY, reached_definitions
from grading.quantities import preferred_display
from grading.verdict import StepRecord, Verdict

STEP_CREDIT = 0.5
STEP_CREDIT_RULE = (f"A wrong final answer whose working is right except for one step earns {STEP_CREDIT:.0%} of "
                    "the part: the steps before it match the reference's intermediates, and with the expected "
                    "value in its place the later steps, as written, give the right answer.")
REFERENCE = "reference"
_DOTTED = re.compile(r"(?<=[A-Za-z_])\.(?=[A-Za-z_])")  # model.layers in a printed expression
ELSEWHERE = "elsewhere"


@dataclass(frozen=True)
class Intermediate:
    """One value the reference (or a listed mistake) is built from, on one variant."""

    label: str
    base: float  # the value in base units
    dims: frozenset  # its dimensionality, tokens left out
    source: str  # REFERENCE, ELSEWHERE or the listed mistake's id (mistakes[2])
    reach: frozenset  # the context names it is computed from (itself, for a name)
    shown: str

    def matches(self, base: float, dims: frozenset, rtol: float) -> float | None:
        """How far (relative) ``base`` lies from this value, or None when out of ``rtol``."""
        if dims != self.dims:
            return None
        scale = max(abs(self.base), 1e-300)
        distance = abs(base - self.base) / scale
        return distance if distance <= rtol else None


def _dims(value) -> frozenset:
    dims = dict(value.dimensionality) if isinstance(value, pint.Quantity) else {}
    dims.pop("[token]", None)  # "295 tokens" is a count, as in an answer
    return frozenset(dims.items())


def _base(value) -> float | None:
    if isinstance(value, pint.Quantity):
        value = value.to_base_units().magnitude
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def plain_name(name: str, labels: Mapping[str, str]) -> str:
    """A context name in words: the part's label for it, else its name with ``.`` and
    ``_`` as spaces (``gpu.hbm_bandwidth`` is "gpu hbm bandwidth")."""
    if name in labels:
        return labels[name]
    if name.startswith("answers."):
        return f"the answer to {name.removeprefix('answers.')}"
    return name.replace(".", " ").replace("_", " ")


def _compound(node) -> bool:
    return isinstance(node, (Binary, Negate, Call))


class _Collector:
    """Gathers intermediates in the order their labels are preferred, each value once."""

    def __init__(self, context: Mapping, labels: Mapping[str, str], definitions: Mapping[str, str]):
        self.context = context
        self.resolve = context_resolver(context)
        self.labels = labels
        self.definitions = definitions
        self.found: list[Intermediate] = []
        self.seen: list[tuple[frozenset, float]] = []
        # Derived values by value: a sub-expression or an earlier part's answer
        # (answers.<id>) equal to one reads by the derived name, "t naive" rather than
        # "answers naive bytes / gpu hbm bandwidth".
        self.derived_values = [(_dims(value), _base(value), name) for name in definitions
                               if (value := context.get(name)) is not None and _base(value)]

    def reach_of(self, node) -> frozenset:
        names = {item.name for item in walk(node) if isinstance(item, Name) and self.in_context(item.name)}
        pending = [name for name in names if name in self.definitions]
        while pending:
            _, reached = reached_definitions(pending.pop(), self.definitions)
            for name, tree in reached.items():
                for item in walk(tree):
                    if isinstance(item, Name) and self.in_context(item.name) and item.name not in names:
                        names.add(item.name)
        return frozenset(names)

    def label_of(self, node) -> str:
        """A name or sub-expression in words: the part's ``steps`` label for it, else the
        derived name of equal value (for a sub-expression or an earlier part's answer),
        else its own text in words."""
        text = node.name if isinstance(node, Name) else to_text(node)
        if text in self.labels:
            return self.labels[text]
        if _compound(node) or text.startswith("answers."):
            tied = self._derived_name_equal_to(node)
            if tied is not None:
                return plain_name(tied, self.labels)
        if isinstance(node, Name):
            return plain_name(text, self.labels)
        return _DOTTED.sub(" ", text).replace("_", " ")

    def _derived_name_equal_to(self, node) -> str | None:
        try:
            value = evaluate_tree(node, self.resolve)
        except ExpressionError:
            return None
        base, dims = _base(value), _dims(value)
        if base is None:
            return None
        for derived_dims, derived_base, name in self.derived_values:
            if derived_dims == dims and abs(derived_base - base) <= 1e-9 * abs(base):
                return name
        return None

    def in_context(self, name: str) -> bool:
        return name.split(".", 1)[0] in self.context

    def add(self, label: str, node, source: str, value=None) -> None:
        if value is None:
            try:
                value = evaluate_tree(node, self.resolve)
            except ExpressionError:
                return
        base = _base(value)
        if base is None or base == 0:  # every step that comes to 0 would "match" a 0
            return
        dims = _dims(value)
        for seen_dims, seen_base in self.seen:
            if seen_dims == dims and abs(seen_base - base) <= 1e-9 * max(abs(base), 1e-300):
                return
        self.seen.append((dims, base))
        self.found.append(Intermediate(label, base, dims, source, self.reach_of(node), preferred_display(value)))

    def add_tree(self, root_label: str, tree, reached: Mapping[str, object], source: str) -> None:
        """The root, then every name (derived ones first), then every compound sub-expression."""
        self.add(root_label, tree, source)
        trees = [tree, *reached.values()]
        for name in reached:
            self.add(plain_name(name, self.labels), Name(name, 0), source, self.context.get(name))
        for node in (node for t in trees for node in walk(t)):
            if isinstance(node, Name) and node.name not in reached and self.in_context(node.name):
                self.add(self.label_of(node), node, source)
        for node in (node for t in trees for node in walk(t)):
            if _compound(node) and node is not tree:
                self.add(self.label_of(node), node, source)


def intermediates(spec, context: Mapping) -> tuple[Intermediate, ...]:
    """The part's intermediates on the variant ``context`` (module docstring), cached per
    part and variant: grading a scratchpad walks them for every step."""
    key = (spec.id, spec.answer, tuple(mistake.answer for mistake in spec.mistakes), tuple(spec.steps.items()),
           variant_key(context), tuple(sorted(map(str, (context.get("answers") or {}).items()))))
    return _cached(key, spec, context)


_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 512
_CACHE_LOCK = threading.Lock()


def _cached(key, spec, context) -> tuple[Intermediate, ...]:
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    found = _collect(spec, context)
    with _CACHE_LOCK:
        _CACHE[key] = found
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return found


def _collect(spec, context: Mapping) -> tuple[Intermediate, ...]:
    definitions = context.get(DEFINITIONS_KEY) or {}
    collector = _Collector(context, spec.steps, definitions)
    tree, reached = reached_definitions(spec.answer, definitions)
    collector.add_tree(spec.steps.get("answer", "the answer"), tree, reached, REFERENCE)
    for index, mistake in enumerate(spec.mistakes):
        mistake_tree, mistake_reached = reached_definitions(mistake.answer, definitions)
        own = {name: value for name, value in mistake_reached.items() if name not in reached}
        collector.add_tree(f"mistakes[{index}]", mistake_tree, own, f"mistakes[{index}]")
    for name in definitions:
        collector.add(plain_name(name, spec.steps), Name(name, 0), ELSEWHERE, context.get(name))
    # A mistake's sub-expressions that the reference shares were skipped as duplicates.
    return tuple(collector.found)


def unknown_step_names(spec, context: Mapping) -> list[str]:
    """The part's ``steps`` labels that name nothing its reference or mistakes are built
    from (a typo would silently leave the plain name unused): for validation."""
    definitions = context.get(DEFINITIONS_KEY) or {}
    known = {"answer"}
    for expression in (spec.answer, *(mistake.answer for mistake in spec.mistakes)):
        tree, reached = reached_definitions(expression, definitions)
        known.update(reached)
        for node in (node for root in (tree, *reached.values()) for node in walk(root)):
            known.add(node.name if isinstance(node, Name) else to_text(node))
    return [f"steps names {name!r}, which this part's answer and mistakes are not built from"
            for name in spec.steps if name not in known]


def _match_rtol(spec) -> float:
    return min(max(spec.rtol, 0.005), 0.05)


def _best_match(value, found: tuple[Intermediate, ...], rtol: float) -> Intermediate | None:
    base = _base(value)
    if base is None:
        return None
    dims = _dims(value)
    best = None
    for item in found:
        distance = item.matches(base, dims, rtol)
        if distance is None:
            continue
        key = (distance, item.source != REFERENCE)
        if best is None or key < best[0]:
            best = (key, item)
    return best[1] if best else None


def read_steps(text: str) -> tuple[StepRecord, ...]:
    """The scratchpad as the live preview shows it: each line's value or error, which
    steps it uses, and which line is the answer; nothing compared (nothing revealed)."""
    working = read_working(text)
    return tuple(_record(working, index, line) for index, line in enumerate(working.lines))


def _record(working: Working, index: int, line, **fields) -> StepRecord:
    return StepRecord(line=line.number, name=line.name, text=line.text, value=line.shown, error=line.error,
                      depends_on=working.depends_on(line), is_answer=index == working.answer, **fields)


def grade_working(spec, verdict: Verdict, text: str, context: Mapping, *, reference: float,
                  within) -> Verdict:
    """``verdict`` (the final answer's) with the scratchpad ``text`` graded step by step
    and the working's credit added (module docstring). ``reference`` is the part's
    reference in its unit; ``within(magnitude)`` says whether a magnitude in the part's
    unit is right."""
    working = read_working(text)
    if not working.lines:
        return verdict
    found = intermediates(spec, context)
    rtol = _match_rtol(spec)
    matches = {line.number: (None if line.error else _best_match(line.value, found, rtol)) for line in working.lines}
    path = working.path()
    first_wrong, expected_value = None, None
    if not verdict.correct and path:
        first_wrong = next((line for line in path if not _is_reference(matches[line.number])), None)
        if first_wrong is None:  # every step matched, yet the answer is wrong: it stopped short
            first_wrong = path[-1]
        expected_value = _expected(spec, working, first_wrong, matches, found, context)
    records = []
    for index, line in enumerate(working.lines):
        match = matches[line.number]
        fields = {}
        if match is not None and match.source == REFERENCE:
            fields["matched"] = match.label
        elif match is not None and match.source == ELSEWHERE:
            fields["feedback"] = f"That is the {match.label}, which this part's answer is not built from."
        elif match is not None:
            fields["mistake"] = match.source
            fields["feedback"] = render_feedback(spec.mistakes[int(match.source[9:-1])].feedback, context)
        if first_wrong is not None and line.number == first_wrong.number and expected_value is not None:
            fields["expected"] = preferred_display(expected_value)
        records.append(_record(working, index, line, **fields))
    credit = 0.0
    if first_wrong is not None and expected_value is not None and not first_wrong.error:
        credit = _slip_credit(spec, working, path, first_wrong, expected_value, matches, within)
    score = max(verdict.score, credit)
    feedback = verdict.feedback
    if first_wrong is not None:
        where = f"Your working first goes wrong at line {first_wrong.number}"
        where += f" (`{first_wrong.name}`)." if first_wrong.name else "."
        if credit:
            where += (f" Every other step is right, so the working earns {credit:.0%} of this part "
                      "(one slip, the rest right).")
        feedback = f"{feedback} {where}".strip()
    return dataclasses.replace(verdict, score=score, feedback=feedback, steps=tuple(records),
                               first_wrong_step=first_wrong.number if first_wrong else None,
                               step_credit=credit if credit > verdict.score else 0.0)


def _is_reference(match: Intermediate | None) -> bool:
    return match is not None and match.source == REFERENCE


def _expected(spec, working: Working, line, matches, found, context):
    """The value the reference has where ``line`` went wrong (module docstring)."""
    if line.number == working.lines[working.answer].number:
        try:
            return evaluate(spec.answer, context)
        except ExpressionError:
            return None
    if line.error:
        return None
    named = working.by_name()
    inputs = [matches[named[name].number] for name in line.uses if name in named]
    used = {id(match) for match in matches.values() if match is not None}
    dims, base = _dims(line.value), _base(line.value)
    best = None
    for item in found:
        if item.source != REFERENCE or item.dims != dims or id(item) in used or base is None:
            continue
        if not all(match is not None and match.reach <= item.reach for match in inputs):
            continue
        distance = abs(math.log(max(abs(base), 1e-300) / max(abs(item.base), 1e-300)))
        if best is None or distance < best[0]:
            best = (distance, item)
    if best is None:
        return None
    return _value_of(best[1], line.value)


def _value_of(item: Intermediate, like):
    """``item``'s value as a float or a Quantity in ``like``'s units."""
    if isinstance(like, pint.Quantity):
        base_units = like.to_base_units().units
        return (item.base * base_units).to(like.units)
    return item.base


def _slip_credit(spec, working: Working, path, wrong, expected, matches, within) -> float:
    right_elsewhere = any(_is_reference(matches[line.number]) for line in path if line.number != wrong.number)
    if not right_elsewhere:
        return 0.0
    answer_line = working.lines[working.answer]
    try:
        recomputed = reevaluate(working, {wrong.number: expected}).get(answer_line.number)
        magnitude = spec.unit.magnitude_of(recomputed) if recomputed is not None else None
    except (pint.DimensionalityError, TypeError, ValueError):
        return 0.0
    return STEP_CREDIT if magnitude is not None and within(magnitude) else 0.0
