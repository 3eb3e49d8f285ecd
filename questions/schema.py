"""The shape of a question file, as typed data, and the structural checks behind it.

`check_structure(data, lines, source)` finds every structural problem in a parsed file
(missing keys, wrong types, unknown topic, ...). `Question.from_data(data)` turns data
that passed those checks into frozen dataclasses; on data that did not pass, it may
raise. Both are pure Python: the Django models store the same data as JSON and call
`Question.from_data` when they need it typed.

The part-kind-specific fields (numeric `answer`/`unit`, formula `symbols`, ...) are
checked by the kind's own `load_spec` in the grading engine; here they are only carried.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from grading import registry
from grading.kinds.base import is_id
from questions.loader import GENERATOR_SUFFIX, LineMap, Problem

SEED_COUNT = 135  # questions in shared/seed/questions.md; `seed` is a number in 1..SEED_COUNT
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # params and derived names
CATALOGUE_SECTIONS = ("gpus", "models", "dtypes", "links")
DEFAULT_HINT_COST = 0.1
DEFAULT_CHECK_RTOL = 0.02


class Topic(enum.Enum):
    """The eleven topics; the value is the key used in files and folder names."""

    ROOFLINE = "roofline"
    KV_CACHE = "kv-cache"
    SCHEDULING = "scheduling"
    ATTENTION = "attention"
    KERNELS = "kernels"
    QUANTIZATION = "quantization"
    SPECULATIVE = "speculative"
    PARALLELISM = "parallelism"
    SERVING = "serving"
    FLEET = "fleet"
    DEBUGGING = "debugging"

    @property
    def label(self) -> str:
        return TOPIC_LABELS[self]


TOPIC_LABELS = {
    Topic.ROOFLINE: "Roofline and hardware",
    Topic.KV_CACHE: "KV cache and memory",
    Topic.SCHEDULING: "Scheduling and batching",
    Topic.ATTENTION: "Attention",
    Topic.KERNELS: "GPU kernels",
    Topic.QUANTIZATION: "Quantization and numerics",
    Topic.SPECULATIVE: "Sampling and speculative decoding",
    Topic.PARALLELISM: "Parallelism and networking",
    Topic.SERVING: "Serving engines",
    Topic.FLEET: "Fleet design and cost",
    Topic.DEBUGGING: "Debugging and observability",
}

TOPIC_KEYS = tuple(topic.value for topic in Topic)


@dataclass(frozen=True)
class Param:
    """One variant parameter: each attempt draws one of `choices`."""

    name: str
    choices: tuple
    catalogue: str | None = None


@dataclass(frozen=True)
class Part:
    """One answerable part. `raw` is the part's mapping as written, which the grading
    kind turns into its own spec with `load_spec(raw)`.

    `unit`, `symbols`, `rubric` and `model_answer` read the keys of the kinds that have
    them (FORMAT.md); each kind's `load_spec` refuses keys it does not know, so on any
    other kind they are empty."""

    id: str
    kind: str
    prompt: str
    points: float
    raw: dict

    @functools.cached_property
    def engine(self):
        """The part's answer kind (`grading.kinds.base.AnswerKind`): what it can do, and
        the templates the pages include for it. Raises `SpecError` for an unknown kind."""
        return registry.get_kind(self.kind)

    @property
    def unit(self) -> str | None:
        return self.raw.get("unit")

    @property
    def symbols(self) -> dict:
        return dict(self.raw.get("symbols") or {})

    @property
    def rubric(self) -> list[dict]:
        return list(self.raw.get("rubric") or [])

    @property
    def model_answer(self) -> str:
        return str(self.raw.get("model_answer") or "")

    @property
    def mistakes(self) -> list[dict]:
        return list(self.raw.get("mistakes") or [])

    @property
    def is_auto_graded(self) -> bool:
        return self.engine.auto_graded


@dataclass(frozen=True)
class Check:
    """A seed figure the question reproduces: `expr` evaluates to `equals` within `rtol`
    for the variant picked by `when` (other params take their first choice)."""

    expr: str
    equals: Any
    rtol: float = DEFAULT_CHECK_RTOL
    when: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    slug: str
    seed: int
    title: str
    topic: Topic
    difficulty: int
    summary: str
    statement: str
    parts: tuple[Part, ...]
    solution: str
    tags: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    derived: dict = field(default_factory=dict)
    hints: tuple[str, ...] = ()
    hint_cost: float = DEFAULT_HINT_COST
    followups: tuple[str, ...] = ()
    notes: str = ""
    checks: tuple[Check, ...] = ()
    interview_only: bool = False
    generator: str = ""  # a lab's generator file, relative to the bank (FORMAT.md, "Labs")
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def params_spec(self) -> dict:
        """The `params` mapping as written: what grading.variants takes."""
        return dict(self.raw.get("params") or {})

    def part(self, part_id: str) -> Part:
        for part in self.parts:
            if part.id == part_id:
                return part
        raise KeyError(part_id)

    @classmethod
    def from_data(cls, data: dict) -> "Question":
        """Build from parsed file data that passed `check_structure`."""
        params = tuple(
            Param(name, tuple(spec["choices"]), spec.get("catalogue"))
            for name, spec in (data.get("params") or {}).items()
        )
        parts = tuple(
            Part(raw["id"], raw["kind"], raw.get("prompt", ""), float(raw.get("points", 1)), dict(raw))
            for raw in data["parts"]
        )
        checks = tuple(
            Check(raw["expr"], raw["equals"], float(raw.get("rtol", DEFAULT_CHECK_RTOL)), dict(raw.get("when") or {}))
            for raw in data.get("checks") or []
        )
        return cls(
            slug=data["slug"],
            seed=data["seed"],
            title=data["title"],
            topic=Topic(data["topic"]),
            difficulty=data["difficulty"],
            summary=data["summary"].strip(),
            statement=data["statement"],
            parts=parts,
            solution=data["solution"],
            tags=tuple(data.get("tags") or ()),
            params=params,
            derived=dict(data.get("derived") or {}),
            hints=tuple(data.get("hints") or ()),
            hint_cost=float(data.get("hint_cost", DEFAULT_HINT_COST)),
            followups=tuple(data.get("followups") or ()),
            notes=data.get("notes") or "",
            checks=checks,
            interview_only=bool(data.get("interview_only", False)),
            generator=data.get("generator") or "",
            raw=data,
        )


# ---------------------------------------------------------------- structural checks

REQUIRED_KEYS = ("slug", "seed", "title", "topic", "difficulty", "summary", "statement", "parts", "solution")
OPTIONAL_KEYS = (
    "tags", "params", "derived", "hints", "hint_cost", "followups", "notes", "checks", "interview_only",
    "generator",
)
PART_COMMON_KEYS = ("id", "kind", "prompt", "points")
CHECK_KEYS = ("expr", "equals", "rtol", "when")
PARAM_KEYS = ("catalogue", "choices")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_text(value: object) -> bool:
    return isinstance(value, str) and value.strip() != ""


class _Reporter:
    """Collects problems for one file, placing each at the line of the path it names."""

    def __init__(self, source: str, lines: LineMap):
        self.source = source
        self.lines = lines
        self.problems: list[Problem] = []

    def add(self, path: tuple, message: str) -> None:
        self.problems.append(Problem(self.source, self.lines.line_of(path), message))


def check_structure(data: object, lines: LineMap, source: str, known_kinds=None) -> list[Problem]:
    """Every structural problem in one parsed question file (empty list: well formed).
    `known_kinds` defaults to the grading registry's kinds."""
    known_kinds = registry.kinds() if known_kinds is None else known_kinds
    report = _Reporter(source, lines)
    if not isinstance(data, dict):
        report.add((), "a question file must be a mapping of keys (slug, title, ...)")
        return report.problems
    for key in REQUIRED_KEYS:
        if key not in data:
            report.add((), f"missing required key {key!r}")
    for key in data:
        if key not in REQUIRED_KEYS and key not in OPTIONAL_KEYS:
            report.add((key,), f"unknown key {key!r}")
    _check_top_level_values(data, report)
    param_names = _check_params(data.get("params"), report)
    _check_derived(data.get("derived"), param_names, report)
    _check_parts(data.get("parts"), report, known_kinds)
    _check_checks(data.get("checks"), data.get("params"), report)
    return report.problems


