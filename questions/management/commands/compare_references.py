"""Compare every reference answer of changed bank files with a git revision's.

A refactor of a question's expressions (naming an earlier part as `answers.<id>` for
carried credit, inlining a derived value, renaming one) must leave every reference
where it was: a wrong reference is the worst bug the bank can have. This command
proves it for each changed file, on every variant validation renders (all choice
combinations, or its fixed sample of 64) and on a few seeds: each part's solution value
in the working tree against the same part's at the revision, within a relative 1e-9.
"""

import math
import subprocess

import pint
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from questions.loader import load_file, load_text
from questions.schema import Question
from questions.validation import variant_choices
from questions.variants import draw_variant, reference_values

SEEDS = range(8)
RELATIVE = 1e-9


class Command(BaseCommand):
    help = "Check that changed bank files keep every reference answer of a git revision, on every variant."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="*", help="bank files (default: those that differ from --against)")
        parser.add_argument("--against", default="HEAD", help="the git revision to compare with (default HEAD)")

    def handle(self, *args, paths, against, **options):
        root = settings.BASE_DIR
        paths = paths or _changed_bank_files(root, against)
        if not paths:
            self.stdout.write(f"No bank file differs from {against}.")
            return
        failures = 0
        for path in paths:
            differences = compare_file(root, path, against)
            for line in differences:
                self.stdout.write(line)
            failures += bool(differences)
            if not differences:
                self.stdout.write(f"{path}: every reference unchanged")
        if failures:
            raise CommandError(f"{failures} of {len(paths)} files changed a reference")


def _git(root, *args) -> str:
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if result.returncode:
        raise CommandError(result.stderr.strip() or f"git {' '.join(args)} failed")
    return result.stdout


def _changed_bank_files(root, against: str) -> list[str]:
    listed = _git(root, "diff", "--name-only", against, "--", "questions/bank")
    return [line for line in listed.splitlines() if line.endswith(".yaml") and (root / line).exists()]


def _question(loaded) -> Question:
    if loaded.data is None or loaded.problems:
        raise CommandError(f"{loaded.source}: {loaded.problems[0].message if loaded.problems else 'empty'}")
    return Question.from_data(loaded.data)


def compare_file(root, path: str, against: str) -> list[str]:
    """One line per part and variant whose reference moved, or that one side lacks."""
    relative = str((root / path).resolve().relative_to(root.resolve()))
    new = _question(load_file(root / relative))
    old = _question(load_text(_git(root, "show", f"{against}:{relative}"), f"{against}:{relative}"))
    draws = [("choices", choices, 0) for choices in variant_choices(old)] + [("seed", None, s) for s in SEEDS]
    differences = []
    for label, choices, seed in draws:
        before = reference_values(old, draw_variant(old, seed, choices=choices).context)
        after = reference_values(new, draw_variant(new, seed, choices=choices).context)
        for part_id in sorted(set(before) | set(after)):
            if not _same(before.get(part_id), after.get(part_id)):
                where = choices if label == "choices" else f"seed {seed}"
                differences.append(
                    f"{relative}: {part_id} was {before.get(part_id)!r}, is {after.get(part_id)!r} [{where}]"
                )
    return differences


def _dimension(value):
    return value.dimensionality if isinstance(value, pint.Quantity) else None


def _magnitude(value):
    return value.to_base_units().magnitude if isinstance(value, pint.Quantity) else value


def _same(before, after) -> bool:
    if before is None or after is None:
        return before is after
    if _dimension(before) != _dimension(after):
        return False
    before, after = _magnitude(before), _magnitude(after)
    try:
        return math.isclose(float(before), float(after), rel_tol=RELATIVE, abs_tol=1e-300)
    except (TypeError, ValueError):
        return before == after
