"""Order parts: put steps in their order (the stages of a decode step, the sampling knobs).

The part lists its ``items`` in the correct order; the page shows them in an order
shuffled per variant that is never already correct (``display_context``). The
candidate's answer is the item ids from first to last, separated by commas (spaces and
new lines also separate; case does not matter): the page's list, reordered with its
move buttons, posts exactly that, and without JavaScript the candidate types it.

**Score** = the share of item pairs in the right relative order, ``1 − (pairs out of
order ÷ n(n − 1)/2)``: one minus the normalized Kendall tau distance. A fully reversed
order scores 0, a single swap of neighbours ``1 − 1/(n(n − 1)/2)`` (14/15 for six
steps), and only the right order scores 1, the only correct answer. The page states
the rule under the list.

**Feedback** on a wrong order: the author's feedback when the order is one of the
listed ``mistakes`` (whole orders); then the first pair out of order in the
candidate's list, read from the top ("“Top-k” should come before “Top-p”", which always
exists: a list with no neighbours out of order is in order); then the author's
``pair_feedback`` for every pair the candidate inverted; then the score's arithmetic.
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

MAX_ANSWER_CHARACTERS = 2_000
MIN_ITEMS = 3
_SEPARATORS = re.compile(r"[\s,;]+")
ITEM_KEYS = ("id", "text")
PAIR_KEYS = ("before", "after", "feedback")
MISTAKE_KEYS = ("order", "feedback")


@dataclass(frozen=True)
class OrderItem:
    id: str
    text: str


@dataclass(frozen=True)
class PairFeedback:
    """Said whenever the candidate puts ``after`` above ``before``."""

    before: str
    after: str
    feedback: str


@dataclass(frozen=True)
class OrderMistake:
    """A whole wrong order (item ids, first to last) and the feedback it earns."""

    order: tuple[str, ...]
    feedback: str


@dataclass(frozen=True)
class OrderSpec(PartSpec):
    items: tuple[OrderItem, ...] = ()
    pair_feedback: tuple[PairFeedback, ...] = ()
    mistakes: tuple[OrderMistake, ...] = ()

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.items)

    @property
    def pair_count(self) -> int:
        return len(self.items) * (len(self.items) - 1) // 2


def split_ids(text: str) -> list[str]:
    """The ids in a typed order, lower-cased, in the order written."""
    return [piece for piece in _SEPARATORS.split(text.strip().lower()) if piece]


def order_problem(ids: list[str], known: tuple[str, ...]) -> str | None:
    """Why ``ids`` is not an order of every one of ``known`` exactly once, or None."""
    if not ids:
        return "give the order: every step's id, first to last, separated by commas"
    for piece in ids:
        if piece not in known:
            return f"there is no step {piece!r} (the steps are {', '.join(sorted(known))})"
    seen = set()
    for piece in ids:
        if piece in seen:
            return f"{piece!r} appears twice: give each step once"
        seen.add(piece)
    missing = [item for item in known if item not in seen]
    if missing:
        names = ", ".join(repr(item) for item in sorted(missing))
        return f"the order leaves out {names}: give every step once"
    return None


def inversions(order: tuple[str, ...], reference: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every pair (a, b) with a placed above b in ``order`` although b comes first in
    ``reference``: the pairs out of order."""
    rank = {item: index for index, item in enumerate(reference)}
    return [(first, second) for index, first in enumerate(order) for second in order[index + 1:]
            if rank[first] > rank[second]]


def order_score(order: tuple[str, ...], reference: tuple[str, ...]) -> float:
    """1 − (pairs out of order ÷ all pairs): 1 for the reference, 0 for it reversed."""
    pairs = len(reference) * (len(reference) - 1) // 2
    return 1.0 - len(inversions(order, reference)) / pairs


def rule_text(item_count: int) -> str:
    pairs = item_count * (item_count - 1) // 2
    return (f"Score: the share of the {pairs} pairs of steps that are in the right relative order, "
            f"1 − (pairs out of order ÷ {pairs}). A fully reversed order scores 0; only the right order scores 1.")


def _load_item(raw, index: int) -> OrderItem:
    label = f"items[{index}]"
    check_entry(raw, label, ITEM_KEYS, needs_id=True)
    return OrderItem(id=raw["id"], text=require_text(raw, "text", label=f"{label}.text"))


