"""The mastery and review model, on plain rows (no database)."""

from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Card, Rating, Scheduler

from trainer.progress import AttemptRow, QuestionInfo, mastery_by_topic, next_question, rating_for, replay

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
EASY = QuestionInfo(1, "roofline", 1, ("a",))
HARD = QuestionInfo(2, "roofline", 3, ("a", "b"))
KV = QuestionInfo(3, "kv-cache", 2, ("a",))
QUESTIONS = [EASY, HARD, KV]


def row(question, part, days, score, correct):
    return AttemptRow(question.id, part, T0 + timedelta(days=days), score, correct)


def test_unanswered_bank_has_zero_mastery_everywhere():
    progress = replay(QUESTIONS, [])
    assert mastery_by_topic(progress, ["roofline", "kv-cache"], T0) == {"roofline": 0.0, "kv-cache": 0.0}


def test_mastery_weights_difficulty_and_counts_every_part():
    attempts = [row(HARD, "a", 0, 1.0, True)]  # half the hard question's parts
    mastery = mastery_by_topic(replay(QUESTIONS, attempts), ["roofline"], T0)
    # hard question scores 0.5 with weight 3; easy question unanswered with weight 1
    assert mastery["roofline"] == pytest.approx(3 * 0.5 / (3 + 1))


def test_mastery_fades_with_a_30_day_half_life():
    attempts = [row(EASY, "a", 0, 1.0, True)]
    progress = replay(QUESTIONS, attempts)
    now, later = (mastery_by_topic(progress, ["roofline"], T0),
                  mastery_by_topic(progress, ["roofline"], T0 + timedelta(days=30)))
    assert later["roofline"] == pytest.approx(now["roofline"] / 2)


def test_a_later_worse_answer_never_takes_a_solve_away():
    """The reviewer's case: solve the top-p sampler, then submit an infinite loop."""
    attempts = [row(EASY, "a", 0, 1.0, True), row(EASY, "a", 0.01, 0.0, False)]
    state = replay(QUESTIONS, attempts)[EASY.id]
    assert state.score() == 1.0 and state.solved
    assert mastery_by_topic({EASY.id: state}, ["roofline"], T0)["roofline"] == pytest.approx(1.0, abs=1e-3)


def test_the_best_score_of_each_part_counts():
    attempts = [row(HARD, "a", 0, 0.4, False), row(HARD, "a", 1, 0.9, True), row(HARD, "a", 2, 0.6, False)]
    assert replay(QUESTIONS, attempts)[HARD.id].part_scores == {"a": 0.9}


def test_an_answer_after_the_solution_earns_nothing_and_solves_nothing():
    copied = AttemptRow(EASY.id, "a", T0, 1.0, True, after_solution=True)
    state = replay(QUESTIONS, [copied])[EASY.id]
    assert state.attempted and not state.solved and state.score() == 0.0
    assert state.cards == {} and state.status(T0 + timedelta(days=400)) == "attempted"


def test_a_self_assessed_part_does_not_count_toward_mastery():
    explained = QuestionInfo(4, "roofline", 1, ())  # its only part is an explanation
    state = replay([explained], [row(explained, "why", 0, 1.0, None)])[explained.id]
    assert state.attempted and state.score() == 0.0 and not state.solved


def test_a_question_is_solved_once_every_part_was_right_even_with_hints():
    attempts = [row(HARD, "a", 0, 0.9, True), row(HARD, "b", 0, 0.0, False)]
    assert not replay(QUESTIONS, attempts)[HARD.id].solved
    attempts.append(row(HARD, "b", 0.1, 0.8, True))
    assert replay(QUESTIONS, attempts)[HARD.id].solved


