"""Run a Celery grading worker (and beat) under a supervisor that restarts them.

    manage.py run_workers [--queues grading] [--concurrency 2] [--beat] [--log-dir var/log]

A child that exits is started again, and the worker is restarted when its heartbeat is
late (a wedged pool), so the embedded mode and each compose worker recover without a
person. See grading/supervisor.py.
"""

import socket
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from grading import health
from grading.supervisor import Child, Supervisor, beat_argv, worker_argv


class Command(BaseCommand):
    help = "Run a supervised Celery worker (and beat): restarted when it dies or stops consuming."

    def add_arguments(self, parser):
        parser.add_argument("--queues", default=settings.GRADING_QUEUE)
        parser.add_argument("--concurrency", type=int, default=2)
        parser.add_argument("--name", default="", help="The worker's node name (default: <queue>@<host>).")
        parser.add_argument("--beat", action="store_true", help="Also run Celery beat (one per deployment).")
        parser.add_argument("--log-dir", default="", help="Write worker.log and beat.log here (default: stdout).")
        parser.add_argument("--check-every", type=float, default=5.0)
        parser.add_argument("--startup-grace", type=float, default=60.0,
                            help="Seconds a new worker has before its heartbeat counts.")

    def handle(self, *args, **options):
        hostname = options["name"] or f"{options['queues'].split(',')[0]}@{socket.gethostname()}"
        log_dir = Path(options["log_dir"]) if options["log_dir"] else None
        if log_dir:
            log_dir.mkdir(parents=True, exist_ok=True)
        worker = Child("worker", worker_argv(queues=options["queues"], concurrency=options["concurrency"],
                                             hostname=hostname),
                       log_dir / "worker.log" if log_dir else None)
        others = []
        if options["beat"]:
            others.append(Child("beat", beat_argv(schedule=settings.CELERY_BEAT_SCHEDULE_FILENAME),
                                log_dir / "beat.log" if log_dir else None))
        self.stdout.write(f"Supervising worker {hostname}" + (" and beat" if others else ""))
        Supervisor(
            worker=worker, others=others, worker_problem=lambda: health.check_worker(hostname),
            startup_grace=options["startup_grace"], check_every=options["check_every"],
        ).run()
