"""Celery tasks: each takes an ID (or nothing) and calls a service; safe to run twice."""

from celery import shared_task
from celery.signals import worker_process_shutdown
from django.db import InterfaceError, OperationalError

from grading import health, services
from grading.sandbox import pool


# A database that refuses the claim for a moment (locked, restarting, a dropped
# connection) is an outage, not a verdict: the task is sent again with a backoff, and
# requeue_stale_attempts is the backstop if every retry fails.
@shared_task(
    name=services.GRADE_TASK,
    acks_late=True,
    bind=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=1,
    retry_backoff_max=30,
    max_retries=6,
)
def grade_attempt(self, attempt_id: int) -> str:
    return services.attempt_grade(attempt_id, worker=self.request.hostname or "").status


@shared_task(name="grading.requeue_stale")
def requeue_stale_attempts() -> int:
    """Beat runs this every minute: no accepted answer stays queued or running for good."""
    return services.requeue_stale_attempts()


@shared_task(name="grading.heartbeat", acks_late=False, ignore_result=True)
def heartbeat(hostname: str, queues: str) -> None:
    """Sent by each worker to its own queue (`trainer.celery.HeartbeatStep`) and run by
    one of its pool processes: the row it writes proves the pool consumes work."""
    health.heartbeat_record(hostname, queues)


@worker_process_shutdown.connect
def _stop_sandbox_pool(**_kwargs):
    """Celery's pool children skip atexit hooks: stop the warm sandboxed interpreters."""
    pool.shutdown()
