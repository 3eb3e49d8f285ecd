"""A candidate's progress, derived from their attempts: mastery per topic and reviews.

Pure functions over plain rows, so the model is tested without a database and the
dashboard costs one query however many attempts there are.

The mastery model (shown on the dashboard):
- A question's score is the mean, over its auto-graded parts, of the latest graded
  score of each part (0 for a part never answered).
- It fades with time since the question was last attempted: weight 0.5 ** (days / 30).
- A topic's mastery is the difficulty-weighted mean of its questions' faded scores over
  every released question in the topic, so covering more of the topic counts, and a
  hard question counts three times a warm-up.

Review (spaced repetition, Leitner boxes): a wrong answer puts the question in box 0,
due a day later; each right answer while it is in review moves it up a box, and box n
is due 2**n days after that answer. A question never answered wrong is not in review.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

HALF_LIFE_DAYS = 30.0
FIRST_REVIEW_INTERVAL = timedelta(days=1)


@dataclass(frozen=True)
class AttemptRow:
    question_id: int
    part_id: str
    created_at: datetime
    score: float
    correct: bool | None


@dataclass(frozen=True)
class QuestionInfo:
    id: int
    topic: str
    difficulty: int
    auto_parts: tuple[str, ...]


@dataclass
class Review:
    box: int
    due_at: datetime


@dataclass
class QuestionProgress:
    info: QuestionInfo
    part_scores: dict[str, float] = field(default_factory=dict)
    last_attempt_at: datetime | None = None
    review: Review | None = None
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
        if self.review is not None and self.review.due_at <= now:
            return "due"
        if self.solved:
            return "solved"
        return "attempted" if self.attempted else "new"


def replay(questions: list[QuestionInfo], attempts: list[AttemptRow],
           until: datetime | None = None) -> dict[int, QuestionProgress]:
    """Each question's progress after the attempts (oldest first) made up to `until`."""
    progress = {info.id: QuestionProgress(info) for info in questions}
    for row in attempts:
        if until is not None and row.created_at > until:
            break
        apply_attempt(progress, row)
    return progress


def apply_attempt(progress: dict[int, QuestionProgress], row: AttemptRow) -> None:
    state = progress.get(row.question_id)
    if state is None:  # a question no longer released
        return
    state.attempted = True
    state.last_attempt_at = row.created_at
    state.part_scores[row.part_id] = row.score
    if row.part_id not in state.info.auto_parts or row.correct is None:
        return
    if row.correct is False:
        state.review = Review(box=0, due_at=row.created_at + FIRST_REVIEW_INTERVAL)
    elif state.review is not None:
        box = state.review.box + 1
        state.review = Review(box=box, due_at=row.created_at + FIRST_REVIEW_INTERVAL * 2**box)
    state.solved = row.correct and all(state.part_scores.get(part, 0) > 0 for part in state.info.auto_parts)


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
        due = sorted((s for s in in_topic if s.status(now) == "due"), key=lambda s: s.review.due_at)
        if due:
            return due[0]
        new = sorted((s for s in in_topic if s.status(now) == "new"), key=lambda s: (s.info.difficulty, s.info.id))
        if new:
            return new[0]
    return None
