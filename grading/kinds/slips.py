"""The library of classic slips (bits vs bytes, a factor of 2, GiB vs GB, powers of ten,
a flipped sign, percent vs fraction) and the premises that make each one worth naming.

A slip is named only where its premise is present in the part: "check K and V" means
nothing in a question without a KV cache, "GiB vs GB" nothing in one without a size. The
premises of a part are read from what its reference is built from (``premises_of``):
the names its answer reaches, through the question's derived definitions, and the
dimensions of their values. Each slip lists its causes, each with the premise it needs;
a slip whose causes all lack their premise is not named at all, and the feedback of one
that is names only the causes that apply.

Premises:
- ``kv``: a key/value-cache quantity (a name with a ``kv`` word: ``kv_heads``, ``kv_bytes``);
- ``flops``: an amount or rate of compute (a value in FLOP, a ``*_dense`` peak);
- ``element-bytes``: bytes per element of a dtype (``<dtype>.bytes``);
- ``dense-peak``: a catalogue peak (``gpu.*_dense``), dense where sparse would be twice;
- ``size``: any value in bytes or bits (bits vs bytes);
- ``prefixed-size``: a size or rate with a decimal or binary prefix (GB, MiB/s), in a
  reached value or in the part's unit (binary vs decimal prefixes: no "GiB vs GB" for
  bits per element);
- ``percent``: the part is answered in percent (a fraction typed for a percentage);
- ``None``: always (unit prefixes, the sign).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from grading.expressions import ExpressionError, Name, parse_trusted, walk
from grading.expressions.evaluation import context_resolver
from grading.units import dimensionality_of

# Where ``grading.variants.build_context`` leaves the question's derived definitions
# ({name: expression text}), so a kind can see what a derived name is made of. Not a
# name an expression can use (dotted look-ups split on ".").
DEFINITIONS_KEY = "__derived__"


@dataclass(frozen=True)
class Cause:
    words: str
    premise: str | None = None


@dataclass(frozen=True)
class Slip:
    """A classic slip: the answer is ``ratio`` times the reference. ``lead`` opens the
    feedback; the causes whose premise the part has follow (``check ...``)."""

    id: str
    ratio: float
    lead: str
    causes: tuple[Cause, ...]

    def feedback(self, premises: frozenset[str]) -> str | None:
        """The words for this part, or None when none of its causes apply here."""
        applying = [cause.words for cause in self.causes
                    if cause.premise is None or cause.premise in premises]
        if not applying:
            return None
        if len(applying) == 1:
            return f"{self.lead}: check {applying[0]}."
        return f"{self.lead}: check {', '.join(applying[:-1])} and {applying[-1]}."


_BINARY = {"KiB/kB": 1.024, "MiB/MB": 2**20 / 1e6, "GiB/GB": 2**30 / 1e9,
           "TiB/TB": 2**40 / 1e12, "PiB/PB": 2**50 / 1e15}
_TWO = (Cause("K and V (both cached?)", "kv"),
        Cause("2 FLOPs per multiply-add", "flops"),
        Cause("bytes per element (BF16 vs FP32)", "element-bytes"),
        Cause("dense vs sparse peaks", "dense-peak"))
_EIGHT = (Cause("bits against bytes", "size"),)

CLASSIC_SLIPS: tuple[Slip, ...] = (
    Slip("bits-vs-bytes", 8.0, "Off by a factor of 8", _EIGHT),
    Slip("bits-vs-bytes", 1 / 8, "Off by a factor of 8", _EIGHT),
    Slip("factor-of-two", 2.0, "Off by a factor of 2", _TWO),
    Slip("factor-of-two", 0.5, "Off by a factor of 2", _TWO),
    *(
        Slip("binary-vs-decimal", ratio**sign, f"Off by about {100 * (ratio - 1):.0f}%",
             (Cause(f"binary against decimal prefixes ({name})", "prefixed-size"),))
        for name, ratio in _BINARY.items()
        for sign in (1, -1)
    ),
    *(
        Slip("power-of-ten", 10.0 ** (sign * power), f"Off by a factor of 10^{power}",
             (Cause("the unit prefixes (k, M, G, T; ms vs s)"),))
        for power in (3, 6, 9, 12)
        for sign in (1, -1)
    ),
    Slip("percent-vs-fraction", 100.0, "Off by a factor of 100",
         (Cause("a percentage, or a fraction?", "percent"),)),
    Slip("percent-vs-fraction", 0.01, "Off by a factor of 100",
         (Cause("a percentage, or a fraction?", "percent"),)),
    Slip("sign", -1.0, "The sign is flipped", ()),
)
SIGN_FEEDBACK = "The sign is flipped."

def coincidence_band(rtol: float) -> float:
    """How close two values must be (relative) to count as the same answer: a third of
    the part's tolerance, and never more than 0.5%. Validation's near misses must differ
    from the reference by more than this; listed mistakes that lie this close to each
    other on a variant are named together."""
    return min(0.005, rtol / 3)


_KV_WORD = re.compile(r"(^|[._])kv([._]|$)")


def reached_names(expression: str, context: Mapping) -> list[str]:
    """Every name ``expression`` reaches, following derived names through their
    definitions (when the context carries them), each once, in a stable order."""
    definitions = context.get(DEFINITIONS_KEY) or {}
    seen: list[str] = []
    pending = [str(expression)]
    while pending:
        try:
            tree = parse_trusted(pending.pop())
        except ExpressionError:
            continue
        for node in walk(tree):
            if isinstance(node, Name) and node.name not in seen:
                seen.append(node.name)
                if node.name in definitions:
                    pending.append(str(definitions[node.name]))
    return seen


@functools.lru_cache(maxsize=4096)
def _reached_trees(expression: str, definitions: tuple[tuple[str, str], ...]) -> tuple:
    named = dict(definitions)
    answer = parse_trusted(expression)
    trees: dict[str, object] = {}
    pending = [answer]
    while pending:
        for node in walk(pending.pop()):
            if isinstance(node, Name) and node.name in named and node.name not in trees:
                trees[node.name] = parse_trusted(named[node.name])
                pending.append(trees[node.name])
    return answer, tuple((name, trees[name]) for name in named if name in trees)


def reached_definitions(expression: str, definitions: Mapping[str, str]) -> tuple[object, dict[str, object]]:
    """The tree of ``expression`` and the trees of the derived definitions it reaches
    (directly or through other definitions), as ``{name: tree}`` in the definitions'
    order: what a reference is built from. Raises ``ExpressionError`` for an expression
    that does not parse. Cached (trees are immutable). The near-miss check
    (``questions.mutations``) and the scratchpad (``grading.kinds.numeric.steps``) walk
    the same trees."""
    answer, trees = _reached_trees(str(expression), tuple((name, str(text)) for name, text in definitions.items()))
    return answer, dict(trees)


_PREFIXED = ("kilo", "mega", "giga", "tera", "peta", "kibi", "mebi", "gibi", "tebi", "pebi")


def _prefixed_size(value) -> bool:
    units = str(getattr(value, "units", ""))
    return any(f"{prefix}{base}" in units for prefix in _PREFIXED for base in ("byte", "bit"))


def premises_of(expression: str, context: Mapping, *, percent: bool = False,
                unit=None) -> frozenset[str]:
    """The premises (module docstring) of a part whose reference is ``expression``
    (``unit``: the part's 1-unit Quantity, if any)."""
    premises = {"percent"} if percent else set()
    if _prefixed_size(unit):
        premises.add("prefixed-size")
    resolve = context_resolver(context)
    for name in reached_names(expression, context):
        if _KV_WORD.search(name):
            premises.add("kv")
        field = name.rsplit(".", 1)[-1]
        if "." in name and field.endswith("_dense"):
            premises.update({"dense-peak", "flops"})
        if "." in name and field == "bytes":
            premises.add("element-bytes")
        try:
            value = resolve(Name(name, 0))
        except ExpressionError:
            continue
        if isinstance(value, (Mapping, str)):
            continue
        dimensions = set(dimensionality_of(value))
        if "[information]" in dimensions:
            premises.add("size")
            if _prefixed_size(value):
                premises.add("prefixed-size")
        if "[compute]" in dimensions:
            premises.add("flops")
    return frozenset(premises)


_WORD_PREMISES = (
    ("kv", re.compile(r"\bkv|\bkeys?\b|\bvalues?\b.*cache|cache", re.IGNORECASE)),
    ("flops", re.compile(r"flop|multiply-add|\bmac", re.IGNORECASE)),
    ("element-bytes", re.compile(r"bytes? per (element|weight|value|parameter)", re.IGNORECASE)),
    ("dense-peak", re.compile(r"peak", re.IGNORECASE)),
    ("size", re.compile(r"\bbytes?\b|\bbits?\b|\bB\b", re.IGNORECASE)),
)


def premises_from_words(texts: Iterable[str]) -> frozenset[str]:
    """The premises of a part known only by words (a formula's symbols: their names,
    descriptions and units), for kinds whose reference is not built from the context."""
    text = " ".join(texts)
    return frozenset(premise for premise, pattern in _WORD_PREMISES if pattern.search(text))


def slips_for(premises: Iterable[str]) -> list[tuple[Slip, str]]:
    """The slips worth naming in a part with these premises, with their feedback."""
    premises = frozenset(premises)
    named = []
    for slip in CLASSIC_SLIPS:
        words = SIGN_FEEDBACK if slip.id == "sign" else slip.feedback(premises)
        if words:
            named.append((slip, words))
    return named
