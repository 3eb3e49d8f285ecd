"""Reads behind the interview pages, and the access rules they all share.

Who sees what (the rules live here and nowhere else):
- a candidate sees only the interviews they are the candidate of;
- an interviewer sees the interviews they created or were added to (the panel);
- an admin sees every interview;
- an interviewer sees their own interview templates and those others shared; an admin
  sees every template; only a template's creator may change, share or delete it;
- while an interview is not closed, its questions are locked in practice for everyone
  but its panel (admins included), so practice cannot give its answers away.
Lookups for a user who may not see an interview raise Interview.DoesNotExist, so views
answer 404 and do not reveal that it exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

import grading
from grading.models import Attempt
from questions.rendering import render_question
from questions.schema import Question
from trainer.interviews.models import (
    Interview,
    InterviewAttempt,
    InterviewEvent,
    InterviewQuestion,
    InterviewTemplate,
    Scorecard,
)
from trainer.interviews.people import display_name

# Conducting interviews is the interviewer role's permission; seeing all of them is the
# admin role's. trainer/roles.py has no interview-specific permissions yet, so these name
# the permissions that tell those roles apart today.
CONDUCT_PERMISSION = "grading.review_attempts"
OVERSEE_PERMISSION = "questions.author_questions"
SOURCE_EVENT_KINDS = (InterviewEvent.Kind.CODE_SNAPSHOT, InterviewEvent.Kind.CODE_RUN, InterviewEvent.Kind.ANSWER)
ATTEMPT_EVENT_KINDS = (InterviewEvent.Kind.ANSWER, InterviewEvent.Kind.CODE_RUN)  # data holds an attempt_id
# Not closed: an invited candidate could study in practice before starting the clock, and
# an active one whose deadline passed is still "active" until closed, and could be given
# extra time (services.move_deadline).
LIVE_STATUSES = (Interview.Status.INVITED, Interview.Status.ACTIVE)


# --- Access ------------------------------------------------------------------------------

def can_conduct_interviews(user) -> bool:
    return bool(user.is_authenticated and user.has_perm(CONDUCT_PERMISSION))


def sees_all_interviews(user) -> bool:
    return bool(user.is_authenticated and user.has_perm(OVERSEE_PERMISSION))


def is_on_panel(user, interview: Interview) -> bool:
    """The creator, an added interviewer, or an admin."""
    if not user.is_authenticated:
        return False
    if interview.created_by_id == user.id or sees_all_interviews(user):
        return True
    return interview.interviewers.filter(id=user.id).exists()


def panel_interviews(user) -> QuerySet[Interview]:
    """The interviews `user` may watch, review and score."""
    if sees_all_interviews(user):
        return Interview.objects.all()
    if not can_conduct_interviews(user):
        return Interview.objects.none()
    ids = Interview.objects.filter(Q(created_by=user) | Q(interviewers=user)).values("id")
    return Interview.objects.filter(id__in=ids)


def live_interviews_hidden_from(user) -> QuerySet[Interview]:
    """Interviews not closed yet that `user` is not on the panel of: practice locks the
    questions they ask for `user` (trainer.selectors.practice_questions). Their
    candidates are never on the panel, so they are locked out too. Meant as a subquery."""
    if sees_all_interviews(user):
        return Interview.objects.none()
    live = Interview.objects.filter(status__in=LIVE_STATUSES)
    if not user.is_authenticated:
        return live
    return live.exclude(created_by=user).exclude(interviewers=user)


def candidate_interviews(user) -> QuerySet[Interview]:
    return Interview.objects.filter(candidate=user) if user.is_authenticated else Interview.objects.none()


def get_panel_interview(user, interview_id: int) -> Interview:
    return panel_interviews(user).select_related("created_by", "candidate").get(id=interview_id)


def get_candidate_interview(user, interview_id: int) -> Interview:
    return candidate_interviews(user).get(id=interview_id)


def get_interview_question(interview: Interview, position: int) -> InterviewQuestion:
    return InterviewQuestion.objects.select_related("question_version").get(interview=interview, position=position)


def interview_rows(queryset: QuerySet[Interview]) -> list[Interview]:
    """Interviews for a list page, with their people and question counts (one query)."""
    return list(
        queryset.select_related("created_by", "candidate").annotate(question_count=Count("questions")).order_by(
            "-created_at", "-id"
        )
    )


def visible_templates(user) -> QuerySet[InterviewTemplate]:
    """The templates `user` may see and start interviews from, with their creators."""
    templates = InterviewTemplate.objects.select_related("created_by")
    if sees_all_interviews(user):
        return templates
    if not can_conduct_interviews(user):
        return templates.none()
    return templates.filter(Q(created_by=user) | Q(shared=True))


def template_rows(user) -> list[InterviewTemplate]:
    """The visible templates for the templates page: creators and question counts (one query)."""
    return list(visible_templates(user).annotate(question_count=Count("questions")).order_by("name", "id"))


def owns_template(user, template: InterviewTemplate) -> bool:
    """Only the creator changes, shares or deletes a template (admins included: they see
    every template, and change others' in the Django admin if they must)."""
    return user.is_authenticated and template.created_by_id == user.id


def template_owner_note(template: InterviewTemplate, viewer) -> str:
    """Whose the template is, as `viewer` reads it: "yours", "yours, shared",
    "shared by alice", or (an admin seeing a private one) "alice's, private"."""
    if owns_template(viewer, template):
        return "yours, shared" if template.shared else "yours"
    owner = display_name(template.created_by)
    return f"shared by {owner}" if template.shared else f"{owner}'s, private"


# --- Small reads the services need --------------------------------------------------------

def hints_taken(question: InterviewQuestion) -> int:
    return InterviewEvent.objects.filter(question=question, kind=InterviewEvent.Kind.HINT).count()


def time_on_question(question: InterviewQuestion, *, until: datetime | None = None) -> timedelta | None:
    """From the first time the candidate opened the question until `until` (now)."""
    first = (
        InterviewEvent.objects.filter(question=question, kind=InterviewEvent.Kind.QUESTION_OPENED)
        .order_by("sequence").values_list("at", flat=True).first()
    )
    return None if first is None else max(timedelta(0), (until or timezone.now()) - first)


def last_editor_source(question: InterviewQuestion, part_id: str) -> str | None:
    """The newest code the record holds for a code part (snapshot, run or submission)."""
    event = (
        InterviewEvent.objects.filter(question=question, part_id=part_id, kind__in=SOURCE_EVENT_KINDS)
        .order_by("-sequence").only("data", "kind").first()
    )
    if event is None:
        return None
    return event.data.get("source", event.data.get("answer"))


@dataclass(frozen=True)
class EditorState:
    """Where one code (or kernel) part of an interview stands. `source` is what its editor
    holds, as last recorded (snapshot, run or answer; None when nothing was), and
    `submitted` the text of its newest answer, readable or not (None when none was).
    `auto_submitted`: that answer was submitted for the candidate when the interview
    closed (trainer.interviews.closing), not by them."""

    question: InterviewQuestion
    title: str
    part_id: str
    kind: str
    source: str | None
    source_at: datetime | None
    submitted: str | None
    auto_submitted: bool = False

    @property
    def unsubmitted(self) -> bool:
        """The editor holds code that was never submitted as it stands."""
        return self.source is not None and self.source != self.submitted


ANSWER_KINDS = (InterviewEvent.Kind.ANSWER, InterviewEvent.Kind.ANSWER_INVALID)


def editor_states(interview: Interview) -> list[EditorState]:
    """Every code part of the interview in question order, with its editor's newest
    source and its newest answer: what the panel watches live, and what closing the
    interview submits. Three queries, however many snapshots were recorded."""
    newest = (
        InterviewEvent.objects.filter(interview=interview, kind__in=(*SOURCE_EVENT_KINDS, *ANSWER_KINDS))
        .exclude(part_id="").order_by().values("question_id", "part_id", "kind").annotate(newest=Max("sequence"))
    )
    events = InterviewEvent.objects.filter(interview=interview, sequence__in=[row["newest"] for row in newest])
    latest_source: dict[tuple[int, str], InterviewEvent] = {}
    latest_answer: dict[tuple[int, str], InterviewEvent] = {}
    for event in sorted(events, key=lambda event: event.sequence):
        key = (event.question_id, event.part_id)
        if event.kind in SOURCE_EVENT_KINDS:
            latest_source[key] = event
        if event.kind in ANSWER_KINDS:
            latest_answer[key] = event
    states = []
    for iq, schema in sorted(_question_map(interview).values(), key=lambda pair: pair[0].position):
        for part in schema.parts:
            if part.kind not in grading.kinds() or not part.engine.uses_editor:
                continue
            source, answer = latest_source.get((iq.id, part.id)), latest_answer.get((iq.id, part.id))
            states.append(EditorState(
                iq, schema.title, part.id, part.kind,
                source=None if source is None else source.data.get("source", source.data.get("answer")),
                source_at=None if source is None else source.at,
                submitted=None if answer is None else answer.data.get("answer"),
                auto_submitted=bool(answer and answer.data.get("auto_submitted")),
            ))
    return states


# --- The candidate's room -------------------------------------------------------------------

@dataclass
class RoomPart:
    part: object  # questions.rendering.RenderedPart
    attempt: Attempt | None  # the latest answer
    editor_source: str = ""  # code parts: what the editor shows (resumes where they were)
    answerable: bool = True
    run_attempt: Attempt | None = None  # code parts: the latest run of the visible examples

    @property
    def editor(self) -> bool:
        """Answered in the code editor, whose typing is recorded (`uses_editor`)."""
        return self.part.engine.uses_editor

    @property
    def runnable(self) -> bool:
        """Has visible examples the candidate can run (`has_examples`)."""
        return self.part.engine.has_examples


def _latest_attempts(question: InterviewQuestion, purpose: str) -> dict[str, Attempt]:
    """The newest attempt of each part with `purpose` (answers, or runs of the examples)."""
    latest: dict[str, Attempt] = {}
    links = InterviewAttempt.objects.filter(question=question, attempt__purpose=purpose).select_related(
        "attempt__question_version"
    )
    for link in sorted(links, key=lambda link: (link.attempt.created_at, link.attempt.id)):
        latest[link.attempt.part_id] = link.attempt
    return latest


def last_opened_position(interview: Interview) -> int | None:
    return (
        InterviewEvent.objects.filter(interview=interview, kind=InterviewEvent.Kind.QUESTION_OPENED)
        .order_by("-sequence").values_list("question__position", flat=True).first()
    )


def room(interview: Interview, question: InterviewQuestion) -> dict:
    """What the candidate's page shows for one question: the question (no solution until
    the end, and only if allowed), the latest verdict per part, the hints taken, and the
    editor's last recorded content, so a reconnecting candidate resumes where they were."""
    schema = Question.from_data(question.question_version.data)
    rendered = render_question(schema, question.variant_seed)
    latest = _latest_attempts(question, Attempt.Purpose.ANSWER)
    latest_runs = _latest_attempts(question, Attempt.Purpose.EXAMPLES)
    parts = []
    for part in rendered.parts:
        source = ""
        answerable = part.kind in grading.kinds()
        if answerable and part.engine.uses_editor:
            source = last_editor_source(question, part.id)
            if source is None:
                source = str(schema.part(part.id).raw.get("starter") or "")
        parts.append(RoomPart(part, latest.get(part.id), source, answerable, latest_runs.get(part.id)))
    taken = hints_taken(question)
    return {
        "interview": interview,
        "current": question,
        "positions": list(interview.questions.values_list("position", flat=True)),
        "question": rendered,
        "parts": parts,
        "hints_shown": rendered.hints_html[:taken] if interview.hints_allowed else (),
        "hints_left": len(rendered.hints_html) - taken if interview.hints_allowed else 0,
        "show_solution": interview.is_closed and interview.solutions_allowed,
        "has_editor": interview.is_open and any(part.answerable and part.editor for part in parts),
        **(room_ending(interview) if interview.is_closed else {}),
    }


def room_ending(interview: Interview) -> dict:
    """What the room tells the candidate once the interview has closed: why (`reason`:
    "expired" or "ended_by_interviewer") and which parts' code the close submitted for
    them (`auto_submitted`, "Q2 / impl" labels)."""
    reason = (
        InterviewEvent.objects.filter(interview=interview, kind=InterviewEvent.Kind.CLOSED)
        .order_by("-sequence").values_list("data__reason", flat=True).first()
    )
    auto = (
        InterviewEvent.objects.filter(interview=interview, kind__in=ANSWER_KINDS, data__auto_submitted=True)
        .order_by("sequence").values_list("question__position", "part_id")
    )
    return {"interview": interview, "reason": reason or "",
            "auto_submitted": [f"Q{position} / {part_id}" for position, part_id in auto]}


# --- The panel's pages -------------------------------------------------------------------------

@dataclass
class TimelineEntry:
    event: InterviewEvent
    question: InterviewQuestion | None
    question_title: str = ""
    attempt: Attempt | None = None  # answers and code runs: the attempt as it stands now
    started_at: datetime | None = None  # the interview's start, for `offset`
    diff: list[str] = field(default_factory=list)  # code submissions: against the previous one

    @property
    def actor_name(self) -> str:
        """Who did it, named as every page names people (a guest by the name they gave)."""
        return display_name(self.event.actor)

    @property
    def answer_is_block(self) -> bool:
        """An answer whose kind writes several lines (prose, code): shown as a block."""
        return self.event.data.get("kind") in grading.kinds_with("multiline_answer")

    @property
    def offset(self) -> str:
        """Time since the interview started ("+12:05"), or "" before it started."""
        if self.started_at is None or self.event.at < self.started_at:
            return ""
        seconds = int((self.event.at - self.started_at).total_seconds())
        return f"+{seconds // 60:02d}:{seconds % 60:02d}"


def _question_map(interview: Interview) -> dict[int, tuple[InterviewQuestion, Question]]:
    questions = interview.questions.select_related("question_version__question")
    return {iq.id: (iq, Question.from_data(iq.question_version.data)) for iq in questions}


def timeline(interview: Interview, *, include_snapshots: bool = False) -> list[TimelineEntry]:
    """The record in order, each event with its question and (for answers and code runs)
    its attempt. Editor snapshots are many and are left out unless asked for. Four queries."""
    questions = _question_map(interview)
    events = InterviewEvent.objects.filter(interview=interview).select_related("actor").order_by("sequence")
    if not include_snapshots:
        events = events.exclude(kind=InterviewEvent.Kind.CODE_SNAPSHOT)
    events = list(events)
    attempt_ids = [event.data["attempt_id"] for event in events
                   if event.kind in ATTEMPT_EVENT_KINDS and event.data.get("attempt_id")]
    attempts = Attempt.objects.in_bulk(attempt_ids)
    entries = []
    for event in events:
        iq, schema = questions.get(event.question_id, (None, None))
        attempt = attempts.get(event.data.get("attempt_id")) if event.kind in ATTEMPT_EVENT_KINDS else None
        entries.append(TimelineEntry(event, iq, schema.title if schema else "", attempt, interview.started_at))
    return entries


def timeline_after(interview: Interview, sequence: int) -> bool:
    """Whether anything was recorded after event `sequence` (the live view's cheap check)."""
    return interview.last_sequence > sequence


def timeline_context(interview: Interview) -> dict:
    """The live timeline partial's context. `grading` says an answer or a code run in it
    is still queued or running: its result lands on the attempt, not as a new event
    (runs of the examples get no verdict event), so the page keeps asking while it waits."""
    entries = timeline(interview)
    grading = any(entry.attempt is not None and not entry.attempt.is_finished for entry in entries)
    return {"interview": interview, "entries": entries, "grading": grading}


def live_code_context(interview: Interview) -> dict:
    """The live code partial's context: the code parts' editors (see `editor_states`)."""
    return {"interview": interview, "live_code": editor_states(interview)}


def lab_questions(interview: Interview) -> list[tuple[InterviewQuestion, object]]:
    """The interview's lab questions, each with its RenderedQuestion for the candidate's
    version and variant, whose `artifacts` are what the room showed: one query, and the
    data comes from the per-process lab cache (questions.labs.cached_lab), not a new run."""
    rows = []
    for iq in interview.questions.select_related("question_version"):
        schema = Question.from_data(iq.question_version.data)
        if schema.generator:
            rows.append((iq, render_question(schema, iq.variant_seed)))
    return rows


def monitor(interview: Interview) -> dict:
    """The panel's live page: every question with its solution (a lab's artifacts
    included, as the candidate sees them), the invitation, the record."""
    rendered = [
        (iq, render_question(Question.from_data(iq.question_version.data), iq.variant_seed))
        for iq in interview.questions.select_related("question_version")
    ]
    return {
        **timeline_context(interview),
        **live_code_context(interview),
        "questions": rendered,
        "has_artifacts": any(question.artifacts for _, question in rendered),
        "panel": list(interview.interviewers.all()),
        "snapshot_count": InterviewEvent.objects.filter(
            interview=interview, kind=InterviewEvent.Kind.CODE_SNAPSHOT
        ).count(),
    }


def visible_scorecards(interview: Interview, user) -> list[Scorecard]:
    """Submitted scorecards, and `user`'s own draft: a draft is private to its author."""
    return list(
        Scorecard.objects.filter(interview=interview)
        .filter(Q(status=Scorecard.Status.SUBMITTED) | Q(interviewer=user))
        .select_related("interviewer").prefetch_related("judgements")
    )


@dataclass(frozen=True)
class PartScore:
    part_id: str
    kind: str
    points: float
    attempt: Attempt | None
    answers: int  # how many readable answers were submitted
    rubric: tuple[dict, ...] = ()  # explain parts: {"id", "text_html"} per item

    @property
    def engine(self):
        """The part's answer kind (what it can do)."""
        return grading.get_kind(self.kind)


@dataclass(frozen=True)
class QuestionScore:
    question: InterviewQuestion
    title: str
    parts: tuple[PartScore, ...]

    @property
    def auto_score(self) -> float | None:
        """Points-weighted share of the auto-graded parts' latest scores; None if none."""
        graded = [part for part in self.parts if part.engine.auto_graded]
        total = sum(part.points for part in graded)
        if not total:
            return None
        earned = sum(part.points * ((part.attempt.score or 0.0) if part.attempt else 0.0) for part in graded)
        return earned / total


def question_scores(interview: Interview) -> list[QuestionScore]:
    """Each question's parts with their latest answer, for the scorecard (three queries).
    Runs of the visible examples are not answers and are left out."""
    links = list(
        InterviewAttempt.objects.filter(question__interview=interview, attempt__purpose=Attempt.Purpose.ANSWER)
        .select_related("attempt").order_by("attempt__created_at", "attempt__id")
    )
    latest: dict[tuple[int, str], Attempt] = {}
    counts: dict[tuple[int, str], int] = {}
    for link in links:
        key = (link.question_id, link.attempt.part_id)
        latest[key] = link.attempt
        counts[key] = counts.get(key, 0) + 1
    scores = []
    for iq, schema in _question_map(interview).values():
        rendered = render_question(schema, iq.variant_seed)
        parts = tuple(
            PartScore(part.id, part.kind, part.points, latest.get((iq.id, part.id)), counts.get((iq.id, part.id), 0),
                      tuple(part.rubric))
            for part in rendered.parts
        )
        scores.append(QuestionScore(iq, schema.title, parts))
    return sorted(scores, key=lambda score: score.question.position)


def started_offset(interview: Interview, at: datetime) -> float:
    """Seconds from the start of the interview to `at` (0 before it started)."""
    if interview.started_at is None:
        return 0.0
    return max(0.0, (at - interview.started_at).total_seconds())
