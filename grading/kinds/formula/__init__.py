"""Formula parts: a closed-form expression over declared symbols.

How equivalence is decided (numeric evidence first, algebra second):

1. The candidate's formula and the reference are evaluated at ``SAMPLES`` random points
   drawn from each symbol's ``range`` (log-uniform when it spans more than 10x,
   integers where ``integer: true``). A point where both are undefined agrees; one
   undefined disagrees; otherwise they must agree within ``EQUIVALENCE_RTOL``.
2. Any disagreement -> wrong. Listed mistakes and constant-factor slips are then
   recognized by the same test.
3. Agreement everywhere -> a bounded symbolic check on sympy expressions built from the
   trees: difference cancels to 0 -> correct ("proved"); cancels to a non-zero rational
   function -> wrong (a term too small for sampling to see); inconclusive or too big to
   expand -> correct on the numeric evidence, and the feedback says so.

Symbols may carry a unit: a formula that adds bytes to a count is invalid input naming
the dimensions; a consistent formula of the wrong dimension is wrong, saying so.
"""

from __future__ import annotations

import html
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass

import latex2mathml.converter

from grading.expressions import (
    CANDIDATE_LIMITS,
    FUNCTIONS,
    DimensionError,
    ExpressionError,
    evaluate_tree,
    names_in,
    normalize,
    parse,
    to_latex,
    to_text,
    walk,
)
from grading.expressions.compiled import compile_float, evaluate_at
from grading.expressions.symbolic import (
    PROVED_DIFFERENT,
    PROVED_EQUAL,
    SymbolAssumptions,
    compare_symbolically,
)
from grading.expressions.syntax import Name
from grading.kinds import slips
from grading.kinds.base import (
    AnswerKind,
    MistakeSpec,
    PartSpec,
    SpecError,
    common_fields,
    load_mistakes,
    render_feedback,
    require_text,
)
from grading.quantities import parse_unit
from grading.units import Quantity, describe_dimension, dimensionality_of
from grading.verdict import Verdict

SAMPLES = 40
MIN_DEFINED_SAMPLES = 10
EQUIVALENCE_RTOL = 1e-9
_SYMBOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class SymbolSpec:
    name: str
    description: str
    low: float
    high: float
    integer: bool
    unit: str  # "" when dimensionless
    scale: object  # 1-unit Quantity, or 1.0

    @property
    def base_factor(self) -> float:
        """Multiply a sample in the symbol's unit by this to get base units, so float
        arithmetic agrees with pint whatever prefixes the units use."""
        if isinstance(self.scale, Quantity):
            return float(self.scale.to_base_units().magnitude)
        return float(self.scale)


@dataclass(frozen=True)
class FormulaSpec(PartSpec):
    symbols: tuple[SymbolSpec, ...] = ()
    answer: str = ""
    answer_tree: object = None
    mistakes: tuple[MistakeSpec, ...] = ()
    mistake_trees: tuple = ()
    sample_points: tuple = ()  # ({symbol: base-unit float}, ...), drawn once per spec
    reference_values: tuple = ()  # the answer at each point (None where undefined)
    mistake_values: tuple = ()  # one tuple per mistake, like reference_values
    answer_dimension: object = None  # pint dimensionality, None if unknown

    @property
    def symbol_names(self) -> list[str]:
        return [symbol.name for symbol in self.symbols]

    @property
    def assumptions(self) -> tuple[SymbolAssumptions, ...]:
        return tuple(SymbolAssumptions(s.name, positive=s.low > 0, nonnegative=s.low >= 0,
                                       integer=s.integer) for s in self.symbols)


