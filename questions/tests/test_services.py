"""sync_bank and question_save_text: idempotent, versioned, and never store an invalid file."""

import pytest

from grading.kinds.code import CodeKind
from questions import mutations, services
from questions.loader import BANK_DIR
from questions.models import Question, QuestionVersion
from questions.services import question_save_text, sync_bank
from questions.tests.factories import question_yaml, write_question
from questions.validation import validate_file

pytestmark = pytest.mark.django_db


def test_sync_creates_then_does_nothing_on_a_second_run(tmp_path):
    path = write_question(tmp_path)
    first = sync_bank([path])
    assert (first.created, first.updated, first.failed) == (["decode-floor-test"], [], {})
    second = sync_bank([path])
    assert (second.created, second.updated, second.unchanged) == ([], [], ["decode-floor-test"])
    question = Question.objects.get(slug="decode-floor-test")
    assert question.versions.count() == 1
    assert question.current_version.origin == QuestionVersion.Origin.FILE
    assert question.current_version.data["title"] == "The decode floor from weight bytes"
    assert (question.topic, question.seed_number, question.difficulty) == ("roofline", 1, 2)


def test_changed_file_gets_a_new_version_and_keeps_the_old(tmp_path):
    path = write_question(tmp_path)
    sync_bank([path])
    old_version = Question.objects.get().current_version
    write_question(tmp_path, title="A sharper title")
    result = sync_bank([path])
    assert result.updated == ["decode-floor-test"]
    question = Question.objects.get()
    assert question.title == "A sharper title"
    assert question.current_version.number == 2
    old_version.refresh_from_db()
    assert old_version.data["title"] == "The decode floor from weight bytes"


def test_invalid_file_is_reported_and_not_stored(tmp_path):
    path = write_question(tmp_path, difficulty=7)
    result = sync_bank([path])
    assert not result.ok
    [problems] = result.failed.values()
    assert any("difficulty 7" in problem.message for problem in problems)
    assert not Question.objects.exists()


def test_duplicate_slugs_across_files_fail(tmp_path):
    first = write_question(tmp_path)
    second = write_question(tmp_path, seed=2)
    result = sync_bank([first, second])
    assert any("is also used by" in problem.message for problems in result.failed.values() for problem in problems)


def test_browser_edit_stays_current_until_its_file_changes(tmp_path, users):
    path = write_question(tmp_path)
    sync_bank([path])
    edited = question_save_text(
        question_yaml(title="Edited in the browser"), origin=QuestionVersion.Origin.BROWSER, user=users["admin"]
    )
    assert edited.created_version and edited.version.number == 2
    assert sync_bank([path]).unchanged == ["decode-floor-test"]
    assert Question.objects.get().current_version.origin == QuestionVersion.Origin.BROWSER
    write_question(tmp_path, title="Edited in the file")
    sync_bank([path])
    question = Question.objects.get()
    assert (question.title, question.current_version.number) == ("Edited in the file", 3)


def test_saving_the_current_text_again_stores_nothing(stored_question):
    result = question_save_text(question_yaml(), origin=QuestionVersion.Origin.BROWSER)
    assert result.ok and not result.created_version
    assert stored_question.versions.count() == 1


def test_expected_slug_refuses_to_turn_one_question_into_another(stored_question):
    result = question_save_text(
        question_yaml(slug="another-slug"), origin=QuestionVersion.Origin.BROWSER, expected_slug=stored_question.slug
    )
    assert [problem.message for problem in result.problems] == ["the slug must stay 'decode-floor-test'"]
    assert not Question.objects.filter(slug="another-slug").exists()


def test_new_question_from_the_browser_can_start_unreleased():
    result = question_save_text(question_yaml(), origin=QuestionVersion.Origin.BROWSER, release_new=False)
    assert result.ok and result.question.is_released is False


def test_the_interview_only_key_sets_the_field_and_a_new_version_can_clear_it(tmp_path):
    path = write_question(tmp_path, interview_only=True)
    sync_bank([path])
    assert Question.objects.get().interview_only is True
    write_question(tmp_path)  # the key removed from the file
    sync_bank([path])
    assert Question.objects.get().interview_only is False


def test_an_unchanged_file_is_not_validated_again(tmp_path, monkeypatch):
    path = write_question(tmp_path)
    sync_bank([path])
    validated = []
    real = services.validate_paths
    monkeypatch.setattr(services, "validate_paths", lambda paths, **options: validated.extend(paths) or real(
        paths, **options))
    assert sync_bank([path]).unchanged == ["decode-floor-test"]
    assert validated == []
    write_question(tmp_path, title="A sharper title")
    assert sync_bank([path]).updated == ["decode-floor-test"]
    assert validated == [path]


def test_a_changed_file_may_not_take_an_unchanged_files_slug(tmp_path):
    first = write_question(tmp_path)
    sync_bank([first])
    second = write_question(tmp_path, seed=2)
    result = sync_bank([first, second])
    assert result.unchanged == ["decode-floor-test"]
    [problems] = result.failed.values()
    assert any("already used by another bank file" in problem.message for problem in problems)


def test_sync_leaves_the_authoring_checks_to_validate_questions(monkeypatch):
    """Loading the bank runs no program and no near-miss search: a code part's example
    solutions and the tolerance checks are validate_questions' (CI, authoring), not
    every start of the site's."""
    path = BANK_DIR / "speculative" / "119-top-p-sampler.yaml"
    monkeypatch.setattr(CodeKind, "validate_part", lambda *args, **kwargs: pytest.fail("ran the solutions"))
    monkeypatch.setattr(mutations, "check_near_misses", lambda *args, **kwargs: pytest.fail("searched near misses"))
    assert sync_bank([path]).created == ["top-p-sampler"]
    with pytest.raises(pytest.fail.Exception, match="ran the solutions"):
        validate_file(path)
