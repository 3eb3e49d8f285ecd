"""Exit 0 when the named worker ran its heartbeat lately, 1 (saying why) otherwise.

    manage.py worker_health --hostname grading@$HOSTNAME

For container health checks: unlike `celery inspect ping`, which the worker's main
process answers even when its pool is wedged, this needs a pool process to have run a
task lately.
"""

from django.core.management.base import BaseCommand, CommandError

from grading import health


class Command(BaseCommand):
    help = "Check that a worker's pool still runs tasks (its heartbeat is recent)."

    def add_arguments(self, parser):
        parser.add_argument("--hostname", required=True)

    def handle(self, *args, **options):
        problem = health.check_worker(options["hostname"])
        if problem:
            raise CommandError(problem)
        self.stdout.write("ok")
