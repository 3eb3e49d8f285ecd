"""Run a submission against a judge's cases in the sandbox and decide each case.

``judge_submission`` is the whole trip: draw the cases from the secret seed, compute
the references here (trusted side), send the inputs, the harness and the candidate's
file to the sandbox, read the outputs back as plain data, and check each one. It
returns a ``JudgeReport``; turning that into a ``Verdict`` is the code kind's job.
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grading.judge.cases import Case, MalformedOutput, case_id, decode_output, encode_cases
from grading.judge.contract import Judge

logger = logging.getLogger(__name__)

HARNESS_FILE = "harness.py"
SOLUTION_FILE = "solution.py"
OUT_DIR = "/sandbox/out"
HARNESS_SOURCE = (Path(__file__).resolve().parent / "harness.py").read_bytes()
MAX_TRACEBACK_CHARS = 1500
# Caps on the error record's text (the harness cuts messages at 2000 characters).
MAX_ERROR_TYPE_CHARS = 200
MAX_MESSAGE_CHARS = 2100
MAX_NOTE_CHARS = 2000
MAX_DETAIL_CHARS = 4000  # any one case's detail, which the feedback quotes


class Outcome(enum.StrEnum):
    """The code verdicts; the value is what ``Verdict.mistake`` holds."""

    ACCEPTED = "accepted"
    WRONG_ANSWER = "wrong_answer"
    RUNTIME_ERROR = "runtime_error"
    TIME_LIMIT = "time_limit"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    REJECTED = "rejected"

    @property
    def label(self) -> str:
        return self.value.replace("_", " ").capitalize()


# Sandbox statuses that end the run as a whole, before any case can be trusted.
_WHOLE_RUN_OUTCOMES = {
    "time_limit": Outcome.TIME_LIMIT,
    "memory_limit": Outcome.MEMORY_LIMIT,
    "output_limit": Outcome.OUTPUT_LIMIT,
    "rejected": Outcome.REJECTED,
    "killed": Outcome.RUNTIME_ERROR,
}


@dataclass(frozen=True)
class CaseResult:
    """One case's fate. ``outcome`` is ACCEPTED, WRONG_ANSWER or RUNTIME_ERROR;
    ``detail`` says what went wrong ("" when it passed)."""

    case: Case
    visible: bool
    outcome: Outcome
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.ACCEPTED


@dataclass(frozen=True)
class JudgeReport:
    """The judgement of one submission.

    ``outcome`` is the overall code verdict: ACCEPTED when every case passed; else the
    first failing case's outcome, or the whole run's (time limit, ...). ``results`` has
    one entry per case in the order they ran (visible examples first); it is empty when
    the run failed as a whole. ``detail`` explains a whole-run failure.
    """

    outcome: Outcome
    results: tuple[CaseResult, ...]
    detail: str = ""
    wall_seconds: float = 0.0
    peak_memory_bytes: int | None = None

    @property
    def first_failure(self) -> CaseResult | None:
        return next((result for result in self.results if not result.passed), None)


SandboxRunner = Callable[..., Any]  # grading.sandbox.run_python's signature


def judge_submission(*, judge: Judge, source: str, entrypoint: str, seed: int | None, limits=None,
                     run_python: SandboxRunner | None = None) -> JudgeReport:
    """Judge ``source`` on the judge's visible examples and, when ``seed`` is not None,
    its hidden cases drawn from ``seed``. ``run_python`` defaults to the sandbox's; any
    ``SandboxError`` it raises propagates (the sandbox is broken, not the answer)."""
    cases = list(judge.examples())
    visible = len(cases)
    if seed is not None:
        cases += judge.hidden_cases(np.random.default_rng(seed))
    expected = [judge.reference(case) for case in cases]
    files = encode_cases(cases, entrypoint)
    files[HARNESS_FILE] = HARNESS_SOURCE
    files[SOLUTION_FILE] = source.encode("utf-8", errors="surrogatepass")
    if run_python is None:
        from grading.sandbox import run_python
    kwargs = {"files": files, "entry": HARNESS_FILE, "args": (OUT_DIR,), "warm": True}
    if limits is not None:
        kwargs["limits"] = limits
    result = run_python(**kwargs)
    status = str(result.status)
    measures = {"wall_seconds": float(result.wall_seconds or 0.0), "peak_memory_bytes": result.peak_memory_bytes}
    if status in _WHOLE_RUN_OUTCOMES:
        detail = _whole_run_detail(status, result)
        return JudgeReport(_WHOLE_RUN_OUTCOMES[status], (), detail, **measures)
    import_error = _import_error(result.files)
    if import_error:
        return JudgeReport(Outcome.RUNTIME_ERROR, (), import_error, **measures)
    crash = _crash_text(result) if status != "ok" else ""
    results = tuple(
        _judge_case(judge, case, index < visible, case_id(index), expected[index], result.files, crash)
        for index, case in enumerate(cases)
    )
    failure = next((item for item in results if not item.passed), None)
    outcome = failure.outcome if failure else Outcome.ACCEPTED
    return JudgeReport(outcome, results, "", **measures)


def _judge_case(judge: Judge, case: Case, visible: bool, cid: str, expected: Any, files: dict, crash: str) -> CaseResult:
    try:
        raw = decode_output(cid, files)
    except MalformedOutput as error:
        return CaseResult(case, visible, Outcome.WRONG_ANSWER, _plain(f"its output could not be read: {error}", MAX_DETAIL_CHARS))
    if not raw.present:
        detail = "the program ended before this case returned"
        detail += f" ({crash})" if crash else " (exit code 0: did something call exit?)"
        return CaseResult(case, visible, Outcome.RUNTIME_ERROR, _plain(detail, MAX_DETAIL_CHARS))
    if raw.error is not None:
        return CaseResult(case, visible, Outcome.RUNTIME_ERROR, _format_error(raw.error))
    try:
        problem = judge.check(case, raw.value, expected)
    except Exception as error:  # noqa: BLE001 - odd candidate data must not crash the judge
        logger.warning("judge check raised on case %r: %r", case.name, error)
        problem = f"the output is not what was asked for ({type(error).__name__})"
    if problem:
        # A judge's line may quote the candidate's output: keep it storable and short.
        return CaseResult(case, visible, Outcome.WRONG_ANSWER, _plain(str(problem), MAX_DETAIL_CHARS))
    return CaseResult(case, visible, Outcome.ACCEPTED)


def _import_error(files: dict) -> str:
    try:
        raw = decode_output("_import", files)
    except MalformedOutput:
        return ""  # not the harness's: the candidate wrote it; the cases decide
    if raw.present and raw.error is not None:
        return f"your module failed while loading: {_format_error(raw.error)}"
    return ""


def _format_error(error: dict) -> str:
    # The record is the candidate's data, whatever the harness would have written.
    message = f"{_plain(error['type'], MAX_ERROR_TYPE_CHARS)}: {_plain(error['message'], MAX_MESSAGE_CHARS)}"
    trace = error.get("traceback")
    if isinstance(trace, str) and trace.strip():
        message = f"{message}\n{_plain(trace[-MAX_TRACEBACK_CHARS:], MAX_TRACEBACK_CHARS)}"
    return message


def _plain(text: str, limit: int) -> str:
    """Text from the sandbox made fit for a verdict: at most ``limit`` characters, and
    lone surrogates (JSON can carry them) written out, so that it encodes as UTF-8."""
    if len(text) > limit:
        text = text[:limit] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _whole_run_detail(status: str, result) -> str:
    note = _plain((result.note or "").strip(), MAX_NOTE_CHARS)
    if status == "killed":
        return f"the program was killed ({note or f'signal {result.signal}'})"
    return note


_SOLUTION_LINE = re.compile(r'File "[^"]*solution\.py", line \d+.*')


def _crash_text(result) -> str:
    """A process that exited on its own with a non-zero status: the last exception
    line of stderr and the candidate's own frames, never the harness's or ours."""
    lines = (result.stderr or "").strip().splitlines()
    kept = []
    for index, line in enumerate(lines):
        match = _SOLUTION_LINE.search(line)
        if match:
            kept.append("  " + match.group(0).replace(match.group(0).split('"')[1], SOLUTION_FILE))
            if index + 1 < len(lines) and not lines[index + 1].lstrip().startswith("File "):
                kept.append("    " + lines[index + 1].strip())
    last = lines[-1].strip() if lines else ""
    summary = f"exit code {result.exit_code}"
    if last:
        summary += f": {last[:300]}"
    if kept:
        summary += "\n" + "\n".join(kept[-12:])
    return summary