def _load_symbol(name, raw) -> SymbolSpec:
    label = f"symbols.{name}"
    if not isinstance(name, str) or not _SYMBOL_NAME.match(name) or name in FUNCTIONS:
        raise SpecError("symbol names are letters, digits and '_' (not a function name)",
                        label)
    if not isinstance(raw, Mapping):
        raise SpecError("must be {description, range, integer?, unit?}", label)
    extra = set(raw) - {"description", "range", "integer", "unit"}
    if extra:
        raise SpecError(f"unknown key {sorted(extra)[0]!r}", label)
    bounds = raw.get("range")
    if (not isinstance(bounds, list) or len(bounds) != 2
            or not all(isinstance(b, (int, float)) and not isinstance(b, bool)
                       for b in bounds) or not bounds[0] < bounds[1]):
        raise SpecError("must be [low, high] with low < high", f"{label}.range")
    integer = raw.get("integer", False)
    if not isinstance(integer, bool):
        raise SpecError("must be true or false", f"{label}.integer")
    if integer and math.floor(bounds[1]) < math.ceil(bounds[0]):
        raise SpecError("holds no integer", f"{label}.range")
    unit_text = raw.get("unit", "") or ""
    try:
        unit = parse_unit(str(unit_text))
    except ExpressionError as error:
        raise SpecError(str(error), f"{label}.unit") from None
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise SpecError("must be text", f"{label}.description")
    return SymbolSpec(name, description, float(bounds[0]), float(bounds[1]), integer,
                      unit.text, unit.scale)


def _draw(symbol: SymbolSpec, rng: random.Random) -> float:
    low, high = symbol.low, symbol.high
    if low > 0 and high / low > 10:
        value = math.exp(rng.uniform(math.log(low), math.log(high)))
    else:
        value = rng.uniform(low, high)
    if symbol.integer:
        value = min(max(round(value), math.ceil(low)), math.floor(high))
    return float(value)


def _draw_points(answer: str, symbols: tuple[SymbolSpec, ...]) -> tuple:
    # Seeded by the spec, so a part always samples the same points.
    rng = random.Random(f"formula:{answer}:{','.join(s.name for s in symbols)}")
    return tuple({s.name: _draw(s, rng) * s.base_factor for s in symbols}
                 for _ in range(SAMPLES))


def _values_at(tree, points) -> tuple:
    function = compile_float(tree)
    return tuple(evaluate_at(function, point) for point in points)