def _known_id(raw: Mapping, key: str, ids: tuple[str, ...], label: str) -> str:
    value = raw.get(key)
    if value not in ids:
        raise SpecError(f"must be one of the items' ids ({', '.join(ids)}), got {value!r}", f"{label}.{key}")
    return value


def _load_pairs(raw, ids: tuple[str, ...]) -> tuple[PairFeedback, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SpecError("must be a list of {before, after, feedback}", "pair_feedback")
    pairs, seen = [], set()
    for index, item in enumerate(raw):
        label = f"pair_feedback[{index}]"
        check_entry(item, label, PAIR_KEYS)
        before, after = _known_id(item, "before", ids, label), _known_id(item, "after", ids, label)
        if ids.index(before) >= ids.index(after):
            # The note fires when `after` is placed above `before`: on a pair the items
            # list the other way round it would fire on the right order.
            raise SpecError(f"{after!r} must come after {before!r} in items", f"{label}.after")
        if (before, after) in seen:
            raise SpecError(f"the pair ({before}, {after}) already has feedback", label)
        seen.add((before, after))
        pairs.append(PairFeedback(before, after, require_text(item, "feedback", label=f"{label}.feedback")))
    return tuple(pairs)


def _load_mistakes(raw, ids: tuple[str, ...]) -> tuple[OrderMistake, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SpecError("must be a list of {order, feedback}", "mistakes")
    mistakes, seen = [], set()
    for index, item in enumerate(raw):
        label = f"mistakes[{index}]"
        check_entry(item, label, MISTAKE_KEYS)
        order = item.get("order")
        if isinstance(order, list) and all(isinstance(piece, str) for piece in order):
            pieces = [piece.strip().lower() for piece in order]
        elif isinstance(order, str):
            pieces = split_ids(order)
        else:
            raise SpecError("must be the item ids in the wrong order, a list or a text", f"{label}.order")
        problem = order_problem(pieces, ids)
        if problem:
            raise SpecError(problem, f"{label}.order")
        if tuple(pieces) == ids:
            raise SpecError("is the right order", f"{label}.order")
        if tuple(pieces) in seen:
            raise SpecError("repeats an earlier mistake's order", f"{label}.order")
        seen.add(tuple(pieces))
        mistakes.append(OrderMistake(tuple(pieces), require_text(item, "feedback", label=f"{label}.feedback")))
    return tuple(mistakes)


class OrderKind(AnswerKind):
    """``order`` parts (FORMAT.md): ``items`` ({id, text} each, in the correct order),
    optional ``pair_feedback`` ({before, after, feedback}) and ``mistakes`` ({order,
    feedback}: whole wrong orders)."""

    name = "order"
    multiline_answer = False
    max_answer_chars = MAX_ANSWER_CHARACTERS
    answer_template = "kinds/order/answer.html"  # an <ol> with move buttons, and the typed ids without JS
    keys = frozenset({"items", "pair_feedback", "mistakes"})

    def load_spec(self, raw: Mapping) -> OrderSpec:
        common = common_fields(raw, self.name, self.keys)
        items = raw.get("items")
        if not isinstance(items, list) or len(items) < MIN_ITEMS:
            raise SpecError(f"needs a list of at least {MIN_ITEMS} items, each {{id, text}}, in the correct order",
                            "items")
        loaded = tuple(_load_item(item, index) for index, item in enumerate(items))
        seen = set()
        for index, item in enumerate(loaded):
            if item.id in seen:
                raise SpecError(f"item id {item.id!r} is used twice", f"items[{index}].id")
            seen.add(item.id)
        ids = tuple(item.id for item in loaded)
        return OrderSpec(**common, items=loaded, pair_feedback=_load_pairs(raw.get("pair_feedback"), ids),
                         mistakes=_load_mistakes(raw.get("mistakes"), ids))

    # -- display ----------------------------------------------------------------------
    def display_context(self, raw: Mapping, context: Mapping) -> dict:
        """``items`` ({id, text} each) in an order shuffled per variant (a pure function
        of the part id and ``variant_key(context)``) that is never the right one,
        ``typed`` (their ids in that order, what the form starts with) and ``rule``."""
        spec = self.load_spec(raw)
        items = [{"id": item.id, "text": render_feedback(item.text, context)} for item in spec.items]
        items = variant_shuffled(items, spec.id, context)
        if tuple(item["id"] for item in items) == spec.ids:
            items = items[1:] + items[:1]  # a rotation of three or more items is never the identity
        return {"items": items, "typed": ", ".join(item["id"] for item in items), "rule": rule_text(len(items))}

    # -- candidate side: never raises because of the text -----------------------------
    def _read(self, spec: OrderSpec, text) -> tuple[str, ...] | Verdict:
        if not isinstance(text, str):
            return Verdict.invalid("the answer must be text")
        if len(text) > MAX_ANSWER_CHARACTERS:
            return Verdict.invalid(f"the answer is too long (the limit is {MAX_ANSWER_CHARACTERS} characters)")
        pieces = split_ids(text)
        problem = order_problem(pieces, spec.ids)
        return Verdict.invalid(problem) if problem else tuple(pieces)

    @staticmethod
    def _text(spec: OrderSpec, item_id: str, context: Mapping) -> str:
        return render_feedback(next(item.text for item in spec.items if item.id == item_id), context)

    def _shown(self, spec: OrderSpec, order: tuple[str, ...], context: Mapping) -> dict:
        shown = " → ".join(self._text(spec, item_id, context) for item_id in order)
        return {"interpreted": shown, "interpreted_html": html.escape(shown)}

    def interpret(self, spec: OrderSpec, text: str, context: Mapping) -> Verdict:
        order = self._read(spec, text)
        if isinstance(order, Verdict):
            return order
        return Verdict(valid=True, correct=None, score=0.0, **self._shown(spec, order, context))

    def grade(self, spec: OrderSpec, text: str, context: Mapping, effects=None) -> Verdict:
        order = self._read(spec, text)
        if isinstance(order, Verdict):
            return order
        common = {**self._shown(spec, order, context), "expected": self._shown(spec, spec.ids, context)["interpreted"]}
        inverted = inversions(order, spec.ids)
        if not inverted:
            return Verdict(valid=True, correct=True, score=1.0, feedback="Correct.", **common)
        lines, mistake = [], None
        for index, listed in enumerate(spec.mistakes):
            if listed.order == order:
                lines.append(render_feedback(listed.feedback, context))
                mistake = f"mistakes[{index}]"
        above, below = next((first, second) for first, second in zip(order, order[1:])
                            if spec.ids.index(first) > spec.ids.index(second))
        lines.append(f"“{self._text(spec, below, context)}” should come before “{self._text(spec, above, context)}”.")
        inverted_set = set(inverted)
        lines += [render_feedback(note.feedback, context) for note in spec.pair_feedback
                  if (note.after, note.before) in inverted_set]
        score = 1.0 - len(inverted) / spec.pair_count
        right = spec.pair_count - len(inverted)
        lines.append(f"Score: {right} of the {spec.pair_count} pairs in the right order, "
                     f"1 − {len(inverted)} ÷ {spec.pair_count} = {score:.2f}.")
        return Verdict(valid=True, correct=False, score=score, feedback=" ".join(lines), mistake=mistake, **common)

    # -- what validation grades -------------------------------------------------------
    def reference_answer(self, spec: OrderSpec, context: Mapping) -> str:
        return ", ".join(spec.ids)

    def mistake_answers(self, spec: OrderSpec, context: Mapping) -> list[tuple[str, str]]:
        """Each listed order with its feedback, and for each pair note the right order
        with that pair's two items swapped, with the note: every piece of feedback the
        author wrote must reach a candidate who makes its mistake."""
        answers = [(", ".join(listed.order), render_feedback(listed.feedback, context)) for listed in spec.mistakes]
        for note in spec.pair_feedback:
            swapped = list(spec.ids)
            first, second = swapped.index(note.before), swapped.index(note.after)
            swapped[first], swapped[second] = swapped[second], swapped[first]
            answers.append((", ".join(swapped), render_feedback(note.feedback, context)))
        return answers

    def validate_part(self, spec: OrderSpec, context: Mapping, effects=None) -> list[str]:
        """Every item text and feedback template renders for the variant."""
        texts = [(f"items[{index}].text", item.text) for index, item in enumerate(spec.items)]
        texts += [(f"pair_feedback[{index}].feedback", note.feedback) for index, note in enumerate(spec.pair_feedback)]
        texts += [(f"mistakes[{index}].feedback", listed.feedback) for index, listed in enumerate(spec.mistakes)]
        problems = []
        for label, text in texts:
            if "{{" not in text:
                continue
            try:
                render_template(text, context)
            except TemplateError as error:
                problems.append(f"{label}: template does not render: {error}")
        return problems
