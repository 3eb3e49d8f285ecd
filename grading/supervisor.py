"""Keep a Celery worker (and optionally beat) running and consuming, without a person.

Celery's prefork pool can wedge: a pool child killed while it held the pool's queue
lock leaves its replacements blocked on that lock, and the worker's main process still
answers pings. The worker's heartbeat (`grading.health`) stops moving then, so the
supervisor restarts any child process that exits and restarts the worker whose
heartbeat is late, killing its whole process group. What the dead worker had fetched is
recovered by `requeue_stale_attempts` (beat) and by the broker's own redelivery.

Used by `manage.py run_workers` in the embedded mode and in docker-compose.yml.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

CELERY = str(Path(sys.executable).with_name("celery"))


@dataclass
class Child:
    """One supervised process, started in its own session so a restart kills its pool too."""

    name: str
    argv: list[str]
    log_path: Path | None = None
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    restarts: int = 0

    def start(self) -> None:
        log = open(self.log_path, "ab") if self.log_path else None  # noqa: SIM115 (the child owns it)
        self.process = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT if log else None,
                                        start_new_session=True)
        if log:
            log.close()
        self.started_at = time.monotonic()
        logger.warning("started %s (pid %s)", self.name, self.process.pid)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to the whole group, then SIGKILL after `grace` seconds."""
        if self.process is None:
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        # A pool child may outlive its parent for a moment; the group goes with SIGKILL.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def restart(self, why: str) -> None:
        logger.warning("restarting %s: %s", self.name, why)
        self.stop()
        self.restarts += 1
        self.start()


@dataclass
class Supervisor:
    """Restart what died; restart the worker when `worker_problem()` says it is late
    (after it has had `startup_grace` seconds to send its first heartbeat)."""

    worker: Child
    others: list[Child] = field(default_factory=list)
    worker_problem: Callable[[], str | None] = lambda: None
    startup_grace: float = 60.0
    check_every: float = 5.0
    stopping: bool = False

    def children(self) -> list[Child]:
        return [self.worker, *self.others]

    def check_once(self) -> None:
        for child in self.children():
            if not child.running():
                code = child.process.returncode if child.process else None
                child.restart(f"it exited with status {code}")
        if time.monotonic() - self.worker.started_at < self.startup_grace:
            return
        problem = self.worker_problem()
        if problem:
            self.worker.restart(problem)

    def run(self) -> None:
        signal.signal(signal.SIGTERM, self._ask_to_stop)
        signal.signal(signal.SIGINT, self._ask_to_stop)
        for child in self.children():
            child.start()
        try:
            while not self.stopping:
                time.sleep(self.check_every)
                if not self.stopping:
                    try:
                        self.check_once()
                    except Exception:  # the database may be down for a moment: keep watching
                        logger.exception("supervisor check failed")
        finally:
            for child in self.children():
                child.stop()

    def _ask_to_stop(self, *_):
        self.stopping = True


def worker_argv(*, queues: str, concurrency: int, hostname: str, loglevel: str = "INFO") -> list[str]:
    return [CELERY, "-A", "trainer", "worker", "-Q", queues, "--concurrency", str(concurrency),
            "-n", hostname, "--loglevel", loglevel, "--without-gossip", "--without-mingle"]


def beat_argv(*, schedule: str, loglevel: str = "INFO") -> list[str]:
    return [CELERY, "-A", "trainer", "beat", "--schedule", schedule, "--loglevel", loglevel]
