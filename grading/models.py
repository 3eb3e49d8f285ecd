"""Stored answers and their verdicts.

An Attempt is one answer to one part of one question version, for one variant (seed).
It is written before it is queued, so an accepted answer is never lost; a worker moves
it forward with conditional updates, so two deliveries of the same task cannot both
write a verdict.
"""

import functools
import logging

from django.conf import settings
from django.db import models

from grading.verdict import Verdict

logger = logging.getLogger(__name__)


class Attempt(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        GRADED = "graded", "Graded"
        FAILED = "failed", "Failed"

    class Purpose(models.TextChoices):
        ANSWER = "answer", "Answer"  # graded and counted
        EXAMPLES = "examples", "Run the visible examples"  # feedback only, never scored

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="attempts")
    question_version = models.ForeignKey(
        "questions.QuestionVersion", on_delete=models.PROTECT, related_name="attempts"
    )
    part_id = models.CharField(max_length=64)
    part_kind = models.CharField(max_length=16, blank=True, help_text="numeric, formula, explain, code, ...")
    purpose = models.CharField(max_length=16, choices=Purpose.choices, default=Purpose.ANSWER)
    variant_seed = models.PositiveIntegerField()
    # Sandboxed kinds: the secret seed of the hidden tests, drawn once at submit, so a
    # retried task meets the same tests and a disputed verdict can be replayed
    # (`manage.py grade ... --judge-seed`). Never shown to the candidate.
    judge_seed = models.BigIntegerField(null=True, blank=True)
    answer = models.TextField()
    # A numeric answer's working, one named step per line, graded step by step with the
    # answer (grading.grade's `scratchpad`); "" when none was given.
    scratchpad = models.TextField(blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    verdict = models.JSONField(null=True, blank=True)
    correct = models.BooleanField(null=True)
    score = models.FloatField(null=True)
    hints_used = models.PositiveSmallIntegerField(default=0)
    time_taken = models.DurationField(null=True, blank=True, help_text="From opening the question to this answer.")
    tries = models.PositiveSmallIntegerField(default=0)
    # When it was last put on the queue: at submit, and again each time it is retried or
    # found stale (`services.requeue_stale_attempts`), which measures its kind's deadline.
    queued_at = models.DateTimeField(null=True, blank=True)
    # The worker that claimed it last: a worker busy grading is not a wedged one.
    claimed_by = models.CharField(max_length=255, blank=True)
    failure_reason = models.TextField(blank=True)
    # Submitted after the candidate opened the solution (gave up): recorded and shown,
    # but it earns no credit and never makes a part solved.
    after_solution = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    graded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["user", "question_version", "part_id"]),
            models.Index(fields=["status", "queued_at"]),
        ]
        permissions = [
            ("submit_attempt", "Can answer questions"),
            ("review_attempts", "Can review every candidate's attempts"),
        ]

    def __str__(self):
        return f"{self.user} {self.question_version} {self.part_id} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.GRADED, self.Status.FAILED)

    @functools.cached_property
    def stored_verdict(self) -> Verdict | None:
        """The stored verdict, typed (the one way pages and exports read it); None
        before grading, or when a row no longer loads (logged: it is a bug, not an
        answer)."""
        if not self.verdict:
            return None
        try:
            return Verdict.from_dict(self.verdict)
        except (ValueError, TypeError) as error:
            logger.error("attempt %s: stored verdict does not load: %s", self.pk, error)
            return None


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker proved it consumes work: a task it sends to its
    own queue every few seconds (`grading.heartbeat`) and one of its pool processes runs.
    A worker whose pool is wedged still answers `celery inspect ping`, but this row goes
    stale, and `/healthz` says so."""

    hostname = models.CharField(max_length=255, unique=True)
    queues = models.CharField(max_length=255, blank=True, help_text="The queues it consumes, comma-separated.")
    beat_at = models.DateTimeField()

    def __str__(self):
        return f"{self.hostname} at {self.beat_at:%H:%M:%S}"
