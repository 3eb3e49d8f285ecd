"""Close every interview whose clock has run out (run it from cron or a beat schedule).

Pages close an expired interview lazily when they read it and every write checks the
deadline, so this command only tidies interviews no one is looking at."""

from django.core.management.base import BaseCommand

from trainer.interviews.services import close_expired_interviews


class Command(BaseCommand):
    help = "Close interviews whose deadline has passed."

    def handle(self, *args, **options):
        closed = close_expired_interviews()
        self.stdout.write(f"closed {closed} expired interview{'s' if closed != 1 else ''}")
