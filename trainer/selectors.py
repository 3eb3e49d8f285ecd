"""Reads behind the candidate's and the interviewer's pages."""

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import timedelta
from typing import NamedTuple

from django.db.models import Exists, OuterRef, Q, QuerySet, Value

from grading.models import Attempt
from questions import models as bank
from questions.rendering import render_question
from questions.schema import Question
from questions.selectors import can_author, practice_bank, visible_questions
from trainer import progress as progress_model
from trainer import services
from trainer.interviews import selectors as interview_selectors
from trainer.interviews.models import Interview, InterviewQuestion
from trainer.models import Draft, MasterySnapshot, PracticeSharing, Progress

STATUSES = ("new", "attempted", "solved", "due")


@dataclass(frozen=True)
class QuestionRow:
    question: object
    kinds: tuple[str, ...]
    status: str  # one of STATUSES
    locked: bool = False  # asked by a live interview: listed, but not open (practice_questions)


# --- What practice may show -----------------------------------------------------------------

class PracticeLocked(Exception):
    """A live interview asks the question and the user is not on its panel."""

    def __init__(self, question):
        super().__init__(f"{question.slug} is in use in a live interview")
        self.question = question


def practice_questions(user) -> QuerySet[bank.Question]:
    """The questions `user` finds in practice, each annotated `practice_locked`.

    The practice rule lives here and nowhere else. Question authors practise anything
    with content. Everyone else gets the practice bank (released, not interview-only),
    and a question that an interview not yet closed asks is locked for them unless they
    sit on that interview's panel: its variants are few enough to walk through, so any
    practice page of it (the solution after giving up, an explain part's model answer,
    a hint) would give the interview's answers away. The lock is an EXISTS in the same
    query, so a listing costs no extra query.
    """
    if can_author(user):
        return visible_questions(user).annotate(practice_locked=Value(False))
    asked_live = InterviewQuestion.objects.filter(
        question_version__question=OuterRef("pk"),
        interview__in=interview_selectors.live_interviews_hidden_from(user),
    )
    return practice_bank().annotate(practice_locked=Exists(asked_live))


def _asked_by_a_live_interview(question_id: int) -> bool:
    """Whether an interview not closed yet asks the question, whoever sits on its panel:
    a necessary condition of `practice_locked`, and far cheaper to build than the panel
    rule (Django compiles that nested exclude on every request)."""
    return InterviewQuestion.objects.filter(
        question_version__question_id=question_id, interview__status__in=interview_selectors.LIVE_STATUSES,
    ).exists()


def get_practice_question(user, **lookup) -> bank.Question:
    """One question of `practice_questions(user)` (`slug=` or `id=`). Raises
    Question.DoesNotExist when practice does not offer it to `user`, PracticeLocked
    when a live interview holds it.

    A question no live interview asks is locked for nobody, so the full rule (the
    panel's) is asked only for a question some live interview does ask: two queries for
    every other question, three for those."""
    if can_author(user):
        return practice_questions(user).get(**lookup)
    # Two plain queries, not one with the EXISTS annotated: compiling that annotation (and
    # a deferred column) cost the page more than the second query's round trip.
    question = practice_bank().get(**lookup)
    if _asked_by_a_live_interview(question.id):
        question = practice_questions(user).get(**lookup)
    else:
        question.practice_locked = False
    if question.practice_locked:
        raise PracticeLocked(question)
    return question


def get_practice_version(slug: str, user) -> bank.QuestionVersion:
    """The current version of a question `user` may practise now (see get_practice_question)."""
    question = get_practice_question(user, slug=slug)
    version = question.current_version
    version.question = question  # the page reads both; spare a query
    return version


def user_progress(user, questions, now) -> dict:
    """question id -> the pure model's progress state, from the stored rows (one query)."""
    records = {record.question_id: record for record in Progress.objects.filter(user=user)}
    return {q.id: services.progress_state(records.get(q.id), services.question_info(q)) for q in questions}


def _list_statuses(user, questions, now) -> dict[int, str]:
    """question id -> its status (one of STATUSES) for `user`, by the pure model's rule
    (`QuestionProgress.status`), from the three stored fields that rule reads: one query
    that skips decoding every row's scores and review cards, which the browser does not
    show (they were most of its time for a candidate with thousands of attempts)."""
    stored = {
        question_id: (attempted, solved, review_due_at)
        for question_id, attempted, solved, review_due_at in Progress.objects.filter(user=user).values_list(
            "question_id", "attempted", "solved", "review_due_at",
        )
    }
    statuses = {}
    for question in questions:
        attempted, solved, review_due_at = stored.get(question.id, (False, False, None))
        state = progress_model.QuestionProgress(
            services.question_info(question), attempted=attempted, solved=solved, review_due_at=review_due_at,
        )
        statuses[question.id] = state.status(now)
    return statuses


