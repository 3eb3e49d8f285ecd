"""The loader keeps every value's line and reports broken YAML where it breaks."""

from questions.loader import load_text

TEXT = """\
slug: a-question
parts:
  - id: first
    kind: numeric
  - id: second
    prompt: |
      Two lines
      of prompt.
params:
  batch: {choices: [1, 8]}
"""


def test_lines_point_at_keys_and_list_items():
    loaded = load_text(TEXT, "q.yaml")
    assert loaded.problems == []
    assert loaded.lines.line_of(("slug",)) == 1
    assert loaded.lines.line_of(("parts", 0)) == 3
    assert loaded.lines.line_of(("parts", 1, "prompt")) == 6
    assert loaded.lines.line_of(("params", "batch", "choices")) == 10


def test_unknown_path_falls_back_to_the_nearest_known_parent():
    loaded = load_text(TEXT, "q.yaml")
    assert loaded.lines.line_of(("parts", 1, "answer")) == 5
    assert loaded.lines.line_of(("nowhere",)) == 1


def test_duplicate_key_is_a_problem_with_both_lines():
    loaded = load_text("slug: a\ntitle: x\nslug: b\n", "q.yaml")
    [problem] = loaded.problems
    assert (problem.line, problem.message) == (3, "duplicate key 'slug' (first on line 1)")
    assert str(problem) == "q.yaml:3: duplicate key 'slug' (first on line 1)"


def test_broken_yaml_reports_the_line_and_no_data():
    loaded = load_text("slug: a\nparts: [\n  - x\n", "q.yaml")
    assert loaded.data is None
    [problem] = loaded.problems
    assert problem.line == 3
    assert problem.message.startswith("YAML error:")


def test_empty_file_is_a_problem():
    loaded = load_text("", "q.yaml")
    assert loaded.data is None
    assert [problem.message for problem in loaded.problems] == ["the file is empty"]


def test_mapping_keys_become_strings():
    loaded = load_text("when: {1: a, 2.5: b}\n", "q.yaml")
    assert loaded.data == {"when": {"1": "a", "2.5": "b"}}


def test_content_hash_follows_the_text():
    assert load_text("a: 1\n").content_hash == load_text("a: 1\n").content_hash
    assert load_text("a: 1\n").content_hash != load_text("a: 2\n").content_hash
