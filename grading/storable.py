"""Text that every database will store.

PostgreSQL refuses a NUL character in `text` and `jsonb` values (SQLite takes it), and
no database can store a lone surrogate (not encodable as UTF-8). Both can come out of
the sandbox (a candidate's exception message, their stdout) or from a request. A write
that the database refuses fails on every retry, so whatever is stored from outside is
cleaned first, the same way on every backend.
"""

from __future__ import annotations

import re

# NUL, and the UTF-16 surrogate range that Python strings can hold but UTF-8 cannot.
_REFUSED = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def storable_text(text: str) -> str:
    """`text` with each character a database refuses replaced by U+FFFD."""
    return _REFUSED.sub(REPLACEMENT, text)


def storable(value):
    """A JSON-ready value with every string (keys included) made storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(item) for item in value]
    return value


def bounded_prefix(text: str, limit: int) -> tuple[str, bool]:
    """(at most `limit` characters of `text`, storable; whether it was cut)."""
    cut = len(text) > limit
    return storable_text(text[:limit]), cut
