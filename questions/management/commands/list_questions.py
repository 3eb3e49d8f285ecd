import json

from django.core.management.base import BaseCommand

from questions.models import Question


class Command(BaseCommand):
    help = "List the stored questions (current versions), as a table or as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print a JSON list")

    def handle(self, *args, **options):
        questions = Question.objects.filter(current_version__isnull=False).select_related("current_version")
        rows = [
            {
                "slug": question.slug,
                "title": question.title,
                "topic": question.topic,
                "seed": question.seed_number,
                "difficulty": question.difficulty,
                "is_released": question.is_released,
                "version": question.current_version.number,
                "parts": [
                    {"id": part["id"], "kind": part["kind"]} for part in question.current_version.data["parts"]
                ],
            }
            for question in questions
        ]
        if options["json"]:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        for row in rows:
            kinds = ", ".join(f"{part['id']}:{part['kind']}" for part in row["parts"])
            self.stdout.write(f"{row['seed']:3d}  {row['topic']:<13} d{row['difficulty']}  {row['slug']}  [{kinds}]")
