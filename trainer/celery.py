"""The Celery app. Workers start with `celery -A trainer worker -Q <queue>`."""

import os

from celery import Celery, bootsteps
from celery.utils import worker_direct
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trainer.settings")

app = Celery("trainer")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class HeartbeatStep(bootsteps.StartStopStep):
    """Every few seconds the worker sends `grading.heartbeat` to its own direct queue
    (`worker_direct`), so a pool process has to pick it up and run it: the heartbeat
    proves the worker consumes work, which a ping to its main process does not."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self.entry = None

    def start(self, consumer):
        hostname = consumer.hostname
        queues = ",".join(sorted(queue.name for queue in consumer.task_consumer.queues
                                 if queue.name != worker_direct(hostname).name))
        interval = settings.WORKER_HEARTBEAT_INTERVAL

        def send():
            consumer.app.send_task("grading.heartbeat", args=(hostname, queues), queue=worker_direct(hostname),
                                   expires=interval * 3)

        send()
        self.entry = consumer.timer.call_repeatedly(interval, send)

    def stop(self, consumer):
        if self.entry is not None:
            self.entry.cancel()
            self.entry = None


app.steps["consumer"].add(HeartbeatStep)
