from trainer.celery import app as celery_app


def test_healthz_reports_database_and_broker(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "broker": "ok", "status": "ok"}


def test_healthz_is_503_when_the_broker_is_down(client, db, monkeypatch, settings):
    settings.HEALTHCHECK_BROKER_TIMEOUT = 1
    # A Redis URL on a port nothing listens on: the broker check must fail, quickly.
    monkeypatch.setattr(celery_app.conf, "broker_url", "redis://127.0.0.1:1/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok"
    assert body["broker"] != "ok"
    assert body["status"] == "unavailable"
