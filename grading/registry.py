"""Answer kinds by name: a lazy registry of dotted paths.

Each kind is one package under ``grading/kinds/`` (its spec, grading, validation,
capabilities and templates). ``KIND_PATHS`` lists them; a kind's module is imported the
first time it is asked for, so naming a kind costs nothing until it is used. Everything
outside a kind's package asks this registry, by capability, and never tests a kind's
name (``kinds_with``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import threading
from pathlib import Path

from grading.kinds.base import AnswerKind, SpecError

# Adding a kind: its package, and one line here.
KIND_PATHS: dict[str, str] = {
    "numeric": "grading.kinds.numeric.NumericKind",
    "formula": "grading.kinds.formula.FormulaKind",
    "explain": "grading.kinds.explain.ExplainKind",
    "code": "grading.kinds.code.CodeKind",
    "kernel": "grading.kinds.kernel.KernelKind",
    "choice": "grading.kinds.choice.ChoiceKind",
    "order": "grading.kinds.order.OrderKind",
    "match": "grading.kinds.match.MatchKind",
}

_KINDS: dict[str, AnswerKind] = {}
_LOCK = threading.Lock()


def _load(name: str) -> AnswerKind:
    module_path, _, class_name = KIND_PATHS[name].rpartition(".")
    kind_class = getattr(importlib.import_module(module_path), class_name)
    if getattr(kind_class, "name", None) != name:
        raise TypeError(f"{KIND_PATHS[name]} must have name = {name!r}")
    return kind_class()


def get_kind(name: str) -> AnswerKind:
    """The kind called ``name`` (one instance per process). Raises ``SpecError`` (key
    ``kind``) for an unknown name, listing the known ones."""
    kind = _KINDS.get(name) if isinstance(name, str) else None
    if kind is not None:
        return kind
    if not isinstance(name, str) or name not in KIND_PATHS:
        raise SpecError(f"unknown answer kind {name!r} (known: {', '.join(kinds())})", "kind")
    with _LOCK:
        if name not in _KINDS:
            _KINDS[name] = _load(name)
        return _KINDS[name]


def kinds() -> list[str]:
    """Names of every kind, sorted."""
    return sorted(KIND_PATHS)


def kinds_with(capability: str) -> list[str]:
    """Names of the kinds whose ``capability`` (a class attribute of ``AnswerKind``,
    such as ``runs_in_sandbox``) is true, sorted."""
    return list(_kinds_with(capability))


@functools.cache
def _kinds_with(capability: str) -> tuple[str, ...]:
    # Kinds and their capabilities are fixed once loaded (KIND_PATHS, class attributes),
    # and callers ask per question: the progress model asked ~140 times per graded answer.
    if not hasattr(AnswerKind, capability):
        raise AttributeError(f"AnswerKind has no capability {capability!r}")
    return tuple(name for name in kinds() if getattr(get_kind(name), capability))


def _package_dirs(name: str) -> list[Path]:
    """Each kind package's ``name`` folder that exists, in registry order."""
    dirs = []
    for dotted in KIND_PATHS.values():
        module_path = dotted.rpartition(".")[0]
        spec = importlib.util.find_spec(module_path)
        if spec is not None and spec.submodule_search_locations:
            folder = Path(next(iter(spec.submodule_search_locations))) / name
            if folder.is_dir():
                dirs.append(folder)
    return dirs


def template_dirs() -> list[Path]:
    """Each kind package's ``templates/`` folder, for Django's template loader: a kind
    owns its answer form and verdict partials (``kinds/<name>/....html``)."""
    return _package_dirs("templates")


def static_dirs() -> list[Path]:
    """Each kind package's ``static/`` folder, for Django's static files: a kind owns
    the script and styles its answer form needs (``kinds/<name>.js``)."""
    return _package_dirs("static")
