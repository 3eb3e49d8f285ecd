"""Loading the bank: `sync_questions` into a fresh database and again with every file
unchanged, next to the baseline of the same run, validating every file in full in one
process (what each sync used to do: example solutions run in the sandbox included).

Each measure runs in a fresh throwaway SQLite database, in this process:

    .venv/bin/python bench/bench_sync.py [--repeat 3] [--skip-baseline]

Prints the median (and the slowest) of the repeats, and the ratio to the baseline.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _setup_django(var_dir: str):
    os.environ.update(TRAINER_VAR_DIR=var_dir, DATABASE_URL=f"sqlite:///{var_dir}/bench.sqlite3", DEBUG="1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trainer.settings")
    import django

    django.setup()


def _timed(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-baseline", action="store_true", help="leave out the full validation (minutes)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as var_dir:
        _setup_django(var_dir)
        from django.core.management import call_command

        from questions.loader import bank_files
        from questions.models import Question
        from questions.services import sync_bank
        from questions.validation import validate_paths

        call_command("migrate", verbosity=0)
        files = len(bank_files())
        fresh, unchanged = [], []
        for _ in range(options.repeat):
            Question.objects.all().delete()
            fresh.append(_timed(lambda: _check(sync_bank(), files)))
            unchanged.append(_timed(lambda: _check(sync_bank(), files, unchanged=True)))
        baseline = None if options.skip_baseline else _timed(lambda: validate_paths(jobs=1))
    print(f"bank: {files} files; {options.repeat} repeats")
    _line("sync, fresh database", fresh, baseline)
    _line("sync, every file unchanged", unchanged, baseline)
    if baseline is not None:
        print(f"{'baseline: every file validated in full, serially':<42} {baseline:8.2f} s (once)")


def _check(result, files: int, unchanged: bool = False):
    assert not result.failed, result.failed
    stored = len(result.unchanged) if unchanged else len(result.created) + len(result.updated)
    assert stored == files, (stored, files)


def _line(label: str, seconds: list[float], baseline: float | None):
    median = statistics.median(seconds)
    ratio = f"  {median / baseline:6.3f} × baseline" if baseline else ""
    print(f"{label:<42} {median:8.2f} s median, {max(seconds):.2f} s slowest{ratio}")


if __name__ == "__main__":
    main()
