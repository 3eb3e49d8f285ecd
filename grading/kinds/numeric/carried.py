"""Credit carried forward: a numeric part whose reference names earlier parts
(``answers.<part_id>``) is also graded against the reference recomputed from the
candidate's own answers to those parts, when they were graded wrong (FORMAT.md,
"Credit carried forward").

The rule (``CARRIED_CREDIT_RULE``): an answer that misses the reference but lies within
the part's tolerance of the reference recomputed from the candidate's earlier values
earns ``CARRIED_CREDIT`` of the part; it is still not correct (the variant is not
solved by it). An answer that matches neither earns what the plain grading gives.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from grading.expressions import Name, walk
from grading.kinds.base import GIVEN_KEY, SpecError
from grading.verdict import CarriedCredit, Verdict

CARRIED_CREDIT = 0.75
CARRIED_CREDIT_RULE = (f"An answer that is right given your own earlier answer (when that one was wrong) earns "
                       f"{CARRIED_CREDIT:.0%} of the part: credit carried forward.")
ANSWERS = "answers"


def earlier_parts(tree) -> tuple[str, ...]:
    """The part ids an expression's ``answers.<part_id>`` names name, in order."""
    found = []
    for node in walk(tree):
        if isinstance(node, Name) and node.name.startswith(ANSWERS + "."):
            part_id = node.name.split(".")[1]
            if part_id not in found:
                found.append(part_id)
    return tuple(found)


def carry(verdict: Verdict, parts: tuple[str, ...], context: Mapping, answer: float, recompute, within) -> Verdict:
    """``verdict`` with credit carried forward where it applies. ``recompute(context)``
    is the reference (in the part's unit) over a context; ``within(answer, target)``
    the part's tolerance."""
    if verdict.correct or not verdict.valid:
        return verdict
    given = {part_id: item for part_id, item in (context.get(GIVEN_KEY) or {}).items() if part_id in parts}
    if not given:
        return verdict
    answers = {**(context.get(ANSWERS) or {}), **{part_id: item.value for part_id, item in given.items()}}
    try:
        target = recompute({**context, ANSWERS: answers})
    except SpecError:
        return verdict
    consistent = within(answer, target)
    record = CarriedCredit(parts=tuple(given), values=tuple(item.shown for item in given.values()),
                           consistent=consistent)
    yours = " and ".join(f"{item.shown} ({part_id})" for part_id, item in given.items())
    if not consistent:
        return dataclasses.replace(verdict, carried=record, feedback=(
            f"{verdict.feedback} It is not consistent with your earlier {yours} either.").strip())
    off = "that one was" if len(given) == 1 else "those were"
    feedback = (f"Consistent with your earlier {yours}; {off} off, so this part earns "
                f"{CARRIED_CREDIT:.0%} credit carried forward.")
    return dataclasses.replace(verdict, carried=record, score=max(verdict.score, CARRIED_CREDIT),
                               feedback=feedback, mistake=None)
