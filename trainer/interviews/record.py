"""The interview record: the one way an event is appended to an interview's log.

Its own module so that the services and the closing of an interview (`closing.py`,
which the services call) both write the record without importing each other.
"""

from django.db import transaction
from django.db.models import F

from grading.storable import bounded_prefix, storable
from trainer.interviews.models import Interview, InterviewAttempt, InterviewEvent

Kind = InterviewEvent.Kind
# An unreadable answer is kept in the record only this far: it costs no attempt, so
# nothing stops a candidate sending many, and the live timeline sends them on every poll.
MAX_UNREADABLE_KEPT = 2_000


def event_append(interview_id: int, kind: str, *, actor=None, question=None, part_id: str = "",
                 data: dict | None = None) -> InterviewEvent:
    """Append one event with the interview's next sequence number.

    The sequence is taken by an UPDATE of the interview row, which holds that row's lock
    until the transaction commits, so concurrent appends to one interview get distinct,
    gap-free numbers in commit order (the unique constraint backs this up).
    """
    with transaction.atomic():
        bumped = Interview.objects.filter(id=interview_id).update(last_sequence=F("last_sequence") + 1)
        if not bumped:
            raise Interview.DoesNotExist(f"no interview {interview_id}")
        sequence = Interview.objects.filter(id=interview_id).values_list("last_sequence", flat=True).get()
        return InterviewEvent.objects.create(
            interview_id=interview_id, sequence=sequence, kind=kind, actor=actor, question=question,
            part_id=part_id, data=storable(data or {}),  # typed text and sandbox output: no NUL
        )


def answer_record(interview_id: int, result, *, user, question, part_id: str, kind: str, answer: str,
                  marks: dict | None = None) -> InterviewEvent:
    """Record an answer grading has taken (`result`, grading's SubmitResult): an `answer`
    event with its attempt, which is linked to the interview question here, in the
    caller's transaction, so its grading task (queued on commit) never finds it unlinked;
    or, when grading stored no attempt, an `answer_invalid` event with the feedback.
    `marks` are added to the event's data (how the answer was submitted)."""
    marks = marks or {}
    if result.attempt is None:
        kept, cut = bounded_prefix(answer, MAX_UNREADABLE_KEPT)
        return event_append(interview_id, Kind.ANSWER_INVALID, actor=user, question=question, part_id=part_id,
                            data={"answer": kept, "answer_chars": len(answer), "cut": cut,
                                  "feedback": result.verdict.feedback, **marks})
    InterviewAttempt.objects.create(attempt=result.attempt, question=question)
    return event_append(interview_id, Kind.ANSWER, actor=user, question=question, part_id=part_id,
                        data={"answer": answer, "attempt_id": result.attempt.id, "kind": kind, **marks})
