"""Everything that changes interviews: create, invite, start, answer, record, close.

Scorecards change through `trainer.interviews.scorecards`.

Every write the candidate makes goes through `_lock_open_interview`, which re-reads the
interview under a row lock, closes it if its clock has run out, and refuses the write
unless it is still open: the deadline is enforced here, on the server, whatever the page
believes. Events are only ever appended (`event_append`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from grading import services as grading_services
from grading.kinds.base import SpecError
from grading.models import Attempt
from questions.schema import Question
from trainer.interviews import closing, selectors
from trainer.interviews.models import (
    Interview,
    InterviewAttempt,
    InterviewEvent,
    InterviewQuestion,
)
from trainer.interviews.people import clean_name
from trainer.interviews.record import MAX_UNREADABLE_KEPT as MAX_UNREADABLE_KEPT
from trainer.interviews.record import answer_record
from trainer.interviews.record import event_append as event_append  # the one writer of the record

MAX_SEED = 2**31 - 1
MAX_SOURCE_CHARS = 64 * 1024  # the code kind's own cap; a bigger snapshot is refused, not cut
MAX_NOTE_CHARS = 10_000
MAX_SCRATCHPAD_KEPT = 8_000  # the engine reads no longer scratchpad (grading.kinds.numeric.working)
Kind = InterviewEvent.Kind


class InterviewRefused(Exception):
    """The write is not allowed: wrong person, wrong state, or bad input. The message
    is safe to show the user."""


class InterviewClosed(InterviewRefused):
    """The interview is not open for answers (not started, or ended)."""


# --- Setting up -------------------------------------------------------------------------

@transaction.atomic
def interview_create(*, created_by, title: str, questions, time_limit: timedelta, hints_allowed: bool,
                     solutions_allowed: bool, email_required: bool = False) -> Interview:
    """Create an interview over `questions` (bank Questions, in order), pinning each one's
    current version and drawing its variant seed now, so the record is exact later."""
    questions = list(questions)
    if not questions:
        raise InterviewRefused("an interview needs at least one question")
    if any(question.current_version_id is None for question in questions):
        raise InterviewRefused("every question needs content")
    interview = Interview.objects.create(
        title=title, created_by=created_by, invite_token=secrets.token_urlsafe(24), time_limit=time_limit,
        hints_allowed=hints_allowed, solutions_allowed=solutions_allowed, email_required=email_required,
    )
    InterviewQuestion.objects.bulk_create(
        InterviewQuestion(interview=interview, position=position, question_version_id=question.current_version_id,
                          variant_seed=secrets.randbelow(MAX_SEED))
        for position, question in enumerate(questions, start=1)
    )
    event_append(interview.id, Kind.CREATED, actor=created_by,
                 data={"title": title, "questions": [question.slug for question in questions]})
    return interview


def interviewer_add(*, interview: Interview, added_by, username: str):
    """Add a user who may conduct interviews to the panel. Only the creator and admins may."""
    if not (interview.created_by_id == added_by.id or selectors.sees_all_interviews(added_by)):
        raise InterviewRefused("only the interview's creator can add interviewers")
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None or not selectors.can_conduct_interviews(user):
        raise InterviewRefused(f"{username!r} is not an interviewer")
    if user.id == interview.candidate_id:
        raise InterviewRefused("the candidate cannot join the panel")
    interview.interviewers.add(user)
    return user


# --- Joining and the clock ----------------------------------------------------------------

@transaction.atomic
def invite_accept(*, token: str, user=None, guest_name: str = "", email: str = "") -> Interview:
    """Use the single-use invitation: bind the interview to `user`, or to a new guest
    identity named `guest_name` when there is no user. The guest can log in to nothing
    else (no password, no role); it exists so attempts and events have an owner, and
    its first name is the name every page shows (people.display_name). `email` is kept
    on the interview; it must be a valid address when the interview asks for one.

    The claim is a conditional update, so of two people using one link only one wins.
    A closed interview admits no one, even by a link never used (ended before anyone
    joined), and refuses before a guest identity is made; so does a missing or invalid
    email: a refusal leaves the link unused.
    """
    interview = Interview.objects.filter(invite_token=token).first()
    if interview is not None and interview.is_closed:
        raise InterviewClosed("this interview is over; its invitation link no longer admits anyone")
    if interview is None or interview.invite_used_at is not None:
        raise InterviewRefused("this invitation link has already been used or does not exist")
    if user is not None and selectors.is_on_panel(user, interview):
        raise InterviewRefused("you are on this interview's panel; send the link to the candidate")
    email = _check_join_email(interview, email)
    is_guest = user is None
    if is_guest:
        guest_name = clean_name(guest_name)
        if not guest_name:
            raise InterviewRefused("tell us your name to join as a guest")
        user = get_user_model().objects.create_user(
            username=f"guest-{secrets.token_hex(6)}", password=None, first_name=guest_name[:150]
        )
    claimed = Interview.objects.filter(
        id=interview.id, invite_used_at__isnull=True, status__in=selectors.LIVE_STATUSES
    ).update(invite_used_at=timezone.now(), candidate=user, candidate_is_guest=is_guest, candidate_email=email)
    if not claimed:  # used, or ended, since the read above
        raise InterviewRefused("this invitation link has already been used")  # rolls the guest back
    event_append(interview.id, Kind.JOINED, actor=user,
                 data={"guest": is_guest, "name": guest_name if is_guest else user.username})
    interview.refresh_from_db()
    return interview


def _check_join_email(interview: Interview, email: str) -> str:
    email = email.strip()
    if interview.email_required and not email:
        raise InterviewRefused("this interview asks for your email address")
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise InterviewRefused(f"{email!r} is not a valid email address") from None
    return email


def interview_start(*, interview: Interview, user) -> Interview:
    """Start the candidate's clock; a second call (a reload) changes nothing."""
    now = timezone.now()
    with transaction.atomic():
        started = Interview.objects.filter(id=interview.id, candidate=user, status=Interview.Status.INVITED).update(
            status=Interview.Status.ACTIVE, started_at=now, deadline=now + interview.time_limit
        )
        if started:
            event_append(
                interview.id, Kind.STARTED, actor=user, data={"deadline": (now + interview.time_limit).isoformat()}
            )
    interview.refresh_from_db()
    if interview.candidate_id != user.id:
        raise InterviewRefused("only the candidate can start the interview")
    return interview


