"""Run a submission against a judge's cases in the sandbox and decide each case.

``judge_submission`` is the whole trip: draw the cases from the secret seed, compute
the references here (trusted side), send the inputs, the harness and the candidate's
file to the sandbox, read the outputs back as plain data, and check each one. It
returns a ``JudgeReport``; turning that into a ``Verdict`` is the code kind's job.

What a report's details may quote is ``RunWords``' business: nothing the candidate's
process wrote in a run that held hidden cases.
"""

from __future__ import annotations

import ast
import builtins
import enum
import functools
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grading.judge.cases import Case, MalformedOutput, case_id, decode_output, encode_cases
from grading.judge.compare import describe_call_mismatch, describe_mismatch
from grading.judge.contract import Judge
from grading.sandbox import run_python as sandbox_run_python

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
MAX_RETURNED_CHARS = 1000  # a visible example's return value, as a run of the examples shows it
MAX_SOURCE_LINE_CHARS = 200


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
WHOLE_RUN_OUTCOMES = {
    "time_limit": Outcome.TIME_LIMIT,
    "memory_limit": Outcome.MEMORY_LIMIT,
    "output_limit": Outcome.OUTPUT_LIMIT,
    "rejected": Outcome.REJECTED,
    "killed": Outcome.RUNTIME_ERROR,
}


@dataclass(frozen=True)
class CaseResult:
    """One case's fate. ``outcome`` is ACCEPTED, WRONG_ANSWER or RUNTIME_ERROR;
    ``detail`` says what went wrong ("" when it passed), in the words ``RunWords``
    allows for the run. ``got`` is what a visible example returned, rendered, in a run
    of the visible examples alone ("" otherwise: ``RunWords.returned``)."""

    case: Case
    visible: bool
    outcome: Outcome
    detail: str = ""
    got: str = ""

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
    words = RunWords(source, sealed=len(cases) > visible)
    files = encode_cases(cases, entrypoint)
    files[HARNESS_FILE] = HARNESS_SOURCE
    files[SOLUTION_FILE] = source.encode("utf-8", errors="surrogatepass")
    if run_python is None:
        run_python = sandbox_run_python
    kwargs = {"files": files, "entry": HARNESS_FILE, "args": (OUT_DIR,), "warm": True}
    if limits is not None:
        kwargs["limits"] = limits
    result = run_python(**kwargs)
    status = str(result.status)
    measures = {"wall_seconds": float(result.wall_seconds or 0.0), "peak_memory_bytes": result.peak_memory_bytes}
    if status in WHOLE_RUN_OUTCOMES:
        detail = words.whole_run(status, result)
        return JudgeReport(WHOLE_RUN_OUTCOMES[status], (), detail, **measures)
    import_error = words.import_error(result.files)
    if import_error:
        return JudgeReport(Outcome.RUNTIME_ERROR, (), import_error, **measures)
    crash = words.crash(result) if status != "ok" else ""
    results = tuple(
        judge_case(judge, case, index < visible, case_id(index), expected[index], result.files, crash, words)
        for index, case in enumerate(cases)
    )
    failure = next((item for item in results if not item.passed), None)
    outcome = failure.outcome if failure else Outcome.ACCEPTED
    return JudgeReport(outcome, results, "", **measures)


def judge_case(judge: Judge, case: Case, visible: bool, cid: str, expected: Any, files: dict, crash: str,
               words: RunWords) -> CaseResult:
    """Case ``case``'s result from the run's output files (``cid`` is its output's name):
    its output read as data and checked by the judge against ``expected``; ``crash``
    says how the run ended when it did not exit cleanly. Shared with the kernel judge."""
    try:
        raw = decode_output(cid, files)
    except MalformedOutput as error:
        return CaseResult(case, visible, Outcome.WRONG_ANSWER, words.unreadable(error))
    if not raw.present:
        detail = "the program ended before this case returned"
        detail += f" ({crash})" if crash else " (exit code 0: did something call exit?)"
        return CaseResult(case, visible, Outcome.RUNTIME_ERROR, plain_text(detail, MAX_DETAIL_CHARS))
    if raw.error is not None:
        return _script_error(judge, case, visible, raw, expected, words)
    try:
        problem = judge.check(case, raw.value, expected)
    except Exception as error:  # noqa: BLE001 - odd candidate data must not crash the judge
        logger.warning("judge check raised on case %r: %r", case.name, error)
        return CaseResult(case, visible, Outcome.WRONG_ANSWER, words.check_failed(error))
    got = words.returned(raw.value) if visible else ""
    if problem:
        detail = words.wrong_answer(case, raw.value, expected, str(problem))
        return CaseResult(case, visible, Outcome.WRONG_ANSWER, detail, got)
    return CaseResult(case, visible, Outcome.ACCEPTED, got=got)


