"""The contract every answer kind implements, and the shared spec pieces."""

from __future__ import annotations

import numbers
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

import pint

from grading.effects import Effects
from grading.templating import TemplateError, render_template
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

# The context key holding the candidate's own answers to earlier parts that were graded
# wrong ({part_id: GivenAnswer}): a part whose reference names ``answers.<part_id>`` is
# then also compared with the reference recomputed from them (credit carried forward,
# FORMAT.md). The shell fills it from the candidate's latest answers to the same variant;
# ``manage.py grade --given`` from the command line. Not a name expressions can use.
GIVEN_KEY = "__given__"


@dataclass(frozen=True)
class GivenAnswer:
    """A candidate's answer to an earlier part: ``value`` as the part's reference would
    be (a number or Quantity), ``shown`` as the pages show it ("131 kB")."""

    value: object
    shown: str

# What a part's id, and the ids inside a part (rubric items, options, test groups), are
# made of: they appear in URLs, form names and stored verdicts.
ID_PATTERN = re.compile(r"^[a-z0-9_-]+$")
ID_RULE = "a string of a-z, 0-9, '_' or '-'"


def is_id(value) -> bool:
    """Whether ``value`` is a well-formed id (``ID_PATTERN``)."""
    return isinstance(value, str) and bool(ID_PATTERN.match(value))


def check_entry(raw, label: str, keys: tuple[str, ...], *, needs_id: bool = False) -> None:
    """One entry of a part's list (an option, a step, a pair, a mistake): a mapping
    whose keys are among ``keys`` (named in this order in the message), with a
    well-formed ``id`` when ``needs_id``. Raises ``SpecError`` naming the entry."""
    if not isinstance(raw, Mapping):
        listed = ", ".join(keys[:-1]) + f" and {keys[-1]}" if len(keys) > 1 else keys[0]
        raise SpecError(f"must be a mapping with {listed}", label)
    extra = set(raw) - set(keys)
    if extra:
        raise SpecError(f"unknown key {sorted(map(str, extra))[0]!r} (known: {', '.join(sorted(keys))})", label)
    if needs_id and not is_id(raw.get("id")):
        raise SpecError(f"must be {ID_RULE}", f"{label}.id")

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
    if not is_id(part_id):
        raise SpecError(f"must be {ID_RULE}", "id")
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


@dataclass(frozen=True)
class ToleranceBand:
    """What the near-miss check needs of a part (``AnswerKind.tolerance_band``):
    ``answer`` and each of ``mistakes`` are author expressions; ``atol_base`` is the
    absolute tolerance in base units; ``waivers`` are (mutation label prefix, reason)."""

    answer: str
    rtol: float
    atol_base: float
    mistakes: tuple[str, ...]
    waivers: tuple[tuple[str, str], ...]


