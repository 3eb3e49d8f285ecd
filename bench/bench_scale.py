"""Grading throughput with 1, then 2, Celery worker processes on one machine (issue 20).

Sets up a throwaway PostgreSQL database (created here, dropped at the end) and a Redis
database number of its own (refused unless empty, flushed at the end), migrates, syncs
one bank file and takes the accepted example solution of one of its code parts. Then,
for each worker count, it starts that many `celery -A trainer worker --concurrency 1`
processes on the grading queue, grades a warm-up round (each worker's first job makes
its warm sandbox pool), and submits the same batch of N answers as real attempts through
grading.services.attempt_submit (queued on commit, as the site does), one new candidate
per answer, made before the timed batch (the per-user run limits would refuse a second
answer from one). It polls the database until
every attempt has a verdict or none has finished for --stall-seconds.

Prints, per worker count: the attempts graded correct (and any failed, wrong, lost,
stuck or retried), elapsed time from the first queued to the last verdict, throughput,
the median and p99 of queue-to-verdict latency (the batch arrives as one burst, so these
are mostly queueing), the median claim-to-verdict service time and the judge's own run
time (from the verdict's feedback), busy workers (summed service time over elapsed), the
machine's CPU busy % (/proc/stat), the cores used by this stack (the workers' process
trees, sandboxes included, from /proc/PID/stat) and by the rest of the machine, and the
CPU seconds per job in the sandboxes (the warm pool's replacement interpreters, which
import torch, included) and in the Celery processes. Then the ratio of each count's
throughput to the first's, against the target x1.8, and where the evidence puts the
shared bottleneck (CPU, sandbox slot locks, the database or the broker: the rules are
scale_figures.bottleneck's), with a warning when the rest of a shared machine took much
of the CPU. Also: CPU count, load averages, Redis PING and PostgreSQL `SELECT 1` round
trips, the pickup time of a job sent to idle workers, PostgreSQL backends active and
waiting on locks (pg_stat_activity every 0.1 s) and sandbox slots held machine-wide
(/proc/locks).

Needs PostgreSQL on 127.0.0.1:5432 (trust auth, as scripts/test-integration), Redis on
127.0.0.1:6379 and the sandbox (scripts/setup-sandbox), as root.

    .venv/bin/python bench/bench_scale.py [--submissions 40] [--workers 1,2]
        [--question quantization/122-int4-packing.yaml] [--part pack] [--redis-db 13]
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from scale_figures import (  # noqa: E402  (bench/, the script's own folder, is on sys.path)
    TARGET_RATIO,
    RunFigures,
    bottleneck,
    cpu_busy_fraction,
    held_inodes,
    percentile,
    read_cpu_counters,
    read_processes,
    stack_ticks,
)

PG_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"
READY = re.compile(r"Task grading\.heartbeat\[[^\]]+\] succeeded")
# An accepted code verdict's feedback ends "(1.23 s)." (grading.judge.feedback): the
# sandbox's wall time for the job, the only place the verdict keeps it.
RUN_SECONDS = re.compile(r"\((\d+(?:\.\d+)?) s\)\.$")
SAMPLE_EVERY_S = 0.1


class Sampler(threading.Thread):
    """Every SAMPLE_EVERY_S: PostgreSQL backends of the bench database that are active or
    waiting on a lock (this sampler's own excluded), and sandbox slot lock files held."""

    def __init__(self, database_url: str, database: str, slot_locks: list[Path]):
        super().__init__(daemon=True)
        self.database_url, self.database, self.slot_locks = database_url, database, slot_locks
        self.active: list[int] = []
        self.lock_waits: list[int] = []
        self.slots_held: list[int] = []
        self.stopping = threading.Event()

    def run(self):
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as connection:
            while not self.stopping.is_set():
                active, waiting = connection.execute(
                    "SELECT count(*) FILTER (WHERE state = 'active'), count(*) FILTER (WHERE wait_event_type = 'Lock')"
                    " FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (self.database,),
                ).fetchone()
                self.active.append(active)
                self.lock_waits.append(waiting)
                self.slots_held.append(self._slots_held())
                self.stopping.wait(SAMPLE_EVERY_S)

    def _slots_held(self) -> int:
        # Matched on the inode alone: /proc/locks' device numbers differ from st_dev on
        # overlay filesystems, and only the slot lock files' inodes are looked up.
        inodes = {path.stat().st_ino for path in self.slot_locks if path.exists()}
        return len(inodes & held_inodes(Path("/proc/locks").read_text()))


def round_trips(database_url: str, broker_url: str, count: int = 200) -> tuple[float, float]:
    """Median seconds of a Redis PING and of a PostgreSQL `SELECT 1` from this process."""
    import psycopg
    import redis

    client = redis.Redis.from_url(broker_url)
    pings = []
    for _ in range(count):
        started = time.perf_counter()
        client.ping()
        pings.append(time.perf_counter() - started)
    selects = []
    with psycopg.connect(database_url, autocommit=True) as connection:
        for _ in range(count):
            started = time.perf_counter()
            connection.execute("SELECT 1").fetchone()
            selects.append(time.perf_counter() - started)
    return statistics.median(pings), statistics.median(selects)


# ---------------------------------------------------------------- the stack


def stack_env(database_url: str, broker_url: str, var_dir: Path) -> dict:
    """The variables trainer/settings.py reads, set as the integration suite sets them
    (trainer/tests/integration/conftest.py): DEBUG off, a throwaway database and broker."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url, CELERY_BROKER_URL=broker_url, DEBUG="0",
        SECRET_KEY="bench-scale-secret-key-not-for-production", ALLOWED_HOSTS="127.0.0.1,localhost",
        SECURE_COOKIES="0", TRAINER_VAR_DIR=str(var_dir), STATIC_ROOT=str(var_dir / "static"),
        PYTHONUNBUFFERED="1", DJANGO_SETTINGS_MODULE="trainer.settings",
    )
    return env


class Workers:
    """`count` Celery worker processes, --concurrency 1 each, on the grading queue."""

    def __init__(self, count: int, env: dict, queue: str, log_dir: Path):
        self.processes, self.logs = [], []
        for index in range(1, count + 1):
            log_path = log_dir / f"worker-{count}-{index}.log"
            self.logs.append(log_path)
            self.processes.append(subprocess.Popen(
                [str(BIN / "celery"), "-A", "trainer", "worker", "-Q", queue, "--pool", "prefork",
                 "--concurrency", "1", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
                 "-n", f"bench{index}@%h"],
                cwd=ROOT, env=env, stdout=open(log_path, "w"), stderr=subprocess.STDOUT, start_new_session=True,
            ))

    def wait_ready(self, timeout: float = 120) -> None:
        """Until each has said ready and its pool process ran its first heartbeat."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process, log in zip(self.processes, self.logs):
                if process.poll() is not None:
                    raise SystemExit(f"a worker exited:\n{log.read_text()[-2000:]}")
            texts = [log.read_text() for log in self.logs]
            if all("ready." in text and READY.search(text) for text in texts):
                return
            time.sleep(0.2)
        raise SystemExit("the workers did not become ready")

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


class Batch:
    """Submits answers as new candidates through the service the practice view calls."""

    def __init__(self, version, part_id: str, answer: str):
        self.version, self.part_id, self.answer = version, part_id, answer
        self.made = 0

    def candidates(self, count: int) -> list:
        """`count` new candidates, made before a timed batch: the candidates of a real
        burst have their accounts already, and making them (several writes each) would
        load the machine the workers share while they are timed."""
        from django.contrib.auth.models import User

        from trainer.roles import Role
        from trainer.services import user_set_role

        users = []
        for _ in range(count):
            self.made += 1
            # No password: hashing one costs about a second of CPU; the candidate never logs in.
            user = User.objects.create_user(username=f"bench-candidate-{self.made}", password=None)
            user_set_role(user, Role.CANDIDATE)
            users.append(user)
        return users

    def submit(self, users: list) -> list[int]:
        from grading import services

        ids = []
        for user in users:
            result = services.attempt_submit(user=user, version=self.version, part_id=self.part_id, seed=1,
                                             answer=self.answer)
            if result.attempt is None:
                raise SystemExit(f"the answer was refused: {result.verdict.feedback}")
            ids.append(result.attempt.id)
        return ids


def wait_graded(ids: list[int], stall_seconds: float):
    """The attempts once none is queued or running, or once none finished for
    stall_seconds (then the unfinished ones are reported as lost or stuck)."""
    from grading.models import Attempt

    unfinished = (Attempt.Status.QUEUED, Attempt.Status.RUNNING)
    done, last_progress = -1, time.monotonic()
    while True:
        left = Attempt.objects.filter(id__in=ids, status__in=unfinished).count()
        if left == 0 or time.monotonic() - last_progress > stall_seconds:
            return list(Attempt.objects.filter(id__in=ids))
        if len(ids) - left != done:
            done, last_progress = len(ids) - left, time.monotonic()
        time.sleep(0.25)


def settle(roots: set[int], timeout: float = 180) -> None:
    """Wait until no process of the workers' stack has been runnable for a second: the
    warm pools are full, so the timed batch starts from the same state for every worker
    count. (A CPU-time threshold would not do on a shared machine: the pool's refills
    run at nice 10 and a busy CPU can starve them to a trickle.)"""
    deadline = time.monotonic() + timeout
    quiet = 0
    while time.monotonic() < deadline and quiet < 5:
        quiet = quiet + 1 if stack_ticks(read_processes(), roots)[2] == 0 else 0
        time.sleep(0.2)


def measure(count: int, options, env: dict, batch: Batch, sampler_args, log_dir: Path, slot_count: int):
    from django.conf import settings

    workers = Workers(count, env, settings.GRADING_QUEUE, log_dir)
    try:
        workers.wait_ready()
        roots = {process.pid for process in workers.processes}
        # Warm-up rounds until every worker has graded one: a worker's first job makes its
        # warm pool (torch imports), which the timed batch should not pay.
        names: set[str] = set()
        pickups: list[float] = []
        for _ in range(6):
            attempts = wait_graded(batch.submit(batch.candidates(count)), options.stall_seconds)
            names |= {attempt.claimed_by for attempt in attempts}
            pickups += [(a.started_at - a.queued_at).total_seconds() for a in attempts if a.started_at]
            settle(roots)
            if len(names) >= count:
                break
        candidates = batch.candidates(options.submissions)
        sampler = Sampler(*sampler_args)
        load_before = os.getloadavg()
        cpu_before, stack_before = read_cpu_counters(), stack_ticks(read_processes(), roots)
        sampler.start()
        attempts = wait_graded(batch.submit(candidates), options.stall_seconds)
        cpu_after, stack_after = read_cpu_counters(), stack_ticks(read_processes(), roots)
        sampler.stopping.set()
        sampler.join()
        load_after = os.getloadavg()
        settle(roots)
        stack_settled = stack_ticks(read_processes(), roots)
    finally:
        workers.stop()
    stack_s = [(after - before) / os.sysconf("SC_CLK_TCK")
               for before, after in zip((*stack_before[:2], *stack_before[:2]), (*stack_after[:2], *stack_settled[:2]))]
    figures = summarise(count, attempts, (cpu_before, cpu_after), stack_s, sampler)
    if len(names) < count:
        figures.problems.append(f"only {len(names)} of {count} workers graded a warm-up job")
    return figures, pickups, (load_before, load_after)


def summarise(count, attempts, cpu_counters, stack_s, sampler) -> RunFigures:
    from grading.models import Attempt

    graded = [a for a in attempts if a.status == Attempt.Status.GRADED]
    correct = [a for a in graded if a.correct]
    problems = []
    for label, found in (("failed", [a for a in attempts if a.status == Attempt.Status.FAILED]),
                         ("graded wrong", [a for a in graded if not a.correct]),
                         ("lost (still queued)", [a for a in attempts if a.status == Attempt.Status.QUEUED]),
                         ("stuck (still running)", [a for a in attempts if a.status == Attempt.Status.RUNNING]),
                         ("graded after a retry", [a for a in graded if a.tries > 1])):
        if found:
            problems.append(f"{len(found)} {label}: e.g. attempt {found[0].id} "
                            f"{(found[0].failure_reason or (found[0].verdict or {}).get('feedback', ''))[:200]!r}")
    first_queued = min(a.queued_at for a in attempts)
    last_graded = max((a.graded_at for a in graded), default=first_queued)
    elapsed = (last_graded - first_queued).total_seconds()
    runs = [float(m.group(1)) for a in correct if (m := RUN_SECONDS.search((a.verdict or {}).get("feedback", "")))]
    cpu_before, cpu_after = cpu_counters
    busy = cpu_busy_fraction(cpu_before, cpu_after)
    busy_ticks = sum(after - before for before, after in zip(cpu_before[:8], cpu_after[:8])) * busy
    return RunFigures(
        workers=count, submitted=len(attempts), correct=len(correct), elapsed_s=elapsed,
        latencies=[(a.graded_at - a.queued_at).total_seconds() for a in correct],
        services=[(a.graded_at - a.started_at).total_seconds() for a in correct],
        run_seconds=runs, cpu_busy=busy, machine_cpu_s=busy_ticks / os.sysconf("SC_CLK_TCK"),
        stack_cpu_s=stack_s[0], job_stack_cpu_s=stack_s[2], job_worker_cpu_s=stack_s[3],
        db_active_mean=statistics.fmean(sampler.active) if sampler.active else 0.0,
        db_lock_wait_share=(sum(1 for n in sampler.lock_waits if n) / len(sampler.lock_waits)
                            if sampler.lock_waits else 0.0),
        slots_held_max=max(sampler.slots_held, default=0), problems=problems,
    )


def print_row(row: RunFigures) -> None:
    median = statistics.median
    print(f"{row.workers:>7}{row.correct:>5}/{row.submitted:<4}{row.elapsed_s:>9.1f}{row.throughput:>8.3f}"
          f"{median(row.latencies) if row.latencies else 0:>9.2f}"
          f"{percentile(row.latencies, 0.99) if row.latencies else 0:>8.2f}"
          f"{median(row.services) if row.services else 0:>10.2f}"
          f"{median(row.run_seconds) if row.run_seconds else float('nan'):>8.2f}"
          f"{row.busy_workers:>7.2f}{row.cpu_busy:>7.0%}{row.cores(row.stack_cpu_s):>8.2f}"
          f"{row.cores(row.machine_cpu_s - row.stack_cpu_s):>8.2f}"
          f"{row.per_job(row.job_stack_cpu_s - row.job_worker_cpu_s):>8.2f}{row.per_job(row.job_worker_cpu_s):>8.2f}"
          f"{row.db_active_mean:>7.2f}{row.db_lock_wait_share:>7.0%}{row.slots_held_max:>6}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=40, help="answers in the timed batch")
    parser.add_argument("--workers", default="1,2", help="worker process counts; the first is the baseline")
    parser.add_argument("--question", default="quantization/122-int4-packing.yaml",
                        help="bank file, relative to questions/bank")
    parser.add_argument("--part", default="pack", help="a code part of it, whose accepted solution is sent")
    parser.add_argument("--redis-db", type=int, default=13, help="a Redis database number no one else uses")
    parser.add_argument("--stall-seconds", type=float, default=120, help="give up after this long without a verdict")
    options = parser.parse_args()

    import psycopg
    import redis

    database = f"trainer_bench_scale_{os.getpid()}"
    database_url = f"postgres://postgres@127.0.0.1:5432/{database}"
    broker_url = f"redis://127.0.0.1:6379/{options.redis_db}"
    broker = redis.Redis.from_url(broker_url)
    if broker.dbsize():
        print(f"Redis database {options.redis_db} is not empty; choose another --redis-db", file=sys.stderr)
        return 1
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    var_dir = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    env = stack_env(database_url, broker_url, var_dir)
    status = 1
    try:
        status = run(options, env, database, database_url, broker_url, var_dir)
        return status
    finally:
        broker.flushdb()
        if status == 0:
            shutil.rmtree(var_dir, ignore_errors=True)
        else:
            print(f"worker logs kept in {var_dir}", file=sys.stderr)
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def run(options, env, database, database_url, broker_url, var_dir) -> int:
    # This process is a client of the same stack: Django reads the settings from the
    # environment, so it is set up only once the throwaway database and broker exist.
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    import grading
    from grading.kinds.programs import ACCEPTED
    from grading.sandbox import sandbox_available
    from grading.sandbox.install import SLOT_USER_PREFIX, current_install
    from questions.models import Question
    from questions.schema import Question as QuestionSpec

    ok, reason = sandbox_available()
    if not ok:
        print(f"sandbox unavailable: {reason}", file=sys.stderr)
        return 1
    call_command("migrate", "--noinput", verbosity=0)
    call_command("sync_questions", str(ROOT / "questions" / "bank" / options.question), stdout=io.StringIO())
    version = Question.objects.select_related("current_version").get().current_version
    part = QuestionSpec.from_data(version.data).part(options.part)
    kind = grading.get_kind(part.kind)
    if not kind.runs_in_sandbox:
        print(f"part {options.part} is not graded in the sandbox", file=sys.stderr)
        return 1
    solution = next(s for s in kind.load_spec(part.raw).solutions if s.verdict == ACCEPTED)
    install = current_install()
    slot_count = install.slot_count()
    slot_locks = [install.locks / f"{SLOT_USER_PREFIX}{index}.lock" for index in range(slot_count)]
    ping_s, select_s = round_trips(database_url, broker_url)
    before = read_cpu_counters()
    time.sleep(3)
    # The machine may be shared: what the rest of it used just before the bench started.
    print(f"machine {cpu_busy_fraction(before, read_cpu_counters()):.0%} busy over 3 s before any worker started")
    print(f"{os.cpu_count()} CPUs (affinity {len(os.sched_getaffinity(0))}), load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {slot_count} sandbox slots, warm pool "
          f"{os.environ.get('TRAINER_SANDBOX_WARM', '2')} per worker")
    print(f"{options.question} part {options.part}: {options.submissions} accepted answers per run; "
          f"Redis PING {ping_s * 1e3:.2f} ms, PostgreSQL SELECT 1 {select_s * 1e3:.2f} ms")
    print(f"{'workers':>7}{'ok':>6}{'':<3}{'elapsed':>9}{'jobs/s':>8}{'median':>9}{'p99':>8}{'service':>10}"
          f"{'run':>8}{'busy':>7}{'cpu':>7}{'stack':>8}{'others':>8}{'sbx/job':>8}{'wrk/job':>8}"
          f"{'db act':>7}{'db lk':>7}{'slots':>6}")
    batch = Batch(version, options.part, solution.code)
    counts = [int(c) for c in options.workers.split(",")]
    prewarmed = max(counts) * int(os.environ.get("TRAINER_SANDBOX_WARM", "2"))
    if options.submissions < 5 * prewarmed:
        # The first jobs take interpreters the pools filled before the batch: a short
        # batch measures how many were waiting, not how fast the workers keep up.
        print(f"warning: {prewarmed} warm interpreters wait before the batch; use at least "
              f"{5 * prewarmed} submissions for a steady-state figure")
    rows, notes = [], []
    for count in counts:
        row, pickups, loads = measure(count, options, env, batch, (database_url, database, slot_locks),
                                      var_dir, slot_count)
        rows.append(row)
        print_row(row)
        notes.append(f"{count} worker(s): idle pickup median {statistics.median(pickups):.3f} s over "
                     f"{len(pickups)} warm-up jobs; load average {loads[0][0]:.2f} before, {loads[1][0]:.2f} after"
                     + "".join(f"; {problem}" for problem in row.problems))
    print("(seconds; median/p99: queue to verdict; service: claim to verdict; run: the judge's run; busy: "
          "workers busy on average; cpu: machine busy; stack/others: cores used by these workers and their "
          "sandboxes / by everything else; sbx/wrk per job: CPU s in the sandboxes / in the Celery processes; "
          "db act: backends active; db lk: samples with a lock wait; slots: most sandbox slots held, "
          "machine-wide)")
    for note in notes:
        print(note)
    base = rows[0]
    for row in rows[1:]:
        ratio = row.throughput / base.throughput if base.throughput else 0.0
        print(f"throughput ratio {row.workers}/{base.workers}: x{ratio:.2f} (target x{TARGET_RATIO}); "
              f"bottleneck: {bottleneck(base, row, slot_count)}")
    others = max(row.cores(row.machine_cpu_s - row.stack_cpu_s) for row in rows)
    if others >= 0.25 * os.cpu_count():
        # The scheduler shares a busy CPU per runnable thread: more worker processes get
        # a bigger share of it, so the ratio can exceed the worker count.
        print(f"warning: the rest of the machine used up to {others:.2f} of {os.cpu_count()} cores during the "
              "runs: the ratio measures this stack's share of a contended CPU more than its scaling")
    complete = all(row.correct == row.submitted == options.submissions for row in rows)
    print("every submission got a correct verdict" if complete else "some submissions had no correct verdict")
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
