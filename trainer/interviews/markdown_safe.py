"""Putting text someone typed into a Markdown document so that it stays text.

An export mixes our structure (headings, lists, fences) with what candidates and
interviewers typed (answers, code, notes, names, titles). Typed text goes in one of
three ways, and in none of them can it close a fence, start a heading, a list, a quote
or a table, or open HTML:

- `fence(text)`: any text, as a fenced block whose backtick fence is longer than the
  longest run of backticks in it (at least three), so no line of it can close the fence.
- `code(text)`: one line, as an inline code span delimited the same way.
- `text(value)`: one line of prose on a line of ours, after our own prefix: line breaks
  become spaces and every character with a meaning in CommonMark (and in the usual
  extensions: tables, strikethrough, dollar math) is backslash-escaped, as is a list
  marker it starts with. CommonMark renders an escaped punctuation character as itself.
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_\[\]<>#!|~&$])")
# At the start of a list item's content these would open a nested list or a break.
_LEADING_MARKER = re.compile(r"^(\d{1,9}(?=[.)])|(?=[-+=]))")
_BACKTICKS = re.compile(r"`+")


def _one_line(value) -> str:
    return " ".join(str(value).splitlines()).strip()


def is_one_line(value) -> bool:
    return len(str(value).splitlines()) <= 1


def text(value) -> str:
    """`value` as one line of literal Markdown text (for use after a prefix of ours)."""
    escaped = _SPECIAL.sub(r"\\\1", _one_line(value))
    return _LEADING_MARKER.sub(lambda match: match.group() + "\\", escaped, count=1)


def _delimiter(value: str, minimum: int) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(value)), default=0)
    return "`" * max(minimum, longest + 1)


def code(value) -> str:
    """`value` (one line; line breaks become spaces) as an inline code span."""
    content = " ".join(str(value).splitlines())
    if not content:
        return "(empty)"
    ticks = _delimiter(content, 1)
    # A span that starts or ends with a backtick needs a space between it and the
    # delimiter; CommonMark strips exactly one space from each side, so pad both.
    if content.strip(" ") and (content[0] in "` " or content[-1] in "` "):
        content = f" {content} "
    return f"{ticks}{content}{ticks}"


def fence(value, language: str = "", indent: str = "  ") -> list[str]:
    """`value` as the lines of a fenced block (a blank line first), each line indented
    by `indent` (two spaces keep it inside a list item of ours)."""
    body = str(value)
    ticks = _delimiter(body, 3)
    return ["", f"{indent}{ticks}{language}", *[f"{indent}{line}" for line in body.splitlines()], f"{indent}{ticks}"]