def _script_error(judge: Judge, case: Case, visible: bool, raw, expected: Any, words: RunWords) -> CaseResult:
    """A case whose run raised. For a class entrypoint's script that got past its
    constructor, the calls before the one that raised are checked first: when one of
    them is already wrong, that call is what the candidate is told about (a wrong
    answer), not the exception it led to."""
    error = words.error(raw.error)
    calls = case.calls
    done = raw.partial
    if calls is None or done is None or len(done) >= len(calls) or not isinstance(expected, list):
        return CaseResult(case, visible, Outcome.RUNTIME_ERROR, error)
    try:
        problem = judge.check_partial(case, done, expected) if done else None
    except Exception as failure:  # noqa: BLE001 - odd candidate data must not crash the judge
        logger.warning("judge check_partial raised on case %r: %r", case.name, failure)
        problem = None
    if problem:
        if words.sealed:
            detail = describe_call_mismatch(calls, done, expected, prefix=True)
        else:
            detail = plain_text(str(problem), MAX_DETAIL_CHARS)
        return CaseResult(case, visible, Outcome.WRONG_ANSWER, f"{detail} (and call {len(done) + 1} raised)")
    where = f"call {len(done) + 1} of {len(calls)} (.{calls[len(done)].method})"
    return CaseResult(case, visible, Outcome.RUNTIME_ERROR, plain_text(f"{where}: {error}", MAX_DETAIL_CHARS))


# Exception types a sealed run's words may name: Python's, the harness's own, and those
# of the libraries an answer imports (NumPy, torch, Triton), besides any name in the
# candidate's source. A name from anywhere else is a forged record's free text.
_BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                                if isinstance(value, type) and issubclass(value, BaseException))
_LIBRARY_EXCEPTIONS = frozenset({
    "UnreadableResult", "LinAlgError", "AxisError", "OutOfMemoryError", "CompilationError",
    "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct", "InterpreterError", "OutOfResources",
    "PTXASError", "AutotunerError",
})
# The sandbox's (and plain_runner's) own notes; what follows them ("left out <file>")
# names files the candidate made.
_SANDBOX_NOTE = re.compile(r"wall clock passed [0-9.]+ s|CPU time passed [0-9.]+ s|memory passed [0-9]+ bytes"
                           r"|std(?:out|err) went past [0-9]+ bytes|a forbidden system call \(seccomp\) ended it"
                           r"|ended by (?:signal )?[A-Z0-9]+|exit code -?[0-9]+")
_STDERR_SOLUTION_LINE = re.compile(r'File "[^"]*solution\.py", line (\d+)')
_STDERR_EXCEPTION = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)(?::|$)")
_SEALED_NOTE = "messages are not shown from runs that hold hidden tests"
_UNREADABLE_RESULT = ("the return value cannot be read as data: return NumPy arrays (not dtype=object), "
                      "numbers, strings, or lists and dicts of them")


