"""Periodic work for interviews (Celery beat runs it; see CELERY_BEAT_SCHEDULE)."""

from celery import shared_task

from trainer.interviews import services


@shared_task(name="interviews.close_expired")
def close_expired_interviews() -> int:
    """Close every interview whose clock ran out, so its record and status are final even
    when nobody opens it again. Safe to run twice: a closed interview is skipped."""
    return services.close_expired_interviews()
