from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from trainer.services import progress_rebuild


class Command(BaseCommand):
    help = "Recompute practice progress and mastery history from the graded attempts."

    def add_arguments(self, parser):
        parser.add_argument("usernames", nargs="*", help="only these users (default: everyone)")

    def handle(self, *args, usernames, **options):
        users = User.objects.filter(username__in=usernames) if usernames else User.objects.all()
        for user in users:
            progress_rebuild(user)
            self.stdout.write(f"rebuilt {user.username}")
