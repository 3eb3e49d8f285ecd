"""Numeric parts: a number with units, or arithmetic with units, within a tolerance.

Grading order: within ``rtol`` of the reference (correct, score 1); otherwise the
explanation closest to the answer among the listed mistakes and the classic slips
(``grading.kinds.slips``) that the answer matches within the part's tolerance. A listed
mistake scores 0 with the author's feedback (several that coincide on this variant are
all named); a slip only adds its feedback to the band's score (``partial``, else 0). A
slip is a candidate only where its premise is in the part (no "K and V" without a KV
cache) and where its value lies outside the tolerance of the reference (else it could
not be told apart). Nothing matching: the plain miss, with the tolerance.

A bare number (no unit names at all) is read in the part's unit, and the interpretation
says so; any other answer must have the part's dimension or it is invalid input.

Two additions sit on top (each in its own module): credit carried forward from earlier
parts the reference names as ``answers.<part_id>`` (``carried``), and the scratchpad,
graded step by step against the reference's intermediates (``working``, ``steps``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import pint

from grading.expressions import (
    ExpressionError,
    evaluate,
    parse_trusted,
    read_quantity,
    regrouped_readings,
)
from grading.kinds import slips
from grading.kinds.base import (
    AnswerKind,
    GivenAnswer,
    MistakeSpec,
    PartSpec,
    SpecError,
    ToleranceBand,
    common_fields,
    load_mistakes,
    optional_number,
    render_feedback,
    require_text,
)
from grading.kinds.numeric import carried
from grading.kinds.numeric.steps import STEP_CREDIT_RULE, grade_working, read_steps, unknown_step_names
from grading.kinds.numeric.working import read_working
from grading.quantities import parse_unit
from grading.units import DisplayUnit, describe_dimension, dimensionality_of, format_number, ureg
from grading.verdict import Verdict

# Below this, a whole-number answer with no unit is a count (tokens kept, pages, stages).
SMALL_COUNT = 64


@dataclass(frozen=True)
class PartialCredit:
    rtol: float
    score: float


@dataclass(frozen=True)
class NearMissWaiver:
    """A near miss validation found inside the tolerance, kept on purpose: ``mutation``
    is (the start of) the near miss's label, ``reason`` why it may stay accepted."""

    mutation: str
    reason: str


@dataclass(frozen=True)
class NumericSpec(PartSpec):
    answer: str = ""
    unit: DisplayUnit = DisplayUnit("", 1.0)
    rtol: float = 0.03
    atol: float = 0.0
    partial: PartialCredit | None = None
    mistakes: tuple[MistakeSpec, ...] = ()
    near_misses: tuple[NearMissWaiver, ...] = ()
    # Plain names for the reference's intermediates ({derived or catalogue name, or
    # "answer": words}), which a scratchpad step that matches one is marked with.
    steps: dict = field(default_factory=dict)
    # The earlier parts the reference names as answers.<part_id>.
    earlier: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Reading:
    magnitude: float  # in the part's unit
    interpreted: str
    bare: bool = False  # no unit given: read in the part's unit


def _percent(fraction: float) -> str:
    """A tolerance in words: 3%, 0.1%, 0.02% (never a misleading "0%")."""
    return f"{fraction * 100:.2g}%"


def _tolerance(rtol: float, atol: float, unit: str) -> str:
    """How close an answer must be, in words: "within 3%", "within 0.5 GB", or, for an
    exact count (no relative tolerance, an absolute one under 1), "exactly"."""
    if rtol == 0 and 0 < atol < 1 and not unit:
        return "exactly"
    absolute = f"{atol:g} {unit}".strip()
    if rtol == 0:
        return f"within {absolute}"
    return f"within {_percent(rtol)}" + (f" (or {absolute})" if atol else "")


def _within(value: float, target: float, rtol: float, atol: float) -> bool:
    return abs(value - target) <= rtol * abs(target) + atol


