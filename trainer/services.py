"""Changes to accounts (sign-up, roles) and to practice progress."""

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.utils import timezone

import grading
from grading.models import Attempt
from questions.models import Topic
from questions.selectors import practice_bank
from trainer import progress as progress_model
from trainer.models import MasterySnapshot, PracticeSharing, Progress
from trainer.roles import Role


@transaction.atomic
def user_create(*, username: str, password: str, email: str = "", role: Role = Role.CANDIDATE) -> User:
    """Create a user holding `role`. Admins are also staff so the Django admin opens."""
    user = User.objects.create_user(username=username, password=password, email=email)
    user_set_role(user, role)
    return user


def user_set_role(user: User, role: Role) -> None:
    user.groups.remove(*Group.objects.filter(name__in=Role.values))
    user.groups.add(Group.objects.get(name=role.value))
    user.is_staff = role == Role.ADMIN
    user.save(update_fields=["is_staff"])


def practice_sharing_set(user: User, *, shared: bool) -> PracticeSharing:
    """Share (or stop sharing) the user's practice attempts with interviewers: the
    review page shows a candidate's practice only while this is on."""
    sharing, _ = PracticeSharing.objects.update_or_create(
        user=user, defaults={"shared": shared, "changed_at": timezone.now()}
    )
    return sharing


# --- Practice progress -------------------------------------------------------------------

def question_info(question) -> progress_model.QuestionInfo:
    auto_graded = grading.kinds_with("auto_graded")
    auto = tuple(part_id for part_id, kind in question.part_kinds if kind in auto_graded)
    return progress_model.QuestionInfo(question.id, question.topic, question.difficulty, auto)


def progress_state(record: Progress | None, info) -> progress_model.QuestionProgress:
    """The pure model's state for a stored row (a fresh one when there is no row)."""
    state = progress_model.QuestionProgress(info)
    if record is None:
        return state
    state.part_scores = dict(record.part_scores)
    state.attempted, state.solved, state.last_attempt_at = record.attempted, record.solved, record.last_attempt_at
    if record.review_box is not None:
        state.review = progress_model.Review(record.review_box, record.review_due_at)
    return state


def progress_record_attempt(attempt, *, now=None, snapshot: bool = True) -> None:
    """Fold one scored attempt into the candidate's progress and today's mastery snapshot.

    Runs once per scored attempt (grading sends `attempt_scored` after its conditional
    write wins). An attempt older than the last one folded in (two graded out of order)
    only updates its part's score if that part has not been answered since.

    Interview answers are left out: an interview is judged by its panel, and what a
    candidate did there must not move their practice list, mastery or reviews.
    """
    if Attempt.objects.filter(id=attempt.id, interview_link__isnull=False).exists():
        return
    question = attempt.question_version.question
    info = question_info(question)
    row = progress_model.AttemptRow(question.id, attempt.part_id, attempt.created_at, attempt.score or 0.0,
                                    attempt.correct)
    with transaction.atomic():
        record, _ = Progress.objects.select_for_update().get_or_create(user=attempt.user, question=question)
        state = progress_state(record, info)
        if record.last_attempt_at is None or attempt.created_at >= record.last_attempt_at:
            progress_model.apply_attempt({question.id: state}, row)
        elif attempt.part_id not in state.part_scores:
            state.part_scores[attempt.part_id] = row.score
        record.part_scores = state.part_scores
        record.attempted, record.solved, record.last_attempt_at = state.attempted, state.solved, state.last_attempt_at
        record.review_box = state.review.box if state.review else None
        record.review_due_at = state.review.due_at if state.review else None
        record.save()
    if snapshot:
        mastery_snapshot_take(attempt.user, now=now or timezone.now())


def mastery_snapshot_take(user, *, now) -> MasterySnapshot:
    """Store the user's mastery per topic now as today's point of their history."""
    questions = list(practice_bank().select_related(None))  # the dashboard's set, so the two agree
    records = {record.question_id: record for record in Progress.objects.filter(user=user)}
    progress = {q.id: progress_state(records.get(q.id), question_info(q)) for q in questions}
    mastery = progress_model.mastery_by_topic(progress, Topic.values, now)
    snapshot, _ = MasterySnapshot.objects.update_or_create(
        user=user, day=now.date(), defaults={"taken_at": now, "mastery": mastery}
    )
    return snapshot


@transaction.atomic
def progress_rebuild(user) -> None:
    """Recompute a user's progress from all their graded answers (derived data repair):
    the attempts grading reported as scored, so runs of the examples are left out."""
    Progress.objects.filter(user=user).delete()
    MasterySnapshot.objects.filter(user=user).delete()
    attempts = Attempt.objects.filter(
        user=user, status=Attempt.Status.GRADED, purpose=Attempt.Purpose.ANSWER, interview_link__isnull=True
    ).select_related(
        "question_version__question", "user"
    ).order_by("created_at", "id")
    attempts = list(attempts)
    for index, attempt in enumerate(attempts):
        last_of_day = index + 1 == len(attempts) or attempts[index + 1].created_at.date() != attempt.created_at.date()
        progress_record_attempt(attempt, now=attempt.created_at, snapshot=last_of_day)
