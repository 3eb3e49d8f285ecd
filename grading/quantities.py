"""Reading units and quantities written as text, and showing a value nobody chose a unit
for. It sits above both `grading.units` (the registry and display units) and
`grading.expressions` (the parser), which it uses: the parser itself needs units, so
these live here rather than in `units`.
"""

from __future__ import annotations

import functools

import pint

from grading.expressions import evaluate_quantity_text, evaluate_unit
from grading.units import PLAIN_NUMBER, DisplayUnit, Quantity, format_number, ureg


@functools.lru_cache(maxsize=512)
def parse_unit(text: str) -> DisplayUnit:
    """A unit written by an author (``ms``, ``GB/s``, ``J/token``, ``%``; ``""`` for a
    plain number). Raises ``grading.expressions.ExpressionError`` for unknown names."""
    text = (text or "").strip()
    if not text:
        return PLAIN_NUMBER
    return DisplayUnit(text, evaluate_unit(text))


@functools.lru_cache(maxsize=4096)
def parse_quantity(text: str) -> pint.Quantity:
    """A trusted quantity string from the catalogue or a param choice: ``"3.35 TB/s"``,
    ``"228 KiB"``, ``"98.32 USD/hour"``, ``"1.5 us"``. Always returns a Quantity
    (dimensionless for a plain number). Raises ``ExpressionError`` on anything else.

    The cache shares Quantity objects between callers; nothing here mutates them."""
    value = evaluate_quantity_text(str(text))
    if isinstance(value, pint.Quantity):
        return value
    return Quantity(value, ureg.dimensionless)


def preferred_display(value) -> str:
    """Show a value whose unit nobody chose (a template without ``| unit``): plain numbers
    with 3 significant figures, single-unit quantities as they are, compound units
    converted to a readable unit for their dimension when we know one."""
    if not isinstance(value, pint.Quantity):
        return format_number(value)
    units_text = f"{value.units:~}".replace(" ", "")
    simple = len(list(value.unit_items())) <= 2 and "**" not in units_text
    if simple and 0.1 <= abs(value.magnitude) < 1e4:
        return f"{format_number(value.magnitude)} {units_text}"
    for candidate in _READABLE_UNITS.get(frozenset(dict(value.dimensionality).items()), []):
        unit = parse_unit(candidate)
        magnitude = unit.magnitude_of(value)
        if abs(magnitude) >= 1 or candidate == _READABLE_UNITS_LAST[candidate]:
            return unit.format(value)
    base = value.to_base_units()
    return f"{format_number(base.magnitude)} {base.units:~}".replace(" ** ", "^")


# Largest first: the first unit that shows the value as >= 1 wins.
_READABLE_UNIT_LADDERS = {
    "second": ["s", "ms", "us", "ns"],
    "byte": ["PB", "TB", "GB", "MB", "kB", "B"],
    "byte/second": ["TB/s", "GB/s", "MB/s", "B/s"],
    "FLOP": ["PFLOP", "TFLOP", "GFLOP", "MFLOP", "FLOP"],
    "FLOP/second": ["PFLOP/s", "TFLOP/s", "GFLOP/s", "FLOP/s"],
    "token/second": ["token/s"],
    "joule/token": ["J/token", "mJ/token"],
    "USD/second": ["USD/hour"],
    "watt": ["kW", "W"],
    "joule": ["kJ", "J"],
    "FLOP/byte": ["FLOP/B"],
    "byte/token": ["MB/token", "kB/token", "B/token"],
}
_READABLE_UNITS: dict[frozenset, list[str]] = {
    frozenset(dict(ureg.parse_units(dim).dimensionality).items()): ladder
    for dim, ladder in _READABLE_UNIT_LADDERS.items()
}
_READABLE_UNITS_LAST: dict[str, str] = {
    name: ladder[-1] for ladder in _READABLE_UNIT_LADDERS.values() for name in ladder
}
