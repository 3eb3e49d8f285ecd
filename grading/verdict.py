"""The verdict: what the engine says about one answer to one part."""

from __future__ import annotations

import enum
import html
from dataclasses import asdict, dataclass, fields


class SpeedCheckStatus(enum.StrEnum):
    """Whether an answer's speed was part of its score (``SpeedCheck.status``)."""

    MEASURED = "measured"  # timed on a device that can score it; counted, earned when ``passed``
    NOT_MEASURED = "not_measured"  # this grader cannot score speed: left out of the score, not zero
    SKIPPED = "skipped"  # speed counts on this grader, but a hidden test failed first: not timed, earns nothing


@dataclass(frozen=True)
class SpeedCheck:
    """The speed side of a verdict, as data for the pages and scorecards.

    ``share`` is the part of this verdict's score that speed carried: the part's stated
    share when speed counted (measured or skipped), 0 when it was not measured, so
    that the rest of the score is correctness alone. ``passed`` is True only when
    measured and every timed shape reached the part's bar. ``reason`` says in plain
    words why speed was not measured, or how the measurement compared."""

    status: SpeedCheckStatus
    share: float = 0.0
    passed: bool = False
    reason: str = ""

    def __post_init__(self):
        if not 0.0 <= self.share <= 1.0:
            raise ValueError(f"speed share must lie in [0, 1], got {self.share}")
        if self.status is SpeedCheckStatus.NOT_MEASURED and (self.share or self.passed):
            raise ValueError("speed that was not measured carries no share and cannot pass")

    @classmethod
    def from_dict(cls, data) -> SpeedCheck:
        if not isinstance(data, dict):
            raise ValueError("verdict 'speed' must be an object or null")
        try:
            status = SpeedCheckStatus(data.get("status"))
        except ValueError:
            raise ValueError(f"verdict speed status must be one of {', '.join(SpeedCheckStatus)}") from None
        share, passed, reason = data.get("share", 0.0), data.get("passed", False), data.get("reason", "")
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not isinstance(passed, bool) \
                or not isinstance(reason, str):
            raise ValueError("verdict speed needs a numeric share, a boolean passed and a text reason")
        return cls(status, float(share), passed, reason)


@dataclass(frozen=True)
class ExampleResult:
    """One visible example's fate in a run of the examples (code parts' "Run"), as data
    the pages lay out beside the example: ``outcome`` is ``passed`` or the code verdict
    (``wrong_answer``, ``runtime_error``, ...); ``got`` what the candidate's code
    returned, rendered ("" when it returned nothing readable); ``expected`` the result
    the statement shows; ``detail`` what went wrong, in the judge's words."""

    name: str
    outcome: str
    got: str = ""
    expected: str = ""
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


class Outcome(enum.StrEnum):
    """What a stored verdict comes to, in one word (``Verdict.outcome``)."""

    CORRECT = "correct"  # graded right: full marks
    PARTIAL = "partial"  # graded wrong, with some credit (test groups, multi-select options)
    WRONG = "wrong"  # graded wrong, no credit
    INVALID = "invalid"  # the answer could not be read: no attempt was spent
    UNJUDGED = "unjudged"  # read, but a person judges it (explanations), or nothing was graded


@dataclass(frozen=True)
class CaseRecord:
    """One test case of a code or kernel run, kept with the verdict so pages and
    exports can list them: its ``name`` and ``group``, whether it is a ``visible``
    example, its ``outcome`` (``accepted`` or the code verdict that failed it) and
    ``detail`` (what went wrong, in the words the run may use: a hidden case is
    described by name, group and shapes only, never its inputs)."""

    name: str
    group: str
    visible: bool
    outcome: str
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome == "accepted"

    @property
    def outcome_label(self) -> str:
        return self.outcome.replace("_", " ").capitalize()


@dataclass(frozen=True)
class StepRecord:
    """One line of a numeric part's scratchpad, as graded (``Verdict.steps``).

    ``line`` is its 1-based line number; ``name`` the step's name ("" for a line with no
    ``name =``); ``text`` the expression as typed; ``value`` its value in sensible units
    ("" when it could not be read, then ``error`` says where and why). ``matched`` is the
    plain name of the reference intermediate it matched ("weight bytes"), ``mistake``
    the listed mistake whose intermediate it matched (``mistakes[4]``) with that
    mistake's ``feedback``; neither when it matched nothing expected. ``depends_on``
    are the line numbers of the earlier steps it uses; ``is_answer`` marks the answer
    line. ``expected`` is set on the first wrong step only: what the reference has
    there. It is part of the verdict, like ``Verdict.expected``, and the pages show it
    only once the part is solved or given up."""

    line: int
    name: str
    text: str
    value: str = ""
    error: str = ""
    matched: str = ""
    mistake: str | None = None
    feedback: str = ""
    depends_on: tuple[int, ...] = ()
    is_answer: bool = False
    expected: str = ""

    @property
    def status(self) -> str:
        """In one word: ``error``, ``intermediate``, ``mistake`` or ``unmatched``."""
        if self.error:
            return "error"
        if self.matched:
            return "intermediate"
        return "mistake" if self.mistake else "unmatched"