def _check_top_level_values(data: dict, report: _Reporter) -> None:
    slug = data.get("slug")
    if "slug" in data and not (isinstance(slug, str) and SLUG_PATTERN.match(slug)):
        report.add(("slug",), f"slug {slug!r} must be lowercase words joined by '-' ([a-z0-9-]+)")
    seed = data.get("seed")
    if "seed" in data and not (isinstance(seed, int) and not isinstance(seed, bool) and 1 <= seed <= SEED_COUNT):
        report.add(("seed",), f"seed {seed!r} must be a whole number from 1 to {SEED_COUNT}")
    topic = data.get("topic")
    if "topic" in data and topic not in TOPIC_KEYS:
        report.add(("topic",), f"unknown topic {topic!r}; one of: {', '.join(TOPIC_KEYS)}")
    difficulty = data.get("difficulty")
    is_whole = isinstance(difficulty, int) and not isinstance(difficulty, bool)
    if "difficulty" in data and not (is_whole and difficulty in (1, 2, 3)):
        report.add(("difficulty",), f"difficulty {difficulty!r} must be 1, 2 or 3")
    for key in ("title", "summary", "statement", "solution"):
        if key in data and not _is_text(data[key]):
            report.add((key,), f"{key!r} must be non-empty text")
    if "notes" in data and not isinstance(data["notes"], str):
        report.add(("notes",), "'notes' must be text")
    for key in ("tags", "hints", "followups"):
        if key in data and data[key] is not None:
            if not isinstance(data[key], list):
                report.add((key,), f"{key!r} must be a list of text")
                continue
            for index, item in enumerate(data[key]):
                if not _is_text(item):
                    report.add((key, index), f"{key}[{index}] must be non-empty text")
    if "hint_cost" in data and not (_is_number(data["hint_cost"]) and 0 <= data["hint_cost"] <= 1):
        report.add(("hint_cost",), "'hint_cost' must be a number from 0 to 1")
    if "interview_only" in data and not isinstance(data["interview_only"], bool):
        # A typo such as `interview_only: yes please` must not quietly publish the answers.
        report.add(("interview_only",), "'interview_only' must be true or false")
    _check_generator(data, report)