class AnswerKind(ABC):
    """One kind of answer (numeric, formula, explain, ...), registered by ``name``.

    Implementations are stateless; one instance serves every request. Methods taking
    ``text`` receive whatever the candidate typed and must never raise because of it:
    unreadable input returns ``Verdict.invalid`` saying where and why, within a second.
    Methods raise ``SpecError`` only for problems an author must fix (a bad spec, a
    reference that cannot be evaluated over the context).

    Capabilities are class attributes: the shell (services, pages, routing, the bank's
    validation) asks for one, through ``grading.get_kind(name).<capability>`` or
    ``grading.kinds_with("<capability>")``, and never tests a kind's name.
    """

    name: ClassVar[str]

    # auto_graded: ``grade`` decides correct or wrong by itself. A question needs at
    # least one such part; only these parts count towards "solved" and an interview's
    # automatic score.
    auto_graded: ClassVar[bool] = True
    # self_assessed: a person scores the answer against the part's rubric (the candidate
    # in practice, through ``score_rubric``; the interviewer on the scorecard). ``grade``
    # only records it (``correct`` None); the pages then show the model answer and the
    # rubric to tick, and hide the recorded score until it is assessed.
    self_assessed: ClassVar[bool] = False
    # runs_in_sandbox: grading runs the candidate's code (rate-limited per user; the
    # attempt keeps its hidden tests' seed).
    runs_in_sandbox: ClassVar[bool] = False
    # needs_gpu: grading wants a GPU; the shell routes the attempt to the GPU queue when
    # settings name one (gpu_runner.routing.queue_for), else to the CPU graders.
    needs_gpu: ClassVar[bool] = False
    # has_examples: the part has visible examples the candidate may run ("Run the
    # visible examples") through ``try_examples``; the shell accepts EXAMPLES attempts
    # only for these kinds, and such a run is never an answer.
    has_examples: ClassVar[bool] = False
    # uses_editor: answered in the code editor (CodeMirror in practice; in an interview a
    # textarea whose typing is recorded for playback, with diffs between submissions).
    uses_editor: ClassVar[bool] = False
    # multiline_answer: answers run over several lines (prose, code); pages that show a
    # submitted answer show it as a block, not inline.
    multiline_answer: ClassVar[bool] = False
    # grading_deadline: an attempt queued or running longer than this is presumed lost
    # (its worker died, its message was dropped) and is queued again.
    grading_deadline: ClassVar[timedelta] = timedelta(minutes=2)
    # max_answer_chars: longer answers are refused at the request, costing nothing.
    max_answer_chars: ClassVar[int] = 10_000
    # answer_template: the kind's answer form for one part, which the practice page and
    # the interview room include (default ``kinds/<name>/answer.html``, found in the
    # package's ``templates/`` folder, see ``grading.registry.template_dirs``). Context:
    # ``part`` (questions.rendering.RenderedPart), ``submit_url``, ``interpret_url``
    # (live preview), ``run_url`` and ``run_into`` (the id prefix, ``verdict`` or
    # ``code-run``, of the element a run of the examples replaces), ``source`` (what an
    # editor starts with) and ``snapshot_url`` (set where typing is recorded: the editor
    # is then the interview's plain textarea, else CodeMirror's). What the form needs
    # for this variant beyond the part's common fields is ``part.display``, the kind's
    # ``display_context``.
    answer_template: ClassVar[str] = ""
    # has_scratchpad: the answer form offers a scratchpad (one named step per line);
    # ``read_scratchpad`` previews it, ``grade(..., scratchpad=...)`` grades it step by
    # step, and the shell stores it with the attempt.
    has_scratchpad: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("answer_template") and isinstance(cls.__dict__.get("name"), str):
            cls.answer_template = f"kinds/{cls.name}/answer.html"

    @abstractmethod
    def load_spec(self, raw: Mapping) -> PartSpec:
        """Check a part's raw YAML mapping and return its typed spec (a ``PartSpec``
        subclass). Raises ``SpecError`` naming the bad key. Needs no context."""

    @abstractmethod
    def interpret(self, spec: PartSpec, text: str, context: Mapping) -> Verdict:
        """Parse only, for the live preview: ``valid`` and ``interpreted`` are set,
        ``correct`` is None, ``score`` 0, ``expected`` empty (nothing is revealed)."""

    @abstractmethod
    def grade(self, spec: PartSpec, text: str, context: Mapping, effects: Effects | None = None) -> Verdict:
        """Grade ``text`` against the reference evaluated over ``context`` (the
        variant's values). Invalid input: ``valid=False``, no score. ``effects`` are the
        side effects a kind that runs code needs (``grading.effects``: the sandbox, the
        judge, the GPU), passed in by the caller; None means this machine's
        (``grading.machine.local_effects()``). Kinds that run nothing ignore them."""

    @abstractmethod
    def reference_answer(self, spec: PartSpec, context: Mapping) -> str:
        """A candidate-style text that ``grade`` must accept as correct. Validation
        grades it and fails the question if it is not."""

    @abstractmethod
    def mistake_answers(self, spec: PartSpec, context: Mapping) -> list[tuple[str, str]]:
        """For each listed mistake, a candidate-style text and the feedback ``grade``
        must give for it. Validation checks each pair."""

    def tolerance_band(self, spec: PartSpec) -> ToleranceBand | None:
        """For a kind that accepts answers within a tolerance of a value computed from
        the context: that value's expression, the tolerance, the listed mistakes and the
        waived near misses, for validation's near-miss check (``questions.mutations``).
        None (the default): the kind has no such band."""
        return None

    def validate_part(self, spec: PartSpec, context: Mapping, effects: Effects | None = None) -> list[str]:
        """Problems beyond the reference and the listed mistakes that only this kind can
        check (code: run every example solution and compare with its expected verdict).
        Called by the bank's validation once per question; the default has none."""
        return []

    def display_context(self, raw: Mapping, context: Mapping) -> dict:
        """What this kind's answer form needs to show the part in this variant (choice:
        its options in their shuffled order), which rendering puts on the rendered part
        as ``part.display``. A pure function of the raw part and ``context``, so a page
        shows the same form every time; raises ``SpecError`` for a broken part. The
        default needs nothing."""
        return {}

    def solution_value(self, raw: Mapping, context: Mapping):
        """The value a question's solution quotes as ``answers.<part_id>`` for this part
        (numeric: its reference), or None (the default) when the kind has none. Reads
        the raw part, so a solution renders without loading specs; raises whatever
        evaluating the author's expression raises (validation reports it)."""
        return None

    def read_scratchpad(self, spec: PartSpec, text: str) -> tuple:
        """For kinds with a scratchpad: each line's value or error (``StepRecord``s),
        for the live preview; nothing compared, nothing revealed. Never raises because
        of ``text``."""
        raise NotImplementedError(f"{self.name} parts have no scratchpad")

    def scratchpad_answer(self, spec: PartSpec, text: str) -> str | None:
        """For kinds with a scratchpad: the answer its answer line gives, as text
        ``grade`` reads, or None when the scratchpad has no readable answer line."""
        raise NotImplementedError(f"{self.name} parts have no scratchpad")

    def earlier_parts(self, spec: PartSpec) -> tuple[str, ...]:
        """The ids of the earlier parts whose answers this part's reference names
        (``answers.<part_id>``): the shell gives ``grade`` the candidate's own answers
        to those (``GIVEN_KEY``) when they were graded wrong. The default names none."""
        return ()

    def given_answer(self, spec: PartSpec, text: str) -> GivenAnswer | None:
        """A candidate's ``text`` for this part as a later part's ``answers.<id>`` would
        use it, or None when it does not read (or the kind has no value)."""
        return None

    def try_examples(self, spec: PartSpec, text: str, effects: Effects | None = None) -> Verdict:
        """Run ``text`` on the part's visible examples only, for kinds that have them
        (``has_examples``): a verdict whose feedback shows each example's outcome,
        never graded. Same error contract as ``grade``."""
        raise NotImplementedError(f"{self.name} parts have no visible examples")

    def score_rubric(self, spec: PartSpec, ticked_ids: Iterable[str]) -> float:
        """For self-assessed kinds: the score (0 to 1) for the rubric items a person
        ticked. Raises ``ValueError`` naming an id the rubric does not have."""
        raise NotImplementedError(f"{self.name} parts are not self-assessed")