@dataclass(frozen=True)
class CarriedCredit:
    """Credit carried forward (``Verdict.carried``): this part's reference names earlier
    parts (``answers.<part_id>``) that the candidate answered wrong, and the answer was
    compared with the reference recomputed from the candidate's own values.
    ``parts`` and ``values`` are those parts and the candidate's values, as shown
    ("131 kB"); ``consistent`` says whether the answer matched the recomputed
    reference (then the verdict carries the credit)."""

    parts: tuple[str, ...]
    values: tuple[str, ...]
    consistent: bool


@dataclass(frozen=True)
class Verdict:
    """The outcome of ``interpret`` or ``grade``.

    - ``valid``: the answer could be read. An invalid answer costs the candidate no
      attempt; the caller decides that from this flag.
    - ``correct``: True/False once graded; None when a person must judge (explain
      parts) or when nothing was graded (``interpret``).
    - ``score``: 0..1 for this part (partial credit lies between).
    - ``interpreted`` / ``interpreted_html``: what the engine understood, as plain text
      and as HTML (MathML for formulas, escaped text otherwise).
    - ``feedback``: plain words for the candidate; never reveals the reference.
    - ``mistake``: which listed mistake or classic slip was recognized, if any.
    - ``expected``: the reference, rendered, to reveal after answering ("" from
      ``interpret`` and for invalid answers).
    - ``speed``: for kinds that time the answer (kernels), whether speed was measured
      and counted (``SpeedCheck``); None for every other kind.
    - ``examples``: per visible example, its result (``ExampleResult``), for a run of
      the visible examples; empty otherwise. Never holds a hidden case.
    - ``cases``: for a graded code or kernel answer, every case it ran (``CaseRecord``),
      in order; empty for other kinds and for a run that failed as a whole.
    - ``rubric_ticked``: for a self-assessed answer, the rubric items the candidate
      ticked; None until they assess it.
    - ``steps``: a numeric answer's scratchpad, line by line (``StepRecord``); empty
      when no working was given.
    - ``first_wrong_step``: the line number of the first step of the working that went
      wrong (its record carries what was expected there); None when none did or there
      was no working.
    - ``step_credit``: the score the working earned by the scratchpad rule (right up to
      one slip), 0 when it earned none; ``score`` already includes it.
    - ``carried``: credit carried forward from earlier parts (``CarriedCredit``); None
      where the part's reference names no earlier part answered wrong.

    ``outcome`` sums it up (``Outcome``); ``to_dict`` stores it beside the fields, so
    queries can filter on it.
    """

    valid: bool
    correct: bool | None
    score: float
    interpreted: str = ""
    interpreted_html: str = ""
    feedback: str = ""
    mistake: str | None = None
    expected: str = ""
    speed: SpeedCheck | None = None
    examples: tuple[ExampleResult, ...] = ()
    cases: tuple[CaseRecord, ...] = ()
    rubric_ticked: tuple[str, ...] | None = None
    steps: tuple[StepRecord, ...] = ()
    first_wrong_step: int | None = None
    step_credit: float = 0.0
    carried: CarriedCredit | None = None

    @property
    def outcome(self) -> Outcome:
        if not self.valid:
            return Outcome.INVALID
        if self.correct is None:
            return Outcome.UNJUDGED
        if self.correct:
            return Outcome.CORRECT
        return Outcome.PARTIAL if self.score > 0 else Outcome.WRONG

    @property
    def cases_passed(self) -> int:
        return sum(1 for case in self.cases if case.passed)

    def __post_init__(self):
        if not 0.0 <= self.score <= 1.0:
            raise ValueError(f"score must lie in [0, 1], got {self.score}")
        if not self.valid and self.correct:
            raise ValueError("an invalid answer cannot be correct")

    @classmethod
    def invalid(cls, message: str, interpreted: str = "") -> Verdict:
        """An answer that could not be read: ``message`` says where and why."""
        return cls(valid=False, correct=False, score=0.0, interpreted=interpreted,
                   interpreted_html=html.escape(interpreted), feedback=message)

    def to_dict(self) -> dict:
        """A JSON-ready dict, with ``outcome`` beside the fields;
        ``Verdict.from_dict(v.to_dict()) == v``."""
        return {**asdict(self), "outcome": self.outcome.value}

    @classmethod
    def from_dict(cls, data: dict) -> Verdict:
        """Rebuild a verdict stored with ``to_dict``. Unknown keys are ignored (so older
        rows survive added fields); wrong types raise ``ValueError``."""
        known = {field.name for field in fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        if not isinstance(values.get("valid"), bool):
            raise ValueError("verdict needs a boolean 'valid'")
        if values.get("correct") not in (True, False, None):
            raise ValueError("verdict 'correct' must be true, false or null")
        score = values.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ValueError("verdict needs a numeric 'score'")
        values["score"] = float(score)
        for name in ("interpreted", "interpreted_html", "feedback", "expected"):
            if not isinstance(values.setdefault(name, ""), str):
                raise ValueError(f"verdict '{name}' must be a string")
        mistake = values.setdefault("mistake", None)
        if mistake is not None and not isinstance(mistake, str):
            raise ValueError("verdict 'mistake' must be a string or null")
        speed = values.setdefault("speed", None)
        if speed is not None:
            values["speed"] = SpeedCheck.from_dict(speed)
        values["examples"] = _examples_from_list(values.get("examples", ()))
        values["cases"] = _cases_from_list(values.get("cases", ()))
        ticked = values.get("rubric_ticked")
        if ticked is not None:
            if not isinstance(ticked, (list, tuple)) or not all(isinstance(item, str) for item in ticked):
                raise ValueError("verdict 'rubric_ticked' must be a list of ids or null")
            values["rubric_ticked"] = tuple(ticked)
        values["steps"] = _steps_from_list(values.get("steps", ()))
        first_wrong = values.get("first_wrong_step")
        if first_wrong is not None and (isinstance(first_wrong, bool) or not isinstance(first_wrong, int)):
            raise ValueError("verdict 'first_wrong_step' must be a line number or null")
        credit = values.get("step_credit", 0.0)
        if isinstance(credit, bool) or not isinstance(credit, (int, float)):
            raise ValueError("verdict 'step_credit' must be a number")
        values["step_credit"] = float(credit)
        carried = values.get("carried")
        if carried is not None:
            values["carried"] = _carried_from_dict(carried)
        return cls(**values)


def _examples_from_list(items) -> tuple[ExampleResult, ...]:
    if not isinstance(items, (list, tuple)):
        raise ValueError("verdict 'examples' must be a list")
    known = {field.name for field in fields(ExampleResult)}
    examples = []
    for item in items:
        if not isinstance(item, dict) or not all(isinstance(item.get(key, ""), str) for key in known) \
                or not {"name", "outcome"} <= set(item):
            raise ValueError("each of verdict 'examples' needs text name, outcome, got, expected, detail")
        examples.append(ExampleResult(**{key: value for key, value in item.items() if key in known}))
    return tuple(examples)


def _cases_from_list(items) -> tuple[CaseRecord, ...]:
    if not isinstance(items, (list, tuple)):
        raise ValueError("verdict 'cases' must be a list")
    cases = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("visible"), bool) or not all(
                isinstance(item.get(key, ""), str) for key in ("name", "group", "outcome", "detail")):
            raise ValueError("each of verdict 'cases' needs text name, group, outcome, detail and a boolean visible")
        cases.append(CaseRecord(item.get("name", ""), item.get("group", ""), item["visible"],
                                item.get("outcome", ""), item.get("detail", "")))
    return tuple(cases)


