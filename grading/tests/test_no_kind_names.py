"""No answer kind's name as a string outside its own package.

Code outside a kind asks the registry for a capability (``grading.kinds_with("uses_editor")``,
``part.engine.auto_graded``) and never tests a name, so adding a kind is its package and
one line in ``grading/registry.py``. Allowed to name kinds: each kind's own package, the
registry, tests (and conftest files), migrations and the bank's YAML. Anything else that
must keep a name is listed in ``ALLOWED`` with its reason.
"""

import os
import re
from pathlib import Path

from grading.registry import KIND_PATHS

ROOT = Path(__file__).resolve().parents[2]
NAMES = "|".join(re.escape(name) for name in KIND_PATHS)
# Python: a quoted literal that is exactly a kind's name ("code", 'kernel'); the word in
# prose or in a longer string ("code parts") is not a test of a kind.
PY_LITERAL = re.compile(rf"""(["'])({NAMES})\1""")
# Templates: the same literal inside a tag or a variable ({% if part.kind == "code" %}).
TEMPLATE_TAG = re.compile(r"{%.*?%}|{{.*?}}", re.DOTALL)
SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__", "var", "tests", "migrations"}

# path relative to the repository root -> why it may name kinds.
ALLOWED = {
    "bench/bench_grading.py": "benchmarks the numeric and formula graders themselves: like a "
                              "test, it names the kinds it measures and writes their parts",
    "grading/kinds/programs.py": "reads code and kernel parts' `solutions`, whose `code` key holds an "
                                 "author's source: a field of the spec, not the code kind's name",
}


def _kind_package_dirs() -> set[Path]:
    return {ROOT.joinpath(*dotted.split(".")[:-1]) for dotted in KIND_PATHS.values()}


def _project_files():
    excluded = _kind_package_dirs() | {ROOT / "questions" / "bank"}
    for folder, dirs, files in os.walk(ROOT):
        here = Path(folder)
        dirs[:] = [name for name in dirs
                   if name not in SKIPPED_DIRS and not name.startswith(".") and here / name not in excluded]
        for name in files:
            if name.endswith((".py", ".html")) and name != "conftest.py" and not name.startswith("test_"):
                yield here / name


def _literals(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = []
    if path.suffix == ".py":
        for match in PY_LITERAL.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{line}: {match.group(0)}")
    else:
        for tag in TEMPLATE_TAG.finditer(text):
            for match in PY_LITERAL.finditer(tag.group(0)):
                line = text.count("\n", 0, tag.start()) + 1
                found.append(f"{line}: {match.group(0)} in {tag.group(0)[:60]!r}")
    return found


def test_no_kind_name_outside_its_package():
    problems = []
    for path in _project_files():
        relative = path.relative_to(ROOT).as_posix()
        if relative in ALLOWED or relative == "grading/registry.py":
            continue
        problems += [f"{relative}:{hit}" for hit in _literals(path)]
    assert not problems, (
        "kind names outside their packages (ask grading.get_kind(...).<capability> or "
        "grading.kinds_with(...) instead):\n" + "\n".join(problems)
    )


def test_every_allowed_file_still_names_a_kind():
    """An allowance that is no longer needed is removed, not left to hide a later one."""
    stale = [path for path in ALLOWED if not (ROOT / path).is_file() or not _literals(ROOT / path)]
    assert not stale, f"remove these from ALLOWED: {stale}"


def test_the_check_finds_a_kind_name(tmp_path):
    python = tmp_path / "view.py"
    python.write_text('if part.kind == "code":\n    label = "code parts"\n')
    template = tmp_path / "page.html"
    template.write_text('<p>code</p>{% if part.kind == "kernel" %}x{% endif %}')
    assert _literals(python) == ['1: "code"']
    assert len(_literals(template)) == 1 and '"kernel"' in _literals(template)[0]