def _number_text(value: float) -> str:
    """A float as a candidate would type it, exact (``repr`` round-trips floats)."""
    return repr(float(value))


class NumericKind(AnswerKind):
    """``numeric`` parts (FORMAT.md): ``answer``, ``unit``, ``rtol``, ``atol``,
    ``partial``, ``mistakes``."""

    name = "numeric"
    answer_template = "kinds/numeric/answer.html"  # a one-line input, previewed as typed
    keys = frozenset({"answer", "unit", "rtol", "atol", "partial", "mistakes", "near_misses", "steps"})
    has_scratchpad = True

    def load_spec(self, raw: Mapping) -> NumericSpec:
        common = common_fields(raw, self.name, self.keys)
        answer = require_text(raw, "answer")
        try:
            earlier = carried.earlier_parts(parse_trusted(answer))
        except ExpressionError as error:
            raise SpecError(str(error), "answer") from None
        unit_text = raw.get("unit", "") or ""
        if not isinstance(unit_text, str):
            raise SpecError("must be a unit such as ms or GB/s", "unit")
        try:
            unit = parse_unit(unit_text)
            if unit.text:
                read_quantity(f"1 {unit.text}")  # candidates must be able to type it
        except ExpressionError as error:
            raise SpecError(f"{error} (use a unit candidates can type)", "unit") from None
        rtol = optional_number(raw, "rtol", 0.03)
        atol = optional_number(raw, "atol", 0.0)
        partial = None
        if raw.get("partial") is not None:
            band = raw["partial"]
            if not isinstance(band, Mapping) or set(band) != {"rtol", "score"}:
                raise SpecError("must be {rtol, score}", "partial")
            partial = PartialCredit(
                rtol=optional_number(band, "rtol", 0.0, label="partial.rtol"),
                score=optional_number(band, "score", 0.0, label="partial.score"))
            if partial.rtol <= rtol:
                raise SpecError("must be wider than rtol", "partial.rtol")
            if not 0 < partial.score < 1:
                raise SpecError("must lie strictly between 0 and 1", "partial.score")
        mistakes = load_mistakes(raw)
        for index, mistake in enumerate(mistakes):
            try:
                parse_trusted(mistake.answer)
            except ExpressionError as error:
                raise SpecError(str(error), f"mistakes[{index}].answer") from None
        return NumericSpec(**common, answer=answer, unit=unit, rtol=rtol, atol=atol,
                           partial=partial, mistakes=mistakes,
                           near_misses=_load_waivers(raw.get("near_misses")),
                           steps=_load_step_names(raw.get("steps")), earlier=earlier)

    def tolerance_band(self, spec: NumericSpec) -> ToleranceBand:
        scale = spec.unit.scale
        per_unit = float(scale.to_base_units().magnitude) if isinstance(scale, pint.Quantity) else float(scale)
        return ToleranceBand(answer=spec.answer, rtol=spec.rtol, atol_base=spec.atol * per_unit,
                             mistakes=tuple(mistake.answer for mistake in spec.mistakes),
                             waivers=tuple((w.mutation, w.reason) for w in spec.near_misses))

    # -- reference values (author side: errors are SpecErrors) ----------------------
    def reference_value(self, spec: NumericSpec, context: Mapping):
        """The reference as a number or Quantity (for ``answers.<part_id>``)."""
        return self._value(spec, spec.answer, context, "answer")

    def solution_value(self, raw: Mapping, context: Mapping):
        """The reference, evaluated from the raw part (``answers.<part_id>``)."""
        return evaluate(str(raw["answer"]), context)

    def _value(self, spec: NumericSpec, expression: str, context: Mapping, key: str):
        try:
            value = evaluate(expression, context)
        except ExpressionError as error:
            raise SpecError(str(error), key) from None
        if isinstance(value, str) or not isinstance(value, (int, float, pint.Quantity)):
            raise SpecError("must evaluate to a number", key)
        if dimensionality_of(value) != spec.unit.dimensionality:
            wanted = f"{describe_dimension(spec.unit.dimensionality)}"
            if spec.unit.text:
                wanted += f" ({spec.unit.text})"
            raise SpecError(f"is {describe_dimension(dimensionality_of(value))} but the "
                            f"unit asks for {wanted}", key)
        return value

    def _magnitude(self, spec: NumericSpec, expression: str, context: Mapping,
                   key: str) -> float:
        return spec.unit.magnitude_of(self._value(spec, expression, context, key))

    def reference_answer(self, spec: NumericSpec, context: Mapping) -> str:
        return self._as_text(spec, self._magnitude(spec, spec.answer, context, "answer"))

    def mistake_answers(self, spec: NumericSpec, context: Mapping) -> list[tuple[str, str]]:
        return [
            (self._as_text(spec, self._magnitude(spec, mistake.answer, context,
                                                 f"mistakes[{index}].answer")),
             render_feedback(mistake.feedback, context))
            for index, mistake in enumerate(spec.mistakes)
        ]

    @staticmethod
    def _as_text(spec: NumericSpec, magnitude: float) -> str:
        """The value as a candidate would type it, rounded like a ``{{ x | unit }}``
        template (3 significant figures) so solutions quote the same text, with more
        figures only when the part's tolerance is too tight for the rounding."""
        number = _number_text(magnitude)
        for significant in range(3, 16):
            rounded = format_number(magnitude, significant)
            if _within(float(rounded), magnitude, spec.rtol / 2, spec.atol / 2):
                number = rounded
                break
        if not spec.unit.text:
            return number
        separator = "" if spec.unit.text == "%" else " "
        return f"{number}{separator}{spec.unit.text}"

    def expected_text(self, spec: NumericSpec, context: Mapping) -> str:
        magnitude = self._magnitude(spec, spec.answer, context, "answer")
        number = format_number(magnitude, 4)
        if not spec.unit.text:
            return number
        return f"{number}%" if spec.unit.text == "%" else f"{number} {spec.unit.text}"

    # -- candidate side: never raises because of the text --------------------------
    def _read(self, spec: NumericSpec, text) -> _Reading | Verdict:
        if not isinstance(text, str):
            return Verdict.invalid("the answer must be text")
        try:
            read = read_quantity(text)
        except ExpressionError as error:
            return Verdict.invalid(str(error))
        unit = spec.unit
        value = read.value
        notes = f" ({'; '.join(read.notes)})" if read.notes else ""
        if not isinstance(value, pint.Quantity) and not read.has_units and unit.text:
            shown = f"{read.text} → {unit.format(value * unit.scale, 4)}"
            return _Reading(float(value), f"{shown} (no unit given: read in "
                                          f"{unit.text}){notes}", bare=True)
        value, token_note = _tokens_as_counts(value, unit)
        if token_note:
            notes = f"{notes} ({token_note})" if notes else f" ({token_note})"
        if dimensionality_of(value) != unit.dimensionality:
            given = describe_dimension(dimensionality_of(value))
            wanted = describe_dimension(unit.dimensionality)
            if unit.text:
                wanted += f" ({unit.text})"
            hint = _regrouping_hint(text, read.text, unit)
            if not hint and re.search(r"(^|[\s\d])B\b", read.text) and not unit.text:
                hint = " B means bytes; for billions write 70e9 or 70 billion."
            return Verdict.invalid(f"that is {given}; this part asks for {wanted}.{hint}",
                                   interpreted=read.text)
        magnitude = unit.magnitude_of(value)
        shown = unit.format(value, 4)
        interpreted = read.text if _same_reading(read.text, shown) else f"{read.text} = {shown}"
        return _Reading(magnitude, interpreted + notes)

    def interpret(self, spec: NumericSpec, text: str, context: Mapping, scratchpad: str = "") -> Verdict:
        reading = self._answer_reading(spec, text, scratchpad)
        if isinstance(reading, Verdict):
            return reading
        return Verdict(valid=True, correct=None, score=0.0, interpreted=reading.interpreted,
                       interpreted_html=html.escape(reading.interpreted))

    def grade(self, spec: NumericSpec, text: str, context: Mapping, effects=None, scratchpad: str = "") -> Verdict:
        """As the contract says; with ``scratchpad``, the working is graded too (an empty
        ``text`` takes the scratchpad's answer line), and credit is carried forward from
        the earlier parts in ``GIVEN_KEY`` that the reference names."""
        reading = self._answer_reading(spec, text, scratchpad)
        if isinstance(reading, Verdict):
            return reading
        reference = self._magnitude(spec, spec.answer, context, "answer")
        verdict = self._graded(spec, reading, reference, context)
        if spec.earlier:
            verdict = carried.carry(
                verdict, spec.earlier, context, reading.magnitude,
                lambda over: self._magnitude(spec, spec.answer, over, "answer"),
                lambda value, target: _within(value, target, spec.rtol, spec.atol))
        if scratchpad and scratchpad.strip():
            verdict = grade_working(spec, verdict, scratchpad, context, reference=reference,
                                    within=lambda value: _within(value, reference, spec.rtol, spec.atol))
        return verdict

    # -- the scratchpad and earlier parts -------------------------------------------
    def validate_part(self, spec: NumericSpec, context: Mapping, effects=None) -> list[str]:
        return unknown_step_names(spec, context)

    def display_context(self, raw: Mapping, context: Mapping) -> dict:
        """The rules the answer form states beside the scratchpad: how working is
        credited, and (for a part that names earlier ones) how credit is carried."""
        spec = self.load_spec(raw)
        return {"step_credit_rule": STEP_CREDIT_RULE,
                "carried_credit_rule": carried.CARRIED_CREDIT_RULE if spec.earlier else ""}

    def read_scratchpad(self, spec: NumericSpec, text: str) -> tuple:
        return read_steps(text)

    def scratchpad_answer(self, spec: NumericSpec, text: str) -> str | None:
        working = read_working(text)
        if working.answer is None or working.errors:
            return None
        value = working.lines[working.answer].value
        if spec.unit.text and dimensionality_of(value) == spec.unit.dimensionality:
            magnitude = spec.unit.magnitude_of(value)
            # As few figures as keep the value well inside the tolerance of itself: the
            # stored answer reads as a person would write it and grades the same.
            number = next((format_number(magnitude, figures) for figures in range(4, 16) if _within(
                float(format_number(magnitude, figures)), magnitude, spec.rtol / 20, spec.atol / 20)),
                _number_text(magnitude))
            return f"{number}%" if spec.unit.text == "%" else f"{number} {spec.unit.text}"
        if isinstance(value, pint.Quantity):
            return f"{format_number(value.magnitude, 12)} {value.units:~}"
        return format_number(value, 12)

    def earlier_parts(self, spec: NumericSpec) -> tuple[str, ...]:
        return spec.earlier

    def given_answer(self, spec: NumericSpec, text: str) -> GivenAnswer | None:
        reading = self._read(spec, text)
        if isinstance(reading, Verdict):
            return None
        value = reading.magnitude * spec.unit.scale if spec.unit.text else reading.magnitude
        return GivenAnswer(value, spec.unit.format(value, 3))

    def _answer_reading(self, spec: NumericSpec, text, scratchpad: str) -> _Reading | Verdict:
        """The answer as read, the scratchpad's answer line standing in for an empty one;
        a scratchpad with a line that does not read is invalid input, saying where."""
        if scratchpad and scratchpad.strip():
            problems = read_working(scratchpad).errors
            if problems:
                more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
                return Verdict.invalid("The scratchpad has a line that does not read: "
                                       + "; ".join(problems[:3]) + more)
            if not (isinstance(text, str) and text.strip()):
                text = self.scratchpad_answer(spec, scratchpad) or ""
        return self._read(spec, text)

    def _graded(self, spec: NumericSpec, reading: _Reading, reference: float, context: Mapping) -> Verdict:
        answer = reading.magnitude
        shown = {"interpreted": reading.interpreted,
                 "interpreted_html": html.escape(reading.interpreted),
                 "expected": self.expected_text(spec, context)}
        if _within(answer, reference, spec.rtol, spec.atol):
            return Verdict(valid=True, correct=True, score=1.0, feedback="Correct.", **shown)
        if (reading.bare and spec.unit.text in ("%", "percent")
                and _within(answer * 100, reference, spec.rtol, spec.atol)):
            # "0.25" or "16/64" for a percentage: a fraction, as people often write one.
            shown["interpreted"] = f"{shown['interpreted']}; read as a fraction: {answer * 100:.4g}%"
            shown["interpreted_html"] = html.escape(shown["interpreted"])
            return Verdict(valid=True, correct=True, score=1.0, feedback="Correct (read as a fraction).", **shown)
        percent_part = spec.unit.text in ("%", "percent")
        # A listed mistake matches as written or, on a percent part, as a bare fraction
        # ("0.717" for 71.7%), the same reading the reference gets above.
        readings = (answer, answer * 100) if reading.bare and percent_part else (answer,)
        matched = self._explanations(spec, readings, reference, context, percent_part)
        if matched and matched[0][0].startswith("mistakes["):
            return Verdict(valid=True, correct=False, score=0.0,
                           feedback=_joined([words for _, words in matched]),
                           mistake=matched[0][0], **shown)
        slip = matched[0] if matched else None
        needed = _tolerance(spec.rtol, spec.atol, spec.unit.text)
        if needed == "exactly":
            band_feedback = "Not the reference value: an exact count is expected here."
        else:
            band_feedback = f"Not {needed} of the reference."
        score = 0.0
        if spec.partial and _within(answer, reference, spec.partial.rtol, spec.atol):
            score = spec.partial.score
            band_feedback = (f"Close: within {_percent(spec.partial.rtol)} of the reference but "
                             f"not {needed}; partial credit.")
        feedback = f"{band_feedback} {slip[1]}" if slip else band_feedback
        return Verdict(valid=True, correct=False, score=score, feedback=feedback,
                       mistake=slip[0] if slip else None, **shown)

    def _explanations(self, spec: NumericSpec, readings: tuple[float, ...], reference: float,
                      context: Mapping, percent_part: bool) -> list[tuple[str, str]]:
        """What the answer is taken for: [(mistake id, feedback)], empty for a plain miss.
        Candidates are the listed mistakes and the slips whose premise the part has; one
        matches when a reading lies within the part's tolerance of its value, and the
        closest match wins (a listed mistake on a tie). The listed mistakes whose values
        coincide with the winner's on this variant come with it, so the feedback names
        every slip that gives this value."""
        candidates = []  # (value, is_slip, id, feedback)
        for index, mistake in enumerate(spec.mistakes):
            value = self._magnitude(spec, mistake.answer, context, f"mistakes[{index}].answer")
            candidates.append((value, False, f"mistakes[{index}]", mistake.feedback))
        if reference != 0:
            for slip, words in self._slips(spec, reference, context, percent_part):
                value = reference * slip.ratio
                # A slip the tolerance cannot tell from the reference explains nothing.
                if not _within(value, reference, spec.rtol, spec.atol):
                    candidates.append((value, True, f"slip:{slip.id}", words))
        best = None
        for value, is_slip, ident, words in candidates:
            for candidate in readings:
                if not _within(candidate, value, spec.rtol, spec.atol):
                    continue
                distance = abs(candidate - value) / max(abs(value), 1e-300)
                key = (distance, is_slip)
                if best is None or key < best[0]:
                    best = (key, value, is_slip, ident, words, candidate)
        if best is None:
            return []
        _, best_value, best_is_slip, ident, words, reading = best
        noise = slips.coincidence_band(spec.rtol)
        # Listed mistakes that give the winner's value, or the answer itself, within the
        # noise: a rounded answer (seed 2's "1.61") can sit nearer a slip than the
        # mistake it was typed from, and must still hear the author's diagnosis.
        coinciding = [(other_id, render_feedback(other_words, context))
                      for value, is_slip, other_id, other_words in candidates
                      if not is_slip and (_within(value, best_value, noise, spec.atol / 3)
                                          or _within(reading, value, noise, spec.atol / 3))]
        if coinciding:
            return coinciding
        return [(ident, words)]

    @staticmethod
    def _slips(spec: NumericSpec, reference: float, context: Mapping,
               percent_part: bool) -> list[tuple[slips.Slip, str]]:
        premises = slips.premises_of(spec.answer, context, percent=percent_part,
                                     unit=spec.unit.scale)
        named = slips.slips_for(premises)
        if (not spec.unit.text and reference == round(reference)
                and abs(reference) <= SMALL_COUNT):
            # 2 against 4 tokens kept is a miscount, not a K-and-V or FLOP slip.
            named = [(slip, words) for slip, words in named if slip.id != "factor-of-two"]
        return named


