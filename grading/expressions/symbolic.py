"""A bounded symbolic equivalence check, on sympy expressions built from OUR tree.

Candidate text never reaches ``sympify`` or ``parse_expr``: each node maps to a sympy
constructor. Before any algebra, ``expansion_cost`` estimates how many terms expanding
the expression could produce; above ``MAX_EXPANSION_TERMS`` the symbolic step is
skipped (the numeric check still decides), so no input can make sympy run for long.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

# Imported eagerly: sympy takes about half a second to import, which belongs at process
# start, not inside the first candidate's request.
import sympy

from grading.expressions.syntax import Call, Name, Negate, Number, constant_value

MAX_EXPANSION_TERMS = 400
MAX_SYMBOLIC_INTEGER_EXPONENT = 32

PROVED_EQUAL = "proved-equal"
PROVED_DIFFERENT = "proved-different"
INCONCLUSIVE = "inconclusive"
SKIPPED = "skipped"


@dataclass(frozen=True)
class SymbolAssumptions:
    name: str
    positive: bool
    nonnegative: bool
    integer: bool


def expansion_cost(node) -> float:
    """An upper estimate of the terms ``together``/``expand`` could produce: the term
    counts of the numerator and denominator after putting everything over one
    denominator, added. ``inf`` when a constant exponent is too large to expand."""
    numerator, denominator = _fraction_cost(node)
    return numerator + denominator


def _fraction_cost(node) -> tuple[float, float]:
    if isinstance(node, (Number, Name)):
        return 1, 1
    if isinstance(node, Negate):
        return _fraction_cost(node.operand)
    if isinstance(node, Call):
        # sympy treats a function as an opaque generator; its arguments still cost.
        return max(1, sum(sum(_fraction_cost(arg)) for arg in node.args)), 1
    (n1, d1), (n2, d2) = _fraction_cost(node.left), _fraction_cost(node.right)
    if node.op in ("+", "-"):
        return n1 * d2 + n2 * d1, d1 * d2
    if node.op == "*":
        return n1 * n2, d1 * d2
    if node.op == "/":
        return n1 * d2, d1 * n2
    exponent = constant_value(node.right)
    if exponent is None or exponent != int(exponent):
        return n1 + d1 + n2 + d2, 1  # a symbolic or fractional power stays opaque
    if abs(exponent) > MAX_SYMBOLIC_INTEGER_EXPONENT:
        return float("inf"), float("inf")
    power = abs(int(exponent))
    if exponent < 0:
        n1, d1 = d1, n1
    return n1**power, d1**power


def _rational(text: str):
    fraction = Fraction(text)
    return sympy.Rational(fraction.numerator, fraction.denominator)


def to_sympy(node, symbols: dict):
    """The sympy expression for ``node``; ``symbols`` maps names to sympy Symbols."""
    if isinstance(node, Number):
        return _rational(node.text)
    if isinstance(node, Name):
        return symbols[node.name]
    if isinstance(node, Negate):
        return -to_sympy(node.operand, symbols)
    if isinstance(node, Call):
        args = [to_sympy(arg, symbols) for arg in node.args]
        if node.function == "min":
            return sympy.Min(*args)
        if node.function == "max":
            return sympy.Max(*args)
        (arg,) = args
        return {
            "sqrt": sympy.sqrt,
            "log": sympy.log,
            "log2": lambda x: sympy.log(x, 2),
            "log10": lambda x: sympy.log(x, 10),
            "exp": sympy.exp,
            "ceil": sympy.ceiling,
            "floor": sympy.floor,
            "abs": sympy.Abs,
        }[node.function](arg)
    left, right = to_sympy(node.left, symbols), to_sympy(node.right, symbols)
    if node.op == "+":
        return left + right
    if node.op == "-":
        return left - right
    if node.op == "*":
        return left * right
    if node.op == "/":
        return left / right
    return sympy.Pow(left, right)


def _symbols(assumptions: tuple[SymbolAssumptions, ...]) -> dict:
    return {
        item.name: sympy.Symbol(item.name, positive=item.positive or None,
                                nonnegative=item.nonnegative or None,
                                integer=item.integer or None)
        for item in assumptions
    }


def compare_symbolically(candidate, reference,
                         assumptions: tuple[SymbolAssumptions, ...]) -> str:
    """``PROVED_EQUAL`` when the difference cancels to zero; ``PROVED_DIFFERENT`` when
    it cancels to a non-zero rational function (which is not identically zero);
    ``INCONCLUSIVE`` otherwise (functions sympy cannot settle cheaply); ``SKIPPED`` when
    the expressions are too big to expand safely. Trees are hashable, so results are
    cached."""
    (n1, d1), (n2, d2) = _fraction_cost(candidate), _fraction_cost(reference)
    if n1 * d2 + n2 * d1 + d1 * d2 > MAX_EXPANSION_TERMS:  # the cost of candidate - reference
        return SKIPPED
    return _compare_cached(candidate, reference, assumptions)


@functools.lru_cache(maxsize=2048)
def _compare_cached(candidate, reference, assumptions) -> str:
    symbols = _symbols(assumptions)
    try:
        difference = to_sympy(candidate, symbols) - to_sympy(reference, symbols)
        if difference.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            return INCONCLUSIVE
        simplified = sympy.cancel(sympy.together(difference))
        if simplified == 0:
            return PROVED_EQUAL
        if simplified.has(sympy.log):
            simplified = sympy.cancel(sympy.expand_log(simplified, force=True))
            if simplified == 0:
                return PROVED_EQUAL
        if simplified.is_rational_function(*symbols.values()):
            return PROVED_DIFFERENT
        return INCONCLUSIVE
    except (ArithmeticError, ValueError, TypeError, RecursionError,
            sympy.polys.polyerrors.PolificationFailed, sympy.polys.polyerrors.PolynomialError):
        return INCONCLUSIVE
