"""Timed interviews: who takes part, what was asked, everything that happened, the scores.

An `Interview` pins each question's exact `QuestionVersion` and variant seed when it is
created (`InterviewQuestion`), so the record stays exact after the bank changes. What
happened during it is the append-only `InterviewEvent` log: rows are only ever inserted,
each with the next sequence number of its interview. `Scorecard`s are the panel's
judgements, private to their author until submitted, each with a `PartJudgement` per
part.
"""

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from trainer.interviews.people import display_name


class InterviewTemplate(models.Model):
    """A saved set of questions an interviewer can start new interviews from. Private to
    its creator unless shared; only the creator changes it (selectors.visible_templates)."""

    name = models.CharField(max_length=200)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    questions = models.ManyToManyField("questions.Question", related_name="+")
    shared = models.BooleanField(default=False, help_text="Other interviewers can see it and start interviews from it.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self):
        return self.name


class Interview(models.Model):
    class Status(models.TextChoices):
        INVITED = "invited", "Invited"  # link not used yet, or used but the clock not started
        ACTIVE = "active", "In progress"
        CLOSED = "closed", "Closed"

    title = models.CharField(max_length=200)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    interviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="panel_interviews",
        help_text="Interviewers added to the panel besides its creator.",
    )
    candidate = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="interviews",
        help_text="Set when the invitation link is used.",
    )
    candidate_is_guest = models.BooleanField(
        default=False, help_text="The candidate is a guest identity made for this interview only."
    )
    email_required = models.BooleanField(
        default=False, help_text="The candidate must give an email address to join."
    )
    candidate_email = models.EmailField(blank=True, help_text="The address the candidate gave when joining.")
    invite_token = models.CharField(max_length=64, unique=True)
    invite_used_at = models.DateTimeField(null=True, blank=True)
    time_limit = models.DurationField()
    hints_allowed = models.BooleanField(default=True)
    solutions_allowed = models.BooleanField(
        default=False, help_text="The candidate may read the worked solutions once the interview has ended."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.INVITED)
    started_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    last_sequence = models.PositiveIntegerField(
        default=0, help_text="The sequence number of the newest event; bumped by each append."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "deadline"])]

    def __str__(self):
        return self.title

    @property
    def is_open(self) -> bool:
        """Answers are accepted: started, not closed, and the clock has time left."""
        return self.status == self.Status.ACTIVE and self.deadline is not None and timezone.now() < self.deadline

    @property
    def is_closed(self) -> bool:
        return self.status == self.Status.CLOSED

    @property
    def candidate_display_name(self) -> str:
        """The candidate's name as every page and export shows it (people.display_name:
        the name a guest typed, an account's full name or username); "" before anyone joined."""
        return display_name(self.candidate) if self.candidate_id else ""

    @property
    def candidate_label(self) -> str:
        """The name, marked "(guest)" for a guest; "" before anyone joined."""
        name = self.candidate_display_name
        return f"{name} (guest)" if name and self.candidate_is_guest else name

    @property
    def time_limit_minutes(self) -> int:
        return int(self.time_limit / timedelta(minutes=1))


class InterviewQuestion(models.Model):
    """One question of an interview, pinned: the exact version and variant asked."""

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveSmallIntegerField(help_text="1, 2, ... in the order asked.")
    question_version = models.ForeignKey("questions.QuestionVersion", on_delete=models.PROTECT, related_name="+")
    variant_seed = models.PositiveIntegerField()

    class Meta:
        ordering = ["interview", "position"]
        constraints = [
            models.UniqueConstraint(fields=["interview", "position"], name="unique_interview_question_position"),
        ]

    def __str__(self):
        return f"{self.interview_id} Q{self.position}"


class AppendOnlyQuerySet(models.QuerySet):
    """Bulk changes are refused: the interview record is written once, never rewritten."""

    def update(self, **kwargs):
        raise AppendOnlyError("interview events cannot be updated")

    def delete(self):
        raise AppendOnlyError("interview events cannot be deleted")

    def bulk_update(self, objs, fields, batch_size=None):
        raise AppendOnlyError("interview events cannot be updated")

    def update_or_create(self, defaults=None, create_defaults=None, **kwargs):
        raise AppendOnlyError("interview events cannot be updated")


class AppendOnlyError(Exception):
    """Someone tried to change or remove a recorded interview event."""


