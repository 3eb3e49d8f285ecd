"""Changes to accounts (sign-up, roles) and to practice progress."""

from typing import NamedTuple

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.utils import timezone

import grading
from grading.models import Attempt
from grading.storable import storable_text
from questions.models import Topic
from questions.selectors import practice_bank
from trainer import progress as progress_model
from trainer.models import Draft, MasterySnapshot, PracticeSharing, Progress
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


# --- Drafts -------------------------------------------------------------------------------

class DraftRefused(Exception):
    """The draft cannot be kept (too long for its kind, or the part takes no program)."""


def draft_save(*, user, version, part_id: str, text: str) -> Draft:
    """Keep the code typed into a part, replacing the last draft of that part."""
    part = version.as_question().part(part_id)  # KeyError for a part the question lacks
    kind = grading.get_kind(part.kind)
    if not kind.uses_editor:
        raise DraftRefused(f"{part.kind} parts keep no drafts")
    if len(text) > kind.max_answer_chars:
        raise DraftRefused(f"the draft is longer than the {kind.max_answer_chars:,} characters this part takes")
    draft, _ = Draft.objects.update_or_create(
        user=user, question_id=version.question_id, part_id=part_id, defaults={"text": storable_text(text)}
    )
    return draft


def drafts_discard(*, user, question_id: int) -> int:
    """Forget the candidate's drafts on a question (a new variant was drawn)."""
    deleted, _ = Draft.objects.filter(user=user, question_id=question_id).delete()
    return deleted


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
    state.solved_parts = set(record.solved_parts)
    state.cards = dict(record.review_cards)
    state.review_due_at = record.review_due_at
    return state


def attempt_row(attempt, question_id: int) -> progress_model.AttemptRow:
    return progress_model.AttemptRow(
        question_id, attempt.part_id, attempt.created_at, attempt.score or 0.0, attempt.correct,
        hints_used=attempt.hints_used, time_taken=attempt.time_taken, after_solution=attempt.after_solution,
    )


def progress_record_attempt(attempt, *, now=None, snapshot: bool = True) -> None:
    """Fold one scored attempt into the candidate's progress and today's mastery snapshot.

    Runs once per scored attempt (grading sends `attempt_scored` after its conditional
    write wins). An attempt older than the last one folded in (two graded out of order)
    adds its credit but is not a review: its card's schedule is not rewound.

    Interview answers are left out: an interview is judged by its panel, and what a
    candidate did there must not move their practice list, mastery or reviews.
    """
    if Attempt.objects.filter(id=attempt.id, interview_link__isnull=False).exists():
        return
    question = attempt.question_version.question
    info = question_info(question)
    row = attempt_row(attempt, question.id)
    with transaction.atomic():
        record, _ = Progress.objects.select_for_update().get_or_create(user=attempt.user, question=question)
        state = progress_state(record, info)
        in_order = record.last_attempt_at is None or attempt.created_at >= record.last_attempt_at
        progress_model.apply_attempt({question.id: state}, row, review=in_order)
        record.part_scores, record.solved_parts = state.part_scores, sorted(state.solved_parts)
        record.attempted, record.solved, record.last_attempt_at = state.attempted, state.solved, state.last_attempt_at
        record.review_cards, record.review_due_at = state.cards, state.review_due_at
        record.save()
    if snapshot:
        mastery_snapshot_take(attempt.user, now=now or timezone.now())


class _ListedQuestion(NamedTuple):
    """What question_info reads of a Question row."""

    id: int
    topic: str
    difficulty: int
    part_kinds: list


def mastery_snapshot_take(user, *, now) -> MasterySnapshot:
    """Store the user's mastery per topic now as today's point of their history."""
    # The dashboard's set, so the two agree; only what question_info reads: this runs in
    # the grading worker after every scored answer, and building ~140 full Question rows
    # was much of a code job's worker CPU.
    listed = practice_bank().values_list("id", "topic", "difficulty", "part_kinds")
    questions = [_ListedQuestion(*row) for row in listed]
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