@dataclass(frozen=True)
class RunWords:
    """What a verdict may quote from one sandbox run of ``source``.

    ``sealed`` is True when the run held hidden cases' inputs. The candidate's process
    can read every input file in its working directory at any moment (at import, or
    while a visible example runs), so in a sealed run anything that process wrote
    (exception messages and tracebacks, stderr, the values it returned, the names of
    files it left) may be derived from hidden data, and none of it is quoted. The words
    are then the host's own: an exception's type when the host can name it without the
    candidate's help (a built-in, a library's, or a name in the source), the line of
    ``source`` it came from (rendered from the host's copy), and what went wrong in
    general terms. An unsealed run (the visible examples alone) is quoted in full.
    """

    source: str
    sealed: bool

    # ------------------------------------------------------------ per case

    def error(self, record: Mapping) -> str:
        """An exception the harness recorded (``{type, message, traceback, line}``)."""
        if not self.sealed:
            return _format_error(record)
        name = self._shown_type(record.get("type"))
        if name == "UnreadableResult":
            return _UNREADABLE_RESULT
        return f"raised {name or 'an exception'}" + self._where(record.get("line"), _SEALED_NOTE)

    def wrong_answer(self, case: Case, got: Any, expected: Any, problem: str) -> str:
        """The judge found ``got`` wrong; ``problem`` is its line, which may quote values."""
        if not self.sealed:
            return plain_text(problem, MAX_DETAIL_CHARS)
        if case.calls is not None:
            return describe_call_mismatch(case.calls, got, expected)
        return describe_mismatch(got, expected)

    def returned(self, value: Any) -> str:
        """A case's return value written out (NumPy arrays as ``array(...)``, long ones
        elided), cut at ``MAX_RETURNED_CHARS``; "" in a sealed run."""
        if self.sealed:
            return ""
        with np.printoptions(threshold=40, edgeitems=4, linewidth=10**6):
            text = repr(value)
        return plain_text(text, MAX_RETURNED_CHARS)

    def unreadable(self, error: MalformedOutput) -> str:
        if not self.sealed:
            return plain_text(f"its output could not be read: {error}", MAX_DETAIL_CHARS)
        return f"its output could not be read: {error.summary}"

    def check_failed(self, error: Exception) -> str:
        """The judge's check raised on the output (odd data the judge did not expect)."""
        if not self.sealed:
            return f"the output is not what was asked for ({type(error).__name__})"
        return "the output is not what was asked for"

    # ------------------------------------------------------------ per run

    def import_error(self, files: dict) -> str:
        """"" unless the harness recorded that the module failed while loading."""
        try:
            raw = decode_output("_import", files)
        except MalformedOutput:
            return ""  # not the harness's: the candidate wrote it; the cases decide
        if raw.present and raw.error is not None:
            return f"your module failed while loading: {self.error(raw.error)}"
        return ""

    def whole_run(self, status: str, result) -> str:
        """Why the sandbox stopped the run (time limit, ...)."""
        note = (result.note or "").strip()
        if self.sealed:
            first = note.split("; ", 1)[0]
            note = first if _SANDBOX_NOTE.fullmatch(first) else ""
        note = plain_text(note, MAX_NOTE_CHARS)
        if status == "killed":
            return f"the program was killed ({note or f'signal {result.signal}'})"
        return note

    def crash(self, result) -> str:
        """A process that exited on its own with a non-zero status."""
        if not self.sealed:
            return _crash_text(result)
        lines = (result.stderr or "").strip().splitlines()
        summary = f"exit code {result.exit_code}"
        last = _STDERR_EXCEPTION.match(lines[-1].strip()) if lines else None
        name = self._shown_type(last.group(1).rsplit(".", 1)[-1]) if last else None
        if name:
            summary += f": {name}"
        found = [int(match.group(1)) for line in lines for match in [_STDERR_SOLUTION_LINE.search(line)] if match]
        if found and self._is_line(found[-1]):
            summary += ("" if name else ",") + self._where(found[-1], "")
        return summary

    # ------------------------------------------------------------ the host's own reading of the source

    @functools.cached_property
    def _lines(self) -> list[str]:
        return self.source.splitlines()

    @functools.cached_property
    def _tree(self) -> ast.Module | None:
        try:
            return ast.parse(self.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    @functools.cached_property
    def _names(self) -> frozenset[str]:
        names = set()
        for node in ast.walk(self._tree) if self._tree is not None else ():
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.update({node.name.rsplit(".", 1)[-1], node.asname or ""})
        return frozenset(names)

    def _shown_type(self, name: Any) -> str | None:
        if not isinstance(name, str):
            return None
        if name in _BUILTIN_EXCEPTIONS or name in _LIBRARY_EXCEPTIONS or name in self._names:
            return name
        return None

    def _is_line(self, line: Any) -> bool:
        return type(line) is int and 1 <= line <= len(self._lines)

    def _where(self, line: Any, note: str) -> str:
        if not self._is_line(line):
            return f" (not at a line of your code{'; ' + note if note else ''})"
        suffix = f" ({note})" if note else ""
        text = plain_text(self._lines[line - 1].strip(), MAX_SOURCE_LINE_CHARS)
        return (f" at line {line} of your code{suffix}\n"
                f'  File "{SOLUTION_FILE}", line {line}, in {self._scope_at(line)}\n    {text}')

    def _scope_at(self, line: int) -> str:
        """The innermost function or class of the source around ``line``."""
        scope, start = "<module>", 0
        for node in ast.walk(self._tree) if self._tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) \
                    and node.lineno <= line <= (node.end_lineno or node.lineno) and node.lineno >= start:
                scope = "<lambda>" if isinstance(node, ast.Lambda) else node.name
                start = node.lineno
        return scope


def _format_error(error: Mapping) -> str:
    # The record is the candidate's data, whatever the harness would have written.
    message = f"{plain_text(error['type'], MAX_ERROR_TYPE_CHARS)}: {plain_text(error['message'], MAX_MESSAGE_CHARS)}"
    trace = error.get("traceback")
    if isinstance(trace, str) and trace.strip():
        message = f"{message}\n{plain_text(trace[-MAX_TRACEBACK_CHARS:], MAX_TRACEBACK_CHARS)}"
    return message


def plain_text(text: str, limit: int) -> str:
    """Text from the sandbox made fit for a verdict: at most ``limit`` characters, and
    lone surrogates (JSON can carry them) written out, so that it encodes as UTF-8."""
    if len(text) > limit:
        text = text[:limit] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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