def render_feedback(text: str, context) -> str:
    """An author's feedback with its ``{{ }}`` templates filled for this variant.

    Feedback is written like the rest of a question; a template that fails to render
    (validation reports it) falls back to the raw text rather than hiding the feedback.
    """
    if "{{" not in text:
        return text
    try:
        return render_template(text, context)
    except TemplateError:
        return text


# ---------------------------------------------------------------- shuffled displays


def variant_key(context: Mapping) -> str:
    """A text identifying the variant ``context`` was built for (the context holds no
    seed): each top-level value, by name, sorted; a catalogue entry (a param such as
    ``gpu``) by its own ``key``, a plain value (a plain param, a derived value) by its
    text; catalogue sections (mappings of entries) are skipped. Params and derived values
    are a pure function of the drawn choices, so the key is the same for every draw of
    one variant, in every process."""
    pieces = []
    for name in sorted(map(str, context)):
        value = context[name]
        if isinstance(value, Mapping):
            if isinstance(value.get("key"), str):
                pieces.append(f"{name}={value['key']}")
        elif isinstance(value, (str, numbers.Number, pint.Quantity)):
            pieces.append(f"{name}={value}")
    return ";".join(pieces)


def variant_shuffled(items, part_id: str, context: Mapping) -> list:
    """``items`` in the order one variant shows them (options, steps, the right-hand
    column): a shuffle seeded by the part's id and ``variant_key(context)``, so every
    page view, grading and process shows one variant the same order, and another
    variant another."""
    shuffled = list(items)
    random.Random(f"{part_id}|{variant_key(context)}").shuffle(shuffled)
    return shuffled