def _check_generator(data: dict, report: _Reporter) -> None:
    """A lab's `generator:` names a `.lab.py` file; its values live under `lab`, which
    no param or derived name may take."""
    if "generator" not in data:
        return
    generator = data["generator"]
    if not (isinstance(generator, str) and generator.endswith(GENERATOR_SUFFIX)):
        report.add(("generator",), f"'generator' must be a path like <topic>/<file>{GENERATOR_SUFFIX}")
    for section in ("params", "derived"):
        if isinstance(data.get(section), dict) and "lab" in data[section]:
            report.add((section, "lab"), "the name 'lab' holds the generator's values; pick another")


def _check_params(params: object, report: _Reporter) -> set[str]:
    if params is None:
        return set()
    if not isinstance(params, dict):
        report.add(("params",), "'params' must map each parameter name to {choices: [...]}")
        return set()
    for name, spec in params.items():
        path = ("params", name)
        if not NAME_PATTERN.match(name):
            report.add(path, f"parameter name {name!r} must be an identifier (letters, digits, _)")
        if not isinstance(spec, dict):
            report.add(path, f"parameter {name!r} must be a mapping with 'choices'")
            continue
        for key in spec:
            if key not in PARAM_KEYS:
                report.add(path + (key,), f"parameter {name!r}: unknown key {key!r}")
        choices = spec.get("choices")
        if not isinstance(choices, list) or not choices:
            report.add(path, f"parameter {name!r} needs a non-empty list of 'choices'")
        elif len(set(map(repr, choices))) != len(choices):
            report.add(path + ("choices",), f"parameter {name!r} lists a choice twice")
        elif any(not (_is_number(choice) or isinstance(choice, str)) for choice in choices):
            report.add(path + ("choices",), f"parameter {name!r}: choices must be numbers or text")
        section = spec.get("catalogue")
        if section is not None and section not in CATALOGUE_SECTIONS:
            report.add(path + ("catalogue",),
                       f"unknown catalogue section {section!r}; one of: {', '.join(CATALOGUE_SECTIONS)}")
    return set(params)