def _final_answers_then_closed(interview_id: int, *, reason: str, actor=None) -> None:
    """Inside the transaction that closed the interview: submit the code left unsubmitted
    in its editors (closing.py), then record the close. Ended early or at the deadline
    alike, the candidate can no longer submit, so their last code is never left unscored."""
    if closing.final_answers_submit(interview_id, reason=reason):
        closing.final_answers_queue(interview_id, reason=reason)
    event_append(interview_id, Kind.CLOSED, actor=actor, data={"reason": reason})


def interview_close_if_expired(interview: Interview, *, now=None) -> bool:
    """Close the interview if its clock has run out; True if this call closed it. The
    call that closes it submits the code left in its editors (`_final_answers_then_closed`).

    Pages call this on every read, so it skips the write when the instance shows the
    interview closed or its deadline ahead (a closed interview never reopens; a deadline
    only moves through `move_deadline`, which refreshes the instance).
    """
    now = now or timezone.now()
    if interview.is_closed or (interview.deadline is not None and interview.deadline > now):
        return False
    with transaction.atomic():
        closed = Interview.objects.filter(id=interview.id, status=Interview.Status.ACTIVE, deadline__lte=now).update(
            status=Interview.Status.CLOSED, closed_at=now
        )
        if closed:
            _final_answers_then_closed(interview.id, reason="expired")
    if closed:
        interview.refresh_from_db()
    return bool(closed)


def close_expired_interviews(*, now=None) -> int:
    """Close every interview whose clock has run out; how many this call closed."""
    now = now or timezone.now()
    expired = Interview.objects.filter(status=Interview.Status.ACTIVE, deadline__lte=now)
    return sum(interview_close_if_expired(interview, now=now) for interview in expired)


def interview_end(*, interview: Interview, ended_by) -> bool:
    """A panel member ends the interview now (before or during it); True if this closed it."""
    if not selectors.is_on_panel(ended_by, interview):
        raise InterviewRefused("only the panel can end the interview")
    now = timezone.now()
    with transaction.atomic():
        closed = Interview.objects.filter(
            id=interview.id, status__in=[Interview.Status.INVITED, Interview.Status.ACTIVE]
        ).update(status=Interview.Status.CLOSED, closed_at=now)
        if closed:
            _final_answers_then_closed(interview.id, reason="ended_by_interviewer", actor=ended_by)
    interview.refresh_from_db()
    return bool(closed)


