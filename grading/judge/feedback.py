"""Turn a ``JudgeReport`` into the candidate's ``Verdict``: the score by test group and
the human summary of the first failure.

The verdict name (``Outcome``: accepted, wrong_answer, runtime_error, time_limit,
memory_limit, output_limit, rejected) goes in ``Verdict.mistake``; ``feedback`` is the
summary. A hidden case is described by its name, group and input shapes only; the full
inputs are shown for visible examples alone. The secret seed appears nowhere.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from grading.judge.runner import CaseResult, JudgeReport, Outcome
from grading.verdict import CaseRecord, Verdict

_WHOLE_RUN_WORDS = {
    Outcome.TIME_LIMIT: "Time limit exceeded",
    Outcome.MEMORY_LIMIT: "Memory limit exceeded",
    Outcome.OUTPUT_LIMIT: "Output limit exceeded (too much printed)",
    Outcome.REJECTED: "Rejected by the sandbox (the code used a forbidden system call)",
    Outcome.RUNTIME_ERROR: "Runtime error",
}


@dataclass(frozen=True)
class GroupSpec:
    """A test group as the part declares it: its cases score ``points`` together."""

    id: str
    points: float
    description: str = ""


@dataclass(frozen=True)
class GroupTally:
    score: float
    passed: tuple[str, ...]
    failed: tuple[str, ...]


def tally_groups(results: Sequence[CaseResult], groups: Sequence[GroupSpec]) -> GroupTally:
    """The share of points earned: a group earns its points when it has cases and all of
    them passed. Without declared groups (or with a case outside them) it is all or
    nothing."""
    if not results:
        return GroupTally(0.0, (), tuple(group.id for group in groups))
    declared = {group.id for group in groups}
    if not groups or any(result.case.group not in declared for result in results):
        everything = all(result.passed for result in results)
        return GroupTally(1.0 if everything else 0.0, (), ())
    passed, failed = [], []
    for group in groups:
        members = [result for result in results if result.case.group == group.id]
        (passed if members and all(result.passed for result in members) else failed).append(group.id)
    total = sum(group.points for group in groups)
    earned = sum(group.points for group in groups if group.id in passed)
    return GroupTally(earned / total if total else 0.0, tuple(passed), tuple(failed))


def case_groups(results: Sequence[CaseResult]) -> tuple[GroupSpec, ...]:
    """One point for each group the judged cases name, in the order they first appear:
    the groups of a part that declares none (kernel parts), so that ``tally_groups``
    gives credit per group there too."""
    names = dict.fromkeys(result.case.group for result in results)
    return tuple(GroupSpec(name, 1.0) for name in names)


def group_summary(tally: GroupTally, groups: Sequence[GroupSpec]) -> str:
    """``Test groups passed: a, b (2 of 3 points); failed: c.``, or "" when the score was
    all or nothing."""
    if not groups or not (tally.passed or tally.failed):
        return ""
    points = {group.id: group.points for group in groups}
    earned = sum(points[group] for group in tally.passed)
    return (f"Test groups passed: {', '.join(tally.passed) or 'none'} ({earned:g} of {sum(points.values()):g} "
            f"points); failed: {', '.join(tally.failed) or 'none'}.")


def case_records(results: Sequence[CaseResult]) -> tuple[CaseRecord, ...]:
    """Each judged case as the verdict keeps it: name, group, visible or hidden, outcome
    and the run's own words for what went wrong (never a hidden case's inputs)."""
    return tuple(CaseRecord(result.case.name, result.case.group, result.visible, result.outcome.value, result.detail)
                 for result in results)


def verdict_from_report(report: JudgeReport, groups: Sequence[GroupSpec], interpreted: str,
                        limits_text: str = "") -> Verdict:
    """The candidate's verdict for one judged submission."""
    tally = tally_groups(report.results, groups)
    accepted = report.outcome is Outcome.ACCEPTED
    if accepted:
        feedback = f"Accepted: all {len(report.results)} tests passed ({report.wall_seconds:.2f} s)."
        score = 1.0
    elif not report.results:
        words = _WHOLE_RUN_WORDS[report.outcome]
        feedback = f"{words}: {report.detail}" if report.detail else f"{words}."
        if limits_text and report.outcome in (Outcome.TIME_LIMIT, Outcome.MEMORY_LIMIT):
            feedback += f" (limits: {limits_text})"
        score = 0.0
    else:
        feedback = _failure_text(report, tally, groups)
        score = min(tally.score, 1.0)
    return Verdict(valid=True, correct=accepted, score=score, interpreted=interpreted,
                   interpreted_html=html.escape(interpreted), feedback=feedback,
                   mistake=report.outcome.value, cases=case_records(report.results))


def _failure_text(report: JudgeReport, tally: GroupTally, groups: Sequence[GroupSpec]) -> str:
    failure = report.first_failure
    passed_count = sum(1 for result in report.results if result.passed)
    lines = [f"{failure.outcome.label} on {_describe_case(failure)}: {failure.detail}"]
    lines.append(f"{passed_count} of {len(report.results)} tests passed.")
    summary = group_summary(tally, groups)
    if summary:
        lines.append(summary)
    return "\n".join(lines)


def _describe_case(result: CaseResult) -> str:
    case = result.case
    if result.visible:
        return f'example "{case.name}", called with {case.describe_inputs()}'
    return f'hidden test "{case.name}" (group {case.group}; inputs {case.describe_shapes()})'
