from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from grading import health
from trainer.celery import app as celery_app


@pytest.fixture
def fresh_heartbeat(db):
    health.heartbeat_record("grading@host", "grading")


def test_healthz_reports_database_broker_and_workers(client, fresh_heartbeat):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "broker": "ok", "workers": "ok", "status": "ok"}


def test_healthz_is_503_when_the_broker_is_down(client, fresh_heartbeat, monkeypatch, settings):
    settings.HEALTHCHECK_BROKER_TIMEOUT = 1
    # A Redis URL on a port nothing listens on: the broker check must fail, quickly.
    monkeypatch.setattr(celery_app.conf, "broker_url", "redis://127.0.0.1:1/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok"
    assert body["broker"] != "ok"
    assert body["status"] == "unavailable"


def test_healthz_is_503_when_no_worker_has_run_a_heartbeat(client, db):
    response = client.get("/healthz")
    assert response.status_code == 503
    assert "no worker on the 'grading' queue" in response.json()["workers"]


def test_healthz_is_503_when_the_workers_heartbeat_is_late(client, db, settings):
    settings.WORKER_HEARTBEAT_MAX_AGE = 30
    health.heartbeat_record("grading@host", "grading", now=timezone.now() - timedelta(seconds=31))
    health.heartbeat_record("gpu@host", "gpu.h100")  # a healthy worker on another queue does not count
    response = client.get("/healthz")
    assert response.status_code == 503
    assert "was 31 s ago" in response.json()["workers"]
    health.heartbeat_record("grading@other", "grading")
    assert client.get("/healthz").status_code == 200  # one live worker on the queue is enough


def test_worker_health_command_checks_one_worker(db, settings):
    settings.WORKER_HEARTBEAT_MAX_AGE = 30
    health.heartbeat_record("grading@a", "grading", now=timezone.now() - timedelta(minutes=5))
    health.heartbeat_record("grading@b", "grading")
    call_command("worker_health", "--hostname", "grading@b")
    with pytest.raises(CommandError, match="grading@a' last ran its heartbeat 300 s ago"):
        call_command("worker_health", "--hostname", "grading@a")
    with pytest.raises(CommandError, match="has not reported"):
        call_command("worker_health", "--hostname", "grading@c")


def test_the_heartbeat_task_stamps_its_worker(db):
    from grading.tasks import heartbeat

    heartbeat("grading@x", "grading")
    assert health.check_worker("grading@x") is None


def test_a_worker_busy_grading_within_the_deadline_is_not_late(db, settings, candidate, decode_question):
    from grading.models import Attempt

    settings.WORKER_HEARTBEAT_MAX_AGE = 30
    health.heartbeat_record("grading@busy", "grading", now=timezone.now() - timedelta(seconds=90))
    attempt = Attempt.objects.create(user=candidate, question_version=decode_question, part_id="floor",
                                     part_kind="numeric", variant_seed=1, answer="1 ms",
                                     status=Attempt.Status.RUNNING, started_at=timezone.now(),
                                     claimed_by="grading@busy")
    assert health.check_worker("grading@busy") is None
    assert health.check_queue_consumed("grading") is None
    # Past its kind's deadline the run no longer excuses the silence.
    Attempt.objects.filter(id=attempt.id).update(started_at=timezone.now() - timedelta(hours=1))
    assert "90 s ago" in health.check_worker("grading@busy")
