"""What the kinds whose answers are programs (``code``, ``kernel``) share: reading the
source, the part's program fields and limits, the hidden tests' seed, whether the
sandbox can run anything here, and how their answer forms show visible examples.
Imports no kind: each of those kinds imports this.
"""

from __future__ import annotations

import ast
import re
import secrets
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from grading.judge.cases import Case
from grading.judge.contract import Judge, JudgeNotFound, judge_path
from grading.kinds.base import JUDGE_SEED_KEY, PartSpec, SpecError, require_text
from grading.verdict import Verdict

MAX_SOURCE_BYTES = 64 * 1024
SEED_CONTEXT_KEY = JUDGE_SEED_KEY
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Limits an author may set per part, in the sandbox's units (memory in MB here).
LIMIT_KEYS = {"cpu_seconds": float, "wall_seconds": float, "memory_mb": int}
# How much of an example's inputs, expected output or returned value a page shows.
EXAMPLE_TEXT_CHARS = 200


# ---------------------------------------------------------------- reading source


def read_source(text, entrypoint: str) -> str | Verdict:
    """What ``interpret`` reads: a one-line description of valid source, or an invalid
    verdict saying where and why. Parses only; never compiles or runs the code."""
    if not isinstance(text, str) or not text.strip():
        return Verdict.invalid("Write your code first.")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return Verdict.invalid("The code contains characters that are not valid text.")
    if size > MAX_SOURCE_BYTES:
        return Verdict.invalid(f"The code is {size // 1024} KB; the limit is {MAX_SOURCE_BYTES // 1024} KB.")
    try:
        module = ast.parse(text, filename="solution.py")
    except SyntaxError as error:
        where = f" at line {error.lineno}, column {error.offset}" if error.lineno else ""
        return Verdict.invalid(f"Syntax error{where}: {error.msg}.")
    except (RecursionError, MemoryError):
        return Verdict.invalid("The code is nested too deeply to read.")
    except ValueError as error:  # a NUL character, on some Python versions
        return Verdict.invalid(f"The code cannot be read: {error}.")
    line = _top_level_definition(module, entrypoint)
    lines = text.count("\n") + 1
    if line is None:
        return Verdict.invalid(f"Define {entrypoint} at the top level of your code (not inside "
                               "another function, class or block).")
    return f"Python, {lines} lines; defines {entrypoint} at line {line}"


def _top_level_definition(module: ast.Module, name: str) -> int | None:
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return node.lineno
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return node.lineno
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name \
                and node.value is not None:
            return node.lineno
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (alias.asname or alias.name.split(".")[0]) == name for alias in node.names
        ):
            return node.lineno
    return None


# ---------------------------------------------------------------- seeds and the sandbox


def submission_seed(context: Mapping) -> int:
    """The hidden tests' seed: the context's ``judge_seed`` when set, else a new secret
    one (so every submission meets different inputs)."""
    fixed = context.get(SEED_CONTEXT_KEY) if isinstance(context, Mapping) else None
    if isinstance(fixed, int) and not isinstance(fixed, bool) and fixed >= 0:
        return fixed
    return secrets.randbits(63)


# ---------------------------------------------------------------- spec pieces


@dataclass(frozen=True)
class ProgramSolution:
    """An author's solution and the verdict it must get (one of its kind's verdict
    words: ``accepted``, ``wrong_answer``, ``too_slow``...); ``failing_groups``, when
    given (code parts), is exactly the set of test groups it must fail."""

    code: str
    verdict: str
    why: str = ""
    failing_groups: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ProgramSpec(PartSpec):
    """What code and kernel parts share: the entrypoint the judge calls, the judge file,
    the starter, the author's solutions and the part's limits over its kind's
    ``default_limits``."""

    default_limits: ClassVar[dict] = {}

    entrypoint: str = ""
    judge: str = ""
    starter: str = ""
    solutions: tuple[ProgramSolution, ...] = ()
    limits: tuple[tuple[str, float], ...] = ()

    @property
    def limits_dict(self) -> dict:
        return {**self.default_limits, **dict(self.limits)}

    @property
    def reference_source(self) -> str:
        """The first solution whose verdict is ``accepted``: the part's reference."""
        return next(solution.code for solution in self.solutions if solution.verdict == ACCEPTED)


ACCEPTED = "accepted"


