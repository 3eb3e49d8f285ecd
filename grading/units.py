"""Units: our own pint registry, the whitelist of unit names, and how values are shown.

Pint's default registry treats bits and bytes as dimensionless and knows thousands of
names a candidate could stumble into (``Gb`` is a gilbert there). So the registry here is
built from an empty one with only what the trainer needs, and bytes, FLOP, tokens and
money are dimensions of their own: adding a size to a time, or FLOP to bytes, is an error.

Candidate text never reaches pint's string parser: the expression package tokenizes it
and looks each name up in ``UNIT_NAMES`` (or ``AMBIGUOUS_UNIT_NAMES``, which answer with a
question instead of a guess).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pint

_DEFINITIONS = """
milli- = 1e-3 = m-
micro- = 1e-6 = u- = µ- = μ-
nano- = 1e-9 = n-
kilo- = 1e3 = k-
mega- = 1e6 = M-
giga- = 1e9 = G-
tera- = 1e12 = T-
peta- = 1e15 = P-
exa- = 1e18 = E-
kibi- = 2**10 = Ki-
mebi- = 2**20 = Mi-
gibi- = 2**30 = Gi-
tebi- = 2**40 = Ti-
pebi- = 2**50 = Pi-
second = [time] = s = sec
minute = 60 * second = min
hour = 60 * minute = h = hr
day = 24 * hour
byte = [information] = B
bit = byte / 8
FLOP = [compute]
token = [token]
USD = [currency]
meter = [length] = m
gram = [mass] = g
joule = kilogram * meter ** 2 / second ** 2 = J
watt = joule / second = W
watt_hour = watt * hour = Wh
hertz = 1 / second = Hz
percent = 0.01 = %
"""


def _build_registry() -> pint.UnitRegistry:
    registry = pint.UnitRegistry(None)
    for line in _DEFINITIONS.strip().splitlines():
        registry.define(line)
    return registry


ureg = _build_registry()
Quantity = ureg.Quantity


@dataclass(frozen=True)
class UnitName:
    """One name a candidate may type: its value (a 1-unit Quantity, or a plain factor
    for dimensionless words such as ``k`` or ``%``) and what it means in words."""

    name: str
    value: object
    words: str


def _unit(expr: str) -> pint.Quantity:
    return Quantity(1, ureg.parse_units(expr))


_UNIT_TABLE: list[tuple[tuple[str, ...], object, str]] = [
    (("s", "sec", "second", "seconds"), _unit("second"), "seconds"),
    (("ms", "millisecond", "milliseconds"), _unit("millisecond"), "milliseconds"),
    (("us", "µs", "μs", "microsecond", "microseconds"), _unit("microsecond"), "microseconds"),
    (("ns", "nanosecond", "nanoseconds"), _unit("nanosecond"), "nanoseconds"),
    (("min", "minute", "minutes"), _unit("minute"), "minutes"),
    (("h", "hr", "hour", "hours"), _unit("hour"), "hours"),
    (("day", "days"), _unit("day"), "days"),
    (("B", "byte", "bytes"), _unit("byte"), "bytes"),
    (("kB", "KB"), _unit("kilobyte"), "kilobytes (10^3 bytes)"),
    (("MB",), _unit("megabyte"), "megabytes (10^6 bytes)"),
    (("GB",), _unit("gigabyte"), "gigabytes (10^9 bytes)"),
    (("TB",), _unit("terabyte"), "terabytes (10^12 bytes)"),
    (("PB",), _unit("petabyte"), "petabytes (10^15 bytes)"),
    (("KiB",), _unit("kibibyte"), "kibibytes (2^10 bytes)"),
    (("MiB",), _unit("mebibyte"), "mebibytes (2^20 bytes)"),
    (("GiB",), _unit("gibibyte"), "gibibytes (2^30 bytes)"),
    (("TiB",), _unit("tebibyte"), "tebibytes (2^40 bytes)"),
    (("PiB",), _unit("pebibyte"), "pebibytes (2^50 bytes)"),
    (("bit", "bits"), _unit("bit"), "bits"),
    (("kbit", "Kbit"), _unit("kilobit"), "kilobits"),
    (("Mbit",), _unit("megabit"), "megabits"),
    (("Gbit",), _unit("gigabit"), "gigabits"),
    (("Tbit",), _unit("terabit"), "terabits"),
    (("Kibit",), _unit("kibibit"), "kibibits (2^10 bits)"),
    (("Mibit",), _unit("mebibit"), "mebibits (2^20 bits)"),
    (("Gibit",), _unit("gibibit"), "gibibits (2^30 bits)"),
    (("Tibit",), _unit("tebibit"), "tebibits (2^40 bits)"),
    (("Pibit",), _unit("pebibit"), "pebibits (2^50 bits)"),
    (("FLOP",), _unit("FLOP"), "floating-point operations"),
    (("kFLOP",), _unit("kiloFLOP"), "thousand FLOP"),
    (("MFLOP",), _unit("megaFLOP"), "million FLOP"),
    (("GFLOP",), _unit("gigaFLOP"), "10^9 FLOP"),
    (("TFLOP",), _unit("teraFLOP"), "10^12 FLOP"),
    (("PFLOP",), _unit("petaFLOP"), "10^15 FLOP"),
    (("EFLOP",), _unit("exaFLOP"), "10^18 FLOP"),
    (("token", "tokens", "tok"), _unit("token"), "tokens"),
    (("W", "watt", "watts"), _unit("watt"), "watts"),
    (("kW",), _unit("kilowatt"), "kilowatts"),
    (("MW",), _unit("megawatt"), "megawatts"),
    (("J", "joule", "joules"), _unit("joule"), "joules"),
    (("mJ",), _unit("millijoule"), "millijoules"),
    (("kJ",), _unit("kilojoule"), "kilojoules"),
    (("Wh",), _unit("watt_hour"), "watt-hours"),
    (("kWh",), _unit("kilowatt_hour"), "kilowatt-hours"),
    (("MWh",), _unit("megawatt_hour"), "megawatt-hours"),
    (("Hz",), _unit("hertz"), "hertz"),
    (("kHz",), _unit("kilohertz"), "kilohertz"),
    (("MHz",), _unit("megahertz"), "megahertz"),
    (("GHz",), _unit("gigahertz"), "gigahertz"),
    (("USD", "$", "dollar", "dollars"), _unit("USD"), "US dollars"),
    # Dimensionless words: plain factors, so "1.2k tokens/s" is 1200 tokens/s.
    (("percent", "%"), 0.01, "percent"),
    (("k", "K", "thousand"), 1e3, "thousand"),
    (("M", "million"), 1e6, "million"),
    (("billion",), 1e9, "billion"),
    (("trillion",), 1e12, "trillion"),
    # "1.43x" and "1.43×" (normalized to x) are how people write a ratio.
    (("x",), 1.0, "times (a ratio)"),
    # Nouns that only say what is being counted: "16 GPUs" is the count 16.
    (("GPU", "GPUs", "node", "nodes", "replica", "replicas", "request", "requests", "req",
      "sequence", "sequences", "seq", "seqs", "layer", "layers", "expert", "experts",
      "block", "blocks", "step", "steps", "user", "users", "SM", "SMs", "warp", "warps"),
     1.0, "a count"),
]

# Multipliers that say "how many", not "of what": "1.2k" is still a bare number.
COUNT_WORDS = frozenset(
    {"k", "K", "thousand", "M", "million", "billion", "trillion", "x"}
    | {name for names, value, words in _UNIT_TABLE if words == "a count" for name in names}
)

UNIT_NAMES: dict[str, UnitName] = {
    name: UnitName(name, value, words)
    for names, value, words in _UNIT_TABLE
    for name in names
}

# Spellings people use for two different things. We ask rather than guess.
AMBIGUOUS_UNIT_NAMES: dict[str, str] = {
    **{
        spelled: f"did you mean {prefix}bit ({word}bits) or {prefix}B ({word}bytes)?"
        for prefix, word in (("k", "kilo"), ("M", "mega"), ("G", "giga"), ("T", "tera"),
                             ("P", "peta"))
        for spelled in {f"{prefix}b", f"{prefix.upper()}b", f"{prefix.lower()}b"}
    },
    **{
        spelled: f"did you mean {prefix}bit ({word}bits) or {prefix}B ({word}bytes)?"
        for prefix, word in (("Ki", "kibi"), ("Mi", "mebi"), ("Gi", "gibi"), ("Ti", "tebi"),
                             ("Pi", "pebi"))
        for spelled in (f"{prefix}b",)
    },
    "b": "did you mean bit or B (bytes)?",
    **{
        spelled: (f"did you mean {prefix}FLOP (an amount of compute) or {prefix}FLOP/s "
                  "(a rate)?")
        for prefix in ("", "k", "M", "G", "T", "P", "E")
        for spelled in (f"{prefix}FLOPS", f"{prefix}FLOPs", f"{prefix}flops")
    },
    "flop": "write FLOP (in capitals) for floating-point operations.",
    "TOPS": "did you mean TFLOP (an amount of work) or TFLOP/s (a rate)? Integer peaks "
            "are written in TFLOP/s here.",
}


def dimensionality_of(value: object) -> pint.util.UnitsContainer:
    """The pint dimensionality of a context value (plain numbers are dimensionless)."""
    if isinstance(value, pint.Quantity):
        return value.dimensionality
    return ureg.dimensionless.dimensionality


_DIMENSION_WORDS: dict[frozenset, str] = {}


def _register_dimension_words(example_units: str, words: str) -> None:
    dims = ureg.parse_units(example_units).dimensionality
    _DIMENSION_WORDS[frozenset(dims.items())] = words


for _example, _words in [
    ("dimensionless", "a plain number"),
    ("second", "a time"),
    ("1/second", "a rate (per second)"),
    ("byte", "a data size (bytes)"),
    ("byte/second", "a bandwidth (bytes per second)"),
    ("FLOP", "an amount of compute (FLOP)"),
    ("FLOP/second", "a compute rate (FLOP per second)"),
    ("FLOP/byte", "an arithmetic intensity (FLOP per byte)"),
    ("byte/FLOP", "bytes per FLOP"),
    ("token", "a number of tokens"),
    ("token/second", "a throughput (tokens per second)"),
    ("second/token", "a time per token"),
    ("byte/token", "bytes per token"),
    ("FLOP/token", "FLOP per token"),
    ("watt", "a power (watts)"),
    ("joule", "an energy (joules)"),
    ("joule/token", "an energy per token (joules per token)"),
    ("joule/byte", "an energy per byte"),
    ("USD", "an amount of money (USD)"),
    ("USD/second", "a cost rate (USD per unit of time)"),
    ("USD/token", "a cost per token (USD per token)"),
    ("token/USD", "tokens per dollar"),
    ("byte*second", "bytes times seconds"),
    ("second**2", "a time squared"),
]:
    _register_dimension_words(_example, _words)


def describe_dimension(dimensionality) -> str:
    """Plain words for a dimension: ``[information]/[time]`` is "a bandwidth (bytes per
    second)". Unknown combinations fall back to their base units ("a quantity in B/s^2")."""
    key = frozenset(dict(dimensionality).items())
    if key in _DIMENSION_WORDS:
        return _DIMENSION_WORDS[key]
    base_names = {"[time]": "s", "[information]": "B", "[compute]": "FLOP",
                  "[token]": "token", "[currency]": "USD", "[length]": "m",
                  "[mass]": "kg"}
    up = [f"{base_names.get(d, d)}" + (f"^{p:g}" if p != 1 else "")
          for d, p in sorted(dict(dimensionality).items()) if p > 0]
    down = [f"{base_names.get(d, d)}" + (f"^{-p:g}" if p != -1 else "")
            for d, p in sorted(dict(dimensionality).items()) if p < 0]
    text = "·".join(up) or "1"
    if down:
        text += "/" + "·".join(down)
    return f"a quantity in {text}"


