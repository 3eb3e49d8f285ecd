"""Whether the grading workers consume work, from the heartbeats they run.

A worker sends `grading.heartbeat` to its own direct queue every HEARTBEAT_INTERVAL
seconds; one of its pool processes runs it and stamps the worker's row. A worker whose
pool is wedged (a killed child can leave the others blocked on the pool's lock) still
answers `celery inspect ping`, but its row stops moving: that is what `/healthz`, the
embedded supervisor and `manage.py worker_health` look at.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from grading.models import WorkerHeartbeat
from grading.services import busy_grading


def heartbeat_record(hostname: str, queues: str, *, now: datetime | None = None) -> None:
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"queues": queues, "beat_at": now or timezone.now()}
    )


def heartbeat_max_age() -> timedelta:
    """A heartbeat older than this is late: a few intervals, so one slow beat is not."""
    return timedelta(seconds=settings.WORKER_HEARTBEAT_MAX_AGE)


@dataclass(frozen=True)
class WorkerState:
    hostname: str
    queues: tuple[str, ...]
    age: timedelta

    def late(self, now: datetime) -> bool:
        """The heartbeat is late and the worker is not busy grading within a deadline:
        every pool process of a busy worker may be inside a long sandboxed run, which
        delays its heartbeat without meaning it stopped consuming."""
        return self.age > heartbeat_max_age() and not busy_grading(self.hostname, now=now)


def worker_states(*, now: datetime | None = None) -> list[WorkerState]:
    """Every worker that has ever beaten recently enough to matter (a day), newest first."""
    now = now or timezone.now()
    rows = WorkerHeartbeat.objects.filter(beat_at__gte=now - timedelta(days=1)).order_by("-beat_at")
    return [WorkerState(row.hostname, tuple(filter(None, row.queues.split(","))), now - row.beat_at) for row in rows]


def check_queue_consumed(queue: str, *, now: datetime | None = None) -> str | None:
    """None when some worker on `queue` ran its heartbeat lately, else why not."""
    now = now or timezone.now()
    states = [state for state in worker_states(now=now) if queue in state.queues]
    if any(not state.late(now) for state in states):
        return None
    if not states:
        return f"no worker on the {queue!r} queue has reported a heartbeat"
    newest = min(state.age for state in states)
    return f"the last heartbeat of a worker on {queue!r} was {newest.total_seconds():.0f} s ago"


def check_worker(hostname: str, *, now: datetime | None = None) -> str | None:
    """None when the worker called `hostname` ran its heartbeat lately, else why not."""
    now = now or timezone.now()
    row = WorkerHeartbeat.objects.filter(hostname=hostname).first()
    if row is None:
        return f"worker {hostname!r} has not reported a heartbeat"
    age = now - row.beat_at
    if age > heartbeat_max_age() and not busy_grading(hostname, now=now):
        return f"worker {hostname!r} last ran its heartbeat {age.total_seconds():.0f} s ago"
    return None
