"""Checking a code part before it reaches candidates (``validate_code_part``).

On the trusted side: the judge file loads and has a Judge for the part; its examples
match the part's ``examples`` by name; on several seeds the hidden cases are drawn
deterministically from the seed (and differ between seeds), every case sits in a
declared group, every group gets cases, and each reference passes the judge's own
check. In the sandbox: every listed solution gets its stated verdict, and where the
solution states ``failing_groups``, fails exactly those groups.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np

from grading.judge.cases import encode_cases
from grading.judge.contract import Judge, JudgeNotFound, load_judge
from grading.judge.feedback import tally_groups
from grading.judge.runner import Outcome, judge_submission

CHECK_SEEDS = (11, 12, 13)  # fixed: validation gives the same answer on every run
MAX_SANDBOX_FILES = 200  # out/ is a tmpfs with 256 inodes


def validate_code_part(spec, context: Mapping, *, run_solutions: bool = True, require_sandbox: bool = True,
                       seeds: tuple[int, ...] = CHECK_SEEDS) -> list[str]:
    """Problems with code part ``spec`` (a raw mapping or a loaded ``CodeSpec``), as
    messages; empty when it is sound. ``run_solutions=False`` does only the trusted-side
    checks (fast, no sandbox). Without a sandbox the solutions cannot be run: that is
    one problem when ``require_sandbox``, else those checks are skipped. ``context`` is
    accepted for symmetry with the other kinds; code parts do not depend on variants."""
    from grading.kinds.code import CodeKind, CodeSpec, sandbox_limits, sandbox_unavailable_reason
    from grading.kinds.base import SpecError

    try:
        spec = spec if isinstance(spec, CodeSpec) else CodeKind().load_spec(spec)
        judge = load_judge(spec.judge, spec.id)
    except (SpecError, JudgeNotFound) as error:
        part_id = spec.id if isinstance(spec, CodeSpec) else (spec.get("id") if isinstance(spec, Mapping) else None)
        return [f"part {part_id!r}: {error}"]
    problems = [f"part {spec.id!r}: {problem}" for problem in _trusted_side(spec, judge, seeds)]
    if problems or not run_solutions:
        return problems
    unavailable = sandbox_unavailable_reason()
    if unavailable:
        return [f"part {spec.id!r}: the example solutions were not run: {unavailable}"] if require_sandbox else []
    limits = sandbox_limits(spec)
    for index, solution in enumerate(spec.solutions):
        for seed in seeds[:2] if solution.verdict is Outcome.ACCEPTED else seeds[:1]:
            report = judge_submission(judge=judge, source=solution.code, entrypoint=spec.entrypoint,
                                      seed=seed, limits=limits)
            problem = _solution_problem(spec, solution, report)
            if problem:
                problems.append(f"part {spec.id!r}: solutions[{index}] ({solution.verdict.value}): {problem}")
                break
    return problems


def _trusted_side(spec, judge: Judge, seeds: tuple[int, ...]) -> list[str]:
    problems = []
    try:
        examples = list(judge.examples())
    except Exception as error:  # noqa: BLE001 - report the judge's bug
        return [f"examples() raises {type(error).__name__}: {error}"]
    names = [case.name for case in examples]
    wanted = [example.name for example in spec.examples]
    if names != wanted:
        problems.append(f"the judge's examples {names} do not match the part's examples {wanted}")
    else:
        for example, case in zip(spec.examples, examples):
            problem = example_result_problem(example.result, judge.reference(case))
            if problem:
                problems.append(f"example {example.name!r}: the result shown {problem}")
    declared = {group.id for group in spec.groups}
    draws = []
    for seed in seeds:
        try:
            cases = list(judge.hidden_cases(np.random.default_rng(seed)))
            again = list(judge.hidden_cases(np.random.default_rng(seed)))
        except Exception as error:  # noqa: BLE001 - report the judge's bug
            return problems + [f"hidden_cases({seed}) raises {type(error).__name__}: {error}"]
        if not cases:
            problems.append(f"seed {seed} draws no hidden cases")
            continue
        if _fingerprint(cases) != _fingerprint(again):
            problems.append(f"seed {seed} draws different cases on a second call: use only the rng given")
        draws.append(_fingerprint(cases))
        every = examples + cases
        if declared:
            stray = sorted({case.group for case in every} - declared)
            if stray:
                problems.append(f"cases in undeclared groups {stray}")
            empty = sorted(declared - {case.group for case in every})
            if empty:
                problems.append(f"groups {empty} get no cases on seed {seed}")
        try:
            encode_cases(every, spec.entrypoint)
        except TypeError as error:
            problems.append(str(error))
        outputs = len(every)
        for case in every:
            expected, problem = check_reference(judge, case)
            if problem:
                problems.append(problem)
            if expected is not None:
                outputs += _array_count(expected)
        if outputs > MAX_SANDBOX_FILES:
            problems.append(f"seed {seed}: {outputs} output files; the sandbox's out/ holds {MAX_SANDBOX_FILES}")
    if len(draws) >= 2 and len(set(draws)) < len(draws):
        problems.append("different seeds draw the same hidden cases: draw the inputs from the rng")
    return problems


_RESULT_TOKEN = re.compile(r"(?<![\w.])(?:True|False|None|-?inf|nan|-?\d+\.?\d*(?:e[-+]?\d+)?)(?!\w)|'[^']*'|\"[^\"]*\"")


def example_result_problem(shown: str, reference) -> str:
    """Whether the result an example shows (text; a trailing '# comment' is ignored)
    lists the reference's values in order, to the precision it shows them; "" if so."""
    tokens = _RESULT_TOKEN.findall(shown.split("#", 1)[0])
    values = list(_flatten(reference))
    if len(tokens) != len(values):
        return f"lists {len(tokens)} values; the reference has {len(values)}"
    for index, (token, value) in enumerate(zip(tokens, values)):
        if not _token_matches(token, value):
            return f"has {token} at value {index}; the reference has {value!r}"
    return ""


