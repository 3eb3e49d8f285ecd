"""Liveness of the two services every request and every grade depends on."""

from django.conf import settings
from django.db import connection

from trainer.celery import app as celery_app


def check_database() -> str | None:
    """None when the database answers a query, else the error in words."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any driver error means "down"; report it, don't raise
        return f"{type(error).__name__}: {error}"
    return None


def check_broker() -> str | None:
    """None when the Celery broker accepts a connection within the timeout."""
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=settings.HEALTHCHECK_BROKER_TIMEOUT)
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return None