def _joined(feedbacks: list[str]) -> str:
    if len(feedbacks) == 1:
        return feedbacks[0]
    return ("Two different slips give this value here. " if len(feedbacks) == 2 else
            f"{len(feedbacks)} different slips give this value here. ") + " Or: ".join(feedbacks)


def _load_step_names(raw) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(
            isinstance(name, str) and isinstance(words, str) and words.strip() for name, words in raw.items()):
        raise SpecError("must map names (derived, catalogue or answer) to plain words", "steps")
    return {name: words.strip() for name, words in raw.items()}


def _load_waivers(raw) -> tuple[NearMissWaiver, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SpecError("must be a list of {mutation, reason}", "near_misses")
    waivers = []
    for index, item in enumerate(raw):
        if (not isinstance(item, Mapping) or set(item) != {"mutation", "reason"}
                or not all(isinstance(item[key], str) and item[key].strip()
                           for key in ("mutation", "reason"))):
            raise SpecError("must be {mutation, reason}, both non-empty text",
                            f"near_misses[{index}]")
        waivers.append(NearMissWaiver(item["mutation"].strip(), item["reason"].strip()))
    return tuple(waivers)


def _tokens_as_counts(value, unit):
    """Tokens are a dimension so that sizes and rates read clearly, but a number of tokens
    is also just a count: when the answer differs from the part's unit only by powers of
    `token` ("295 tokens" for a batch size, "417/s" for tokens/s), read it as that count.
    Returns (value, note or None)."""
    difference = dimensionality_of(value) / unit.dimensionality
    if set(difference) != {"[token]"}:
        return value, None
    adjusted = value / ureg.token ** difference["[token]"]
    if isinstance(adjusted, pint.Quantity) and adjusted.dimensionless:
        adjusted = float(adjusted.to("dimensionless").magnitude)
    return adjusted, "tokens read as a count"


def _regrouping_hint(text: str, read_as: str, unit: DisplayUnit) -> str:
    """When the answer has the wrong dimension only because a unit after ``/`` bound to
    its number first (``128256/8 B`` is ``128256 / (8 B)``), say how it was read and
    suggest the brackets that give the part's dimension; else ""."""
    for reading in regrouped_readings(text):
        if dimensionality_of(reading.value) == unit.dimensionality:
            return f" It was read as {read_as}; did you mean {reading.text}?"
    return ""


def _same_reading(typed: str, shown: str) -> bool:
    """Whether printing the value in the part's unit would only repeat what was typed
    ("41.8 ms" typed, "41.8 ms" shown)."""
    return typed.replace(" ", "") == shown.replace(" ", "")
