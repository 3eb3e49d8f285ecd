"""Choice parts: pick the right option, or every right option, from a list.

The candidate's answer is the chosen option ids separated by commas (``"b"``, ``"a, c"``;
spaces also separate, order and repeats do not matter); the page's radio buttons or
checkboxes post exactly that. Grading is by id: the order the options are shown in is
a per-variant shuffle for display only (``display_context``).

A single-answer part scores 1 for its correct option and 0 for any other, which gets
that option's feedback (the misconception it stands for). A multiple-answer part scores
``max(0, (correct chosen - wrong chosen) / number of correct options)``, so ticking every
option earns nothing whenever there are at least as many wrong options as right ones;
it is correct only with score 1 (every correct option, no wrong one).
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

MAX_ANSWER_CHARACTERS = 1_000
_SEPARATORS = re.compile(r"[\s,]+")
OPTION_KEYS = ("id", "text", "correct", "feedback")
PARTIAL_CREDIT_RULE = ("Tick every option that applies. Score: (correct options ticked − wrong options "
                       "ticked) ÷ the number of correct options, never below 0.")


@dataclass(frozen=True)
class ChoiceOption:
    id: str
    text: str
    correct: bool
    feedback: str = ""


@dataclass(frozen=True)
class ChoiceSpec(PartSpec):
    options: tuple[ChoiceOption, ...] = ()
    multiple: bool = False

    @property
    def correct_ids(self) -> tuple[str, ...]:
        return tuple(option.id for option in self.options if option.correct)

    def option(self, option_id: str) -> ChoiceOption:
        return next(option for option in self.options if option.id == option_id)


def _load_option(item, index: int) -> ChoiceOption:
    label = f"options[{index}]"
    check_entry(item, label, OPTION_KEYS, needs_id=True)
    option_id = item["id"]
    correct = item.get("correct", False)
    if not isinstance(correct, bool):
        raise SpecError("must be true or false", f"{label}.correct")
    if correct and item.get("feedback") is None:
        feedback = ""
    elif correct:
        feedback = require_text(item, "feedback", label=f"{label}.feedback")
    else:
        # A distractor exists to catch one misconception; its feedback names it.
        if item.get("feedback") is None:
            raise SpecError("is required for a wrong option: the misconception it stands for "
                            "(or mark the option correct: true)", f"{label}.feedback")
        feedback = require_text(item, "feedback", label=f"{label}.feedback")
    return ChoiceOption(id=option_id, text=require_text(item, "text", label=f"{label}.text"),
                        correct=correct, feedback=feedback)


class ChoiceKind(AnswerKind):
    """``choice`` parts (FORMAT.md): ``options`` (a list of {id, text, correct,
    feedback}) and ``multiple`` (default false)."""

    name = "choice"
    multiline_answer = False
    max_answer_chars = MAX_ANSWER_CHARACTERS
    answer_template = "kinds/choice/answer.html"  # radio buttons or checkboxes
    keys = frozenset({"options", "multiple"})

    def load_spec(self, raw: Mapping) -> ChoiceSpec:
        common = common_fields(raw, self.name, self.keys)
        multiple = raw.get("multiple", False)
        if not isinstance(multiple, bool):
            raise SpecError("must be true or false", "multiple")
        items = raw.get("options")
        if not isinstance(items, list) or len(items) < 2:
            raise SpecError("needs a list of at least 2 options, each {id, text, correct, feedback}", "options")
        options = tuple(_load_option(item, index) for index, item in enumerate(items))
        seen = set()
        for index, option in enumerate(options):
            if option.id in seen:
                raise SpecError(f"option id {option.id!r} is used twice", f"options[{index}].id")
            seen.add(option.id)
        right = sum(option.correct for option in options)
        if not multiple and right != 1:
            raise SpecError(f"a single-answer part needs exactly one correct option (found {right}); "
                            "set multiple: true for several", "options")
        if multiple and not 0 < right < len(options):
            raise SpecError(f"a multiple-answer part needs at least one correct and one wrong option "
                            f"(found {right} correct of {len(options)})", "options")
        return ChoiceSpec(**common, options=options, multiple=multiple)

    # -- display ----------------------------------------------------------------------
    def display_context(self, raw: Mapping, context: Mapping) -> dict:
        """``options`` ({id, text} each, in an order shuffled per variant: a pure
        function of the part id and ``variant_key(context)``), ``multiple``, and
        ``rule``, the partial-credit rule a multiple-answer part states."""
        spec = self.load_spec(raw)
        options = [{"id": option.id, "text": render_feedback(option.text, context)} for option in spec.options]
        options = variant_shuffled(options, spec.id, context)
        return {"options": options, "multiple": spec.multiple, "rule": PARTIAL_CREDIT_RULE if spec.multiple else ""}

    # -- candidate side: never raises because of the text -----------------------------
    def _read(self, spec: ChoiceSpec, text) -> frozenset[str] | Verdict:
        if not isinstance(text, str):
            return Verdict.invalid("the answer must be text")
        if len(text) > MAX_ANSWER_CHARACTERS:
            return Verdict.invalid(f"the answer is too long (the limit is {MAX_ANSWER_CHARACTERS} characters)")
        pieces = [piece for piece in _SEPARATORS.split(text.strip().lower()) if piece]
        if not pieces:
            return Verdict.invalid("choose an option" if not spec.multiple else "choose at least one option")
        known = {option.id for option in spec.options}
        for piece in pieces:
            if piece not in known:
                return Verdict.invalid(f"there is no option {piece!r} (the options are "
                                       f"{', '.join(option.id for option in spec.options)})")
        chosen = frozenset(pieces)
        if not spec.multiple and len(chosen) > 1:
            return Verdict.invalid("choose one option: this part has a single answer")
        return chosen

    @staticmethod
    def _texts(spec: ChoiceSpec, ids, context: Mapping) -> str:
        """The options' texts, in the spec's order (never the shuffled one)."""
        return "; ".join(render_feedback(option.text, context) for option in spec.options if option.id in ids)

    def interpret(self, spec: ChoiceSpec, text: str, context: Mapping) -> Verdict:
        chosen = self._read(spec, text)
        if isinstance(chosen, Verdict):
            return chosen
        shown = self._texts(spec, chosen, context)
        return Verdict(valid=True, correct=None, score=0.0, interpreted=shown, interpreted_html=html.escape(shown))

    def grade(self, spec: ChoiceSpec, text: str, context: Mapping, effects=None) -> Verdict:
        chosen = self._read(spec, text)
        if isinstance(chosen, Verdict):
            return chosen
        shown = self._texts(spec, chosen, context)
        common = {"interpreted": shown, "interpreted_html": html.escape(shown),
                  "expected": self._texts(spec, spec.correct_ids, context)}
        wrong = [option for option in spec.options if option.id in chosen and not option.correct]
        if not spec.multiple:
            if not wrong:
                return Verdict(valid=True, correct=True, score=1.0,
                               feedback=self._solved_feedback(spec, context), **common)
            option = wrong[0]
            return Verdict(valid=True, correct=False, score=0.0, feedback=render_feedback(option.feedback, context),
                           mistake=option.id, **common)
        right = len([option_id for option_id in spec.correct_ids if option_id in chosen])
        total = len(spec.correct_ids)
        score = max(0.0, (right - len(wrong)) / total)
        if score == 1.0:
            return Verdict(valid=True, correct=True, score=1.0, feedback=self._solved_feedback(spec, context),
                           **common)
        lines = [f"“{render_feedback(option.text, context)}” is wrong: {render_feedback(option.feedback, context)}"
                 for option in wrong]
        missed = total - right
        if missed:
            lines.append(f"You missed {missed} of the {total} correct options.")
        lines.append(f"Score: ({right} correct − {len(wrong)} wrong ticked) ÷ {total} correct options = "
                     f"{score:.2f}, never below 0.")
        return Verdict(valid=True, correct=False, score=score, feedback=" ".join(lines),
                       mistake=",".join(option.id for option in wrong) or None, **common)

    @staticmethod
    def _solved_feedback(spec: ChoiceSpec, context: Mapping) -> str:
        notes = [render_feedback(option.feedback, context) for option in spec.options
                 if option.correct and option.feedback]
        return " ".join(["Correct.", *notes])

    # -- what validation grades -------------------------------------------------------
    def reference_answer(self, spec: ChoiceSpec, context: Mapping) -> str:
        return ", ".join(spec.correct_ids)

    def mistake_answers(self, spec: ChoiceSpec, context: Mapping) -> list[tuple[str, str]]:
        """Each wrong option alone, with its feedback: every distractor's feedback must
        reach the candidate who picks it."""
        return [(option.id, render_feedback(option.feedback, context)) for option in spec.options
                if not option.correct]

    def validate_part(self, spec: ChoiceSpec, context: Mapping, effects=None) -> list[str]:
        """Each option's text and feedback templates render (grading would otherwise
        fall back to showing the raw ``{{ }}`` text)."""
        problems = []
        for index, option in enumerate(spec.options):
            for key, text in (("text", option.text), ("feedback", option.feedback)):
                if "{{" not in text:
                    continue
                try:
                    render_template(text, context)
                except TemplateError as error:
                    problems.append(f"options[{index}].{key}: template does not render: {error}")
        return problems