def _steps_from_list(items) -> tuple[StepRecord, ...]:
    if not isinstance(items, (list, tuple)):
        raise ValueError("verdict 'steps' must be a list")
    steps = []
    texts = ("name", "text", "value", "error", "matched", "feedback", "expected")
    for item in items:
        if not isinstance(item, dict) or isinstance(item.get("line"), bool) or not isinstance(item.get("line"), int) \
                or not all(isinstance(item.get(key, ""), str) for key in texts) \
                or not isinstance(item.get("is_answer", False), bool) \
                or not (item.get("mistake") is None or isinstance(item.get("mistake"), str)):
            raise ValueError("each of verdict 'steps' needs an integer line, text fields and a boolean is_answer")
        depends = item.get("depends_on", ())
        if not isinstance(depends, (list, tuple)) or not all(
                isinstance(line, int) and not isinstance(line, bool) for line in depends):
            raise ValueError("verdict step 'depends_on' must be a list of line numbers")
        steps.append(StepRecord(line=item["line"], **{key: item.get(key, "") for key in texts},
                                mistake=item.get("mistake"), depends_on=tuple(depends),
                                is_answer=item.get("is_answer", False)))
    return tuple(steps)


def _carried_from_dict(data) -> CarriedCredit:
    if not isinstance(data, dict) or not isinstance(data.get("consistent"), bool):
        raise ValueError("verdict 'carried' must be an object with a boolean consistent")
    parts, values = data.get("parts", ()), data.get("values", ())
    if not all(isinstance(items, (list, tuple)) and all(isinstance(item, str) for item in items)
               for items in (parts, values)):
        raise ValueError("verdict 'carried' needs lists of text parts and values")
    return CarriedCredit(tuple(parts), tuple(values), data["consistent"])
