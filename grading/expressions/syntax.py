"""Tokenizer and recursive-descent parser for the one small expression language.

The same parser reads author expressions (derived values, answers, templates) and
candidate answers; what differs is which names may be looked up afterwards. Nothing is
ever handed to ``eval``, ``exec`` or a third-party string parser.

Grammar, loosest binding first::

    expr     := term (("+" | "-") term)*
    term     := unary (("*" | "/") unary)*
    unary    := ("-" | "+") unary | implicit
    implicit := power power*          # juxtaposition: "2 L", "41.8 ms", "2(a + b)"
    power    := primary (("^" | "**") exponent)?     # right-associative
    exponent := ("-" | "+") exponent | power
    primary  := NUMBER | NAME | NAME "(" args ")" | "(" expr ")" | "$" NUMBER

Juxtaposition binds tighter than ``*`` and ``/`` so that ``140 GB / 3.35 TB/s`` reads as
people mean it and ``1/2L`` is ``1/(2·L)``; the printed interpretation shows the grouping.
When every name is a unit (``rates=True``: candidates' numeric answers, catalogue
strings), a number with units also keeps the unit names that divide it: ``50 GB/s`` is
one rate, so ``500 GB / 50 GB/s`` is ``500 GB / (50 GB/s)``, not ``(500 GB / 50 GB) / s``.
A factor may follow another only when it starts with a name or "(": ``2 3`` is refused.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

FUNCTIONS = ("sqrt", "log", "log2", "log10", "exp", "min", "max", "ceil", "floor", "abs")

# Characters people paste from documents, mapped to what they mean here. The caller shows
# the normalized text, so nothing is silently reinterpreted.
_NORMALIZATIONS = {
    "\u2212": ("-", "− as -"),
    "\u2013": ("-", "– as -"),
    "\u00d7": ("*", "× as *"),
    "\u00b7": ("*", "· as *"),
    "\u22c5": ("*", "⋅ as *"),
    "\u2217": ("*", "∗ as *"),
    "\u00f7": ("/", "÷ as /"),
    "\u00b2": ("^2", "² as ^2"),
    "\u00b3": ("^3", "³ as ^3"),
    "\u00a0": (" ", None),
    "\u2009": (" ", None),
    "\u202f": (" ", None),
}

_TOKEN_RE = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_\u00b5\u03bc][A-Za-z0-9_\u00b5\u03bc]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<op>\*\*|[-+*/^(),$%])
    """,
    re.VERBOSE,
)

MAX_CONSTANT_EXPONENT = 1000.0


class ExpressionError(ValueError):
    """An expression that cannot be read or evaluated. ``message`` is plain words for a
    person; ``position`` is the 1-based character in the (normalized) text, if known."""

    def __init__(self, message: str, position: int | None = None):
        self.message = message
        self.position = position
        super().__init__(message if position is None else f"{message} (at character {position})")


class DimensionError(ExpressionError):
    """Units that do not combine: adding bytes to seconds, ``log`` of a time, a
    dimensioned exponent."""


@dataclass(frozen=True)
class Token:
    kind: str  # "number", "name", "op", "end"
    text: str
    position: int  # 1-based


@dataclass(frozen=True)
class Number:
    text: str
    value: float


@dataclass(frozen=True)
class Name:
    name: str
    position: int
    before_bracket: bool = False  # "factorial(3)": reported as an unknown function


@dataclass(frozen=True)
class Negate:
    operand: object


@dataclass(frozen=True)
class Binary:
    op: str  # "+", "-", "*", "/", "^"
    left: object
    right: object
    implicit: bool = False  # "*" written as juxtaposition


@dataclass(frozen=True)
class Call:
    function: str
    args: tuple
    position: int


@dataclass(frozen=True)
class Limits:
    """Bounds checked before any evaluation, so every input answers quickly."""

    max_length: int = 500
    max_nodes: int = 200
    max_depth: int = 40


CANDIDATE_LIMITS = Limits()
# Node counts stay well under Python's recursion limit: every tree walk here recurses.
TRUSTED_LIMITS = Limits(max_length=4000, max_nodes=600, max_depth=100)


