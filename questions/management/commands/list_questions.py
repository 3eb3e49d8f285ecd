import json

from django.core.management.base import BaseCommand

from questions.models import Question
from questions.schema import Question as QuestionFile
from questions.variants import draw_variant


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
            | _artifacts(question.current_version.data)
            for question in questions
        ]
        if options["json"]:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        for row in rows:
            kinds = ", ".join(f"{part['id']}:{part['kind']}" for part in row["parts"])
            self.stdout.write(f"{row['seed']:3d}  {row['topic']:<13} d{row['difficulty']}  {row['slug']}  [{kinds}]")


def _artifacts(data: dict) -> dict:
    """A lab question's artifacts in its first variant (seed 0): file name, kind and
    title each; other variants have the same files with other data. {} for questions
    without a generator."""
    question = QuestionFile.from_data(data)
    if not question.generator:
        return {}
    lab = draw_variant(question, 0).lab
    return {"artifacts": [{"file": item.filename, "kind": item.kind, "title": item.title} for item in lab.rendered]}
