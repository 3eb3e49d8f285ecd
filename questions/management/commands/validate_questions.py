from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from questions.loader import bank_files
from questions.models import Question
from questions.validation import validate_paths, validate_text


class Command(BaseCommand):
    help = "Validate question files (default: the whole bank), or the stored versions with --database."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", help="question files (default: every bank file)")
        parser.add_argument("--question", "--slug", dest="slug", metavar="SLUG",
                            help="only the question with this slug (one file, checked alone: quick)")
        parser.add_argument(
            "--database",
            action="store_true",
            help="validate each question's current stored version instead of the files",
        )

    def handle(self, *args, **options):
        slug = options["slug"]
        if options["database"]:
            questions = Question.objects.filter(current_version__isnull=False).select_related("current_version")
            if slug:
                questions = questions.filter(slug=slug)
            reports = [
                validate_text(
                    question.current_version.source_text, f"{question.slug} v{question.current_version.number}"
                )
                for question in questions
            ]
        else:
            paths = [Path(name) for name in options["files"]] or bank_files()
            if slug:
                paths = [path for path in paths if _slug_of(path) == slug]
            reports = validate_paths(paths)
        if not reports:
            raise CommandError(f"no question {slug!r} found" if slug else "no questions found")
        for report in reports:
            if report.ok:
                self.stdout.write(f"{report.path}: OK")
            for problem in report.problems:
                self.stdout.write(str(problem))
        failed = sum(1 for report in reports if not report.ok)
        self.stdout.write(f"{len(reports) - failed} of {len(reports)} OK")
        if failed:
            raise CommandError(f"{failed} question(s) have problems")


def _slug_of(path: Path) -> str:
    """The slug a bank file's name gives (`<seed:03d>-<slug>.yaml`): exact, so one slug
    never also picks a longer one that ends with it."""
    return path.stem.split("-", 1)[1] if "-" in path.stem else path.stem