def move_deadline(*, interview: Interview, deadline) -> None:
    """Set an active interview's deadline (extra time, or tests that jump to the end)."""
    Interview.objects.filter(id=interview.id, status=Interview.Status.ACTIVE).update(deadline=deadline)
    interview.refresh_from_db()


# --- The candidate's writes --------------------------------------------------------------

def _lock_open_interview(interview_id: int, user) -> Interview:
    """The interview, locked, if `user` is its candidate and it is open; raises otherwise.

    Call inside a transaction, after `interview_close_if_expired` outside it (a close
    made inside would be rolled back with the refused write). The time is checked here
    again, so a write that arrives after the deadline is refused even if no one has
    closed the interview yet.
    """
    interview = Interview.objects.select_for_update().get(id=interview_id)
    if interview.candidate_id != user.id:
        raise InterviewRefused("this is not your interview")
    if not interview.is_open:
        raise InterviewClosed("the interview is not open for answers")
    return interview


def _part(interview_question: InterviewQuestion, part_id: str):
    question = Question.from_data(interview_question.question_version.data)
    try:
        return question, question.part(part_id)
    except KeyError:
        raise InterviewRefused(f"this question has no part {part_id!r}") from None


def question_open(*, interview: Interview, user, question: InterviewQuestion) -> bool:
    """Record that the candidate opened `question`; False (nothing recorded) if closed."""
    interview_close_if_expired(interview)
    try:
        with transaction.atomic():
            _lock_open_interview(interview.id, user)
            event_append(interview.id, Kind.QUESTION_OPENED, actor=user, question=question)
    except InterviewClosed:
        return False
    return True


def answer_submit(*, interview: Interview, user, question: InterviewQuestion, part_id: str, answer: str,
                  scratchpad: str = ""):
    """Submit an answer through grading, recording it (and, later, its verdict).

    Returns grading's SubmitResult: an unreadable answer stores no attempt (it costs
    nothing) but is still recorded as an `answer_invalid` event. Raises InterviewClosed
    after the deadline, grading's SubmitRefused for parts it cannot take. The attempt's
    link to the interview commits with it, before its grading task is queued.
    """
    interview_close_if_expired(interview)
    with transaction.atomic():
        _lock_open_interview(interview.id, user)
        _, part = _part(question, part_id)
        result = grading_services.attempt_submit(
            user=user, version=question.question_version, part_id=part_id, seed=question.variant_seed,
            answer=answer, hints_used=selectors.hints_taken(question), time_taken=selectors.time_on_question(question),
            scratchpad=scratchpad,
        )
        if result.duplicate:
            return result  # a double-click: the first post recorded it and its event
        # The working goes into the record beside the answer, for the transcript and playback.
        answer_record(interview.id, result, user=user, question=question, part_id=part_id, kind=part.kind,
                      answer=result.attempt.answer if result.attempt else answer,
                      marks={"scratchpad": scratchpad[:MAX_SCRATCHPAD_KEPT]} if scratchpad.strip() else None)
    return result


def verdict_record(attempt) -> InterviewEvent | None:
    """Append the verdict of an interview attempt (grading's attempt_scored signal calls
    this once per final score); attempts from practice are ignored."""
    link = InterviewAttempt.objects.filter(attempt_id=attempt.id).select_related("question").first()
    if link is None:
        return None
    verdict = attempt.stored_verdict
    return event_append(
        link.question.interview_id, Kind.VERDICT, question=link.question, part_id=attempt.part_id,
        data={"attempt_id": attempt.id, "status": attempt.status, "correct": attempt.correct,
              "score": attempt.score, "feedback": verdict.feedback if verdict else ""},
    )


def hint_take(*, interview: Interview, user, question: InterviewQuestion) -> int:
    """Show the candidate the question's next hint; returns how many they now have."""
    interview_close_if_expired(interview)
    with transaction.atomic():
        locked = _lock_open_interview(interview.id, user)
        if not locked.hints_allowed:
            raise InterviewRefused("hints are off in this interview")
        taken = selectors.hints_taken(question)
        available = len(Question.from_data(question.question_version.data).hints)
        if taken >= available:
            raise InterviewRefused("no hints left for this question")
        event_append(interview.id, Kind.HINT, actor=user, question=question, data={"index": taken})
    return taken + 1


