"""Item statistics for authors: how each question part behaves, and which parts look
like a broken key.

What is counted
---------------
Graded answers only (purpose ANSWER, status GRADED). Practice answers make every
statistic; interview answers are only counted (``interview_attempts``), because an
interview changes how candidates answer (a clock, no hints, someone watching). By
default only answers to each question's current version count, so fixing a key in a
new version clears its old statistics; ``all_versions=True`` counts every version.

- ``first try``: a candidate's earliest graded practice answer to the part. When that
  answer came after the candidate opened the solution (``after_solution``), the
  candidate has no first try: they gave up before answering.
- ``careful``: an answer given without hints and before the solution was open.
- ``first_try_correct_share``, ``median_time``: over first tries (time from opening the
  question to the first answer). ``hint_share``: over all practice answers.
- ``top_wrong``: the most common wrong practice answers given before the solution was
  open, as the engine read them (``verdict.interpreted``, so "12 ms" and "12ms" are one
  answer), each with the mistake the engine matched, or none. Answers that run over
  several lines (programs, prose) are grouped by that mistake alone.

The suspect-key rule
--------------------
Only parts whose kind grades by itself (``auto_graded``) can be suspect. A part is
suspect when either holds:

1. **A shared unexplained wrong answer**: at least ``CLUSTER_MIN_CANDIDATES`` (5)
   distinct candidates gave the same one-line wrong answer carefully, they are at least
   ``CLUSTER_MIN_SHARE`` (25%) of the candidates who answered the part carefully, and
   the answer matched none of the part's listed mistakes. A classic slip, an engine
   diagnosis or a chosen distractor does not explain it: many careful people agreeing on
   an answer the key rejects is how a wrong key shows itself.
2. **Far too hard for its difficulty**: at least ``LOW_SHARE_MIN_FIRST_TRIES`` (10)
   careful first tries, and the share of them that is correct is below the floor for the
   question's difficulty (``DIFFICULTY_FLOORS``: 30% for 1, 20% for 2, 10% for 3). This
   catches a key that is wrong in different ways for different variants.

Cost: two queries whatever the size of the bank (the questions, then one slim row per
graded answer); the rest is arithmetic in Python.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from statistics import median
from typing import NamedTuple

from django.db.models import Case, CharField, F, Q, Value, When
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, NullIf, Substr

import grading
from grading.kinds.base import SpecError
from grading.models import Attempt
from questions.models import Question, Topic

CLUSTER_MIN_CANDIDATES = 5
CLUSTER_MIN_SHARE = 0.25
LOW_SHARE_MIN_FIRST_TRIES = 10
DIFFICULTY_FLOORS = {1: 0.30, 2: 0.20, 3: 0.10}
TOP_WRONG_ANSWERS = 3
# Longer answers are cut to this for grouping and display (a pasted essay in a
# one-line box is still one answer).
ANSWER_TEXT_CHARS = 200
# Numeric and formula parts name a matched listed mistake by its place in the part's
# `mistakes` list ("mistakes[0]"); every other `verdict.mistake` is the engine's own
# diagnosis (a classic slip, a wrong dimension, a chosen option, a code outcome).
LISTED_MISTAKE_PREFIX = "mistakes["

SORTS = {
    "question": "catalogue order",
    "attempts": "most attempts",
    "first_try": "lowest first-try share",
    "hints": "most hint use",
    "time": "longest median time",
}


@dataclass(frozen=True)
class WrongAnswer:
    text: str  # "" for answers grouped by their mistake alone
    count: int
    candidates: int
    mistake: str | None
    feedback: str = ""  # what the candidate was told, for a listed mistake

    @property
    def listed(self) -> bool:
        return bool(self.mistake and self.mistake.startswith(LISTED_MISTAKE_PREFIX))

    @property
    def label(self) -> str:
        """One line for a cell: the answer, how often, and the mistake it matched."""
        answer = self.text or "(answer not shown)"
        return f"{answer} ×{self.count} ({self.mistake or 'no mistake matched'})"


@dataclass
class PartStats:
    question_slug: str
    question_title: str
    topic: str
    difficulty: int
    seed_number: int
    part_id: str
    part_kind: str
    attempts: int = 0
    interview_attempts: int = 0
    candidates: int = 0
    first_tries: int = 0
    first_try_correct_share: float | None = None
    median_time: timedelta | None = None
    hint_share: float | None = None
    top_wrong: list[WrongAnswer] = field(default_factory=list)
    suspect_reasons: list[str] = field(default_factory=list)

    @property
    def suspect(self) -> bool:
        return bool(self.suspect_reasons)

    @property
    def median_time_seconds(self) -> float | None:
        return None if self.median_time is None else round(self.median_time.total_seconds(), 1)

    @property
    def topic_label(self) -> str:
        return Topic(self.topic).label


class _FirstTry(NamedTuple):
    correct: bool | None
    hints_used: int
    time_taken: timedelta | None
    after_solution: bool

    @property
    def answered(self) -> bool:
        """False when the candidate opened the solution before answering at all."""
        return not self.after_solution

    @property
    def careful(self) -> bool:
        return self.answered and self.hints_used == 0


@dataclass
class _PartRows:
    """The answers of one part gathered from the attempt rows, before arithmetic."""

    kind: str = ""
    practice: int = 0
    interview: int = 0
    with_hints: int = 0
    candidates: set = field(default_factory=set)
    first_tries: dict = field(default_factory=dict)  # user id -> _FirstTry
    careful_candidates: set = field(default_factory=set)
    wrong: Counter = field(default_factory=Counter)  # (text, mistake) -> count
    wrong_candidates: dict = field(default_factory=lambda: defaultdict(set))
    careful_wrong_candidates: dict = field(default_factory=lambda: defaultdict(set))
    feedback: dict = field(default_factory=dict)  # (text, mistake) -> feedback


def _kind_capabilities(kind_name: str) -> tuple[bool, bool]:
    """(auto_graded, multiline_answer) of a kind; a kind no longer registered has
    neither, so its old answers are counted but never judged."""
    try:
        kind = grading.get_kind(kind_name)
    except SpecError:
        return False, False
    return kind.auto_graded, kind.multiline_answer


def _attempt_rows(*, all_versions: bool, topic: str | None):
    """One slim row per graded answer, in answer order: what the statistics need and
    no more (the answer text only for wrong answers, cut short)."""
    attempts = Attempt.objects.filter(purpose=Attempt.Purpose.ANSWER, status=Attempt.Status.GRADED)
    if not all_versions:
        attempts = attempts.filter(question_version_id=F("question_version__question__current_version_id"))
    if topic:
        attempts = attempts.filter(question_version__question__topic=topic)
    multiline_kinds = grading.kinds_with("multiline_answer")
    wrong_text = Case(
        When(Q(correct=False) & ~Q(part_kind__in=multiline_kinds),
             then=Substr(Coalesce(NullIf(KT("verdict__interpreted"), Value("")), "answer"), 1, ANSWER_TEXT_CHARS)),
        default=Value(""), output_field=CharField(),
    )
    wrong_feedback = Case(
        When(correct=False, then=Substr(KT("verdict__feedback"), 1, ANSWER_TEXT_CHARS)),
        default=Value(""), output_field=CharField(),
    )
    return (
        attempts.order_by("created_at", "id")
        .annotate(wrong_text=wrong_text, wrong_feedback=wrong_feedback)
        .values_list(
            "question_version__question_id", "part_id", "part_kind", "user_id", "correct", "hints_used",
            "time_taken", "after_solution", "interview_link__id", "wrong_text", "wrong_feedback",
            # The JSON value, not KT's text: SQLite's text of a JSON null is "null".
            "verdict__mistake",
        )
    )


def _gather(rows) -> dict[tuple[int, str], _PartRows]:
    parts: dict[tuple[int, str], _PartRows] = defaultdict(_PartRows)
    for (question_id, part_id, kind, user_id, correct, hints_used, time_taken, after_solution,
         interview_link, wrong_text, wrong_feedback, mistake) in rows:
        part = parts[(question_id, part_id)]
        part.kind = part.kind or kind
        if interview_link is not None:
            part.interview += 1
            continue
        part.practice += 1
        part.with_hints += hints_used > 0
        part.candidates.add(user_id)
        # Rows come in answer order, so the first row seen per user is their first try.
        part.first_tries.setdefault(user_id, _FirstTry(correct, hints_used, time_taken, after_solution))
        if after_solution:
            continue  # answers copied from the solution say nothing about the key
        careful = hints_used == 0
        if careful:
            part.careful_candidates.add(user_id)
        if correct is False:
            answer = (" ".join(wrong_text.split()), mistake or None)
            part.wrong[answer] += 1
            part.wrong_candidates[answer].add(user_id)
            part.feedback.setdefault(answer, wrong_feedback)
            if careful:
                part.careful_wrong_candidates[answer].add(user_id)
    return parts


def _share(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _suspect_reasons(gathered: _PartRows, difficulty: int) -> list[str]:
    reasons = []
    careful_total = len(gathered.careful_candidates)
    for (text, mistake), users in gathered.careful_wrong_candidates.items():
        if not text:
            # Programs and prose are grouped by their diagnosis alone ("wrong_answer"),
            # which many honest failures share: not the same answer.
            continue
        explained = bool(mistake and mistake.startswith(LISTED_MISTAKE_PREFIX))
        if explained or len(users) < CLUSTER_MIN_CANDIDATES or len(users) < CLUSTER_MIN_SHARE * careful_total:
            continue
        diagnosis = f" (the engine saw {mistake})" if mistake else ""
        reasons.append(f"{len(users)} of {careful_total} careful candidates answered {text!r}{diagnosis}, "
                       "which matches no listed mistake")
    careful_first = [first for first in gathered.first_tries.values() if first.careful]
    floor = DIFFICULTY_FLOORS.get(difficulty)
    if floor is not None and len(careful_first) >= LOW_SHARE_MIN_FIRST_TRIES:
        share = sum(first.correct is True for first in careful_first) / len(careful_first)
        if share < floor:
            reasons.append(f"only {share:.0%} of {len(careful_first)} careful first tries are correct; "
                           f"the floor for difficulty {difficulty} is {floor:.0%}")
    return reasons


def _part_stats(stats: PartStats, gathered: _PartRows | None) -> PartStats:
    if gathered is None:
        return stats
    auto_graded, _ = _kind_capabilities(stats.part_kind)
    stats.attempts = gathered.practice
    stats.interview_attempts = gathered.interview
    stats.candidates = len(gathered.candidates)
    answered_first = [first for first in gathered.first_tries.values() if first.answered]
    stats.first_tries = len(answered_first)
    if auto_graded:
        judged = [first.correct for first in answered_first if first.correct is not None]
        stats.first_try_correct_share = _share(sum(judged), len(judged))
    times = [first.time_taken for first in answered_first if first.time_taken is not None]
    stats.median_time = median(times) if times else None
    stats.hint_share = _share(gathered.with_hints, gathered.practice)
    stats.top_wrong = [
        WrongAnswer(text=text, count=count, candidates=len(gathered.wrong_candidates[(text, mistake)]),
                    mistake=mistake,
                    feedback=gathered.feedback[(text, mistake)] if (mistake or "").startswith(LISTED_MISTAKE_PREFIX)
                    else "")
        for (text, mistake), count in sorted(gathered.wrong.items(), key=lambda item: (-item[1], item[0][0]))
        [:TOP_WRONG_ANSWERS]
    ]
    if auto_graded:
        stats.suspect_reasons = _suspect_reasons(gathered, stats.difficulty)
    return stats


def _sort_key(sort: str):
    def key(stats: PartStats):
        order = (stats.seed_number, stats.question_slug)
        if sort == "attempts":
            order = (-stats.attempts, *order)
        elif sort == "first_try":
            share = stats.first_try_correct_share
            order = (share is None, share if share is not None else 0, *order)
        elif sort == "hints":
            order = (-(stats.hint_share or 0), *order)
        elif sort == "time":
            order = (-(stats.median_time or timedelta(0)), *order)
        return (not stats.suspect, *order)

    return key


def item_stats(*, topic: str | None = None, sort: str = "question", all_versions: bool = False) -> list[PartStats]:
    """Statistics of every part of every question with content (unreleased and
    interview-only ones included: authors want them most), in `topic` if given.

    Suspect parts come first; the rest follow `sort` (a key of SORTS; catalogue order
    otherwise), and parts keep their order within a question.
    """
    questions = Question.objects.filter(current_version__isnull=False).order_by("seed_number", "slug")
    if topic:
        questions = questions.filter(topic=topic)
    gathered = _gather(_attempt_rows(all_versions=all_versions, topic=topic))
    answered_parts = defaultdict(list)
    for question_id, part_id in sorted(gathered):
        answered_parts[question_id].append(part_id)
    found = []
    for question in questions.only("id", "slug", "title", "topic", "difficulty", "seed_number", "part_kinds"):
        kinds = dict(question.part_kinds)
        # Parts an older version had and the current one lacks still have answers to show.
        part_ids = list(kinds) + [part_id for part_id in answered_parts[question.id] if part_id not in kinds]
        for part_id in part_ids:
            part_rows = gathered.get((question.id, part_id))
            kind = kinds.get(part_id) or part_rows.kind
            stats = PartStats(
                question_slug=question.slug, question_title=question.title, topic=question.topic,
                difficulty=question.difficulty, seed_number=question.seed_number, part_id=part_id, part_kind=kind,
            )
            found.append(_part_stats(stats, part_rows))
    # sorted() is stable, so parts keep their question order under equal keys.
    return sorted(found, key=_sort_key(sort if sort in SORTS else "question"))