class InterviewEvent(models.Model):
    """One thing that happened, in order. `data` holds what the kind needs (see Kind).

    Insert through `services.event_append`, which takes the next sequence number; any
    attempt to save an existing row or delete one raises AppendOnlyError.
    """

    class Kind(models.TextChoices):
        CREATED = "created", "Interview created"  # {title, questions: [slug, ...]}
        JOINED = "joined", "Candidate joined"  # {guest: bool, name}
        STARTED = "started", "Clock started"  # {deadline}
        QUESTION_OPENED = "question_opened", "Question opened"  # {}
        ANSWER = "answer", "Answer submitted"  # {answer, attempt_id, kind}
        ANSWER_INVALID = "answer_invalid", "Unreadable answer"  # {answer, feedback}
        VERDICT = "verdict", "Verdict"  # {attempt_id, status, correct, score, feedback}
        HINT = "hint", "Hint taken"  # {index}
        CODE_SNAPSHOT = "code_snapshot", "Editor snapshot"  # {source}
        # {source, valid, feedback, attempt_id}: the run of the visible examples (attempt_id
        # None when nothing ran, and feedback says why); its result is on the attempt.
        CODE_RUN = "code_run", "Code run"
        NOTE = "note", "Interviewer note"  # {text}
        CLOSED = "closed", "Interview closed"  # {reason: expired | ended_by_interviewer}

    interview = models.ForeignKey(Interview, on_delete=models.PROTECT, related_name="events")
    sequence = models.PositiveIntegerField()
    kind = models.CharField(max_length=20, choices=Kind.choices)
    at = models.DateTimeField(default=timezone.now)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    question = models.ForeignKey(InterviewQuestion, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    part_id = models.CharField(max_length=64, blank=True)
    data = models.JSONField(default=dict, blank=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["interview", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["interview", "sequence"], name="unique_interview_event_sequence"),
        ]
        indexes = [models.Index(fields=["interview", "kind"])]

    def __str__(self):
        return f"{self.interview_id}#{self.sequence} {self.kind}"

    def save(self, *args, **kwargs):
        if self.pk is not None and not self._state.adding:
            raise AppendOnlyError("interview events cannot be updated")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("interview events cannot be deleted")


class InterviewAttempt(models.Model):
    """Which interview question an attempt belongs to: an answer (the verdict signal finds
    it here) or a run of the visible examples (its purpose says which)."""

    attempt = models.OneToOneField("grading.Attempt", on_delete=models.PROTECT, related_name="interview_link")
    question = models.ForeignKey(InterviewQuestion, on_delete=models.PROTECT, related_name="attempt_links")


class Recommendation(models.TextChoices):
    STRONG_NO = "strong_no", "Strong no"
    NO = "no", "No"
    YES = "yes", "Yes"
    STRONG_YES = "strong_yes", "Strong yes"


RATING_DIMENSIONS = (
    ("technical_accuracy", "Technical accuracy"),
    ("problem_solving", "Problem solving"),
    ("communication", "Communication"),
)


class Scorecard(models.Model):
    """One panel member's judgement of one interview; private to them until submitted.

    The judgement is per part (`judgements`) plus the overall `recommendation` and
    `notes`. The three 1-4 ratings are what scorecards asked before per-part
    judgements: kept, so older scorecards keep what their authors wrote, but no
    longer asked for.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="scorecards")
    interviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    technical_accuracy = models.PositiveSmallIntegerField(null=True, blank=True)
    problem_solving = models.PositiveSmallIntegerField(null=True, blank=True)
    communication = models.PositiveSmallIntegerField(null=True, blank=True)
    recommendation = models.CharField(max_length=16, choices=Recommendation.choices, blank=True)
    notes = models.TextField(blank=True)
    updated_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["interview", "submitted_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["interview", "interviewer"], name="one_scorecard_per_interviewer"),
            models.CheckConstraint(
                condition=models.Q(technical_accuracy__isnull=True) | models.Q(technical_accuracy__range=(1, 4)),
                name="technical_accuracy_1_to_4",
            ),
            models.CheckConstraint(
                condition=models.Q(problem_solving__isnull=True) | models.Q(problem_solving__range=(1, 4)),
                name="problem_solving_1_to_4",
            ),
            models.CheckConstraint(
                condition=models.Q(communication__isnull=True) | models.Q(communication__range=(1, 4)),
                name="communication_1_to_4",
            ),
        ]

    def __str__(self):
        return f"{self.interview_id} by {self.interviewer_id} ({self.status})"

    @property
    def is_submitted(self) -> bool:
        return self.status == self.Status.SUBMITTED

    def ratings(self) -> list[tuple[str, str, int | None]]:
        return [(field, label, getattr(self, field)) for field, label in RATING_DIMENSIONS]


class PartJudgement(models.Model):
    """One scorecard author's judgement of one part of one interview question.

    Opening a scorecard creates one per part from the evidence (`auto_score` is the
    final graded attempt's score, not confirmed yet). The author then confirms it,
    overrides it with a score in 0..1 and a reason, or, for parts a person assesses
    (the kind is `self_assessed`), ticks the rubric items the answer covered: their
    share is the score unless overridden.
    """

    scorecard = models.ForeignKey(Scorecard, on_delete=models.CASCADE, related_name="judgements")
    question = models.ForeignKey(InterviewQuestion, on_delete=models.CASCADE, related_name="+")
    part_id = models.CharField(max_length=64)
    auto_score = models.FloatField(null=True, blank=True, help_text="The final graded attempt's score, if any.")
    confirmed = models.BooleanField(default=False)
    override_score = models.FloatField(null=True, blank=True)
    reason = models.TextField(blank=True)
    rubric_ticked = models.JSONField(default=list, blank=True, help_text="Ids of the rubric items ticked.")

    class Meta:
        ordering = ["scorecard", "question__position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["scorecard", "question", "part_id"], name="unique_part_judgement"),
            models.CheckConstraint(
                condition=models.Q(override_score__isnull=True) | models.Q(override_score__range=(0.0, 1.0)),
                name="override_score_0_to_1",
            ),
        ]

    def __str__(self):
        return f"{self.scorecard_id} {self.question_id}/{self.part_id}"

    @property
    def ticked(self) -> tuple[str, ...]:
        """`rubric_ticked` read as item ids (the column holds a JSON list of strings)."""
        return tuple(str(item) for item in self.rubric_ticked or ())

    @property
    def is_overridden(self) -> bool:
        return self.override_score is not None
