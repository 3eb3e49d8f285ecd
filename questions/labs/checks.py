"""What validation checks of a lab question's generator, beyond what every question gets.

`generator_problems(question, variants)` generates each variant twice, uncached, and
requires the same artifacts byte for byte and the same values; it also renders every
artifact once, so a trace the timeline cannot draw is found before a candidate does.
Then it scans many more seeds, as attempts draw them (up to 2**31), once each: a
generator that fails, or leaves out a value, on a few seeds in a hundred would break
those candidates' pages, and a handful of fixed seeds would not show it.
Each problem is `(path, message)` for the validator's reporter.
"""

from __future__ import annotations

import random

from grading.kinds.base import SpecError
from questions.labs.display import render_artifact
from questions.labs.generator import LabOutput, lab_values, run_generator

DETERMINISM_SEEDS = (0, 1, 7)  # per sampled variant; with the variants, a few distinct datasets
MAX_DETERMINISM_VARIANTS = 4
SCAN_SEEDS = 64  # spread over the variants; drawn the same way on every run, so a failure reproduces


def _fingerprint(output: LabOutput) -> tuple:
    return (
        tuple((artifact.name, artifact.kind, artifact.to_bytes()) for artifact in output.artifacts),
        tuple(sorted((name, repr(value)) for name, value in output.values.items())),
    )


def _first_difference(first: LabOutput, second: LabOutput) -> str:
    for one, other in zip(first.artifacts, second.artifacts):
        if one.to_bytes() != other.to_bytes():
            return f"artifact {one.name!r} differs"
    if len(first.artifacts) != len(second.artifacts):
        return "the number of artifacts differs"
    return "the values differ"


def generator_problems(question, variants) -> list[tuple[tuple, str]]:
    """Problems of `question`'s generator on `variants` (each a `rendering.Variant`:
    seed, choices, context), as (path, message) pairs; none when it has no generator."""
    relative = question.generator
    if not relative:
        return []
    problems: list[tuple[tuple, str]] = []
    for variant in list(variants)[:MAX_DETERMINISM_VARIANTS]:
        for seed in DETERMINISM_SEEDS:
            where = f"[seed {seed}, {', '.join(f'{k}={v}' for k, v in variant.choices.items())}]"
            try:
                first = run_generator(relative, seed, variant.choices, variant.context)
                # Disturb the global random state between the runs: a generator that draws
                # from `random` instead of `variant.rng` then shows itself.
                random.seed(seed + 1)
                second = run_generator(relative, seed, variant.choices, variant.context)
                lab_values(first)
            except SpecError as error:
                problems.append((("generator",), f"{error.message} {where}"))
                return problems
            if _fingerprint(first) != _fingerprint(second):
                problems.append((("generator",), f"not deterministic: generating twice, "
                                                 f"{_first_difference(first, second)} {where}"))
                return problems
            for artifact in first.artifacts:
                try:
                    render_artifact(artifact)
                except Exception as error:
                    problems.append((("generator",), f"artifact {artifact.name!r} does not display: "
                                                     f"{type(error).__name__}: {error} {where}"))
                    return problems
    return problems + _scan_problems(relative, list(variants))


def _scan_problems(relative: str, variants: list) -> list[tuple[tuple, str]]:
    if not variants:
        return []
    expected = None
    seeds = random.Random(f"lab scan {relative}").sample(range(2**31), SCAN_SEEDS)
    for index, seed in enumerate(seeds):
        variant = variants[index % len(variants)]
        where = f"[seed {seed}, {', '.join(f'{k}={v}' for k, v in variant.choices.items())}]"
        try:
            output = run_generator(relative, seed, variant.choices, variant.context)
            names = set(lab_values(output))
        except SpecError as error:
            return [(("generator",), f"{error.message} {where} (one of {SCAN_SEEDS} seeds scanned)")]
        if expected is None:
            expected = names
        elif names != expected:
            missing = sorted(expected ^ names)
            return [(("generator",), f"values {missing} appear on some seeds only {where}: every seed must "
                                     "give the values the parts read")]
    return []
