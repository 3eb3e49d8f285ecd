from django.core.management.base import BaseCommand, CommandError

from questions.services import sync_bank


class Command(BaseCommand):
    help = "Load questions/bank into the database: new or changed files get a new version."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", help="bank files to load (default: all)")

    def handle(self, *args, **options):
        result = sync_bank(options["files"] or None)
        for slug in result.created:
            self.stdout.write(f"created {slug}")
        for slug in result.updated:
            self.stdout.write(f"new version {slug}")
        for slug in result.missing:
            self.stdout.write(f"no valid bank file for {slug} (kept as is)")
        for problems in result.failed.values():
            for problem in problems:
                self.stderr.write(str(problem))
        self.stdout.write(
            f"{len(result.created)} created, {len(result.updated)} updated, "
            f"{len(result.unchanged)} unchanged, {len(result.failed)} failed"
        )
        if result.failed:
            raise CommandError(f"{len(result.failed)} question file(s) failed validation and were not loaded")