def format_number(value: float, significant: int = 3) -> str:
    """``value`` rounded to ``significant`` figures, without trailing zeros, in plain
    notation between 1e-4 and 1e6 and as ``1.23e9`` outside: 41.79 -> "41.8"."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int) and abs(value) < 10**6:
        return str(value)
    value = float(value)
    if value.is_integer() and abs(value) < 1e6:
        return str(int(value))  # counts such as 4096 tokens read badly as "4100"
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    exponent = math.floor(math.log10(abs(value)))
    rounded = float(f"{value:.{significant - 1}e}")
    exponent = math.floor(math.log10(abs(rounded)))  # rounding may carry (9.99 -> 10.0)
    if -4 <= exponent < 6:
        decimals = max(significant - 1 - exponent, 0)
        text = f"{rounded:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    mantissa = f"{rounded / 10**exponent:.{significant - 1}f}".rstrip("0").rstrip(".")
    return f"{mantissa}e{exponent}"


@dataclass(frozen=True)
class DisplayUnit:
    """A unit as an author wrote it (``ms``, ``tokens/s``, ``%``) and its value, a
    1-unit Quantity or a plain factor (``%`` is 0.01). ``text == ""`` means a plain number."""

    text: str
    scale: object

    @property
    def dimensionality(self):
        return dimensionality_of(self.scale)

    def magnitude_of(self, value) -> float:
        """``value`` expressed in this unit, as a float. Raises ``pint.DimensionalityError``
        when the dimensions differ."""
        ratio = value / self.scale
        if isinstance(ratio, pint.Quantity):
            return float(ratio.m_as(ureg.dimensionless))
        return float(ratio)

    def format(self, value, significant: int = 3) -> str:
        number = format_number(self.magnitude_of(value), significant)
        if not self.text:
            return number
        return f"{number}{self.text}" if self.text == "%" else f"{number} {self.text}"


PLAIN_NUMBER = DisplayUnit("", 1.0)
