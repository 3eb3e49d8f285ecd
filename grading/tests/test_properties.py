"""Hypothesis: equivalent answers are accepted, perturbed ones rejected.

Formulas are polynomials P1·P2/Q over x, y, z with small integer coefficients. The test
builds rewrites itself (commuting, scaling numerator and denominator, expanding the
product with its own polynomial arithmetic) and perturbations that are provably
different polynomials (a coefficient changed, a symbol dropped from or squared in one
term).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import grading

SYMBOLS = ("x", "y", "z")
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

Poly = dict  # {(ex, ey, ez): coefficient}

monomial = st.tuples(*(st.integers(0, 2) for _ in SYMBOLS))
poly = st.dictionaries(monomial, st.integers(1, 9), min_size=1, max_size=3)


def term_text(exponents, coefficient, reverse=False) -> str:
    factors = [str(coefficient)] + [
        name if power == 1 else f"{name}^{power}"
        for name, power in zip(SYMBOLS, exponents) if power]
    if reverse:
        factors.reverse()
    return " * ".join(factors)


def poly_text(p: Poly, reverse=False) -> str:
    terms = [term_text(e, c, reverse) for e, c in sorted(p.items()) if c]
    if reverse:
        terms.reverse()
    return " + ".join(terms) or "0"


def multiply(a: Poly, b: Poly) -> Poly:
    product: Poly = {}
    for (ea, ca), (eb, cb) in itertools.product(a.items(), b.items()):
        key = tuple(i + j for i, j in zip(ea, eb))
        product[key] = product.get(key, 0) + ca * cb
    return product


def formula_part(answer: str) -> dict:
    return {"id": "p", "kind": "formula", "answer": answer,
            "symbols": {name: {"range": [0.5, 20]} for name in SYMBOLS}}


def reference(p1: Poly, p2: Poly, q: Poly) -> str:
    return f"({poly_text(p1)}) * ({poly_text(p2)}) / ({poly_text(q)})"


@SETTINGS
@given(p1=poly, p2=poly, q=poly, scale=st.integers(2, 9), rewrite=st.sampled_from(
    ["commuted", "scaled", "expanded"]))
def test_equivalent_rewrites_are_accepted(p1, p2, q, scale, rewrite):
    if rewrite == "commuted":
        text = (f"({poly_text(p2, reverse=True)}) * ({poly_text(p1, reverse=True)}) / "
                f"({poly_text(q, reverse=True)})")
    elif rewrite == "scaled":
        text = f"({scale} * ({poly_text(p1)}) * ({poly_text(p2)})) / ({scale} * ({poly_text(q)}))"
    else:
        text = f"({poly_text(multiply(p1, p2))}) / ({poly_text(q)})"
    verdict = grading.grade(formula_part(reference(p1, p2, q)), text, {})
    assert verdict.valid and verdict.correct, (text, verdict.feedback)


@SETTINGS
@given(p1=poly, p2=poly, q=poly, data=st.data(), perturbation=st.sampled_from(
    ["coefficient", "dropped", "squared"]))
def test_perturbed_formulas_are_rejected(p1, p2, q, data, perturbation):
    numerator = multiply(p1, p2)
    exponents = data.draw(st.sampled_from(sorted(numerator)))
    coefficient = numerator.pop(exponents)
    if perturbation == "coefficient":
        delta = data.draw(st.integers(-3, 3).filter(bool))
        numerator[exponents] = numerator.get(exponents, 0) + coefficient + delta
    else:
        present = [i for i, power in enumerate(exponents) if power]
        assume(present)
        index = data.draw(st.sampled_from(present))
        changed = list(exponents)
        changed[index] = changed[index] - 1 if perturbation == "dropped" else 2 * changed[index]
        changed = tuple(changed)
        numerator[changed] = numerator.get(changed, 0) + coefficient
    text = f"({poly_text(numerator)}) / ({poly_text(q)})"
    verdict = grading.grade(formula_part(reference(p1, p2, q)), text, {})
    assert verdict.valid and verdict.correct is False, (text, verdict.feedback)


# Factors to seconds / bytes written out here, independently of the engine's registry.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "min": 60.0, "hour": 3600.0}
SIZE_UNITS = {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 1024.0,
              "MiB": 2.0**20, "GiB": 2.0**30, "bit": 0.125, "Gbit": 1e9 / 8,
              "Kibit": 2.0**10 / 8, "Mibit": 2.0**20 / 8, "Gibit": 2.0**30 / 8,
              "Tibit": 2.0**40 / 8}
RATE_UNITS = {"B/s": 1.0, "GB/s": 1e9, "TB/s": 1e12, "Gbit/s": 1e9 / 8, "MB/ms": 1e9,
              "bit/s": 0.125, "Gibit/s": 2.0**30 / 8, "GiB/s": 2.0**30}
FAMILIES = [TIME_UNITS, SIZE_UNITS, RATE_UNITS]

magnitudes = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def unit_pair(draw):
    family = draw(st.sampled_from(FAMILIES))
    names = sorted(family)
    return family, draw(st.sampled_from(names)), draw(st.sampled_from(names))


@SETTINGS
@given(value=magnitudes, units=unit_pair())
def test_unit_converted_answers_are_accepted(value, units):
    family, part_unit, typed_unit = units
    part = {"id": "n", "kind": "numeric", "answer": f"{value!r} * {part_unit}",
            "unit": part_unit}
    typed = value * family[part_unit] / family[typed_unit]
    verdict = grading.grade(part, f"{typed!r} {typed_unit}", {})
    assert verdict.valid and verdict.correct, (typed, typed_unit, verdict.feedback)


@SETTINGS
@given(value=magnitudes, units=unit_pair(),
       factor=st.floats(min_value=1.05, max_value=1.5) | st.floats(min_value=0.5, max_value=0.95))
def test_numeric_answers_off_by_more_than_rtol_are_rejected(value, units, factor):
    family, part_unit, typed_unit = units
    part = {"id": "n", "kind": "numeric", "answer": f"{value!r} * {part_unit}",
            "unit": part_unit}
    typed = value * factor * family[part_unit] / family[typed_unit]
    verdict = grading.grade(part, f"{typed!r} {typed_unit}", {})
    assert verdict.valid and verdict.correct is False


@SETTINGS
@given(numerator=st.integers(1, 10**6), divisor=st.integers(2, 64),
       unit=st.sampled_from(["B", "GB", "GiB", "ms", "Gibit", "J"]))
def test_a_unit_bound_to_a_divisor_is_explained_and_the_brackets_accepted(numerator, divisor,
                                                                          unit):
    part = {"id": "n", "kind": "numeric", "answer": f"{numerator} / {divisor} * {unit}",
            "unit": unit}
    verdict = grading.grade(part, f"{numerator}/{divisor} {unit}", {})
    assert not verdict.valid
    assert (f"read as {numerator} / ({divisor} {unit}); did you mean ({numerator} / "
            f"{divisor}) {unit}?") in verdict.feedback
    assert grading.grade(part, f"({numerator}/{divisor}) {unit}", {}).correct


@pytest.mark.parametrize("text", ["0.5 * (x + y)", "x / 2 + y / 2", "(y + x) / 2",
                                  "(2 x + 2 y) / 4"])
def test_averages_written_four_ways(text):
    part = {"id": "avg", "kind": "formula", "answer": "(x + y) / 2",
            "symbols": {"x": {"range": [1, 100]}, "y": {"range": [1, 100]}}}
    assert grading.grade(part, text, {}).correct
