"""The contract every answer kind implements, and the shared spec pieces."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

from grading.verdict import Verdict


class SpecError(ValueError):
    """A part spec (or question data) an author must fix. ``key`` names the bad key,
    dotted from the part (``mistakes[1].answer``) when known."""

    def __init__(self, message: str, key: str | None = None):
        self.message = message
        self.key = key
        super().__init__(f"{key}: {message}" if key else message)


@dataclass(frozen=True)
class PartSpec:
    """Fields every part has (FORMAT.md, "Parts")."""

    id: str
    kind: str
    prompt: str = ""
    points: float = 1.0


# The context key a sandboxed kind reads its hidden tests' seed from: the shell stores the
# seed with the attempt and passes it here, so a retry or a replay meets the same tests.
JUDGE_SEED_KEY = "judge_seed"

_PART_ID = re.compile(r"^[a-z0-9_-]+$")
COMMON_KEYS = frozenset({"id", "kind", "prompt", "points"})


def common_fields(raw: Mapping, kind: str, allowed: set[str] | frozenset[str]) -> dict:
    """Check the keys every part shares and refuse keys the kind does not know (a typo
    such as ``mistake:`` must not silently drop the author's mistakes). Returns the
    keyword arguments for ``PartSpec`` fields."""
    if not isinstance(raw, Mapping):
        raise SpecError("a part must be a mapping of keys to values")
    for key in raw:
        if key not in COMMON_KEYS and key not in allowed:
            known = ", ".join(sorted(COMMON_KEYS | set(allowed)))
            raise SpecError(f"unknown key for a {kind} part (known: {known})", str(key))
    part_id = raw.get("id")
    if not isinstance(part_id, str) or not _PART_ID.match(part_id):
        raise SpecError("must be a string of a-z, 0-9, '_' or '-'", "id")
    if raw.get("kind") != kind:
        raise SpecError(f"expected {kind!r}, got {raw.get('kind')!r}", "kind")
    prompt = raw.get("prompt", "")
    if not isinstance(prompt, str):
        raise SpecError("must be text", "prompt")
    points = raw.get("points", 1)
    if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
        raise SpecError("must be a positive number", "points")
    return {"id": part_id, "kind": kind, "prompt": prompt, "points": float(points)}


def require_text(raw: Mapping, key: str, *, label: str | None = None) -> str:
    value = raw.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise SpecError("is required and must be non-empty text", label or key)
    return value.strip()


def optional_number(raw: Mapping, key: str, default: float, *, minimum: float = 0.0,
                    label: str | None = None) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise SpecError(f"must be a number >= {minimum:g}", label or key)
    return float(value)


@dataclass(frozen=True)
class MistakeSpec:
    """A plausible wrong answer (an expression) and the feedback it earns."""

    answer: str
    feedback: str


def load_mistakes(raw: Mapping) -> tuple[MistakeSpec, ...]:
    items = raw.get("mistakes", [])
    if not isinstance(items, list):
        raise SpecError("must be a list of {answer, feedback}", "mistakes")
    mistakes = []
    for index, item in enumerate(items):
        label = f"mistakes[{index}]"
        if not isinstance(item, Mapping):
            raise SpecError("must be a mapping with answer and feedback", label)
        extra = set(item) - {"answer", "feedback"}
        if extra:
            raise SpecError(f"unknown key {sorted(extra)[0]!r}", label)
        mistakes.append(MistakeSpec(
            answer=require_text(item, "answer", label=f"{label}.answer"),
            feedback=require_text(item, "feedback", label=f"{label}.feedback"),
        ))
    return tuple(mistakes)


class AnswerKind(ABC):
    """One kind of answer (numeric, formula, explain, ...), registered by ``name``.

    Implementations are stateless; one instance serves every request. Methods taking
    ``text`` receive whatever the candidate typed and must never raise because of it:
    unreadable input returns ``Verdict.invalid`` saying where and why, within a second.
    Methods raise ``SpecError`` only for problems an author must fix (a bad spec, a
    reference that cannot be evaluated over the context).
    """

    name: ClassVar[str]
    # Capabilities the shell asks for instead of testing a kind's name.
    # runs_in_sandbox: grading runs the candidate's code (rate-limited per user).
    runs_in_sandbox: ClassVar[bool] = False
    # grading_deadline: an attempt queued or running longer than this is presumed lost
    # (its worker died, its message was dropped) and is queued again.
    grading_deadline: ClassVar[timedelta] = timedelta(minutes=2)
    # max_answer_chars: longer answers are refused at the request, costing nothing.
    max_answer_chars: ClassVar[int] = 10_000

    @abstractmethod
    def load_spec(self, raw: Mapping) -> PartSpec:
        """Check a part's raw YAML mapping and return its typed spec (a ``PartSpec``
        subclass). Raises ``SpecError`` naming the bad key. Needs no context."""

    @abstractmethod
    def interpret(self, spec: PartSpec, text: str, context: Mapping) -> Verdict:
        """Parse only, for the live preview: ``valid`` and ``interpreted`` are set,
        ``correct`` is None, ``score`` 0, ``expected`` empty (nothing is revealed)."""

    @abstractmethod
    def grade(self, spec: PartSpec, text: str, context: Mapping) -> Verdict:
        """Grade ``text`` against the reference evaluated over ``context`` (the
        variant's values). Invalid input: ``valid=False``, no score."""

    @abstractmethod
    def reference_answer(self, spec: PartSpec, context: Mapping) -> str:
        """A candidate-style text that ``grade`` must accept as correct. Validation
        grades it and fails the question if it is not."""

    @abstractmethod
    def mistake_answers(self, spec: PartSpec, context: Mapping) -> list[tuple[str, str]]:
        """For each listed mistake, a candidate-style text and the feedback ``grade``
        must give for it. Validation checks each pair."""

    def validate_part(self, spec: PartSpec, context: Mapping) -> list[str]:
        """Problems beyond the reference and the listed mistakes that only this kind can
        check (code: run every example solution and compare with its expected verdict).
        Called by the bank's validation once per question; the default has none."""
        return []


def render_feedback(text: str, context) -> str:
    """An author's feedback with its ``{{ }}`` templates filled for this variant.

    Feedback is written like the rest of a question; a template that fails to render
    (validation reports it) falls back to the raw text rather than hiding the feedback.
    """
    if "{{" not in text:
        return text
    from grading.templating import TemplateError, render_template

    try:
        return render_template(text, context)
    except TemplateError:
        return text
