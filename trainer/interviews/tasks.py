"""Periodic and deferred work for interviews (Celery beat runs close_expired; see
CELERY_BEAT_SCHEDULE)."""

from celery import shared_task

from trainer.interviews import closing, services

MAX_FINAL_ANSWER_TRIES = 30  # at RETRY_AFTER_S apart: ten minutes for the sandbox to let them in


@shared_task(name="interviews.close_expired")
def close_expired_interviews() -> int:
    """Close every interview whose clock ran out, so its record and status are final even
    when nobody opens it again. Safe to run twice: a closed interview is skipped."""
    return services.close_expired_interviews()


@shared_task(name=closing.FINAL_ANSWERS_TASK, bind=True, max_retries=MAX_FINAL_ANSWER_TRIES)
def submit_final_answers(self, interview_id: int, reason: str) -> int:
    """Submit the code parts a close could not submit yet (grading refused them for now);
    retried until none is left. Safe to run twice: submitted parts are skipped."""
    waiting = closing.final_answers_submit(interview_id, reason=reason)
    if waiting:
        raise self.retry(countdown=closing.RETRY_AFTER_S)
    return waiting
