"""The management commands: sync, validate and list the bank."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from questions.loader import BANK_DIR, load_file
from questions.models import Question
from questions.tests.factories import store_version, write_question

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=out)
    return out.getvalue()


def test_sync_then_list_as_json(tmp_path):
    path = write_question(tmp_path)
    assert "1 created, 0 updated, 0 unchanged, 0 failed" in run("sync_questions", str(path))
    assert "0 created, 0 updated, 1 unchanged, 0 failed" in run("sync_questions", str(path))
    [row] = json.loads(run("list_questions", "--json"))
    assert row == {
        "slug": "decode-floor-test",
        "title": "The decode floor from weight bytes",
        "topic": "roofline",
        "seed": 1,
        "difficulty": 2,
        "is_released": True,
        "version": 1,
        "parts": [
            {"id": "floor", "kind": "numeric"},
            {"id": "kv_per_token", "kind": "formula"},
            {"id": "why_above_floor", "kind": "explain"},
        ],
    }


def test_sync_fails_loudly_on_an_invalid_file(tmp_path):
    path = write_question(tmp_path, difficulty=0)
    with pytest.raises(CommandError, match="1 question file"):
        run("sync_questions", str(path))
    assert not Question.objects.exists()


def test_validate_exits_non_zero_on_a_problem(tmp_path):
    good = write_question(tmp_path)
    bad = write_question(tmp_path, slug="bad-one", seed=2, topic="roofline", title="")
    assert "1 of 1 OK" in run("validate_questions", str(good))
    with pytest.raises(CommandError, match="1 question"):
        run("validate_questions", str(good), str(bad))


def test_validate_one_slug(tmp_path):
    write_question(tmp_path)
    bad = write_question(tmp_path, slug="bad-one", seed=2, title="")
    paths = [str(path) for path in sorted(tmp_path.rglob("*.yaml"))]
    output = run("validate_questions", *paths, "--slug", "decode-floor-test")
    assert "1 of 1 OK" in output and str(bad.name) not in output
    with pytest.raises(CommandError, match="no question 'missing'"):
        run("validate_questions", *paths, "--slug", "missing")


def test_validate_the_stored_versions(stored_question):
    assert "decode-floor-test v1: OK" in run("validate_questions", "--database")


def test_list_as_json_names_a_lab_questions_artifacts():
    store_version(load_file(BANK_DIR / "debugging" / "114-cold-schema-warm-batch-traces.yaml").data)
    [row] = json.loads(run("list_questions", "--json"))
    files = {item["file"]: item["kind"] for item in row["artifacts"]}
    assert {"table", "trace", "log"} <= set(files.values())
    assert all(name.endswith({"table": ".csv", "trace": ".json", "log": ".log", "chart": ".csv"}[kind])
               for name, kind in files.items())