def _flatten(value):
    if isinstance(value, np.ndarray):
        yield from value.ravel().tolist()
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _flatten(item)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield key
            yield from _flatten(item)
    else:
        yield value


def _token_matches(token: str, value) -> bool:
    if token == "None" or value is None:
        return token == "None" and value is None
    if token in ("True", "False") or isinstance(value, bool):
        return token == str(value)
    if token[0] in "'\"":
        return isinstance(value, str) and token[1:-1] == value
    if isinstance(value, str) or value is None:
        return False
    number = float(token)
    if math.isnan(number) or math.isinf(number):
        return str(number) == str(float(value))
    decimals = len(token.split("e")[0].partition(".")[2])
    return abs(number - float(value)) <= 0.5 * 10.0 ** -decimals + 1e-12 * abs(number)


def _fingerprint(cases) -> str:
    import hashlib

    digest = hashlib.sha256()
    for name, data in sorted(encode_cases(list(cases), "f").items()):
        digest.update(name.encode())
        digest.update(data)
    return digest.hexdigest()


def _array_count(value) -> int:
    if isinstance(value, np.ndarray):
        return 1
    if isinstance(value, (list, tuple)):
        return sum(_array_count(item) for item in value)
    if isinstance(value, Mapping):
        return sum(_array_count(item) for item in value.values())
    return 0


def _solution_problem(spec, solution, report) -> str:
    failure = report.first_failure
    if report.outcome is not solution.verdict:
        where = f" on {failure.case.name!r}: {failure.detail}" if failure else f": {report.detail}"
        return f"got {report.outcome.value}{where}"
    if solution.failing_groups is not None:
        tally = tally_groups(report.results, spec.groups)
        if tuple(sorted(tally.failed)) != solution.failing_groups:
            return f"fails groups {sorted(tally.failed)}, expected exactly {list(solution.failing_groups)}"
    return ""


def check_reference(judge, case) -> tuple[object, str]:
    """The judge's reference output for ``case`` and "" when it passes the judge's own
    check; (None, why) when computing it fails, (output, why) when the check rejects it.
    Shared by the code and kernel validations."""
    try:
        expected = judge.reference(case)
        problem = judge.check(case, expected, expected)
    except Exception as error:  # noqa: BLE001 - an author's judge: report, never crash
        return None, f"case {case.name!r}: the reference fails: {type(error).__name__}: {error}"
    if problem:
        return expected, f"case {case.name!r}: the reference fails its own check: {problem}"
    return expected, ""