@pytest.mark.parametrize(
    ("score", "correct", "hints", "taken", "rating"),
    [
        (0.0, False, 0, timedelta(seconds=10), Rating.Again),
        (0.8, False, 0, None, Rating.Again),  # partial credit is not a right answer
        (0.9, True, 1, timedelta(seconds=10), Rating.Hard),  # a hint
        (1.0, True, 0, None, Rating.Good),  # time not known
        (1.0, True, 0, timedelta(minutes=5), Rating.Good),
        (1.0, True, 0, timedelta(seconds=50), Rating.Easy),
    ],
)
def test_each_answer_is_rated_from_correctness_hints_and_time(score, correct, hints, taken, rating):
    answer = AttemptRow(EASY.id, "a", T0, score, correct, hints_used=hints, time_taken=taken)
    assert rating_for(answer, difficulty=1) == rating


def test_easy_allows_more_time_on_harder_questions():
    answer = AttemptRow(HARD.id, "a", T0, 1.0, True, time_taken=timedelta(minutes=5))
    assert rating_for(answer, difficulty=3) == Rating.Easy and rating_for(answer, difficulty=2) == Rating.Good


@pytest.mark.parametrize(
    "history",
    [
        [(0, 0.0, False), (0.01, 1.0, True), (1.5, 1.0, True), (6, 1.0, True)],
        [(0, 1.0, True), (3, 0.0, False), (3.02, 1.0, True), (10, 1.0, True)],
        [(0, 1.0, True), (9, 1.0, True), (40, 1.0, True)],
    ],
)
def test_the_review_schedule_is_the_fsrs_librarys_own(history):
    """The stored schedule must be exactly what fsrs computes for the same ratings."""
    rows = [row(EASY, "a", days, score, correct) for days, score, correct in history]
    state = replay(QUESTIONS, rows)[EASY.id]
    scheduler = Scheduler(enable_fuzzing=False, learning_steps=(), relearning_steps=())
    card = Card(card_id=1)
    for answer in rows:
        card, _ = scheduler.review_card(card, rating_for(answer, 1), review_datetime=answer.created_at)
    assert state.review_due_at == card.due
    assert state.cards["a"]["stability"] == pytest.approx(card.stability)
    assert state.cards["a"]["difficulty"] == pytest.approx(card.difficulty)


def test_a_wrong_answer_makes_the_question_due_soon_and_right_answers_space_it_out():
    state = replay(QUESTIONS, [row(EASY, "a", 0, 0.0, False)])[EASY.id]
    assert state.status(T0 + timedelta(hours=1)) == "attempted"
    assert state.status(T0 + timedelta(days=1)) == "due"
    first_gap = state.review_due_at - T0
    rows = [row(EASY, "a", 0, 0.0, False), row(EASY, "a", 1, 1.0, True), row(EASY, "a", 3, 1.0, True)]
    state = replay(QUESTIONS, rows)[EASY.id]
    assert state.review_due_at - rows[-1].created_at > first_gap  # spaced out
    assert state.status(rows[-1].created_at + timedelta(days=1)) == "solved"


def test_a_question_is_due_when_any_of_its_parts_is():
    rows = [row(HARD, "a", 0, 1.0, True), row(HARD, "b", 0, 0.0, False)]
    state = replay(QUESTIONS, rows)[HARD.id]
    assert state.review_due_at == min(datetime.fromisoformat(card["due"]) for card in state.cards.values())
    assert state.review_due_at == datetime.fromisoformat(state.cards["b"]["due"])


def test_next_question_prefers_due_reviews_in_the_weakest_topic():
    attempts = [row(KV, "a", 0, 1.0, True), row(EASY, "a", 0, 0.0, False)]
    progress = replay(QUESTIONS, attempts)
    now = T0 + timedelta(days=2)
    mastery = mastery_by_topic(progress, ["roofline", "kv-cache"], now)
    assert mastery["roofline"] < mastery["kv-cache"]
    assert next_question(progress, mastery, now).info is EASY  # due, in the weakest topic


def test_next_question_falls_back_to_the_easiest_new_one():
    progress = replay(QUESTIONS, [row(EASY, "a", 0, 1.0, True)])
    mastery = mastery_by_topic(progress, ["roofline", "kv-cache"], T0)
    assert next_question(progress, mastery, T0).info is KV

