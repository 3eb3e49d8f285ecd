"""Printing a parsed expression back, as plain text or LaTeX, showing how it was read.

The plain text makes every grouping explicit where the reading might surprise (``1/2L``
prints as ``1 / (2·L)``), so the candidate can check the engine's interpretation.
"""

from __future__ import annotations

import re

from grading.expressions.syntax import Binary, Call, Name, Negate, Number

_ADD, _MUL, _NEG, _IMPLICIT, _POW, _ATOM = 1, 2, 3, 4, 5, 6


def _precedence(node) -> int:
    if isinstance(node, Binary):
        if node.op in ("+", "-"):
            return _ADD
        if node.op == "^":
            return _POW
        return _IMPLICIT if node.implicit else _MUL
    if isinstance(node, Negate):
        return _NEG
    return _ATOM


def to_text(node, *, implicit_separator: str = " ") -> str:
    """Plain text with spaces around operators and brackets wherever the grouping
    matters. ``implicit_separator`` joins juxtaposed factors: ``" "`` for quantities
    (``41.8 ms``), ``"·"`` for formulas (``2·L``)."""
    return _Text(implicit_separator).render(node)


class _Text:
    def __init__(self, implicit_separator: str):
        self.implicit = implicit_separator

    def wrap(self, node, needs_brackets: bool) -> str:
        text = self.render(node)
        return f"({text})" if needs_brackets else text

    def render(self, node) -> str:
        if isinstance(node, Number):
            return node.text
        if isinstance(node, Name):
            return node.name
        if isinstance(node, Negate):
            return "-" + self.wrap(node.operand, _precedence(node.operand) < _NEG)
        if isinstance(node, Call):
            return f"{node.function}({', '.join(self.render(a) for a in node.args)})"
        level = _precedence(node)
        right_is_negative = isinstance(node.right, Negate)
        if node.op == "^":
            base = self.wrap(node.left, _precedence(node.left) <= _POW)
            exponent = self.wrap(node.right, _precedence(node.right) < _POW
                                 or right_is_negative)
            return f"{base}^{exponent}"
        if level == _IMPLICIT:
            if (isinstance(node.right, Name) and node.right.name == "$"
                    and isinstance(node.left, Number)):
                return f"${node.left.text}"
            left = self.wrap(node.left, _precedence(node.left) < _IMPLICIT)
            right = self.wrap(node.right, _precedence(node.right) <= _IMPLICIT)
            return f"{left}{self.implicit}{right}"
        left = self.wrap(node.left, _precedence(node.left) < level)
        right_level = _precedence(node.right)
        needs = right_level <= level or right_is_negative
        if node.op == "/" and right_level == _IMPLICIT:
            needs = True  # "1 / (2 ms)": show that juxtaposition bound first
        right = self.wrap(node.right, needs)
        return f"{left} {node.op} {right}"


_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi",
    "Psi", "Omega",
}


def _latex_word(word: str) -> str:
    if word in _GREEK:
        return "\\" + word
    if len(word) == 1:
        return word
    return "\\mathrm{" + word.replace("_", "\\_") + "}"


def symbol_latex(name: str) -> str:
    """``h_kv`` -> ``h_{\\mathrm{kv}}``, ``alpha`` -> ``\\alpha``, ``batch`` ->
    ``\\mathrm{batch}``; units such as ``%`` and ``$`` are escaped."""
    special = {"%": "\\%", "$": "\\$", "µs": "\\mu\\mathrm{s}", "μs": "\\mu\\mathrm{s}"}
    if name in special:
        return special[name]
    if "." in name:
        return "\\mathrm{" + name.replace("_", "\\_") + "}"
    base, _, subscript = name.partition("_")
    if base and subscript:
        return _latex_word(base) + "_{" + _latex_word(subscript) + "}"
    return _latex_word(name)


_EXPONENT_RE = re.compile(r"^([0-9.]+)[eE]([+-]?)0*(\d+)$")

_FUNCTION_LATEX = {
    "sqrt": ("\\sqrt{", "}"),
    "log": ("\\log\\left(", "\\right)"),
    "log2": ("\\log_{2}\\left(", "\\right)"),
    "log10": ("\\log_{10}\\left(", "\\right)"),
    "exp": ("\\exp\\left(", "\\right)"),
    "min": ("\\min\\left(", "\\right)"),
    "max": ("\\max\\left(", "\\right)"),
    "ceil": ("\\left\\lceil ", " \\right\\rceil"),
    "floor": ("\\left\\lfloor ", " \\right\\rfloor"),
    "abs": ("\\left| ", " \\right|"),
}


def to_latex(node) -> str:
    """LaTeX for the expression: fractions for ``/``, ``\\cdot`` for written ``*``, plain
    juxtaposition for implicit products, ``\\left( \\right)`` where grouping matters."""
    if isinstance(node, Number):
        match = _EXPONENT_RE.match(node.text)
        if match:
            mantissa, sign, exponent = match.groups()
            sign = "-" if sign == "-" else ""
            return f"{mantissa} \\times 10^{{{sign}{exponent}}}"
        return node.text
    if isinstance(node, Name):
        return symbol_latex(node.name)
    if isinstance(node, Negate):
        return "-" + _latex_wrap(node.operand, _precedence(node.operand) < _NEG)
    if isinstance(node, Call):
        opening, closing = _FUNCTION_LATEX[node.function]
        return opening + ", ".join(to_latex(a) for a in node.args) + closing
    if node.op == "/":
        return f"\\frac{{{to_latex(node.left)}}}{{{to_latex(node.right)}}}"
    right_is_negative = isinstance(node.right, Negate)
    if node.op == "^":
        base_needs = _precedence(node.left) <= _POW or (
            isinstance(node.left, Binary) and node.left.op == "/")
        return f"{_latex_wrap(node.left, base_needs)}^{{{to_latex(node.right)}}}"
    level = _precedence(node)
    left_level = _latex_level(node.left)
    right_level = _latex_level(node.right)
    if node.op in ("+", "-"):
        right = _latex_wrap(node.right, right_level <= _ADD or right_is_negative)
        return f"{to_latex(node.left)} {node.op} {right}"
    if level == _IMPLICIT:
        left = _latex_wrap(node.left, left_level < _IMPLICIT)
        right = _latex_wrap(node.right, right_level < _IMPLICIT or right_is_negative)
        return f"{left} {right}"
    left = _latex_wrap(node.left, left_level < _MUL)
    right = _latex_wrap(node.right, right_level < _MUL or right_is_negative)
    return f"{left} \\cdot {right}"


def _latex_level(node) -> int:
    """A fraction is typeset as one block, so it binds like an atom in LaTeX."""
    if isinstance(node, Binary) and node.op == "/":
        return _ATOM
    return _precedence(node)


def _latex_wrap(node, needs_brackets: bool) -> str:
    text = to_latex(node)
    return f"\\left({text}\\right)" if needs_brackets else text
