"""The mastery and review model, on plain rows (no database)."""

from datetime import datetime, timedelta, timezone

import pytest

from trainer.progress import AttemptRow, QuestionInfo, mastery_by_topic, next_question, replay

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


def test_wrong_answer_puts_question_in_review_and_right_answers_space_it_out():
    attempts = [row(EASY, "a", 0, 0.0, False)]
    state = replay(QUESTIONS, attempts)[EASY.id]
    assert state.status(T0) == "attempted"
    assert state.status(T0 + timedelta(days=1)) == "due"

    attempts += [row(EASY, "a", 1, 1.0, True)]
    state = replay(QUESTIONS, attempts)[EASY.id]
    assert state.review.due_at == T0 + timedelta(days=1 + 2)  # box 1: two days
    attempts += [row(EASY, "a", 3, 1.0, True)]
    state = replay(QUESTIONS, attempts)[EASY.id]
    assert state.review.due_at == T0 + timedelta(days=3 + 4)  # box 2: four days
    assert state.status(T0 + timedelta(days=4)) == "solved"


def test_question_never_wrong_is_not_reviewed():
    state = replay(QUESTIONS, [row(EASY, "a", 0, 1.0, True)])[EASY.id]
    assert state.review is None and state.status(T0 + timedelta(days=365)) == "solved"


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

