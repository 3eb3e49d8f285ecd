"""Celery tasks: each takes an attempt ID and calls a service; safe to run twice."""

from celery import shared_task
from celery.signals import worker_process_shutdown

from grading import services


@shared_task(name="grading.grade_attempt", acks_late=True)
def grade_attempt(attempt_id: int) -> str:
    return services.attempt_grade(attempt_id).status


@worker_process_shutdown.connect
def _stop_sandbox_pool(**_kwargs):
    """Celery's pool children skip atexit hooks: stop the warm sandboxed interpreters."""
    from grading.sandbox import pool

    pool.shutdown()
