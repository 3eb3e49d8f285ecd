"""The question bank in the database.

A `Question` is the stable identity (its slug) plus the listing fields pages filter on;
its content lives in `QuestionVersion` rows, one per distinct text ever loaded, so an
attempt that points at a version keeps the exact question it answered after the file
changes. `current_version` is the one candidates get now.
"""

import json

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.functional import cached_property

from questions import schema

Topic = models.TextChoices("Topic", [(topic.name, (topic.value, topic.label)) for topic in schema.Topic])


class Question(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    topic = models.CharField(max_length=20, choices=Topic.choices)
    difficulty = models.PositiveSmallIntegerField()
    seed_number = models.PositiveSmallIntegerField(help_text="The question's number in the seed catalogue (1-135).")
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    part_kinds = models.JSONField(
        default=list, help_text="[[part id, kind], ...] of the current version, so listings need not load it."
    )
    is_released = models.BooleanField(
        default=True, help_text="Unreleased questions are visible to question authors only."
    )
    # A listing field like the title: the current version's `interview_only` key sets it.
    interview_only = models.BooleanField(
        default=False,
        help_text="Kept out of practice entirely (only authors see it there); interviews can still ask it.",
    )
    current_version = models.ForeignKey(
        "QuestionVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["seed_number", "slug"]
        permissions = [("author_questions", "Can author, preview, import and export questions")]

    def __str__(self):
        return f"{self.seed_number:03d} {self.slug}"

    @property
    def topic_label(self) -> str:
        return Topic(self.topic).label


class QuestionVersion(models.Model):
    class Origin(models.TextChoices):
        FILE = "file", "Bank file"
        BROWSER = "browser", "Browser"

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of source_text.")
    source_text = models.TextField(help_text="The question file's YAML, exactly as loaded.")
    # JSON text, not a JSONField: PostgreSQL's jsonb reorders mapping keys, and order is
    # meaning here (derived values refer to earlier ones; params are drawn in order).
    data_json = models.TextField(help_text="source_text parsed, as JSON text; `data` loads it.")
    origin = models.CharField(max_length=16, choices=Origin.choices)
    source_path = models.CharField(max_length=300, blank=True, help_text="The bank file, for file versions.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["question", "number"]
        constraints = [
            models.UniqueConstraint(fields=["question", "number"], name="unique_question_version_number"),
        ]

    def __str__(self):
        return f"{self.question.slug} v{self.number}"

    @cached_property
    def data(self) -> dict:
        """The parsed question, its mappings in file order (the JSON text column's loader)."""
        return json.loads(self.data_json)

    def as_question(self) -> schema.Question:
        """The version's content as typed data (the JSON column's loader)."""
        return schema.Question.from_data(self.data)
