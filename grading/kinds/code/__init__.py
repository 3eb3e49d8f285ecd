"""Code parts: the candidate writes Python; the sandbox runs it against hidden tests.

``interpret`` only reads the text (size cap, ``ast.parse``, the entrypoint defined at
top level) and never runs anything. ``grade`` runs it in the sandbox through
``grading.judge`` on the visible examples and on hidden cases drawn from a secret seed:
``context["judge_seed"]`` when the caller fixes one (tests, ``manage.py grade --seed``),
else a fresh one from ``secrets`` for every submission. The seed is never shown. The
code verdict (accepted, wrong_answer, runtime_error, time_limit, memory_limit,
output_limit, rejected) is ``Verdict.mistake``; ``feedback`` is the summary.
FORMAT.md, "code parts", is the spec format.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

from grading.effects import Effects
from grading.judge import validation
from grading.judge.contract import JudgeNotFound
from grading.judge.feedback import GroupSpec, verdict_from_report
from grading.judge.runner import Outcome, judge_submission
from grading.kinds.base import AnswerKind, SpecError, common_fields, is_id, require_text
from grading.kinds.programs import (
    MAX_SOURCE_BYTES,
    ProgramSolution,
    ProgramSpec,
    example_row,
    load_limits,
    load_program_fields,
    load_solutions,
    read_source,
    shorten,
    submission_seed,
)
from grading.machine import local_effects
from grading.sandbox import Limits, SandboxError
from grading.verdict import ExampleResult, Verdict

# Generous for a cold interpreter that imports torch (seconds of CPU on its own); the
# hidden tests themselves take well under a second for a reasonable solution.
DEFAULT_LIMITS = {"cpu_seconds": 10.0, "wall_seconds": 20.0, "memory_mb": 1024}


@dataclass(frozen=True)
class CodeExample:
    """A visible example as the statement shows it; the judge's ``examples()`` case of
    the same name is what runs."""

    name: str
    call: str
    result: str


@dataclass(frozen=True)
class CodeSpec(ProgramSpec):
    default_limits: ClassVar[dict] = DEFAULT_LIMITS

    examples: tuple[CodeExample, ...] = ()
    groups: tuple[GroupSpec, ...] = ()


class CodeKind(AnswerKind):
    """``code`` parts (FORMAT.md, "code parts")."""

    name = "code"
    runs_in_sandbox = True
    has_examples = True
    uses_editor = True
    multiline_answer = True
    answer_template = "kinds/code/answer.html"
    # Judging runs many sandboxed cases, each under its own wall limit, behind a queue.
    grading_deadline = timedelta(minutes=10)
    max_answer_chars = MAX_SOURCE_BYTES
    keys = frozenset({"entrypoint", "judge", "starter", "examples", "groups", "solutions", "limits"})

    # ------------------------------------------------------------ the spec

    def load_spec(self, raw: Mapping) -> CodeSpec:
        common = common_fields(raw, self.name, self.keys)
        entrypoint, judge = load_program_fields(raw, read_source)
        return CodeSpec(**common, entrypoint=entrypoint, judge=judge, starter=raw["starter"],
                        examples=_load_examples(raw), groups=_load_groups(raw),
                        solutions=_load_solutions(raw, entrypoint), limits=load_limits(raw))

    # ------------------------------------------------------------ the answer

    def interpret(self, spec: CodeSpec, text: str, context: Mapping) -> Verdict:
        reading = read_source(text, spec.entrypoint)
        if isinstance(reading, Verdict):
            return reading
        return Verdict(valid=True, correct=None, score=0.0, interpreted=reading,
                       interpreted_html=html.escape(reading))

    def grade(self, spec: CodeSpec, text: str, context: Mapping, effects: Effects | None = None) -> Verdict:
        reading, report = _judge(spec, text, submission_seed(context), effects or local_effects())
        if report is None:
            return reading
        return verdict_from_report(report, spec.groups, reading, limits_text(spec))

    def display_context(self, raw: Mapping, context: Mapping) -> dict:
        """``examples``: the part's visible examples as the statement gives them, each
        {name, inputs (the call), shapes (""), expected (the result shown)}, cut to a
        line. Reads only the YAML's ``examples`` (public by design): never the judge,
        its hidden cases or a seed. A part without examples has none to show."""
        if not raw.get("examples"):
            return {"examples": []}
        return {"examples": [example_row(example.name, example.call, example.result)
                             for example in _load_examples(raw)]}

    def try_examples(self, spec: CodeSpec, text: str, effects: Effects | None = None) -> Verdict:
        """Run ``text`` on the visible examples only (the editor's "run" button): one
        line per example in ``feedback`` and, as data, each example's ``ExampleResult``
        in ``examples`` (what it returned beside the result the statement shows);
        ``correct`` None and score 0 (nothing is graded, no hidden case is drawn). Same
        sandbox, same limits as ``grade``."""
        reading, report = _judge(spec, text, None, effects or local_effects())
        if report is None:
            return reading
        if not report.results:
            summary = verdict_from_report(report, (), reading, limits_text(spec)).feedback
        else:
            summary = "\n".join(
                f"{'passed' if result.passed else result.outcome.label.lower()}: {result.case.name}"
                + ("" if result.passed else f" ({result.detail})") for result in report.results)
        shown = {example.name: example.result for example in spec.examples}
        examples = tuple(
            ExampleResult(name=result.case.name, outcome="passed" if result.passed else result.outcome.value,
                          got=shorten(result.got), expected=shorten(shown.get(result.case.name, "")),
                          detail=result.detail)
            for result in report.results if result.visible)
        return Verdict(valid=True, correct=None, score=0.0, interpreted=reading,
                       interpreted_html=html.escape(reading), feedback=summary, mistake=report.outcome.value,
                       examples=examples)

    def reference_answer(self, spec: CodeSpec, context: Mapping) -> str:
        return spec.reference_source

    def mistake_answers(self, spec: CodeSpec, context: Mapping) -> list[tuple[str, str]]:
        """Each wrong example solution and its verdict name (what ``Verdict.mistake``
        holds when it is graded)."""
        return [(solution.code, solution.verdict) for solution in spec.solutions
                if solution.verdict != Outcome.ACCEPTED]

    def validate_part(self, spec: CodeSpec, context: Mapping, effects: Effects | None = None) -> list[str]:
        return validate_code_part(spec, context, effects=effects)


def _judge(spec: CodeSpec, text: str, seed: int | None, effects: Effects):
    """(description, JudgeReport) for code that was run; (invalid Verdict, None) for code
    that cannot be read or could not be run (no sandbox, or the sandbox failed), which
    costs the candidate nothing."""
    reading = read_source(text, spec.entrypoint)
    if isinstance(reading, Verdict):
        return reading, None
    unavailable = effects.sandbox_unavailable()
    if unavailable:
        return Verdict.invalid(f"Code cannot be run on this server right now ({unavailable}); "
                               "this answer was not graded.", reading), None
    try:
        judge = effects.load_judge(spec.judge, spec.id)
    except JudgeNotFound as error:
        raise SpecError(str(error), "judge") from None
    try:
        return reading, judge_submission(judge=judge, source=text, entrypoint=spec.entrypoint, seed=seed,
                                         limits=sandbox_limits(spec), run_python=effects.run_python)
    except SandboxError as error:
        return Verdict.invalid(f"The sandbox failed before running this answer ({error}); "
                               "it was not graded. Please submit again.", reading), None


# ---------------------------------------------------------------- limits


def sandbox_limits(spec: CodeSpec) -> Limits:
    limits = spec.limits_dict
    return Limits(cpu_seconds=limits["cpu_seconds"], wall_seconds=limits["wall_seconds"],
                  memory_bytes=int(limits["memory_mb"]) << 20)


def limits_text(spec: CodeSpec) -> str:
    limits = spec.limits_dict
    return f"{limits['cpu_seconds']:g} s CPU, {limits['wall_seconds']:g} s wall, {limits['memory_mb']} MB"


# ---------------------------------------------------------------- spec pieces


def _load_examples(raw: Mapping) -> tuple[CodeExample, ...]:
    items = raw.get("examples")
    if not isinstance(items, list) or not items:
        raise SpecError("needs a non-empty list of {name, call, result}", "examples")
    examples = []
    for index, item in enumerate(items):
        label = f"examples[{index}]"
        if not isinstance(item, Mapping) or set(item) != {"name", "call", "result"}:
            raise SpecError("must be {name, call, result}", label)
        examples.append(CodeExample(*(require_text(item, key, label=f"{label}.{key}")
                                      for key in ("name", "call", "result"))))
    names = [example.name for example in examples]
    if len(set(names)) != len(names):
        raise SpecError("example names must be unique", "examples")
    return tuple(examples)


def _load_groups(raw: Mapping) -> tuple[GroupSpec, ...]:
    items = raw.get("groups", [])
    if not isinstance(items, list):
        raise SpecError("must be a list of {id, points, description}", "groups")
    groups = []
    for index, item in enumerate(items):
        label = f"groups[{index}]"
        if not isinstance(item, Mapping) or not {"id", "points"} <= set(item) <= {"id", "points", "description"}:
            raise SpecError("must be {id, points, description}", label)
        if not is_id(item["id"]):
            raise SpecError("must be a-z, 0-9, '_' or '-'", f"{label}.id")
        points = item["points"]
        if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
            raise SpecError("must be a positive number", f"{label}.points")
        groups.append(GroupSpec(item["id"], float(points), str(item.get("description", ""))))
    if len({group.id for group in groups}) != len(groups):
        raise SpecError("group ids must be unique", "groups")
    return tuple(groups)


def _load_solutions(raw: Mapping, entrypoint: str) -> tuple[ProgramSolution, ...]:
    group_ids = {group.id for group in _load_groups(raw)}
    return load_solutions(raw, entrypoint, verdicts=[outcome.value for outcome in Outcome], read=read_source,
                          group_ids=group_ids)


def validate_code_part(spec, context: Mapping, *, run_solutions: bool = True, require_sandbox: bool = True,
                       seeds: tuple[int, ...] = validation.CHECK_SEEDS, effects: Effects | None = None) -> list[str]:
    """Problems with code part ``spec`` (a raw mapping or a loaded ``CodeSpec``), as
    messages; empty when it is sound. The judge's own checks are
    ``grading.judge.validation.check_code_judge``; then every listed solution runs in the
    sandbox and must get its stated verdict (on two seeds when accepted).
    ``run_solutions=False`` does only the trusted-side checks (fast, no sandbox). Without
    a sandbox the solutions cannot be run: that is one problem when ``require_sandbox``,
    else those checks are skipped. ``context`` is accepted for symmetry with the other
    kinds; code parts do not depend on variants. ``effects`` as for ``grade``."""
    effects = effects or local_effects()
    try:
        spec = spec if isinstance(spec, CodeSpec) else CodeKind().load_spec(spec)
        judge = effects.load_judge(spec.judge, spec.id)
    except (SpecError, JudgeNotFound) as error:
        part_id = spec.id if isinstance(spec, CodeSpec) else (spec.get("id") if isinstance(spec, Mapping) else None)
        return [f"part {part_id!r}: {error}"]
    problems = [f"part {spec.id!r}: {problem}" for problem in validation.check_code_judge(spec, judge, seeds)]
    if problems or not run_solutions:
        return problems
    unavailable = effects.sandbox_unavailable()
    if unavailable:
        return [f"part {spec.id!r}: the example solutions were not run: {unavailable}"] if require_sandbox else []
    limits = sandbox_limits(spec)
    for index, solution in enumerate(spec.solutions):
        for seed in seeds[:2] if solution.verdict == Outcome.ACCEPTED else seeds[:1]:
            report = judge_submission(judge=judge, source=solution.code, entrypoint=spec.entrypoint,
                                      seed=seed, limits=limits, run_python=effects.run_python)
            problem = validation.solution_problem(spec, solution, report)
            if problem:
                problems.append(f"part {spec.id!r}: solutions[{index}] ({solution.verdict}): {problem}")
                break
    return problems
