"""The grading engine: pure Python, no Django.

``grade(part, text, context)`` and ``interpret(part, text, context)`` take a part (its raw
YAML mapping or a loaded ``PartSpec``), whatever the candidate typed, and the variant's
context (``grading.variants.build_context``), and return a ``Verdict``. Answer kinds are
plug-ins (``grading.kinds``) registered by name in ``grading.registry``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from grading.effects import Effects
from grading.kinds.base import AnswerKind, PartSpec, SpecError
from grading.registry import get_kind, kinds, kinds_with
from grading.verdict import Verdict

__all__ = [
    "AnswerKind", "PartSpec", "SpecError", "Verdict", "answer_values", "get_kind", "grade",
    "interpret", "kinds", "kinds_with", "load_part", "read_scratchpad",
]

logger = logging.getLogger(__name__)
_SPEC_CACHE_LOCK = threading.Lock()


_SPEC_CACHE: OrderedDict[str, PartSpec] = OrderedDict()
_SPEC_CACHE_SIZE = 1024


def load_part(part: Mapping | PartSpec) -> PartSpec:
    """The typed spec for a part; a ``PartSpec`` passes through. Raises ``SpecError``.

    Specs are immutable, so loaded ones are kept (keyed by the part's content, the
    least recently used dropped first): a formula spec draws and evaluates its sample
    points once, not on every answer."""
    if isinstance(part, PartSpec):
        return part
    if not isinstance(part, Mapping):
        raise SpecError("a part must be a mapping of keys to values")
    try:
        key = json.dumps(part, sort_keys=True, default=repr)
    except (TypeError, ValueError):  # keys that are not strings: load without caching
        return get_kind(part.get("kind")).load_spec(part)
    with _SPEC_CACHE_LOCK:
        spec = _SPEC_CACHE.get(key)
        if spec is not None:
            _SPEC_CACHE.move_to_end(key)
            return spec
    spec = get_kind(part.get("kind")).load_spec(part)
    with _SPEC_CACHE_LOCK:
        _SPEC_CACHE[key] = spec
        while len(_SPEC_CACHE) > _SPEC_CACHE_SIZE:
            _SPEC_CACHE.popitem(last=False)
    return spec


def _run(method: str, part, text, context, **options) -> Verdict:
    spec = load_part(part)
    kind = get_kind(spec.kind)
    try:
        return getattr(kind, method)(spec, text, context, **options)
    except SpecError:
        raise
    except Exception:
        # A bug must not turn a candidate's keystrokes into a server error; the log
        # keeps it visible to us.
        logger.exception("grading.%s failed on part %s", method, spec.id)
        return Verdict.invalid("the grader could not read this answer; please write it "
                               "another way")


def _with_scratchpad(part, scratchpad: str) -> dict | Verdict:
    if not scratchpad:
        return {}
    if not get_kind(load_part(part).kind).has_scratchpad:
        return Verdict.invalid("this part has no scratchpad; write the answer alone")
    return {"scratchpad": scratchpad}


def grade(part: Mapping | PartSpec, text: str, context: Mapping, *, effects: Effects | None = None,
          scratchpad: str = "") -> Verdict:
    """Grade ``text`` for ``part`` in ``context``. Never raises because of ``text``;
    raises ``SpecError`` when the part or its reference is broken (an author's fault).
    ``effects`` (``grading.effects``): the sandbox, judges and GPU that a part that runs
    code uses; None for this machine's. ``scratchpad``: the candidate's working, for
    kinds that have one (``has_scratchpad``), graded step by step; an empty ``text``
    then takes its answer line."""
    options = _with_scratchpad(part, scratchpad)
    if isinstance(options, Verdict):
        return options
    if effects is not None:
        options["effects"] = effects
    return _run("grade", part, text, context, **options)


def interpret(part: Mapping | PartSpec, text: str, context: Mapping, *, scratchpad: str = "") -> Verdict:
    """Parse only, for the live preview ("interpreted as 41.8 ms"): ``correct`` is None
    and nothing is revealed. Same error contract as ``grade``; with a ``scratchpad``, a
    line of it that does not read makes the answer invalid."""
    options = _with_scratchpad(part, scratchpad)
    if isinstance(options, Verdict):
        return options
    return _run("interpret", part, text, context, **options)


def read_scratchpad(part: Mapping | PartSpec, text: str) -> tuple:
    """A scratchpad line by line (``StepRecord``s with each value or error), for the live
    preview: nothing compared, nothing revealed; empty for kinds without one."""
    spec = load_part(part)
    kind = get_kind(spec.kind)
    if not kind.has_scratchpad or not isinstance(text, str):
        return ()
    try:
        return tuple(kind.read_scratchpad(spec, text))
    except Exception:
        logger.exception("grading.read_scratchpad failed on part %s", spec.id)
        return ()


def answer_values(parts: Iterable[Mapping | PartSpec], context: Mapping) -> dict:
    """``{part_id: reference value}`` for every numeric part: the ``answers`` namespace
    that solutions quote as ``{{ answers.<part_id> | <unit> }}``."""
    values = {}
    for part in parts:
        spec = load_part(part)
        kind = get_kind(spec.kind)
        if hasattr(kind, "reference_value"):
            values[spec.id] = kind.reference_value(spec, context)
    return values
