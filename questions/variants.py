"""A question's variant: the parameters an attempt's seed draws, and what they give.

The one place a bank question becomes numbers. `grading.variants` (the engine) draws
choices and evaluates params and derived values over a catalogue; this module adds what
the bank brings: the catalogue itself (`load_catalogue`, cached once per process), a
lab question's generated data, and each part's solution value. Pages, grading,
validation and the `grade` command all draw through `draw_variant`, so a variant seen
on the page is the variant graded.
"""

from __future__ import annotations

from dataclasses import dataclass

from grading import variants
from grading.kinds.slips import DEFINITIONS_KEY
from questions.catalogue import load_catalogue
from questions.labs import LAB_NAME, Lab, cached_lab
from questions.schema import Question


@dataclass(frozen=True)
class Variant:
    """One draw of a question's parameters and the evaluation context it gives."""

    seed: int | None
    choices: dict
    context: object
    lab: Lab | None = None  # a lab question's generated data; its values are `lab.*` in the context


def draw_variant(question: Question, seed: int, *, choices: dict | None = None, catalogue=None) -> Variant:
    """The variant an attempt with `seed` sees; explicit `choices` (a preview picking a
    variant) override the drawn ones, name by name."""
    catalogue = load_catalogue() if catalogue is None else catalogue
    drawn = dict(variants.draw_choices(question.params_spec, seed))
    drawn.update(choices or {})
    context = variants.build_context(question.params_spec, question.derived, drawn, catalogue)
    lab = None
    if question.generator:
        lab = cached_lab(question.generator, seed or 0, drawn, context, question.raw)
        context[LAB_NAME] = lab.values
    if any(ANSWERS_PREFIX in str(part.raw.get("answer", "")) for part in question.parts):
        context[ANSWERS] = chained_answers(question, context)
        # `answers.<id>` is defined by that part's answer, as a derived name is by its
        # expression: the scratchpad's intermediates, a listed mistake's premises and the
        # near-miss check reach through a chain to what the earlier part is built from.
        context[DEFINITIONS_KEY] = {**context[DEFINITIONS_KEY], **{
            ANSWERS_PREFIX + part.id: str(part.raw["answer"]) for part in question.parts
            if part.id in context[ANSWERS] and "answer" in part.raw}}
    return Variant(seed, drawn, context, lab)


ANSWERS = "answers"
ANSWERS_PREFIX = ANSWERS + "."


def chained_answers(question: Question, context) -> dict:
    """Each part's reference value, in order, each evaluated with the earlier ones as
    `answers.<part_id>`: a part whose reference names an earlier part (credit carried
    forward, FORMAT.md) is graded over this. A part whose reference does not evaluate
    is left out (grading it reports the author's error; validation reports it first)."""
    answers: dict = {}
    for part in question.parts:
        try:
            value = part.engine.solution_value(part.raw, {**context, ANSWERS: dict(answers)})
        except Exception:  # an author's broken reference: reported where it is graded
            continue
        if value is not None:
            answers[part.id] = value
    return answers


def reference_values(question: Question, context) -> dict:
    """Each part's solution value (its kind's `solution_value`: numeric parts' references),
    what `answers.<part_id>` means in a solution; parts whose kind has none are left out."""
    values = {}
    for part in question.parts:
        value = part.engine.solution_value(part.raw, {**context, ANSWERS: dict(values)})
        if value is not None:
            values[part.id] = value
    return values


def solution_context(context, answers: dict):
    """The context the solution renders in: the variant's, plus `answers`."""
    return {**context, ANSWERS: answers}