def _check_derived(derived: object, param_names: set[str], report: _Reporter) -> None:
    if derived is None:
        return
    if not isinstance(derived, dict):
        report.add(("derived",), "'derived' must map each name to an expression")
        return
    for name, expression in derived.items():
        path = ("derived", name)
        if not NAME_PATTERN.match(name):
            report.add(path, f"derived name {name!r} must be an identifier (letters, digits, _)")
        if name in param_names:
            report.add(path, f"derived name {name!r} is already a parameter")
        if not (isinstance(expression, str) and expression.strip()) and not _is_number(expression):
            report.add(path, f"derived {name!r} must be an expression")


def _check_parts(parts: object, report: _Reporter, known_kinds) -> None:
    if parts is None:
        return
    if not isinstance(parts, list) or not parts:
        report.add(("parts",), "'parts' must be a non-empty list")
        return
    seen_ids: dict[str, int] = {}
    auto_graded_kinds = registry.kinds_with("auto_graded")
    auto_graded = 0
    for index, part in enumerate(parts):
        path = ("parts", index)
        if not isinstance(part, dict):
            report.add(path, f"part {index + 1} must be a mapping with id, kind and prompt")
            continue
        part_id = part.get("id")
        if not is_id(part_id):
            report.add(path + ("id",), f"part {index + 1}: id {part_id!r} must match [a-z0-9_-]+")
        elif part_id in seen_ids:
            report.add(path + ("id",), f"part id {part_id!r} is used twice (also part {seen_ids[part_id]})")
        else:
            seen_ids[part_id] = index + 1
        kind = part.get("kind")
        if kind not in known_kinds:
            report.add(path + ("kind",), f"part {part_id!r}: unknown kind {kind!r}; one of: {', '.join(known_kinds)}")
        elif kind in auto_graded_kinds:
            auto_graded += 1
        if not _is_text(part.get("prompt")):
            report.add(path + ("prompt",), f"part {part_id!r} needs a non-empty 'prompt'")
        points = part.get("points", 1)
        if not (_is_number(points) and points > 0):
            report.add(path + ("points",), f"part {part_id!r}: 'points' must be a positive number")
    if auto_graded == 0:
        report.add(("parts",), f"at least one part must be auto-graded ({', '.join(auto_graded_kinds)})")


def _check_checks(checks: object, params: object, report: _Reporter) -> None:
    if checks is None:
        return
    if not isinstance(checks, list):
        report.add(("checks",), "'checks' must be a list of {expr, equals}")
        return
    params = params if isinstance(params, dict) else {}
    for index, check in enumerate(checks):
        path = ("checks", index)
        if not isinstance(check, dict):
            report.add(path, f"checks[{index}] must be a mapping with 'expr' and 'equals'")
            continue
        for key in check:
            if key not in CHECK_KEYS:
                report.add(path + (key,), f"checks[{index}]: unknown key {key!r}")
        if not (isinstance(check.get("expr"), str) and check["expr"].strip()):
            report.add(path, f"checks[{index}] needs an 'expr'")
        equals = check.get("equals")
        if not (_is_number(equals) or _is_text(equals)):
            report.add(path, f"checks[{index}] needs 'equals': a quantity ('2.7 GB') or a number")
        rtol = check.get("rtol", DEFAULT_CHECK_RTOL)
        if not (_is_number(rtol) and rtol >= 0):
            report.add(path + ("rtol",), f"checks[{index}]: 'rtol' must be a non-negative number")
        when = check.get("when") or {}
        if not isinstance(when, dict):
            report.add(path + ("when",), f"checks[{index}]: 'when' must map parameters to choices")
            continue
        for name, choice in when.items():
            spec = params.get(name)
            if not isinstance(spec, dict):
                report.add(path + ("when", name), f"checks[{index}]: 'when' names {name!r}, which is not a parameter")
            elif choice not in (spec.get("choices") or []):
                report.add(path + ("when", name), f"checks[{index}]: {choice!r} is not one of {name!r}'s choices")
