"""What a question's trusted judge module provides, and how it is found and loaded.

A judge module is reviewed Python in git next to its question
(``questions/bank/<topic>/<seed>-<slug>.judge.py``); a code part names it with
``judge: <topic>/<file>.judge.py`` (relative to the bank). It runs on the trusted side
only: it is never copied into the sandbox, so the reference it holds stays secret. The
module defines ``JUDGES``, a dict from part id to a ``Judge`` instance.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from pathlib import Path
from typing import Any

import numpy as np

from grading.judge.cases import Case
from grading.judge.compare import Tolerance, compare_call_results, compare_values

BANK_ROOT = Path(__file__).resolve().parents[2] / "questions" / "bank"
JUDGE_SUFFIX = ".judge.py"


class Judge:
    """The trusted half of one code part. Subclasses override ``hidden_cases`` and
    ``reference``, and ``check`` when a plain comparison is not the right test.

    - ``examples()``: the visible cases, fixed (no randomness); their names are the
      names of the part's ``examples`` in the YAML, in the same order.
    - ``hidden_cases(rng)``: the hidden cases, drawn from ``rng`` (a NumPy Generator
      seeded with the submission's secret seed). Same seed, same cases. Every edge case
      the question promises appears on every seed.
    - ``reference(case)``: the expected output, computed here on the trusted side.
    - ``check(case, got, expected)``: None when ``got`` (the candidate's output, already
      read back as plain data) is right, else one line saying what is wrong. For a
      hidden case that line must not reveal the inputs.
    - ``check_partial(case, got, expected)``: for a class entrypoint's script whose call
      number ``len(got) + 1`` raised, ``got`` holds the return values of the calls before
      it. None when none of them is wrong yet (the exception is then the first thing
      that went wrong), else the line for the first wrong one, as ``check`` words it.
      The default compares them one by one with the expected values of those calls,
      which is right whenever ``check`` compares call by call; a judge whose ``check``
      allows other answers (a stream that may hold text back) overrides it.
    """

    tolerance: Tolerance | None = None

    def examples(self) -> list[Case]:
        return []

    def hidden_cases(self, rng: np.random.Generator) -> list[Case]:
        raise NotImplementedError

    def reference(self, case: Case) -> Any:
        raise NotImplementedError

    def check(self, case: Case, got: Any, expected: Any) -> str | None:
        return compare_values(got, expected, self.tolerance)

    def check_partial(self, case: Case, got: list, expected: Any) -> str | None:
        return compare_call_results(case.calls or (), got, list(expected), prefix=True)


class JudgeNotFound(LookupError):
    """The judge file or its entry for a part is missing or malformed (an author's
    problem: the kind turns it into a SpecError)."""


def judge_path(relative: str, root: Path | None = None) -> Path:
    """The judge file named ``relative`` (``<topic>/<file>.judge.py``) under the bank.
    Raises ``JudgeNotFound`` for a path outside the bank, another suffix, or no file."""
    root = (root or BANK_ROOT).resolve()
    if not isinstance(relative, str) or not relative.endswith(JUDGE_SUFFIX) or relative.startswith("/"):
        raise JudgeNotFound(f"must be a path like <topic>/<file>{JUDGE_SUFFIX}, relative to the bank")
    path = (root / relative).resolve()
    if root not in path.parents:
        raise JudgeNotFound("must stay inside the question bank")
    if not path.is_file():
        raise JudgeNotFound(f"no judge file {relative} in the bank")
    return path


_LOCK = threading.Lock()
_MODULES: dict[tuple[str, int], Any] = {}


def load_judge(relative: str, part_id: str, root: Path | None = None) -> Judge:
    """The ``Judge`` for ``part_id`` in judge file ``relative``. Modules are cached by
    path and modification time, so an edited judge is reloaded."""
    path = judge_path(relative, root)
    key = (str(path), path.stat().st_mtime_ns)
    with _LOCK:
        module = _MODULES.get(key)
        if module is None:
            module = _import(path)
            _MODULES[key] = module
    judges = getattr(module, "JUDGES", None)
    if not isinstance(judges, dict):
        raise JudgeNotFound(f"{relative} defines no JUDGES dict")
    judge = judges.get(part_id)
    if not isinstance(judge, Judge):
        raise JudgeNotFound(f"{relative} has no Judge for part {part_id!r} (it has {sorted(judges)})")
    return judge


def _import(path: Path):
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"trainer_judge_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise JudgeNotFound(f"{path.name} does not import: {type(error).__name__}: {error}") from error
    return module