def _agree(candidate: tuple, reference: tuple) -> bool:
    defined = [abs(r) for r in reference if r is not None]
    scale = sorted(defined)[len(defined) // 2] if defined else 0.0
    for got, want in zip(candidate, reference):
        if got is None or want is None:
            if got is not want:
                return False
            continue
        if abs(got - want) > EQUIVALENCE_RTOL * max(abs(got), abs(want)) + 1e-12 * scale:
            return False
    return True


def _constant_ratio(candidate: tuple, reference: tuple) -> float | None:
    ratios = [got / want for got, want in zip(candidate, reference)
              if got is not None and want not in (None, 0.0)]
    if len(ratios) < MIN_DEFINED_SAMPLES:
        return None
    first = ratios[0]
    if all(abs(r - first) <= EQUIVALENCE_RTOL * abs(first) for r in ratios):
        return first
    return None


class FormulaKind(AnswerKind):
    """``formula`` parts (FORMAT.md): ``symbols`` ({name: {description, range,
    integer?, unit?}}), ``answer`` and ``mistakes`` (formulas over the symbols)."""

    name = "formula"
    answer_template = "kinds/formula/answer.html"  # a one-line input, previewed as typed
    keys = frozenset({"symbols", "answer", "mistakes"})

    def load_spec(self, raw: Mapping) -> FormulaSpec:
        common = common_fields(raw, self.name, self.keys)
        raw_symbols = raw.get("symbols")
        if not isinstance(raw_symbols, Mapping) or not raw_symbols:
            raise SpecError("needs at least one symbol", "symbols")
        symbols = tuple(_load_symbol(name, value) for name, value in raw_symbols.items())
        answer = require_text(raw, "answer")
        answer_tree = self._author_tree(answer, symbols, "answer")
        mistakes = load_mistakes(raw)
        mistake_trees = tuple(self._author_tree(m.answer, symbols, f"mistakes[{i}].answer")
                              for i, m in enumerate(mistakes))
        points = _draw_points(answer, symbols)
        reference_values = _values_at(answer_tree, points)
        if sum(v is not None for v in reference_values) < MIN_DEFINED_SAMPLES:
            raise SpecError("is undefined at most points of the symbols' ranges", "answer")
        return FormulaSpec(**common, symbols=symbols, answer=answer,
                           answer_tree=answer_tree, mistakes=mistakes,
                           mistake_trees=mistake_trees, sample_points=points,
                           reference_values=reference_values,
                           mistake_values=tuple(_values_at(tree, points)
                                                for tree in mistake_trees),
                           answer_dimension=self._dimension(answer_tree, symbols))

    def _author_tree(self, text: str, symbols, key: str):
        try:
            tree = parse(normalize(text)[0], CANDIDATE_LIMITS)
        except ExpressionError as error:
            raise SpecError(str(error), key) from None
        unknown = [n for n in names_in(tree) if n not in {s.name for s in symbols}]
        if unknown:
            raise SpecError(f"uses undeclared symbol `{unknown[0]}`", key)
        try:
            self._dimension(tree, symbols)
        except DimensionError as error:
            raise SpecError(str(error), key) from None
        return tree

    # -- reading and dimensions -------------------------------------------------
    @staticmethod
    def _dimension(tree, symbols):
        """The formula's pint dimensionality, or None if it could not be evaluated at
        any trial point. Raises ``DimensionError`` for inconsistent units."""
        rng = random.Random("dimension")
        for _ in range(3):
            sample = {s.name: _draw(s, rng) * s.scale for s in symbols}
            try:
                value = evaluate_tree(tree, lambda node: sample[node.name])
            except DimensionError:
                raise
            except ExpressionError:
                continue
            return dimensionality_of(value)
        return None

    def _read(self, spec: FormulaSpec, text):
        """(tree, interpreted text, MathML) or an invalid Verdict."""
        if not isinstance(text, str):
            return Verdict.invalid("the answer must be text")
        stripped = text.strip()
        if len(stripped) > CANDIDATE_LIMITS.max_length:
            return Verdict.invalid(f"the answer is too long ({len(stripped)} characters; "
                                   f"the limit is {CANDIDATE_LIMITS.max_length})")
        normalized, notes = normalize(stripped)
        try:
            tree = parse(normalized, CANDIDATE_LIMITS)
        except ExpressionError as error:
            return Verdict.invalid(str(error))
        allowed = spec.symbol_names
        for node in sorted((n for n in walk(tree) if isinstance(n, Name)),
                           key=lambda n: n.position):
            if node.name not in allowed:
                return Verdict.invalid(self._unknown_name_message(node, allowed))
        interpreted = to_text(tree, implicit_separator="·")
        if notes:
            interpreted += f" ({'; '.join(notes)})"
        try:
            mathml = latex2mathml.converter.convert(to_latex(tree))
        except Exception:  # the MathML is a nicety; the plain text still shows the reading
            mathml = html.escape(interpreted)
        try:
            self._dimension(tree, spec.symbols)
        except DimensionError as error:
            return Verdict(valid=False, correct=False, score=0.0, interpreted=interpreted,
                           interpreted_html=mathml,
                           feedback=f"the units do not add up: {error.message}")
        return tree, interpreted, mathml

    @staticmethod
    def _unknown_name_message(node: Name, allowed: list[str]) -> str:
        if node.before_bracket:
            return (f"unknown function `{node.name}` (functions: {', '.join(FUNCTIONS)})"
                    f" at character {node.position}")
        message = (f"unknown symbol `{node.name}` at character {node.position}; the "
                   f"symbols are {', '.join(allowed)}")
        split = _split_into_symbols(node.name, allowed)
        if split:
            message += f" (for a product write {'*'.join(split)})"
        return message

    def interpret(self, spec: FormulaSpec, text: str, context: Mapping) -> Verdict:
        read = self._read(spec, text)
        if isinstance(read, Verdict):
            return read
        _tree, interpreted, mathml = read
        return Verdict(valid=True, correct=None, score=0.0, interpreted=interpreted,
                       interpreted_html=mathml)

    # -- grading ------------------------------------------------------------------
    def grade(self, spec: FormulaSpec, text: str, context: Mapping, effects=None) -> Verdict:
        read = self._read(spec, text)
        if isinstance(read, Verdict):
            return read
        tree, interpreted, mathml = read
        shown = {"interpreted": interpreted, "interpreted_html": mathml,
                 "expected": to_text(spec.answer_tree, implicit_separator="·")}
        candidate_values = _values_at(tree, spec.sample_points)
        reference_dimension = spec.answer_dimension
        candidate_dimension = self._dimension(tree, spec.symbols)
        mistake = self._matching_mistake(spec, candidate_values)
        if (candidate_dimension is not None and reference_dimension is not None
                and candidate_dimension != reference_dimension):
            if mistake:
                return Verdict(valid=True, correct=False, score=0.0, feedback=render_feedback(mistake[1], context),
                               mistake=mistake[0], **shown)
            return Verdict(
                valid=True, correct=False, score=0.0, mistake="wrong-dimension",
                feedback=f"Your formula gives {describe_dimension(candidate_dimension)}; "
                         f"this part asks for {describe_dimension(reference_dimension)}.",
                **shown)
        if _agree(candidate_values, spec.reference_values):
            symbolic = compare_symbolically(tree, spec.answer_tree, spec.assumptions)
            if symbolic == PROVED_EQUAL:
                return Verdict(valid=True, correct=True, score=1.0,
                               feedback="Correct (shown equal to the reference by algebra).",
                               **shown)
            if symbolic != PROVED_DIFFERENT:
                return Verdict(valid=True, correct=True, score=1.0,
                               feedback=f"Correct (agrees with the reference at {SAMPLES} "
                                        "random points).", **shown)
            return Verdict(valid=True, correct=False, score=0.0, mistake="tiny-difference",
                           feedback="Agrees with the reference at every sampled point but "
                                    "is not the same formula: look for an extra small term.",
                           **shown)
        if mistake:
            return Verdict(valid=True, correct=False, score=0.0, feedback=render_feedback(mistake[1], context),
                           mistake=mistake[0], **shown)
        if all(value is None for value in candidate_values):
            return Verdict(valid=True, correct=False, score=0.0, mistake="undefined",
                           feedback="Your formula is undefined at every sampled point "
                                    "(a division by zero, a log of a negative number, or "
                                    "an overflow?).", **shown)
        ratio = _constant_ratio(candidate_values, spec.reference_values)
        if ratio is not None:
            # Only the slips whose premise the symbols show (no "K and V" without a cache).
            premises = slips.premises_from_words(
                f"{s.name} {s.description} {s.unit}" for s in spec.symbols)
            for slip, words in slips.slips_for(premises):
                if abs(ratio - slip.ratio) <= 1e-6 * abs(slip.ratio):
                    return Verdict(valid=True, correct=False, score=0.0,
                                   mistake="slip:constant-factor",
                                   feedback=f"Not equivalent. {words}", **shown)
            return Verdict(valid=True, correct=False, score=0.0,
                           mistake="slip:constant-factor",
                           feedback="Not equivalent, but a constant multiple of the right "
                                    "formula: check the numeric factor.", **shown)
        return Verdict(valid=True, correct=False, score=0.0,
                       feedback="Not equivalent to the reference formula.", **shown)

    @staticmethod
    def _matching_mistake(spec: FormulaSpec, candidate_values: tuple):
        for index, values in enumerate(spec.mistake_values):
            if _agree(candidate_values, values):
                return f"mistakes[{index}]", spec.mistakes[index].feedback
        return None

    def reference_answer(self, spec: FormulaSpec, context: Mapping) -> str:
        return spec.answer

    def mistake_answers(self, spec: FormulaSpec, context: Mapping) -> list[tuple[str, str]]:
        return [(mistake.answer, render_feedback(mistake.feedback, context)) for mistake in spec.mistakes]


def _split_into_symbols(word: str, allowed: list[str]) -> list[str] | None:
    """``Lhd`` -> ``[L, h, d]`` when the word is a run of declared symbols (longest
    first), to suggest the product the candidate probably meant."""
    ordered = sorted(allowed, key=len, reverse=True)
    pieces: list[str] = []
    rest = word
    while rest:
        match = next((name for name in ordered if rest.startswith(name)), None)
        if match is None:
            return None
        pieces.append(match)
        rest = rest[len(match):]
    return pieces if len(pieces) > 1 else None
