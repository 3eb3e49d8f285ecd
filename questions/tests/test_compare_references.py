"""`manage.py compare_references`: a changed bank file keeps every reference of a revision."""

import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from questions.management.commands.compare_references import compare_file

SOURCE = Path(settings.BASE_DIR) / "questions/bank/kv-cache/010-kv-bytes-and-the-sequence-ceiling.yaml"
RELATIVE = "questions/bank/kv-cache/010-kv-bytes-and-the-sequence-ceiling.yaml"
CHAINED = "answer: answers.kv_pool / (answers.kv_token_gpu * context * token)"


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / RELATIVE
    target.parent.mkdir(parents=True)
    shutil.copy(SOURCE, target)
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    return tmp_path


def _rewrite(repo, new: str) -> None:
    path = repo / RELATIVE
    text = path.read_text()
    assert CHAINED in text
    path.write_text(text.replace(CHAINED, new))


def test_an_equivalent_rewrite_keeps_every_reference(repo):
    _rewrite(repo, "answer: max_concurrency")
    assert compare_file(repo, RELATIVE, "HEAD") == []


def test_a_moved_reference_is_named_with_its_variant(repo):
    _rewrite(repo, "answer: answers.kv_pool / (answers.kv_token_gpu * context * token) * 1.001")
    differences = compare_file(repo, RELATIVE, "HEAD")
    assert differences
    assert all(": concurrency was " in line for line in differences)
    assert any("'tp': 8" in line for line in differences)


def test_a_dimension_change_is_a_change(repo):
    _rewrite(repo, "answer: answers.kv_pool / (answers.kv_token_gpu * context * token) * 1 s")
    assert compare_file(repo, RELATIVE, "HEAD")


def test_the_command_fails_on_the_bank_file_that_moved(repo, settings):
    settings.BASE_DIR = repo
    _rewrite(repo, "answer: 2 * max_concurrency")
    with pytest.raises(CommandError, match="1 of 1 files changed a reference"):
        call_command("compare_references")