def normalize(text: str) -> tuple[str, list[str]]:
    """Replace typographic characters (``−``, ``×``, ``·``, non-breaking spaces) by
    their ASCII meaning. Returns the new text and notes such as "read × as *"."""
    notes: list[str] = []
    pieces = []
    for char in text:
        if char in _NORMALIZATIONS:
            replacement, note = _NORMALIZATIONS[char]
            pieces.append(replacement)
            if note and f"read {note}" not in notes:
                notes.append(f"read {note}")
        else:
            pieces.append(char)
    return "".join(pieces), notes


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    index = 0
    while index < len(text):
        match = _TOKEN_RE.match(text, index)
        if match is None:
            char = text[index]
            hint = ""
            if char in "'\"":
                hint = " (quotes are not part of an answer)"
            elif char in "[]{}":
                hint = " (use round brackets)"
            raise ExpressionError(f"unexpected character {char!r}{hint}", index + 1)
        kind = match.lastgroup
        if kind != "space":
            tokens.append(Token(kind, match.group(), index + 1))
        index = match.end()
    tokens.append(Token("end", "", len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, tokens: list[Token], limits: Limits, rates: bool = False):
        self.rates = rates
        self.tokens = tokens
        self.index = 0
        self.limits = limits
        self.nodes = 0
        self.depth = 0

    # -- helpers ---------------------------------------------------------------
    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def at_op(self, *ops: str) -> bool:
        return self.current.kind == "op" and self.current.text in ops

    def node(self, node):
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise ExpressionError(
                f"the expression is too long (more than {self.limits.max_nodes} parts)")
        return node

    def enter(self):
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise ExpressionError(
                f"the expression is nested too deeply (more than {self.limits.max_depth} "
                "levels)", self.current.position)

    def leave(self):
        self.depth -= 1

    # -- grammar ---------------------------------------------------------------
    def parse(self):
        if self.current.kind == "end":
            raise ExpressionError("the answer is empty")
        tree = self.expr()
        if self.current.kind != "end":
            token = self.current
            if token.text == ")":
                raise ExpressionError("unbalanced brackets: this ')' has no matching '('",
                                      token.position)
            if token.text == ",":
                raise ExpressionError(
                    "unexpected ',' (commas only separate function arguments; write "
                    "1000, not 1,000)", token.position)
            if token.kind == "number":
                raise ExpressionError("a number cannot follow here without an operator",
                                      token.position)
            raise ExpressionError(f"unexpected {token.text!r}", token.position)
        return tree

    def expr(self):
        self.enter()
        left = self.term()
        while self.at_op("+", "-"):
            op = self.advance().text
            left = self.node(Binary(op, left, self.term()))
        self.leave()
        return left

    def term(self):
        left = self.unary()
        while self.at_op("*", "/"):
            op = self.advance().text
            left = self.node(Binary(op, left, self.unary()))
        return left

    def unary(self):
        if self.at_op("-", "+"):
            self.enter()
            sign = self.advance().text
            operand = self.unary()
            self.leave()
            return self.node(Negate(operand)) if sign == "-" else operand
        return self.implicit()

    def starts_factor(self) -> bool:
        token = self.current
        return token.kind == "name" or (token.kind == "op" and token.text in ("(", "%", "$"))

    def implicit(self):
        left = self.power()
        has_number, unit_names = isinstance(left, Number), 0
        while self.starts_factor():
            right = self.power()
            unit_names += isinstance(right, Name)
            left = self.node(Binary("*", left, right, implicit=True))
        if self.rates and has_number and unit_names:
            while self.at_rate_denominator():
                self.advance()
                left = self.node(Binary("/", left, self.power()))
        return left

    def at_rate_denominator(self) -> bool:
        """At "/ unit" continuing a number's unit ("GB/s"), not "/ 3" or "/ f(x)"."""
        if not self.at_op("/"):
            return False
        following = self.tokens[self.index + 1]
        after = self.tokens[self.index + 2] if following.kind != "end" else following
        return following.kind == "name" and not (after.kind == "op" and after.text == "(")

    def power(self):
        base = self.primary()
        if self.at_op("^", "**"):
            self.advance()
            self.enter()
            exponent = self.exponent()
            self.leave()
            return self.node(Binary("^", base, exponent))
        return base

    def exponent(self):
        if self.at_op("-", "+"):
            sign = self.advance().text
            self.enter()
            operand = self.exponent()
            self.leave()
            return self.node(Negate(operand)) if sign == "-" else operand
        return self.power()

    def primary(self):
        token = self.current
        if token.kind == "number":
            self.advance()
            value = float(token.text)
            if not math.isfinite(value):
                raise ExpressionError(f"the number {token.text} is too large", token.position)
            return self.node(Number(token.text, value))
        if token.kind == "name":
            self.advance()
            # A function name without brackets is an ordinary name: FORMAT.md's own
            # example derives a value called ``floor``.
            if token.text in FUNCTIONS and self.at_op("("):
                return self.call(token)
            return self.node(Name(token.text, token.position, before_bracket=self.at_op("(")))
        if token.kind == "op" and token.text in ("%", "$"):
            self.advance()
            name = self.node(Name(token.text, token.position))
            if token.text == "$" and self.current.kind == "number":
                # "$2.50" is 2.50 USD: the sign comes first, as people write money.
                return self.node(Binary("*", self.primary(), name, implicit=True))
            return name
        if self.at_op("("):
            self.advance()
            if self.at_op(")"):
                raise ExpressionError("empty brackets", self.current.position)
            inner = self.expr()
            if not self.at_op(")"):
                raise ExpressionError("unbalanced brackets: a '(' is never closed",
                                      token.position)
            self.advance()
            return inner
        if token.kind == "end":
            raise ExpressionError("the expression ends too early", token.position)
        raise ExpressionError(f"unexpected {token.text!r}", token.position)

    def call(self, name_token: Token):
        if not self.at_op("("):
            raise ExpressionError(f"{name_token.text} needs its argument in brackets, "
                                  f"like {name_token.text}(x)", name_token.position)
        self.advance()
        args = []
        self.enter()
        if not self.at_op(")"):
            args.append(self.expr())
            while self.at_op(","):
                self.advance()
                args.append(self.expr())
        self.leave()
        if not self.at_op(")"):
            raise ExpressionError("unbalanced brackets: a '(' is never closed",
                                  name_token.position)
        self.advance()
        function = name_token.text
        if function in ("min", "max"):
            if len(args) < 2:
                raise ExpressionError(f"{function} needs at least two arguments",
                                      name_token.position)
        elif len(args) != 1:
            raise ExpressionError(f"{function} takes one argument", name_token.position)
        return self.node(Call(function, tuple(args), name_token.position))


def parse(text: str, limits: Limits = CANDIDATE_LIMITS, *, rates: bool = False):
    """Parse ``text`` (already normalized) into a tree of ``Number``, ``Name``,
    ``Negate``, ``Binary`` and ``Call`` nodes. Raises ``ExpressionError`` saying where and
    why. Unknown function names are parsed as names followed by brackets, which the
    caller reports as unknown names; constant exponents above 1000 are refused here so
    no later step (pint, sympy) can be asked to build an enormous number."""
    if len(text) > limits.max_length:
        raise ExpressionError(
            f"the answer is too long ({len(text)} characters; the limit is "
            f"{limits.max_length})")
    tree = _Parser(tokenize(text), limits, rates=rates).parse()
    _check_constant_exponents(tree)
    return tree


def walk(node):
    """Every node of the tree, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, Negate):
            stack.append(current.operand)
        elif isinstance(current, Binary):
            stack.extend((current.right, current.left))
        elif isinstance(current, Call):
            stack.extend(reversed(current.args))


def names_in(node) -> list[str]:
    """The distinct names the expression uses, in order of first appearance."""
    seen: dict[str, None] = {}
    for item in walk(node):
        if isinstance(item, Name):
            seen.setdefault(item.name, None)
    return list(seen)


_CONSTANT_FUNCTIONS = {
    "sqrt": math.sqrt, "log": math.log, "log2": math.log2, "log10": math.log10,
    "exp": math.exp, "min": min, "max": max, "ceil": math.ceil, "floor": math.floor,
    "abs": abs,
}


def constant_value(node) -> float | None:
    """The float value of a subtree without names, or None if it has names or is
    undefined. Raises ``ExpressionError`` when a constant overflows."""
    try:
        return _constant(node)
    except _HasName:
        return None
    except (ValueError, ZeroDivisionError):
        return None
    except OverflowError:
        raise ExpressionError("a number in the expression is too large") from None


class _HasName(Exception):
    pass


def _constant(node) -> float:
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Name):
        raise _HasName
    if isinstance(node, Negate):
        return -_constant(node.operand)
    if isinstance(node, Call):
        return float(_CONSTANT_FUNCTIONS[node.function](*(_constant(a) for a in node.args)))
    left, right = _constant(node.left), _constant(node.right)
    if node.op == "+":
        return left + right
    if node.op == "-":
        return left - right
    if node.op == "*":
        return left * right
    if node.op == "/":
        return left / right
    if abs(right) > MAX_CONSTANT_EXPONENT:
        raise OverflowError
    return math.pow(left, right)


def _check_constant_exponents(tree) -> None:
    for node in walk(tree):
        if isinstance(node, Binary) and node.op == "^":
            exponent = constant_value(node.right)
            if exponent is not None and abs(exponent) > MAX_CONSTANT_EXPONENT:
                raise ExpressionError(
                    f"the exponent {exponent:.6g} is too large (the limit is "
                    f"{MAX_CONSTANT_EXPONENT:g})")
