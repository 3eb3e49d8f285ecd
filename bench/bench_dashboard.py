"""Dashboard latency for a candidate with 5,000 graded attempts, against /ping.

Builds a throwaway SQLite instance (the bank synced), gives one candidate N attempts
spread over 60 days across every question's parts, then times the dashboard and the
question browser through Django's test client in this process, next to /ping measured
in the same run. Prints median, p99, both ratios to the baseline, the machine's load
average (it is shared: compare ratios across runs) and the browser's target (p99 under
50 ms).

    .venv/bin/python bench/bench_dashboard.py [--attempts 5000] [--requests 200]
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _setup_django(var_dir: str):
    os.environ.update(TRAINER_VAR_DIR=var_dir, DATABASE_URL=f"sqlite:///{var_dir}/bench.sqlite3", DEBUG="1",
                      ALLOWED_HOSTS="testserver")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trainer.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("sync_questions", verbosity=0)


def _fill(attempt_count: int):
    from django.utils import timezone

    from grading.models import Attempt
    from questions.models import Question
    from trainer.roles import Role
    from trainer.services import progress_rebuild, user_create

    user = user_create(username="bench-candidate", password="bench-password-123", role=Role.CANDIDATE)
    rng = random.Random(0)
    parts = [
        (question.current_version, part["id"])
        for question in Question.objects.select_related("current_version")
        for part in question.current_version.data["parts"]
    ]
    now = timezone.now()
    attempts = []
    for _ in range(attempt_count):
        version, part_id = rng.choice(parts)
        correct = rng.random() < 0.6
        attempts.append(Attempt(
            user=user, question_version=version, part_id=part_id, variant_seed=rng.randrange(1000),
            answer="1", status=Attempt.Status.GRADED, correct=correct, score=1.0 if correct else 0.0,
            graded_at=now,
        ))
    created = Attempt.objects.bulk_create(attempts, batch_size=1000)
    # Spread the attempts over the last 60 days (auto_now_add set them all to now).
    for attempt in created:
        attempt.created_at = now - timedelta(seconds=rng.uniform(0, 60 * 86400))
    Attempt.objects.bulk_update(created, ["created_at"], batch_size=1000)
    progress_rebuild(user)  # bulk_create skipped the per-attempt progress updates
    return user, len(parts)


def _time(client, path: str, requests: int) -> dict:
    client.get(path)  # warm caches (templates, catalogue)
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(path)
        samples.append(time.perf_counter() - started)
        assert response.status_code == 200, (path, response.status_code)
    samples.sort()
    return {"median_ms": statistics.median(samples) * 1000, "p99_ms": samples[int(0.99 * (len(samples) - 1))] * 1000}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    _setup_django(tempfile.mkdtemp(prefix="bench-dashboard-"))
    user, part_count = _fill(args.attempts)

    from django.test import Client

    from trainer.startup import freeze_startup_heap

    freeze_startup_heap()  # what trainer/wsgi.py does in every web process

    client = Client()
    client.force_login(user)
    load_before = os.getloadavg()[0]
    rows = [("/ping (baseline)", _time(client, "/ping", args.requests)),
            ("/me/ (dashboard)", _time(client, "/me/", args.requests)),
            ("/questions/ (browser)", _time(client, "/questions/", args.requests))]
    load_after = os.getloadavg()[0]
    print(f"{args.attempts} graded attempts over {part_count} parts, {args.requests} requests each, in-process client; "
          f"1-minute load average {load_before:.1f} before, {load_after:.1f} after ({os.cpu_count()} CPUs)")
    print(f"{'view':<26}{'median ms':>11}{'p99 ms':>9}{'median / baseline':>19}{'p99 / baseline':>16}")
    base = rows[0][1]
    for name, row in rows:
        print(f"{name:<26}{row['median_ms']:>11.2f}{row['p99_ms']:>9.2f}"
              f"{row['median_ms'] / base['median_ms']:>19.1f}{row['p99_ms'] / base['p99_ms']:>16.1f}")
    browser_p99 = rows[2][1]["p99_ms"]
    print(f"target: browser p99 under 50 ms: {'met' if browser_p99 < 50 else 'not met'} ({browser_p99:.1f} ms)")


if __name__ == "__main__":
    main()
