"""Fast float evaluation of a parsed formula at many points.

The tree is turned into nested closures once; each call evaluates plain floats with
``math`` functions. Float arithmetic cannot hang (``math.pow`` overflows instead of
building a huge integer), and every failure surfaces as ``ArithmeticError`` or
``ValueError``, which callers treat as "undefined at this point".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from grading.expressions.syntax import Call, Name, Negate, Number

FloatFunction = Callable[[Mapping[str, float]], float]

_UNARY = {
    "sqrt": math.sqrt, "log": math.log, "log2": math.log2, "log10": math.log10,
    "exp": math.exp, "abs": abs,
    "ceil": lambda x: float(math.ceil(x)), "floor": lambda x: float(math.floor(x)),
}


def _divide(a: float, b: float) -> float:
    return a / b


def _power(a: float, b: float) -> float:
    return math.pow(a, b)


_BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _divide,
    "^": _power,
}


def compile_float(node) -> FloatFunction:
    """A function from {symbol: float} to the formula's float value. Raises
    ``ArithmeticError`` / ``ValueError`` where the formula is undefined; the result may
    be ``inf`` or ``nan`` when floats overflow, which callers must check."""
    if isinstance(node, Number):
        value = node.value
        return lambda values: value
    if isinstance(node, Name):
        name = node.name
        return lambda values: values[name]
    if isinstance(node, Negate):
        operand = compile_float(node.operand)
        return lambda values: -operand(values)
    if isinstance(node, Call):
        args = [compile_float(arg) for arg in node.args]
        if node.function in ("min", "max"):
            pick = min if node.function == "min" else max
            return lambda values: pick(arg(values) for arg in args)
        function = _UNARY[node.function]
        (only,) = args
        return lambda values: function(only(values))
    left, right = compile_float(node.left), compile_float(node.right)
    operation = _BINARY[node.op]
    return lambda values: operation(left(values), right(values))


def evaluate_at(function: FloatFunction, point: Mapping[str, float]) -> float | None:
    """The value at ``point``, or None where undefined (domain error, division by zero,
    overflow, nan)."""
    try:
        value = float(function(point))
    except (ArithmeticError, ValueError):
        return None
    return value if math.isfinite(value) else None
