"""Validation of chained parts: references that name earlier parts (``answers.<part_id>``,
credit carried forward, FORMAT.md).

For each part whose reference names earlier parts: every part it names must come
earlier in the question and have a value (a numeric part); and for each listed mistake
of a part it names, the reference recomputed from that mistake's value must be graded
"consistent" (credit carried forward) when the candidate's earlier answer was that
mistake. That is the promise the pages make: a candidate who made a listed slip early
and carried on correctly earns the carried credit later.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from grading.kinds.base import GIVEN_KEY
from questions.schema import Question
from questions.variants import ANSWERS


@dataclass(frozen=True)
class ChainProblem:
    path: tuple
    message: str
    key: tuple  # what makes two variants' problems the same one


def chain_problems(question: Question, specs: dict, context) -> Iterator[ChainProblem]:
    """The problems of ``question``'s chained parts on the variant ``context``."""
    positions = {part.id: index for index, part in enumerate(question.parts)}
    for index, part in enumerate(question.parts):
        spec = specs.get(part.id)
        if spec is None:
            continue
        kind = part.engine
        for earlier_id in kind.earlier_parts(spec):
            path = ("parts", index, "answer")
            if positions.get(earlier_id, len(question.parts)) >= index:
                yield ChainProblem(path, f"part {part.id!r}: answers.{earlier_id} must name an earlier part",
                                   ("later part", part.id, earlier_id))
                continue
            earlier = question.parts[positions[earlier_id]]
            if earlier_id not in (context.get(ANSWERS) or {}) or earlier_id not in specs:
                yield ChainProblem(path, f"part {part.id!r}: answers.{earlier_id} names a part without a value",
                                   ("value", part.id, earlier_id))
                continue
            yield from _mistakes_carry(question, index, spec, earlier, specs[earlier_id], context)


def _mistakes_carry(question: Question, index: int, spec, earlier, earlier_spec, context) -> Iterator[ChainProblem]:
    part = question.parts[index]
    kind, earlier_kind = part.engine, earlier.engine
    try:
        mistakes = earlier_kind.mistake_answers(earlier_spec, context)
    except Exception:
        return  # reported by the earlier part's own mistake check
    for mistake_index, (text, _feedback) in enumerate(mistakes):
        given = earlier_kind.given_answer(earlier_spec, text)
        if given is None:
            continue
        over = {**context, ANSWERS: {**context[ANSWERS], earlier.id: given.value}}
        try:
            carried_text = kind.reference_answer(spec, over)
            verdict = kind.grade(spec, carried_text, {**context, GIVEN_KEY: {earlier.id: given}})
        except Exception as error:
            yield ChainProblem(("parts", index, "answer"),
                               f"part {part.id!r}: the reference from {earlier.id}'s mistakes[{mistake_index}] "
                               f"({text}) does not evaluate: {error}", ("evaluate", part.id, mistake_index))
            continue
        if verdict.correct:
            continue  # this part does not move with that mistake here: nothing to carry
        if verdict.carried is None or not verdict.carried.consistent:
            yield ChainProblem(
                ("parts", index, "answer"),
                f"part {part.id!r}: {carried_text!r}, the reference computed from {earlier.id}'s "
                f"mistakes[{mistake_index}] ({text}), is not graded consistent ({verdict.feedback})",
                ("consistent", part.id, earlier.id, mistake_index))
