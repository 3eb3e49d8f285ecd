"""The Celery app. Workers start with `celery -A trainer worker -Q <queue>`."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trainer.settings")

app = Celery("trainer")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
