"""The periodic task that closes interviews whose clock ran out, and beat's schedule."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from trainer.celery import app
from trainer.interviews import services, tasks
from trainer.interviews.models import Interview, InterviewEvent
from trainer.interviews.tests.conftest import make_interview, start

Kind = InterviewEvent.Kind


def test_every_scheduled_task_is_a_registered_task():
    app.loader.import_default_modules()
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks, entry["task"]
    assert settings.CELERY_BEAT_SCHEDULE["close-expired-interviews"]["task"] == tasks.close_expired_interviews.name


def test_the_task_closes_expired_interviews_once(interviewer, decode_question, candidate, other_candidate):
    expired = start(make_interview(interviewer, decode_question), candidate)
    running = start(make_interview(interviewer, decode_question), other_candidate)
    services.move_deadline(interview=expired, deadline=timezone.now() - timedelta(seconds=1))
    assert tasks.close_expired_interviews.apply().get() == 1
    assert tasks.close_expired_interviews.apply().get() == 0  # safe to run twice
    expired.refresh_from_db()
    running.refresh_from_db()
    assert (expired.status, running.status) == (Interview.Status.CLOSED, Interview.Status.ACTIVE)
    assert InterviewEvent.objects.filter(interview=expired, kind=Kind.CLOSED).count() == 1
