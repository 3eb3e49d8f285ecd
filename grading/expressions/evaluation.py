"""Evaluating a parsed expression to a number or a pint Quantity.

Who may name what is decided by the resolver passed in: author expressions see the
context and unit names, candidate numeric answers see unit names only. Every failure
becomes an ``ExpressionError`` in plain words; pint's and Python's own exceptions never
escape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import pint

from grading.expressions.syntax import (
    FUNCTIONS,
    MAX_CONSTANT_EXPONENT,
    Call,
    DimensionError,
    ExpressionError,
    Name,
    Negate,
    Number,
)
from grading.units import (
    AMBIGUOUS_UNIT_NAMES,
    UNIT_NAMES,
    Quantity,
    describe_dimension,
    dimensionality_of,
    ureg,
)

Resolver = Callable[[Name], object]

KNOWN_UNITS_SUMMARY = (
    "s, ms, us, ns, min, hour; B, kB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB; bit, "
    "kbit, Mbit, Gbit, Tbit, Kibit, Mibit, Gibit, Tibit; FLOP, GFLOP, TFLOP, PFLOP; "
    "token(s); W, kW, J, kWh; Hz, MHz, GHz; USD or $; % or percent; k, M, thousand, "
    "million, billion; rates such as GB/s, Gbit/s or token/s"
)


def _dimension_words(value) -> str:
    return describe_dimension(dimensionality_of(value))


def unit_value(node: Name, *, trusted: bool):
    """The value of a unit name: a 1-unit Quantity or a plain factor (``k``, ``%``).
    Ambiguous spellings raise with a question back; unknown names raise with the list.
    Trusted (author) text may also use any single unit name our registry defines."""
    name = node.name
    if name in UNIT_NAMES:
        return UNIT_NAMES[name].value
    if name in AMBIGUOUS_UNIT_NAMES:
        raise ExpressionError(f"`{name}`: {AMBIGUOUS_UNIT_NAMES[name]}", node.position)
    if trusted and "." not in name:
        try:
            return Quantity(1, ureg.parse_units(name))
        except Exception:  # pint raises several types for unknown names
            pass
    if node.before_bracket:
        raise ExpressionError(
            f"unknown function `{name}` (functions: {', '.join(FUNCTIONS)})", node.position)
    if trusted:
        raise ExpressionError(f"unknown name `{name}`", node.position)
    raise ExpressionError(f"`{name}` is not a unit this trainer knows (units: "
                          f"{KNOWN_UNITS_SUMMARY})", node.position)


def context_resolver(context: Mapping) -> Resolver:
    """Names resolve in ``context`` first (dotted names walk nested dicts:
    ``gpu.hbm_bandwidth``), then as unit names."""

    def resolve(node: Name):
        parts = node.name.split(".")
        if parts[0] not in context:
            return unit_value(node, trusted=True)
        value = context[parts[0]]
        for depth, part in enumerate(parts[1:], start=2):
            if not isinstance(value, Mapping) or part not in value:
                prefix = ".".join(parts[: depth - 1])
                fields = ""
                if isinstance(value, Mapping):
                    fields = f"; it has {', '.join(sorted(map(str, value))[:40])}"
                raise ExpressionError(f"`{prefix}` has no field `{part}`{fields}",
                                      node.position)
            value = value[part]
        return value

    return resolve


def evaluate_tree(tree, resolve: Resolver, *, keep_integers: bool = False,
                  tidy_dimensionless: bool = True, allow_text: bool = False):
    """Evaluate ``tree``. Numbers are floats unless ``keep_integers`` (authors' ``2``
    stays an int so ``{{ batch | | d }}`` prints exactly). Dimensionless Quantities
    become floats after every step unless ``tidy_dimensionless`` is off (reading a unit
    such as ``%`` needs the Quantity). A bare name may evaluate to text when
    ``allow_text`` (templates print ``{{ gpu.name }}``); text inside arithmetic is an
    error. Raises ``ExpressionError`` for anything that cannot be computed."""
    evaluator = _Evaluator(resolve, keep_integers, tidy_dimensionless)
    if allow_text and isinstance(tree, Name):
        value = resolve(tree)
        if isinstance(value, str):
            return value
    return evaluator.value(tree)


class _Evaluator:
    def __init__(self, resolve: Resolver, keep_integers: bool, tidy_dimensionless: bool):
        self.resolve = resolve
        self.keep_integers = keep_integers
        self.tidy_dimensionless = tidy_dimensionless

    def value(self, node):
        try:
            return self.checked(self.dispatch(node))
        except ExpressionError:
            raise
        except pint.DimensionalityError as error:
            raise DimensionError(f"incompatible units: {error}") from None
        except ZeroDivisionError:
            raise ExpressionError("division by zero") from None
        except OverflowError:
            raise ExpressionError("a number is too large to compute") from None
        except (ValueError, TypeError, ArithmeticError) as error:
            raise ExpressionError(f"cannot compute this: {error}") from None

    def checked(self, value):
        if isinstance(value, pint.Quantity):
            if self.tidy_dimensionless and value.dimensionless:
                value = float(value.m_as(ureg.dimensionless))
            else:
                magnitude = value.magnitude
                if not isinstance(magnitude, (int, float)):
                    raise ExpressionError("this expression does not give a single number")
                if isinstance(magnitude, float) and not math.isfinite(magnitude):
                    raise ExpressionError("the result is too large or undefined")
                return value
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise ExpressionError("the result is too large or undefined")
        return value

    def operand(self, node):
        """A node's value for arithmetic; ``dispatch`` already refused text and groups."""
        return self.value(node)

    def dispatch(self, node):
        if isinstance(node, Number):
            if self.keep_integers and node.text.isdigit():
                return int(node.text)
            return node.value
        if isinstance(node, Name):
            value = self.resolve(node)
            if isinstance(value, (str, Mapping)) or value is None:
                return self.operand_error(node, value)
            return value
        if isinstance(node, Negate):
            return -self.operand(node.operand)
        if isinstance(node, Call):
            return self.call(node)
        left, right = self.operand(node.left), self.operand(node.right)
        if node.op in ("+", "-"):
            return self.add(node.op, left, right)
        if node.op == "*":
            return left * right
        if node.op == "/":
            return left / right
        return self.power(left, right)

    def operand_error(self, node: Name, value):
        if isinstance(value, str):
            raise ExpressionError(f"`{node.name}` is text ({value!r}), not a number",
                                  node.position)
        if isinstance(value, Mapping):
            example = next(iter(value), "field")
            raise ExpressionError(f"`{node.name}` is a group of values; name one of its "
                                  f"fields (like {node.name}.{example})", node.position)
        raise ExpressionError(f"`{node.name}` has no value", node.position)

    @staticmethod
    def add(op: str, left, right):
        try:
            return left + right if op == "+" else left - right
        except pint.DimensionalityError:
            verb = "add" if op == "+" else "subtract"
            raise DimensionError(
                f"cannot {verb} {_dimension_words(left)} and {_dimension_words(right)}"
            ) from None

    def power(self, base, exponent):
        if isinstance(exponent, pint.Quantity):
            raise DimensionError(
                f"an exponent must be a plain number, not {_dimension_words(exponent)}")
        if abs(exponent) > MAX_CONSTANT_EXPONENT:
            raise ExpressionError(f"the exponent {exponent:.6g} is too large")
        if isinstance(base, pint.Quantity):
            if base.magnitude < 0 and exponent != int(exponent):
                raise ExpressionError("a negative number to a fractional power")
            return Quantity(math.pow(float(base.magnitude), exponent),
                            base.units ** exponent)
        if (self.keep_integers and isinstance(base, int) and isinstance(exponent, int)
                and 0 <= exponent <= 64 and abs(base) < 2**64):
            return base**exponent
        try:
            return math.pow(base, exponent)
        except ValueError:
            raise ExpressionError("a negative number to a fractional power") from None

    def call(self, node: Call):
        args = [self.operand(arg) for arg in node.args]
        function = node.function
        if function in ("min", "max"):
            dims = {frozenset(dict(dimensionality_of(arg)).items()) for arg in args}
            if len(dims) > 1:
                raise DimensionError(f"{function} needs arguments of one kind, got "
                                      + " and ".join(sorted({_dimension_words(a)
                                                             for a in args})))
            return min(args) if function == "min" else max(args)
        (arg,) = args
        if function == "abs":
            return abs(arg)
        if function == "sqrt":
            magnitude = arg.magnitude if isinstance(arg, pint.Quantity) else arg
            if magnitude < 0:
                raise ExpressionError("square root of a negative number")
            return arg**0.5 if isinstance(arg, pint.Quantity) else math.sqrt(arg)
        if isinstance(arg, pint.Quantity):
            raise DimensionError(
                f"{function} needs a plain number, not {_dimension_words(arg)}")
        try:
            if function == "ceil":
                return math.ceil(arg)
            if function == "floor":
                return math.floor(arg)
            if function == "exp":
                return math.exp(arg)
            logs = {"log": math.log, "log2": math.log2, "log10": math.log10}
            return logs[function](arg)
        except ValueError:
            raise ExpressionError(f"{function} is undefined for {arg:g}") from None
