"""Practice progress, kept up to date as attempts are graded.

Both tables are derived from the attempts (`manage.py rebuild_progress` recomputes them
from scratch); they are stored so that the dashboard and the question browser read one
row per question instead of replaying thousands of attempts on every page view.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone


class Progress(models.Model):
    """One candidate's standing on one question (see trainer.progress for the model)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="progress")
    question = models.ForeignKey("questions.Question", on_delete=models.CASCADE, related_name="+")
    part_scores = models.JSONField(default=dict)
    attempted = models.BooleanField(default=False)
    solved = models.BooleanField(default=False)
    last_attempt_at = models.DateTimeField(null=True)
    solved_parts = models.JSONField(default=list)  # auto-graded parts answered right at least once
    # The earliest due date of its parts' FSRS cards, a column so that lists filter on it.
    review_due_at = models.DateTimeField(null=True)
    # part id -> the FSRS card (fsrs.Card.to_dict()) that schedules that part's reviews.
    review_cards = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "question"], name="unique_progress_per_question")]


class MasterySnapshot(models.Model):
    """Mastery per topic at the last graded answer of a day: the dashboard's history."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mastery_snapshots")
    day = models.DateField()
    taken_at = models.DateTimeField()
    mastery = models.JSONField(default=dict)

    class Meta:
        ordering = ["day"]
        constraints = [models.UniqueConstraint(fields=["user", "day"], name="unique_snapshot_per_day")]


class PracticeSharing(models.Model):
    """A candidate's choice to show their practice attempts to interviewers on the review
    page. Practice is private by default: no row, or `shared` false, shows nothing."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="practice_sharing"
    )
    shared = models.BooleanField(default=False)
    changed_at = models.DateTimeField(default=timezone.now)


class Draft(models.Model):
    """Code typed into a part but not submitted yet, kept on the server so that a reload,
    another device or a crash does not lose it. Submitting the part keeps it (the editor
    still shows that code); drawing a new variant discards it, after asking."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="drafts")
    question = models.ForeignKey("questions.Question", on_delete=models.CASCADE, related_name="+")
    part_id = models.CharField(max_length=64)
    text = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "question", "part_id"], name="one_draft_per_part")]
