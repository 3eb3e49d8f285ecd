"""Unreleased questions exist only for authors."""

import pytest

from questions.models import Question, QuestionVersion
from questions.selectors import get_question_version, released_questions, visible_questions


@pytest.fixture
def unreleased(stored_question):
    Question.objects.filter(pk=stored_question.pk).update(is_released=False)
    return stored_question


def test_released_question_is_visible_to_everyone(stored_question, users):
    assert list(released_questions()) == [stored_question]
    for user in users.values():
        assert get_question_version(stored_question.slug, user).number == 1


@pytest.mark.parametrize("role", ["candidate", "interviewer"])
def test_unreleased_question_is_hidden_from_non_authors(unreleased, users, role):
    assert not released_questions().exists()
    assert not visible_questions(users[role]).exists()
    with pytest.raises(QuestionVersion.DoesNotExist):
        get_question_version(unreleased.slug, users[role])
    with pytest.raises(QuestionVersion.DoesNotExist):
        get_question_version(unreleased.slug)


def test_unreleased_question_is_visible_to_admins(unreleased, users):
    assert list(visible_questions(users["admin"])) == [unreleased]
    assert get_question_version(unreleased.slug, users["admin"]).question == unreleased


def test_a_specific_version_number(stored_question, users):
    with pytest.raises(QuestionVersion.DoesNotExist):
        get_question_version(stored_question.slug, users["candidate"], number=2)
    assert get_question_version(stored_question.slug, users["candidate"], number=1).number == 1


def test_listing_released_questions_takes_one_query(stored_question, django_assert_num_queries):
    with django_assert_num_queries(1):
        rows = [(question.slug, question.current_version.number) for question in released_questions()]
    assert rows == [("decode-floor-test", 1)]
