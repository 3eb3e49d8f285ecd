"""Celery tasks: each takes an attempt ID and calls a service; safe to run twice."""

from celery import shared_task

from grading import services


@shared_task(name="grading.grade_attempt", acks_late=True)
def grade_attempt(attempt_id: int) -> str:
    return services.attempt_grade(attempt_id).status