def question_rows(*, user, questions, now, topic=None, difficulty=None, kind=None, status=None) -> list[QuestionRow]:
    """The bank as this user sees it, filtered; two queries whatever the count."""
    questions = list(questions)
    statuses = _list_statuses(user, questions, now)
    rows = []
    for question in questions:
        row = QuestionRow(
            question, tuple(kind for _, kind in question.part_kinds), statuses[question.id],
            locked=getattr(question, "practice_locked", False),
        )
        if topic and question.topic != topic:
            continue
        if difficulty and question.difficulty != difficulty:
            continue
        if kind and kind not in row.kinds:
            continue
        if status and row.status != status:
            continue
        rows.append(row)
    return rows


class _ProcessCache:
    """A bounded least-recently-used map shared by a process's threads. For values that
    are a pure function of their key: a miss computes outside the lock (two threads may
    both compute; they store equal values)."""

    def __init__(self, size: int):
        self._entries: OrderedDict = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key, compute):
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        value = compute()
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return value


# A version's content never changes (an edit makes a new version), so its content hash
# fixes what these hold (the hash, not the id: a rolled-back transaction can hand an id
# out again).
_QUESTIONS = _ProcessCache(256)
_RENDERED = _ProcessCache(512)


def version_question(version) -> Question:
    """The version's typed content (`Question.from_data`), parsed once per process:
    loading the JSON text and building the schema was repeated on every page view."""
    return _QUESTIONS.get(version.content_hash, lambda: Question.from_data(version.data))


def rendered_question(version, seed: int):
    """`render_question` for a stored version, cached per process: its content hash and
    the seed fix the page, and rendering Markdown, math and templates is most of a
    question page's cost."""
    return _RENDERED.get((version.content_hash, seed), lambda: render_question(version_question(version), seed))


def question_artifact(version, seed: int, file_name: str):
    """One artifact of a lab question's variant (questions.labs.RenderedArtifact), or
    None: read from the rendered question, so it is generated once per version and seed."""
    return rendered_question(version, seed).artifact(file_name)


# How many earlier answers each part lists (newest first), over every variant.
HISTORY_PER_PART = 10
_HISTORY_FETCHED = 200


class PartView(NamedTuple):
    """One part as the question page shows it (templates unpack it in this order): its
    latest answer on this variant, the self-assessment of an explanation, the text its
    editor opens with (the draft, else the latest answer, else the starter code), and
    its earlier answers."""

    part: object  # questions.rendering.RenderedPart
    attempt: Attempt | None
    review: dict | None
    source: str
    history: list[Attempt]


def _practice_answers(user, version):
    return Attempt.objects.filter(
        user=user, question_version=version, interview_link__isnull=True, purpose=Attempt.Purpose.ANSWER,
    )  # newest first


def variant_solved(question: Question, answers) -> bool:
    """Whether the variant's practice `answers` solve it: every auto-graded part has a
    right answer given before the solution opened (a later wrong answer does not
    unsolve it: the best answer counts)."""
    auto_parts = {part.id for part in question.parts if part.is_auto_graded}
    right = {attempt.part_id for attempt in answers if attempt.correct and not attempt.after_solution}
    return bool(auto_parts) and right.issuperset(auto_parts)


def question_page(*, user, version, seed: int, hints_taken: int, gave_up: bool) -> dict:
    """Everything the question page shows for one variant: the rendered question, each
    part's latest attempt, draft and history, the hints taken so far, and whether the
    solution is open (two queries, the answers and the drafts, for a user with fewer than
    _HISTORY_FETCHED answers on this version; a third, this variant's, beyond that)."""
    question = version_question(version)
    rendered = rendered_question(version, seed)
    earlier = list(_practice_answers(user, version)[:_HISTORY_FETCHED])  # every variant, newest first
    if len(earlier) < _HISTORY_FETCHED:  # every answer is there: this variant's too
        this_variant = [attempt for attempt in earlier if attempt.variant_seed == seed]
    else:
        this_variant = list(_practice_answers(user, version).filter(variant_seed=seed))
    latest = {}
    for attempt in this_variant:
        latest.setdefault(attempt.part_id, attempt)
    solved = variant_solved(question, this_variant)
    drafts = dict(Draft.objects.filter(user=user, question_id=version.question_id).values_list("part_id", "text"))
    parts = []
    for part in rendered.parts:
        last = latest.get(part.id)
        starter = question.part(part.id).raw.get("starter", "")
        source = drafts.get(part.id, last.answer if last else starter)
        history = [attempt for attempt in earlier if attempt.part_id == part.id][:HISTORY_PER_PART]
        parts.append(PartView(part, last, explain_review(part, last), source, history))
    return {
        "version": version,
        "question": rendered,
        "seed": seed,
        "parts": parts,
        "has_drafts": bool(drafts),
        "hints_shown": rendered.hints_html[:hints_taken],
        "hints_left": len(rendered.hints_html) - hints_taken,
        "hint_cost_percent": round(question.hint_cost * 100),
        "solved": solved,
        "show_solution": solved or gave_up,
    }


