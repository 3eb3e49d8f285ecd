"""A candidate's progress, derived from their attempts: mastery per topic and reviews.

Pure functions over plain rows, so the model is tested without a database and the
dashboard costs one query however many attempts there are.

The scoring model (the dashboard says the same in `SCORING_SUMMARY`):
- A part's credit is the best graded score the candidate has earned on it, after the
  hint discount: a later, worse run never erases a solve.
- An answer submitted after the solution was shown is recorded and marked, but earns no
  credit and never makes a part solved.
- Only auto-graded parts count. A self-assessed part (an explanation ticked against its
  rubric by the candidate) is shown as self-assessed and left out of mastery: it is the
  candidate's own opinion, not evidence.
- A question's score is the mean credit over its auto-graded parts (0 for a part never
  answered). It fades with time since the question was last attempted: weight
  0.5 ** (days / 30).
- A topic's mastery is the difficulty-weighted mean of its questions' faded scores over
  every released question in the topic, so covering more of the topic counts, and a
  hard question counts three times a warm-up.

Review runs on FSRS (the maintained `fsrs` package), one card per auto-graded part.
Each graded answer to a part is a review of its card, rated by `rating_for`; a question
is due when any of its parts' cards is due.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fsrs import Card, Rating, Scheduler

HALF_LIFE_DAYS = 30.0

# Fuzzing is off so a schedule is a pure function of the attempts: `manage.py
# rebuild_progress` reproduces exactly what was stored as the answers came in. No
# learning steps: a question is not a flashcard, and minute-long steps would mark it due
# again before the candidate has left its page; every review is scheduled in days.
SCHEDULER = Scheduler(enable_fuzzing=False, learning_steps=(), relearning_steps=())

# "Easy" needs a right answer, no hints, and at most this long from opening the question
# (per difficulty: a warm-up, a standard question, a hard one).
EASY_WITHIN = {1: timedelta(minutes=1), 2: timedelta(minutes=3), 3: timedelta(minutes=6)}

SCORING_SUMMARY = (
    "A part counts the best graded score you have earned on it, less the question's hint cost (10% unless "
    "it says otherwise) per hint taken: a later, worse answer never takes a solve away.",
    "Answers given after you opened the solution are kept and marked, but earn nothing and solve nothing.",
    "Explanations you score yourself against their rubric are marked self-assessed and do not count toward "
    "mastery; only automatically graded parts do.",
    "A question scores the mean over its automatically graded parts; that score halves every 30 days without "
    "practice; a topic's mastery is the difficulty-weighted mean over every question in the topic, answered "
    "or not (a hard question counts three times a warm-up).",
    "Reviews are scheduled by FSRS, one card per part: a wrong answer rates Again, a right one with hints or "
    "partial credit Hard, a right one Good, and a right one without hints within 1, 3 or 6 minutes of opening "
    "the question (by difficulty) Easy. Intervals are whole days; a question is due when any of its parts is.",
)


@dataclass(frozen=True)
class AttemptRow:
    question_id: int
    part_id: str
    created_at: datetime
    score: float
    correct: bool | None
    hints_used: int = 0
    time_taken: timedelta | None = None
    after_solution: bool = False


@dataclass(frozen=True)
class QuestionInfo:
    id: int
    topic: str
    difficulty: int
    auto_parts: tuple[str, ...]


@dataclass
class QuestionProgress:
    info: QuestionInfo
    part_scores: dict[str, float] = field(default_factory=dict)
    last_attempt_at: datetime | None = None
    # part id -> fsrs.Card.to_dict(); review_due_at is the earliest due among them.
    cards: dict[str, dict] = field(default_factory=dict)
    review_due_at: datetime | None = None
    solved_parts: set[str] = field(default_factory=set)  # answered right at least once
    attempted: bool = False
    solved: bool = False

    def score(self) -> float:
        parts = self.info.auto_parts
        if not parts:
            return 0.0
        return sum(self.part_scores.get(part, 0.0) for part in parts) / len(parts)

    def faded_score(self, now: datetime) -> float:
        if self.last_attempt_at is None:
            return 0.0
        days = max(0.0, (now - self.last_attempt_at).total_seconds() / 86400)
        return self.score() * 0.5 ** (days / HALF_LIFE_DAYS)

    def status(self, now: datetime) -> str:
        if self.review_due_at is not None and self.review_due_at <= now:
            return "due"
        if self.solved:
            return "solved"
        return "attempted" if self.attempted else "new"


def rating_for(row: AttemptRow, difficulty: int) -> Rating:
    """How well one graded answer went, as an FSRS rating."""
    if not row.correct:
        return Rating.Again
    if row.hints_used or row.score < 1.0:
        return Rating.Hard
    quick = EASY_WITHIN.get(difficulty, EASY_WITHIN[3])
    if row.time_taken is not None and row.time_taken <= quick:
        return Rating.Easy
    return Rating.Good


def review_card(card_data: dict | None, rating: Rating, when: datetime, card_id: int) -> dict:
    """The card after one review at `when` (a new card when `card_data` is None)."""
    card = Card.from_dict(card_data) if card_data else Card(card_id=card_id)
    card, _ = SCHEDULER.review_card(card, rating, review_datetime=when)
    return card.to_dict()


def replay(questions: list[QuestionInfo], attempts: list[AttemptRow],
           until: datetime | None = None) -> dict[int, QuestionProgress]:
    """Each question's progress after the attempts (oldest first) made up to `until`."""
    progress = {info.id: QuestionProgress(info) for info in questions}
    for row in attempts:
        if until is not None and row.created_at > until:
            break
        apply_attempt(progress, row)
    return progress


