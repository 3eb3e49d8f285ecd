"""What closing an interview submits: the code left in the candidate's editors.

When an interview closes, at its deadline or because the panel ended it, the candidate
can no longer press Submit, so code they typed and never submitted would score 0 and
live only as a playback frame. Closing therefore submits, for every code or kernel
part, the editor's newest recorded source when it differs from the part's newest
answer (or when the part has no answer), as that part's final answer. It is graded like
any answer and its event carries `auto_submitted: true` and the close's `reason`.

Safe to run twice: a part whose newest answer was auto-submitted, or whose editor holds
exactly what was last submitted, is skipped, and runs are serialised by the interview's
row lock. A part grading refuses for now (the sandbox's rate limit: closing can submit
several parts at once) is left for the task `interviews.submit_final_answers`, which
the close queues on commit and which retries until every part is in.
"""

from __future__ import annotations

from celery import current_app
from django.db import transaction
from django.utils import timezone

from grading import services as grading_services
from grading.kinds.base import SpecError
from trainer.interviews import selectors
from trainer.interviews.models import Interview, InterviewQuestion
from trainer.interviews.record import answer_record

FINAL_ANSWERS_TASK = "interviews.submit_final_answers"
RETRY_AFTER_S = 20  # about when the sandbox's per-minute limit lets the next run in


def _time_stopped(interview: Interview):
    """When the candidate's time on the questions ended: the deadline, or now if earlier."""
    now = timezone.now()
    return now if interview.deadline is None else min(now, interview.deadline)


def _submit(interview: Interview, state: selectors.EditorState, reason: str) -> bool:
    """Submit one part's editor source as its final answer; False if grading refused it
    for now (nothing recorded: a later run tries again)."""
    question: InterviewQuestion = state.question
    version, seed = question.question_version, question.variant_seed
    try:
        reading = grading_services.attempt_interpret(
            version=version, part_id=state.part_id, seed=seed, answer=state.source,
        )
        result = grading_services.attempt_submit(
            user=interview.candidate, version=version, part_id=state.part_id, seed=seed, answer=state.source,
            hints_used=selectors.hints_taken(question),
            time_taken=selectors.time_on_question(question, until=_time_stopped(interview)),
        )
    except (grading_services.SubmitRefused, SpecError):
        return True  # a part grading can never take: the candidate could not have submitted it either
    if result.attempt is None and reading.valid:
        return False  # readable but refused: the sandbox's rate limit
    if result.duplicate:
        return True  # this very text was just submitted, and recorded with it
    answer_record(interview.id, result, user=interview.candidate, question=question, part_id=state.part_id,
                  kind=state.kind, answer=state.source, marks={"auto_submitted": True, "reason": reason})
    return True


def final_answers_submit(interview_id: int, *, reason: str) -> int:
    """Submit the unsubmitted code of a closed (or closing) interview's parts; returns how
    many parts grading refused for now (`final_answers_queue` tries those again). Call it
    inside the transaction that closes the interview, before its `closed` event, or on
    its own afterwards."""
    with transaction.atomic():
        interview = Interview.objects.select_for_update().select_related("candidate").get(id=interview_id)
        if interview.candidate is None:
            return 0
        waiting = 0
        for state in selectors.editor_states(interview):
            if state.auto_submitted or not state.unsubmitted or not state.source.strip():
                continue
            with transaction.atomic():  # a part that fails leaves the others, and the close, standing
                if not _submit(interview, state, reason):
                    waiting += 1
    return waiting


def final_answers_queue(interview_id: int, *, reason: str) -> None:
    """Try the parts grading refused again later, once the current transaction commits."""
    transaction.on_commit(lambda: current_app.send_task(
        FINAL_ANSWERS_TASK, args=(interview_id, reason), countdown=RETRY_AFTER_S,
    ))
