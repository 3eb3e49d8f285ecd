import pytest

from questions.models import QuestionVersion
from questions.services import question_save_text
from questions.tests.factories import make_user, question_yaml


@pytest.fixture
def users(db):
    """The shared cast for permission tests."""
    return {
        "candidate": make_user("cand", "candidate"),
        "candidate2": make_user("cand2", "candidate"),
        "interviewer": make_user("interviewer", "interviewer"),
        "admin": make_user("admin", "admin"),
    }


@pytest.fixture
def stored_question(db):
    """The factory question, stored as if synced from the bank."""
    result = question_save_text(question_yaml(), origin=QuestionVersion.Origin.FILE, source_path="bank/x.yaml")
    assert result.ok, result.problems
    return result.question
