"""Variants: drawing one choice per param and building the evaluation context.

A question's ``params`` define its variant space (FORMAT.md). An attempt stores only the
seed and the drawn choices (plain JSON values); the context is rebuilt from them and the
catalogue whenever it is needed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from grading.expressions import ExpressionError, evaluate
from grading.kinds.base import SpecError
from grading.kinds.slips import DEFINITIONS_KEY
from grading.quantities import parse_quantity
from grading.units import ureg

# Catalogue fields that are always text even when they start with a digit.
TEXT_FIELDS = frozenset({"name", "source"})


def _choices_of(name: str, spec) -> list:
    if not isinstance(spec, Mapping):
        raise SpecError("must be a mapping with 'choices'", f"params.{name}")
    choices = spec.get("choices")
    if not isinstance(choices, list) or not choices:
        raise SpecError("needs a non-empty list", f"params.{name}.choices")
    extra = set(spec) - {"choices", "catalogue"}
    if extra:
        raise SpecError(f"unknown key {sorted(extra)[0]!r}", f"params.{name}")
    return choices


def draw_choices(params_spec: Mapping, seed: int) -> dict:
    """One choice per param, a pure function of ``seed`` and the param's name and
    choices: the same seed always gives the same variant, and adding a param does not
    reshuffle the others. Values are the raw choices (JSON-ready: catalogue keys,
    numbers, strings). Raises ``SpecError`` for a malformed spec."""
    drawn = {}
    for name, spec in (params_spec or {}).items():
        choices = _choices_of(name, spec)
        # A string seed is hashed with SHA-512 by ``random``: stable across processes.
        rng = random.Random(f"{int(seed)}:{name}")
        drawn[name] = rng.choice(choices)
    return drawn


def plain_value(value, *, label: str):
    """A param choice or catalogue field as the context holds it: strings that start
    with a digit, or a minus sign and a digit, are quantities (dimensionless ones become
    floats; a lab's measured change may be negative), other strings stay text, numbers
    stay numbers."""
    if isinstance(value, str) and value.removeprefix("-")[:1].isdigit():
        try:
            quantity = parse_quantity(value)
        except ExpressionError as error:
            raise SpecError(f"cannot read quantity {value!r}: {error}", label) from None
        if quantity.dimensionless:
            return float(quantity.m_as(ureg.dimensionless))
        return quantity
    return value


def catalogue_namespace(catalogue: Mapping) -> dict:
    """The catalogue as the context shows it: ``{section: {key: {field: value}}}`` with
    quantity strings parsed and each entry's own ``key`` added (``gpu.key``)."""
    namespace = {}
    for section, entries in (catalogue or {}).items():
        if not isinstance(entries, Mapping):
            raise SpecError("must map keys to entries", f"catalogue.{section}")
        section_values = {}
        for key, entry in entries.items():
            if not isinstance(entry, Mapping):
                raise SpecError("must be a mapping of fields", f"catalogue.{section}.{key}")
            fields = {"key": key}
            for field, value in entry.items():
                label = f"catalogue.{section}.{key}.{field}"
                fields[field] = value if field in TEXT_FIELDS else plain_value(value,
                                                                               label=label)
            section_values[key] = fields
        namespace[section] = section_values
    return namespace


def build_context(params_spec: Mapping, derived: Mapping, choices: Mapping,
                  catalogue: Mapping) -> dict:
    """The evaluation context for one variant.

    Holds every catalogue section (``gpus``, ``models``, ``dtypes``, ``links``; dotted
    access such as ``models.llama33_70b.layers``), each param (a ``catalogue:`` param
    resolves to its entry, so ``gpu.hbm_bandwidth`` works; plain params to their value)
    and each derived value, evaluated in order (each may use params, the catalogue and
    earlier derived names), and under ``DEFINITIONS_KEY`` the derived definitions
    themselves (text), so a kind can tell what a derived name is made of (which slips
    it makes plausible). Raises ``SpecError`` naming the param or derived name that
    fails."""
    context = catalogue_namespace(catalogue)
    for name, spec in (params_spec or {}).items():
        _choices_of(name, spec)
        if name in context:
            raise SpecError("shadows a catalogue section", f"params.{name}")
        if name not in choices:
            raise SpecError("has no drawn choice", f"params.{name}")
        choice = choices[name]
        section = spec.get("catalogue")
        if section is not None:
            entries = context.get(section)
            if entries is None:
                raise SpecError(f"unknown catalogue section {section!r}",
                                f"params.{name}.catalogue")
            if choice not in entries:
                raise SpecError(f"{choice!r} is not in catalogue section {section!r}",
                                f"params.{name}.choices")
            context[name] = entries[choice]
        else:
            context[name] = plain_value(choice, label=f"params.{name}")
    for name, expression in (derived or {}).items():
        label = f"derived.{name}"
        if name in context:
            raise SpecError("shadows a param or catalogue section", label)
        if not isinstance(expression, (str, int, float)) or isinstance(expression, bool):
            raise SpecError("must be an expression", label)
        try:
            context[name] = evaluate(str(expression), context)
        except ExpressionError as error:
            raise SpecError(str(error), label) from None
    context[DEFINITIONS_KEY] = {name: str(expression) for name, expression in (derived or {}).items()}
    return context
