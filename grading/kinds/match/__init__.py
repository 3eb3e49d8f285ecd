"""Match parts: pair each item on the left with one on the right (stages with the
components that own them, failures with their fixes).

The part lists its ``pairs`` (a left and its right each) and optional ``distractors``
(rights no left takes); two lefts may share a right. The page shows the lefts in the
author's order, each with a select of every right in an order shuffled per variant
(``display_context``). The answer is one ``left=right`` per left, separated by commas
(semicolons and new lines also separate; spaces and case do not matter, nor does the
order of the pairs): the page's selects post exactly that.

**Score** = pairs right ÷ pairs, stated under the part; correct only with every pair
right. **Feedback** names each wrong pair: the author's ``mistakes`` entry for that
(left, right) where there is one, else "“X” does not go with “Y”"; the right match is
not named (``expected``, revealed after answering, has them all).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass

from grading.kinds.base import (
    AnswerKind,
    PartSpec,
    SpecError,
    check_entry,
    common_fields,
    render_feedback,
    require_text,
    variant_shuffled,
)
from grading.templating import TemplateError, render_template
from grading.verdict import Verdict

MAX_ANSWER_CHARACTERS = 4_000
MIN_PAIRS = 2
_PAIR_SEPARATORS = re.compile(r"[,;\n]+")
ENTRY_KEYS = ("id", "text")
PAIR_KEYS = ("left", "right")
MISTAKE_KEYS = ("left", "right", "feedback")


@dataclass(frozen=True)
class MatchEntry:
    """One item on either side."""

    id: str
    text: str


@dataclass(frozen=True)
class MatchMistake:
    """Feedback for pairing ``left`` with the wrong ``right``."""

    left: str
    right: str
    feedback: str


@dataclass(frozen=True)
class MatchSpec(PartSpec):
    lefts: tuple[MatchEntry, ...] = ()
    rights: tuple[MatchEntry, ...] = ()  # every right: the pairs' in first-use order, then the distractors
    answer: tuple[tuple[str, str], ...] = ()  # (left id, right id) in the lefts' order
    mistakes: tuple[MatchMistake, ...] = ()

    def left_text(self, left_id: str) -> str:
        return next(entry.text for entry in self.lefts if entry.id == left_id)

    def right_text(self, right_id: str) -> str:
        return next(entry.text for entry in self.rights if entry.id == right_id)


def rule_text(pair_count: int) -> str:
    return f"Score: the pairs you match right ÷ {pair_count}; correct only with all {pair_count} right."


def _load_entry(raw, label: str) -> MatchEntry:
    check_entry(raw, label, ENTRY_KEYS, needs_id=True)
    return MatchEntry(id=raw["id"], text=require_text(raw, "text", label=f"{label}.text"))


def _load_pairs(raw) -> tuple[tuple[MatchEntry, ...], dict[str, MatchEntry], tuple[tuple[str, str], ...]]:
    """The lefts, the rights the pairs define (by id), and the answer. A pair's
    ``right`` is {id, text}, or the id of a right another pair defines."""
    if not isinstance(raw, list) or len(raw) < MIN_PAIRS:
        raise SpecError(f"needs a list of at least {MIN_PAIRS} pairs, each {{left: {{id, text}}, right: {{id, text}}}}",
                        "pairs")
    lefts, rights, answer, references = [], {}, [], []  # references: (right id, its key)
    for index, pair in enumerate(raw):
        label = f"pairs[{index}]"
        check_entry(pair, label, PAIR_KEYS)
        left = _load_entry(pair.get("left"), f"{label}.left")
        if any(entry.id == left.id for entry in lefts):
            raise SpecError(f"left id {left.id!r} is used twice", f"{label}.left.id")
        lefts.append(left)
        right = pair.get("right")
        if isinstance(right, str):
            references.append((right, f"{label}.right"))
            answer.append((left.id, right))
            continue
        entry = _load_entry(right, f"{label}.right")
        if entry.id in rights:
            raise SpecError(f"right id {entry.id!r} is defined twice (write just the id to reuse it)",
                            f"{label}.right.id")
        rights[entry.id] = entry
        answer.append((left.id, entry.id))
    for right_id, label in references:
        if right_id not in rights:
            raise SpecError(f"names no right that a pair defines: {right_id!r}", label)
    return tuple(lefts), rights, tuple(answer)


def _load_mistakes(raw, lefts, rights, answer) -> tuple[MatchMistake, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SpecError("must be a list of {left, right, feedback}", "mistakes")
    expected, mistakes = dict(answer), []
    for index, item in enumerate(raw):
        label = f"mistakes[{index}]"
        check_entry(item, label, MISTAKE_KEYS)
        left, right = item.get("left"), item.get("right")
        if left not in {entry.id for entry in lefts}:
            raise SpecError(f"must be a left id ({', '.join(entry.id for entry in lefts)}), got {left!r}",
                            f"{label}.left")
        if right not in rights:
            raise SpecError(f"must be a right id ({', '.join(rights)}), got {right!r}", f"{label}.right")
        if expected[left] == right:
            raise SpecError(f"{left}={right} is the right pair", f"{label}.right")
        if any((mistake.left, mistake.right) == (left, right) for mistake in mistakes):
            raise SpecError(f"{left}={right} already has feedback", label)
        mistakes.append(MatchMistake(left, right, require_text(item, "feedback", label=f"{label}.feedback")))
    return tuple(mistakes)


class MatchKind(AnswerKind):
    """``match`` parts (FORMAT.md): ``pairs`` ({left: {id, text}, right: {id, text} or
    an id}), optional ``distractors`` ({id, text}) and ``mistakes`` ({left, right,
    feedback})."""

    name = "match"
    multiline_answer = False
    max_answer_chars = MAX_ANSWER_CHARACTERS
    answer_template = "kinds/match/answer.html"  # one <select> per left
    keys = frozenset({"pairs", "distractors", "mistakes"})

    def load_spec(self, raw: Mapping) -> MatchSpec:
        common = common_fields(raw, self.name, self.keys)
        lefts, rights, answer = _load_pairs(raw.get("pairs"))
        distractors = raw.get("distractors", [])
        if not isinstance(distractors, list):
            raise SpecError("must be a list of {id, text}: rights no left takes", "distractors")
        for index, item in enumerate(distractors):
            entry = _load_entry(item, f"distractors[{index}]")
            if entry.id in rights:
                raise SpecError(f"right id {entry.id!r} is already defined (a distractor is a right no pair takes)",
                                f"distractors[{index}].id")
            rights[entry.id] = entry
        return MatchSpec(**common, lefts=lefts, rights=tuple(rights.values()), answer=answer,
                         mistakes=_load_mistakes(raw.get("mistakes"), lefts, rights, answer))

    # -- display ----------------------------------------------------------------------
    def display_context(self, raw: Mapping, context: Mapping) -> dict:
        """``lefts`` ({id, text}, in the author's order), ``rights`` ({id, text}, in an
        order shuffled per variant: a pure function of the part id and
        ``variant_key(context)``), and ``rule``."""
        spec = self.load_spec(raw)
        rights = [{"id": entry.id, "text": render_feedback(entry.text, context)} for entry in spec.rights]
        rights = variant_shuffled(rights, spec.id, context)
        lefts = [{"id": entry.id, "text": render_feedback(entry.text, context)} for entry in spec.lefts]
        return {"lefts": lefts, "rights": rights, "rule": rule_text(len(lefts))}

    # -- candidate side: never raises because of the text -----------------------------
    def _read(self, spec: MatchSpec, text) -> dict[str, str] | Verdict:
        if not isinstance(text, str):
            return Verdict.invalid("the answer must be text")
        if len(text) > MAX_ANSWER_CHARACTERS:
            return Verdict.invalid(f"the answer is too long (the limit is {MAX_ANSWER_CHARACTERS} characters)")
        lefts = {entry.id for entry in spec.lefts}
        rights = {entry.id for entry in spec.rights}
        chosen: dict[str, str] = {}
        for piece in _PAIR_SEPARATORS.split(text.lower()):
            if not piece.strip():
                continue  # a select left on "Choose…" posts nothing
            left, equals, right = (side.strip() for side in piece.partition("="))
            if not equals or not left or not right:
                return Verdict.invalid(f"write each pair as left=right (read {piece.strip()!r})")
            if left not in lefts:
                return Verdict.invalid(f"there is no item {left!r} on the left "
                                       f"(they are {', '.join(entry.id for entry in spec.lefts)})")
            if right not in rights:
                return Verdict.invalid(f"there is no item {right!r} on the right "
                                       f"(they are {', '.join(sorted(rights))})")
            if left in chosen:
                return Verdict.invalid(f"{left!r} is matched twice: give it one match")
            chosen[left] = right
        missing = [entry for entry in spec.lefts if entry.id not in chosen]
        if missing:
            names = ", ".join(f"“{entry.text}”" for entry in missing)
            return Verdict.invalid(f"choose a match for every item: none for {names}")
        return chosen

    def _shown(self, spec: MatchSpec, chosen: Mapping[str, str], context: Mapping) -> str:
        return "; ".join(f"{render_feedback(entry.text, context)} → "
                         f"{render_feedback(spec.right_text(chosen[entry.id]), context)}" for entry in spec.lefts)

    def interpret(self, spec: MatchSpec, text: str, context: Mapping) -> Verdict:
        chosen = self._read(spec, text)
        if isinstance(chosen, Verdict):
            return chosen
        shown = self._shown(spec, chosen, context)
        return Verdict(valid=True, correct=None, score=0.0, interpreted=shown, interpreted_html=html.escape(shown))

    def grade(self, spec: MatchSpec, text: str, context: Mapping, effects=None) -> Verdict:
        chosen = self._read(spec, text)
        if isinstance(chosen, Verdict):
            return chosen
        shown = self._shown(spec, chosen, context)
        common = {"interpreted": shown, "interpreted_html": html.escape(shown),
                  "expected": self._shown(spec, dict(spec.answer), context)}
        wrong = [(left, chosen[left]) for left, right in spec.answer if chosen[left] != right]
        total = len(spec.answer)
        if not wrong:
            return Verdict(valid=True, correct=True, score=1.0, feedback="Correct.", **common)
        notes = {(mistake.left, mistake.right): (index, mistake.feedback)
                 for index, mistake in enumerate(spec.mistakes)}
        lines, labels = [], []
        for left, right in wrong:
            if (left, right) in notes:
                index, feedback = notes[(left, right)]
                lines.append(render_feedback(feedback, context))
                labels.append(f"mistakes[{index}]")
            else:
                lines.append(f"“{render_feedback(spec.left_text(left), context)}” does not go with "
                             f"“{render_feedback(spec.right_text(right), context)}”.")
        right_count = total - len(wrong)
        score = right_count / total
        lines.append(f"Score: {right_count} of {total} pairs right = {score:.2f}.")
        return Verdict(valid=True, correct=False, score=score, feedback=" ".join(lines),
                       mistake=",".join(labels) or None, **common)

    # -- what validation grades -------------------------------------------------------
    def reference_answer(self, spec: MatchSpec, context: Mapping) -> str:
        return ", ".join(f"{left}={right}" for left, right in spec.answer)

    def mistake_answers(self, spec: MatchSpec, context: Mapping) -> list[tuple[str, str]]:
        """For each listed mistake, the right pairing with that one pair wrong, and the
        mistake's feedback."""
        answers = []
        for mistake in spec.mistakes:
            pairs = [(left, mistake.right if left == mistake.left else right) for left, right in spec.answer]
            answers.append((", ".join(f"{left}={right}" for left, right in pairs),
                            render_feedback(mistake.feedback, context)))
        return answers

    def validate_part(self, spec: MatchSpec, context: Mapping, effects=None) -> list[str]:
        """Every left, right and feedback template renders for the variant."""
        texts = [(f"lefts[{entry.id}].text", entry.text) for entry in spec.lefts]
        texts += [(f"rights[{entry.id}].text", entry.text) for entry in spec.rights]
        texts += [(f"mistakes[{index}].feedback", mistake.feedback) for index, mistake in enumerate(spec.mistakes)]
        problems = []
        for label, text in texts:
            if "{{" not in text:
                continue
            try:
                render_template(text, context)
            except TemplateError as error:
                problems.append(f"{label}: template does not render: {error}")
        return problems