def load_solutions(raw: Mapping, entrypoint: str, *, verdicts: Collection[str],
                   read: Callable[[str, str], object], group_ids: Collection[str] | None = None,
                   ) -> tuple[ProgramSolution, ...]:
    """A code or kernel part's ``solutions``, checked: each is ``{verdict, code, why}``
    (plus ``failing_groups`` where the part has ``group_ids``), its verdict one of
    ``verdicts``, its code read by ``read(code, entrypoint)`` (the kind's own reading;
    a ``Verdict`` back means it does not read); at least one is ``accepted``."""
    items = raw.get("solutions")
    if not isinstance(items, list) or not items:
        raise SpecError("needs a list of {verdict, code, why}: one accepted, and the wrong ones", "solutions")
    keys = ("verdict", "code", "failing_groups", "why") if group_ids is not None else ("verdict", "code", "why")
    solutions = []
    for index, item in enumerate(items):
        label = f"solutions[{index}]"
        if not isinstance(item, Mapping) or not {"verdict", "code"} <= set(item) <= set(keys):
            raise SpecError(f"must be {{{', '.join(keys)}}}", label)
        if item["verdict"] not in verdicts:
            raise SpecError(f"must be one of {', '.join(verdicts)}", f"{label}.verdict")
        reading = read(require_text(item, "code", label=f"{label}.code"), entrypoint)
        if isinstance(reading, Verdict):
            raise SpecError(reading.feedback, f"{label}.code")
        failing = item.get("failing_groups")
        if failing is not None:
            if not isinstance(failing, list) or not all(group in group_ids for group in failing):
                raise SpecError("must list ids from the part's groups", f"{label}.failing_groups")
            failing = tuple(sorted(failing))
        solutions.append(ProgramSolution(code=item["code"], verdict=str(item["verdict"]), why=str(item.get("why", "")),
                                         failing_groups=failing))
    if not any(solution.verdict == ACCEPTED for solution in solutions):
        raise SpecError("needs a reference solution with verdict accepted", "solutions")
    return tuple(solutions)


def load_program_fields(raw: Mapping, read_starter) -> tuple[str, str]:
    """(entrypoint, judge) of a code or kernel part, checked: the entrypoint is an
    identifier, the judge file exists, and ``read_starter(starter, entrypoint)`` reads
    the starter (the kind's own reading: plain Python, or a Triton kernel)."""
    entrypoint = require_text(raw, "entrypoint")
    if not _IDENTIFIER.match(entrypoint):
        raise SpecError("must be a Python identifier", "entrypoint")
    judge = require_text(raw, "judge")
    try:
        judge_path(judge)
    except JudgeNotFound as error:
        raise SpecError(str(error), "judge") from None
    reading = read_starter(require_text(raw, "starter"), entrypoint)
    if isinstance(reading, Verdict):
        raise SpecError(f"the starter does not read: {reading.feedback}", "starter")
    return entrypoint, judge


def load_limits(raw: Mapping) -> tuple[tuple[str, float], ...]:
    """A part's `limits` mapping, checked against LIMIT_KEYS (code and kernel parts)."""
    items = raw.get("limits", {})
    if not isinstance(items, Mapping):
        raise SpecError(f"must map some of {', '.join(LIMIT_KEYS)} to numbers", "limits")
    limits = []
    for key, value in items.items():
        if key not in LIMIT_KEYS:
            raise SpecError(f"unknown limit (known: {', '.join(LIMIT_KEYS)})", f"limits.{key}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise SpecError("must be a positive number", f"limits.{key}")
        limits.append((key, LIMIT_KEYS[key](value)))
    return tuple(sorted(limits))


# ---------------------------------------------------------------- showing visible examples


def shorten(text: str, limit: int = EXAMPLE_TEXT_CHARS) -> str:
    """``text`` on one line (its lines joined with spaces, their own spacing kept) of at
    most ``limit`` characters, cut with "…"."""
    text = " ".join(line.strip() for line in str(text).splitlines() if line.strip())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def example_row(name: str, inputs: str, expected: str, shapes: str = "") -> dict:
    """One visible example as an answer form lists it (``part.display.examples``):
    ``name``, ``inputs`` (the call, or a preview of the tensors), ``shapes`` (dtypes
    and shapes of array inputs, "" when the inputs say it all) and ``expected``."""
    return {"name": name, "inputs": shorten(inputs), "shapes": shorten(shapes), "expected": shorten(expected)}


def judge_example_rows(judge: Judge) -> list[dict]:
    """The rows of a judge's visible examples (``Judge.examples()``, fixed and public
    by design), for parts whose examples live only in the judge: shapes and dtypes, a
    preview of the inputs, and the reference's output. Never draws a hidden case."""
    return [_case_row(case, judge.reference(case)) for case in judge.examples()]


def _case_row(case: Case, expected) -> dict:
    with np.printoptions(threshold=40, edgeitems=4, linewidth=10**6):
        shown = repr(expected)
    return example_row(case.name, case.describe_inputs(EXAMPLE_TEXT_CHARS * 2), shown, case.describe_shapes())