def _code_part(question: InterviewQuestion, part_id: str, source: str):
    _, part = _part(question, part_id)
    if not part.engine.uses_editor:
        raise InterviewRefused(f"part {part_id!r} is not a code part")
    if len(source) > MAX_SOURCE_CHARS:
        raise InterviewRefused(f"the code is longer than {MAX_SOURCE_CHARS} characters")
    return part


def code_snapshot(*, interview: Interview, user, question: InterviewQuestion, part_id: str, source: str) -> bool:
    """Record the editor's content; True if recorded, False if it equals the last one."""
    interview_close_if_expired(interview)
    with transaction.atomic():
        _lock_open_interview(interview.id, user)
        _code_part(question, part_id, source)
        if selectors.last_editor_source(question, part_id) == source:
            return False
        event_append(interview.id, Kind.CODE_SNAPSHOT, actor=user, question=question, part_id=part_id,
                     data={"source": source})
    return True


@dataclass(frozen=True)
class CodeRun:
    """What pressing Run did. `attempt` is the run of the part's visible examples, queued
    for the sandbox exactly as practice's Run queues it (purpose EXAMPLES: never scored,
    never the graded answer); its result arrives on the attempt. When nothing runs,
    `attempt` is None and `feedback` says why: code that does not read (`valid` False,
    answered at once, costing nothing), or code that reads but was refused, such as by
    the sandbox's rate limit (`valid` True)."""

    attempt: Attempt | None
    valid: bool
    feedback: str = ""
    duplicate: bool = False  # a double-click: `attempt` is the run the first click made

    @property
    def refused(self) -> bool:
        return self.attempt is None and self.valid


def _run_examples(user, question: InterviewQuestion, part_id: str, source: str) -> CodeRun:
    version, seed = question.question_version, question.variant_seed
    # attempt_submit answers unreadable code and a rate-limited run alike (no attempt, an
    # invalid verdict); reading first tells them apart for the record. It only parses.
    reading = grading_services.attempt_interpret(version=version, part_id=part_id, seed=seed, answer=source)
    if not reading.valid:
        return CodeRun(None, False, reading.feedback)
    result = grading_services.attempt_submit(user=user, version=version, part_id=part_id, seed=seed, answer=source,
                                             purpose=Attempt.Purpose.EXAMPLES)
    if result.attempt is None:
        return CodeRun(None, True, result.verdict.feedback)
    return CodeRun(result.attempt, True, duplicate=result.duplicate)


def code_run(*, interview: Interview, user, question: InterviewQuestion, part_id: str, source: str) -> CodeRun:
    """Run the code on the part's visible examples, through grading's own path for
    practice's Run (same sandbox, same rate limit), and record the run with its full
    source and its attempt's id (None when nothing ran).

    The attempt is linked to the interview question like an answer, in the same
    transaction, so its grading task (queued on commit) never finds it unlinked.
    """
    interview_close_if_expired(interview)
    with transaction.atomic():
        _lock_open_interview(interview.id, user)
        _code_part(question, part_id, source)
        try:
            run = _run_examples(user, question, part_id, source)
        except (grading_services.SubmitRefused, SpecError) as refusal:
            # Grading cannot take this part (a spec the code kind refuses): the run is
            # still recorded, with the reason.
            run = CodeRun(None, False, str(refusal))
        if run.duplicate:
            return run  # the first click linked it and recorded the run
        if run.attempt is not None:
            InterviewAttempt.objects.create(attempt=run.attempt, question=question)
        event_append(interview.id, Kind.CODE_RUN, actor=user, question=question, part_id=part_id,
                     data={"source": source, "valid": run.valid, "feedback": run.feedback,
                           "attempt_id": run.attempt.id if run.attempt else None})
    return run


# --- The panel's writes -----------------------------------------------------------------

def note_add(*, interview: Interview, author, text: str) -> InterviewEvent:
    """A private note from a panel member, timestamped into the record."""
    if not selectors.is_on_panel(author, interview):
        raise InterviewRefused("only the panel can write notes")
    text = text.strip()
    if not text:
        raise InterviewRefused("the note is empty")
    if len(text) > MAX_NOTE_CHARS:
        raise InterviewRefused(f"notes are at most {MAX_NOTE_CHARS} characters")
    return event_append(interview.id, Kind.NOTE, actor=author, data={"text": text})
