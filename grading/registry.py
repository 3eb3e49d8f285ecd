"""Answer kinds by name: ``register`` a class, ``get_kind(name)`` its instance."""

from __future__ import annotations

from grading.kinds.base import AnswerKind, SpecError

_KINDS: dict[str, AnswerKind] = {}


def register(kind_class: type[AnswerKind]) -> type[AnswerKind]:
    """Class decorator: make ``kind_class`` available as ``get_kind(kind_class.name)``.
    Registering a second class under a taken name is an error (two plug-ins would
    silently fight over the same parts)."""
    name = getattr(kind_class, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{kind_class.__name__} needs a non-empty class attribute 'name'")
    existing = _KINDS.get(name)
    if existing is not None and type(existing) is not kind_class:
        raise ValueError(f"answer kind {name!r} is already registered "
                         f"by {type(existing).__name__}")
    _KINDS[name] = kind_class()
    return kind_class


def get_kind(name: str) -> AnswerKind:
    """The registered kind called ``name``. Raises ``SpecError`` (key ``kind``) for an
    unknown name, listing the known ones."""
    _load_builtin_kinds()
    try:
        return _KINDS[name]
    except (KeyError, TypeError):
        raise SpecError(f"unknown answer kind {name!r} (known: {', '.join(kinds())})",
                        "kind") from None


def kinds() -> list[str]:
    """Names of every registered kind, sorted."""
    _load_builtin_kinds()
    return sorted(_KINDS)


def _load_builtin_kinds() -> None:
    # Importing the package registers numeric, formula and explain.
    import grading.kinds  # noqa: F401
