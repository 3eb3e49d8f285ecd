from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from trainer.roles import Role
from trainer.services import user_create

DEMO_ACCOUNTS = [
    ("candidate", "candidate-demo-pass", Role.CANDIDATE),
    ("interviewer", "interviewer-demo-pass", Role.INTERVIEWER),
    ("admin", "admin-demo-pass", Role.ADMIN),
]


class Command(BaseCommand):
    help = "Create the demo candidate, interviewer and admin (if missing) and print their logins."

    def handle(self, *args, **options):
        self.stdout.write("Demo accounts (embedded mode only; change them on a real deployment):")
        for username, password, role in DEMO_ACCOUNTS:
            if not User.objects.filter(username=username).exists():
                user_create(username=username, password=password, role=role)
            self.stdout.write(f"  {role.label:<12} username {username:<12} password {password}")