@dataclass(frozen=True)
class ReviewRow:
    attempt: Attempt
    interview: Interview | None  # None: practice its candidate shares with interviewers


def review_attempts(user, *, limit: int) -> list[ReviewRow]:
    """The newest attempts `user` may review, each with its interview (one query).

    Interview attempts: those of the interviews `user` sits on, by the interview rule
    (creator or panel member; admins every interview, as `sees_all_interviews` says).
    Practice attempts: only of candidates who chose to share their practice
    (PracticeSharing). That choice is the candidate's, so it binds admins too: the admin
    rule is about interviews, not about anyone's private practice.
    """
    on_panel = Q(interview_link__question__interview__in=interview_selectors.panel_interviews(user))
    shared_practice = Q(interview_link__isnull=True, user__practice_sharing__shared=True)
    attempts = Attempt.objects.filter(on_panel | shared_practice).select_related(
        "user", "question_version__question", "interview_link__question__interview"
    )[:limit]
    rows = []
    for attempt in attempts:
        link = getattr(attempt, "interview_link", None)  # a missing reverse one-to-one raises
        rows.append(ReviewRow(attempt, link.question.interview if link else None))
    return rows


def shares_practice(user) -> bool:
    return PracticeSharing.objects.filter(user=user, shared=True).exists()


def explain_review(part, attempt) -> dict | None:
    """For a recorded answer of a self-assessed kind (explain): the model answer and the
    rubric to tick against it. `part` is the rendered part (questions.rendering.RenderedPart)
    the attempt answered."""
    if attempt is None or attempt.status != Attempt.Status.GRADED or not part.engine.self_assessed:
        return None
    verdict = attempt.stored_verdict
    ticked = verdict.rubric_ticked if verdict is not None else None
    return {
        "model_answer_html": part.model_answer_html,
        "items": [(item["id"], item["text_html"], item["id"] in (ticked or ())) for item in part.rubric],
        "assessed": ticked is not None,
    }


def verdict_context(attempt, *, part_id: str, reading=None) -> dict:
    """What the verdict partial needs for one part's latest attempt (or an unread answer)."""
    context = {"part_id": part_id, "attempt": attempt, "reading": reading, "review": None}
    if attempt is None or attempt.status != Attempt.Status.GRADED or attempt.purpose != Attempt.Purpose.ANSWER:
        return context
    question = version_question(attempt.question_version)
    if question.part(part_id).engine.self_assessed:
        rendered = rendered_question(attempt.question_version, attempt.variant_seed)
        context["review"] = explain_review(next(p for p in rendered.parts if p.id == part_id), attempt)
    elif attempt.correct:
        # The answer that solves the question also opens its solution (an out-of-band swap).
        answers = _practice_answers(attempt.user, attempt.question_version).filter(variant_seed=attempt.variant_seed)
        if variant_solved(question, answers):
            context.update(question=rendered_question(attempt.question_version, attempt.variant_seed),
                           solution_now=True)
    return context



def dashboard(*, user, questions, topics: list[tuple[str, str]], now, history_days: int = 30) -> dict:
    """Mastery per topic now, its history (one point per day practised in the last
    `history_days` days, then now), the next question to practise, and counts."""
    questions = list(questions)
    progress = user_progress(user, questions, now)
    topic_keys = [key for key, _ in topics]
    mastery = progress_model.mastery_by_topic(progress, topic_keys, now)
    since = (now - timedelta(days=history_days)).date()
    snapshots = list(MasterySnapshot.objects.filter(user=user, day__gt=since).values_list("taken_at", "mastery"))
    history = [(taken_at, values) for taken_at, values in snapshots] + [(now, mastery)]
    upcoming = progress_model.next_question(progress, mastery, now)
    by_id = {question.id: question for question in questions}
    statuses = [state.status(now) for state in progress.values()]
    return {
        "mastery": [(key, label, mastery.get(key, 0.0)) for key, label in topics],
        "history": history,
        "history_start": now - timedelta(days=history_days),
        "next_question": by_id[upcoming.info.id] if upcoming else None,
        "next_reason": None if upcoming is None else upcoming.status(now),
        "counts": {status: statuses.count(status) for status in STATUSES},
        "scoring_summary": progress_model.SCORING_SUMMARY,
    }


def export_rows(user):
    """Every attempt of `user`, oldest first, for the CSV and JSON exports."""
    return (
        Attempt.objects.filter(user=user)
        .order_by("created_at", "id")
        .values(
            "id", "created_at", "question_version__question__slug", "question_version__number", "part_id",
            "variant_seed", "answer", "status", "correct", "score", "hints_used", "time_taken",
            "interview_link__question__interview_id", "after_solution", "purpose", "verdict__outcome",
        )
    )