def apply_attempt(progress: dict[int, QuestionProgress], row: AttemptRow, *, review: bool = True) -> None:
    """Fold one graded answer in. `review=False` folds in its credit only: an answer
    graded out of order (older than the last one folded in) must not rewind a schedule."""
    state = progress.get(row.question_id)
    if state is None:  # a question no longer released
        return
    state.attempted = True
    if state.last_attempt_at is None or row.created_at > state.last_attempt_at:
        state.last_attempt_at = row.created_at
    if row.after_solution:
        return  # recorded and shown, but no credit, no solve, and not a review
    credit = row.score if row.score is not None else 0.0
    state.part_scores[row.part_id] = max(state.part_scores.get(row.part_id, 0.0), credit)
    if row.part_id not in state.info.auto_parts or row.correct is None:
        return
    if review:
        card_id = state.info.id * 1000 + state.info.auto_parts.index(row.part_id)
        state.cards[row.part_id] = review_card(
            state.cards.get(row.part_id), rating_for(row, state.info.difficulty), row.created_at, card_id
        )
        state.review_due_at = min(datetime.fromisoformat(card["due"]) for card in state.cards.values())
    if row.correct:
        state.solved_parts.add(row.part_id)
    state.solved = bool(state.info.auto_parts) and state.solved_parts.issuperset(state.info.auto_parts)


def mastery_by_topic(progress: dict[int, QuestionProgress], topics: list[str], now: datetime) -> dict[str, float]:
    totals = {topic: [0.0, 0.0] for topic in topics}
    for state in progress.values():
        weight = state.info.difficulty
        bucket = totals.setdefault(state.info.topic, [0.0, 0.0])
        bucket[0] += weight * state.faded_score(now)
        bucket[1] += weight
    return {topic: (earned / possible if possible else 0.0) for topic, (earned, possible) in totals.items()}


def next_question(progress: dict[int, QuestionProgress], mastery: dict[str, float],
                  now: datetime) -> QuestionProgress | None:
    """What to practise next: in the weakest topic that has something to do, a question
    due for review first, else the easiest new one; else any question due anywhere."""
    for topic in sorted(mastery, key=lambda name: (mastery[name], name)):
        in_topic = [state for state in progress.values() if state.info.topic == topic]
        due = sorted((s for s in in_topic if s.status(now) == "due"), key=lambda s: s.review_due_at)
        if due:
            return due[0]
        new = sorted((s for s in in_topic if s.status(now) == "new"), key=lambda s: (s.info.difficulty, s.info.id))
        if new:
            return new[0]
    return None
