"""Checking a question's judge before candidates meet it: the checks on the trusted side.

For a code part (``check_code_judge``): the judge's examples match the part's
``examples`` by name and show the reference's values; on several seeds the hidden cases
are drawn deterministically from the seed (and differ between seeds), every case sits in
a declared group, every group gets cases, and each reference passes the judge's own
check. ``solution_problem`` says whether one example solution's report is the verdict it
states (and fails exactly its ``failing_groups``). The code kind
(``grading.kinds.code.validate_code_part``) loads the part and runs its solutions in the
sandbox; the kernel kind (``grading.kinds.kernel.validation``) uses the same seed checks
(``check_seeded_draws``) and ``check_reference``. Nothing here imports a kind.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping

import numpy as np

from grading.judge.cases import Case, encode_cases
from grading.judge.contract import Judge
from grading.judge.feedback import tally_groups

CHECK_SEEDS = (11, 12, 13)  # fixed: validation gives the same answer on every run
MAX_SANDBOX_FILES = 200  # out/ is a tmpfs with 256 inodes


def check_seeded_draws(draw: Callable[[np.random.Generator], list[Case]], seeds: tuple[int, ...],
                       check_cases: Callable[[int, list[Case]], list[str]],
                       method: str = "hidden_cases") -> tuple[list[str], bool]:
    """The seed checks of a judge's hidden cases: on every seed ``draw(rng)`` draws some
    cases, the same ones on a second call with the same seed, and different seeds draw
    different cases; ``check_cases(seed, cases)`` adds the caller's own problems with
    each seed's cases (in seed order, after that seed's own). Returns (problems,
    finished): ``finished`` is False when ``draw`` raised, which ends the list (naming
    ``method``) and the checks, since nothing drawn after a broken draw can be trusted."""
    problems, draws = [], []
    for seed in seeds:
        try:
            cases = list(draw(np.random.default_rng(seed)))
            again = list(draw(np.random.default_rng(seed)))
        except Exception as error:  # noqa: BLE001 - report the judge's bug
            return problems + [f"{method}({seed}) raises {type(error).__name__}: {error}"], False
        if not cases:
            problems.append(f"seed {seed} draws no hidden cases")
            continue
        if fingerprint(cases) != fingerprint(again):
            problems.append(f"seed {seed} draws different cases on a second call: use only the rng given")
        draws.append(fingerprint(cases))
        problems += check_cases(seed, cases)
    if len(draws) >= 2 and len(set(draws)) < len(draws):
        problems.append("different seeds draw the same hidden cases: draw the inputs from the rng")
    return problems, True


def check_code_judge(spec, judge: Judge, seeds: tuple[int, ...] = CHECK_SEEDS) -> list[str]:
    """The trusted-side problems of code part ``spec`` (a loaded ``CodeSpec``) with its
    ``judge`` (see the module docstring), without the part's id; empty when sound."""
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

    def check_cases(seed: int, cases: list[Case]) -> list[str]:
        found = []
        every = examples + cases
        if declared:
            stray = sorted({case.group for case in every} - declared)
            if stray:
                found.append(f"cases in undeclared groups {stray}")
            empty = sorted(declared - {case.group for case in every})
            if empty:
                found.append(f"groups {empty} get no cases on seed {seed}")
        try:
            encode_cases(every, spec.entrypoint)
        except TypeError as error:
            found.append(str(error))
        outputs = len(every)
        for case in every:
            expected, problem = check_reference(judge, case)
            if problem:
                found.append(problem)
            if expected is not None:
                outputs += _array_count(expected)
        if outputs > MAX_SANDBOX_FILES:
            found.append(f"seed {seed}: {outputs} output files; the sandbox's out/ holds {MAX_SANDBOX_FILES}")
        return found

    seeded, _ = check_seeded_draws(judge.hidden_cases, seeds, check_cases)
    return problems + seeded


_RESULT_TOKEN = re.compile(r"(?<![\w.])(?:True|False|None|-?inf|nan|-?\d+\.?\d*(?:e[-+]?\d+)?)(?!\w)"
                           r"|'[^']*'|\"[^\"]*\"")


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


def fingerprint(cases) -> str:
    """A digest of ``cases`` as the sandbox would receive them: equal cases, equal digest."""
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


def solution_problem(spec, solution, report) -> str:
    """"" when ``report`` (a ``JudgeReport``) is the verdict that example ``solution`` of
    code part ``spec`` states, and fails exactly its ``failing_groups`` when it lists
    them; else what went otherwise."""
    failure = report.first_failure
    if report.outcome != solution.verdict:
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
