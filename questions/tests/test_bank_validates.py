"""Every file in questions/bank passes the full validation, so CI catches a broken
question. One test per file (the bank is validated once, together, so slug clashes
between files count too)."""

import pytest

from questions.loader import bank_files, display_path
from questions.validation import load_engine, validate_paths

BANK_FILES = bank_files()


@pytest.fixture(scope="module")
def reports_by_path():
    return {report.path: report for report in validate_paths(BANK_FILES)}


def test_the_grading_engine_is_available_so_validation_is_complete():
    assert load_engine() is not None


def test_the_bank_has_questions():
    assert BANK_FILES, "questions/bank holds no question files"


@pytest.mark.parametrize("path", BANK_FILES, ids=[path.name for path in BANK_FILES])
def test_bank_file_validates(path, reports_by_path):
    problems = [str(problem) for problem in reports_by_path[display_path(path)].problems]
    assert problems == [], "\n".join(problems)
