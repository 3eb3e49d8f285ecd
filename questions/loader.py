"""Read question files: YAML text in, plain data plus the line of every key out.

Pure Python (no Django), so the validator runs from a bare checkout. The data
returned is made of plain dicts, lists, strings and numbers, ready for a JSON column;
line numbers live beside it in a `LineMap`, keyed by the path to each value
(`("parts", 2, "answer")`), so a problem found deep in a question can point at
`file:line`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

BANK_DIR = Path(__file__).resolve().parent / "bank"

KeyPath = tuple  # a path into the data: str keys for mappings, int indexes for lists


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a question file, reported as `path:line: message`."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass
class LineMap:
    """Line numbers (1-based) of the values in one YAML document.

    `line_of(path)` falls back to the nearest enclosing value that has a line, so a
    caller can always ask for the most precise path it knows about.
    """

    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_of(self, path: KeyPath = ()) -> int | None:
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get(())


@dataclass
class LoadedFile:
    """A question file as read from disk or from a browser upload.

    `data` is None when the YAML could not be parsed; `problems` then says why.
    """

    path: str
    text: str
    data: object
    lines: LineMap
    problems: list[Problem]

    @property
    def content_hash(self) -> str:
        return content_hash(self.text)


def content_hash(text: str) -> str:
    """The identity of a file's content: a new hash means a new question version."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _record_lines(node: yaml.Node, path: KeyPath, lines: dict, problems: list, source: str) -> None:
    """Walk a composed YAML node tree, noting each value's line and any duplicate key.

    A mapping value is placed on its key's line: for a block scalar (`statement: |`)
    that is the line an author looks for.
    """
    if isinstance(node, yaml.MappingNode):
        seen: dict = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                # SafeLoader keeps the last duplicate silently; an author never means that.
                problems.append(
                    Problem(source, line, f"duplicate key {key!r} (first on line {seen[key]})")
                )
                continue
            seen[key] = line
            child = path + (key,)
            lines[child] = line
            _record_lines(value_node, child, lines, problems, source)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = path + (index,)
            lines[child] = item.start_mark.line + 1
            _record_lines(item, child, lines, problems, source)


def _normalize_keys(value: object) -> object:
    """Turn mapping keys into strings: `1: x` in YAML must not become an int key,
    because the data goes through JSON and template lookups by name."""
    if isinstance(value, dict):
        return {str(key): _normalize_keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalize_keys(item) for item in value]
    return value


def load_text(text: str, source: str = "<text>") -> LoadedFile:
    """Parse one YAML document; never raises on bad YAML (the problem is returned)."""
    lines: dict[KeyPath, int] = {}
    problems: list[Problem] = []
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return LoadedFile(source, text, None, LineMap(lines), [Problem(source, 1, "the file is empty")])
        lines[()] = node.start_mark.line + 1
        _record_lines(node, (), lines, problems, source)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else None
        message = " ".join(part for part in (error.context, error.problem) if part)
        return LoadedFile(source, text, None, LineMap(lines), [Problem(source, line, f"YAML error: {message}")])
    except yaml.YAMLError as error:
        return LoadedFile(source, text, None, LineMap(lines), [Problem(source, None, f"YAML error: {error}")])
    finally:
        loader.dispose()
    return LoadedFile(source, text, _normalize_keys(data), LineMap(lines), problems)


def load_file(path: Path | str) -> LoadedFile:
    """Read and parse a question file from disk."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return LoadedFile(str(path), "", None, LineMap(), [Problem(str(path), None, f"cannot read: {error}")])
    return load_text(text, display_path(path))


def display_path(path: Path) -> str:
    """The path as problems print it: relative to the repository when inside it."""
    path = Path(path).resolve()
    repo_root = BANK_DIR.parent.parent
    try:
        return str(path.relative_to(repo_root))
    except ValueError:
        return str(path)


def bank_files(bank_dir: Path | None = None) -> list[Path]:
    """Every question file in the bank, in a stable order."""
    bank_dir = Path(bank_dir) if bank_dir else BANK_DIR
    if not bank_dir.is_dir():
        return []
    return sorted(path for path in bank_dir.rglob("*.yaml") if path.is_file())


GENERATOR_SUFFIX = ".lab.py"


class GeneratorNotFound(LookupError):
    """A question's `generator:` names no lab generator file inside the bank."""


def generator_path(relative: str, bank_dir: Path | None = None) -> Path:
    """The lab generator file `relative` (`<topic>/<seed:03d>-<slug>.lab.py`) under the
    bank, found the way code parts find their judges. Raises GeneratorNotFound for a
    path outside the bank, another suffix, or no such file."""
    root = (Path(bank_dir) if bank_dir else BANK_DIR).resolve()
    if not isinstance(relative, str) or not relative.endswith(GENERATOR_SUFFIX) or relative.startswith("/"):
        raise GeneratorNotFound(f"must be a path like <topic>/<file>{GENERATOR_SUFFIX}, relative to the bank")
    path = (root / relative).resolve()
    if root not in path.parents:
        raise GeneratorNotFound("must stay inside the question bank")
    if not path.is_file():
        raise GeneratorNotFound(f"no generator file {relative} in the bank")
    return path
