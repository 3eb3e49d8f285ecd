"""Explain parts: free text a person judges against a rubric and a model answer."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from grading.kinds.base import AnswerKind, PartSpec, SpecError, common_fields, is_id, require_text
from grading.verdict import Verdict

MAX_EXPLANATION_CHARACTERS = 10_000
# The model answer and the rubric open only once an answer of some substance is recorded:
# "idk" and a tick in every box must not reach full credit. A short sentence passes.
MIN_EXPLANATION_WORDS = 8
MIN_DISTINCT_WORDS = 5
_WORD = re.compile(r"[\w'’.-]+")


@dataclass(frozen=True)
class RubricItem:
    id: str
    text: str


@dataclass(frozen=True)
class ExplainSpec(PartSpec):
    rubric: tuple[RubricItem, ...] = ()
    model_answer: str = ""


class ExplainKind(AnswerKind):
    """``explain`` parts (FORMAT.md): ``rubric`` (list of {id, text}) and
    ``model_answer``. The engine only checks that something was written; the candidate
    (or an interviewer) ticks rubric items and ``score_rubric`` turns ticks into a score."""

    name = "explain"
    auto_graded = False
    self_assessed = True
    multiline_answer = True
    answer_template = "kinds/explain/answer.html"
    keys = frozenset({"rubric", "model_answer"})

    def load_spec(self, raw: Mapping) -> ExplainSpec:
        common = common_fields(raw, self.name, self.keys)
        items = raw.get("rubric")
        if not isinstance(items, list) or not items:
            raise SpecError("needs a non-empty list of {id, text}", "rubric")
        rubric = []
        for index, item in enumerate(items):
            label = f"rubric[{index}]"
            if not isinstance(item, Mapping) or set(item) != {"id", "text"}:
                raise SpecError("must be {id, text}", label)
            if not is_id(item["id"]):
                raise SpecError("must be a-z, 0-9, '_' or '-'", f"{label}.id")
            rubric.append(RubricItem(item["id"], require_text(item, "text",
                                                              label=f"{label}.text")))
        ids = [item.id for item in rubric]
        if len(set(ids)) != len(ids):
            raise SpecError("ids must be unique", "rubric")
        return ExplainSpec(**common, rubric=tuple(rubric),
                           model_answer=require_text(raw, "model_answer"))

    def _read(self, text) -> str | Verdict:
        if not isinstance(text, str):
            return Verdict.invalid("the answer must be text")
        stripped = text.strip()
        if not stripped:
            return Verdict.invalid("the answer is empty")
        if len(stripped) > MAX_EXPLANATION_CHARACTERS:
            return Verdict.invalid(f"the answer is too long ({len(stripped)} characters; "
                                   f"the limit is {MAX_EXPLANATION_CHARACTERS})")
        words = _WORD.findall(stripped.lower())
        if len(words) < MIN_EXPLANATION_WORDS or len(set(words)) < MIN_DISTINCT_WORDS:
            return Verdict.invalid(
                f"write your explanation first: at least {MIN_EXPLANATION_WORDS} words "
                f"({len(words)} so far); the model answer and the rubric open once it is recorded")
        return stripped

    def interpret(self, spec: ExplainSpec, text: str, context: Mapping) -> Verdict:
        read = self._read(text)
        if isinstance(read, Verdict):
            return read
        summary = f"{len(read.split())} words"
        return Verdict(valid=True, correct=None, score=0.0, interpreted=summary,
                       interpreted_html=html.escape(summary))

    def grade(self, spec: ExplainSpec, text: str, context: Mapping, effects=None) -> Verdict:
        read = self._read(text)
        if isinstance(read, Verdict):
            return read
        summary = f"{len(read.split())} words"
        return Verdict(
            valid=True, correct=None, score=0.0, interpreted=summary,
            interpreted_html=html.escape(summary),
            feedback="Compare your answer with the model answer and tick each rubric item "
                     "you covered.",
            expected=spec.model_answer)

    def reference_answer(self, spec: ExplainSpec, context: Mapping) -> str:
        return spec.model_answer

    def mistake_answers(self, spec: ExplainSpec, context: Mapping) -> list[tuple[str, str]]:
        return []

    def score_rubric(self, spec: ExplainSpec, ticked_ids: Iterable[str]) -> float:
        """The fraction of rubric items ticked (each id counted once). Raises
        ``ValueError`` listing any id the rubric does not have."""
        ticked = set(ticked_ids)
        known = {item.id for item in spec.rubric}
        unknown = ticked - known
        if unknown:
            raise ValueError(f"unknown rubric ids: {', '.join(sorted(map(str, unknown)))}")
        return len(ticked) / len(known)
