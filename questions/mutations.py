"""Near misses: wrong answers a part's tolerance must not accept.

For each numeric part, validation derives plausible wrong answers from the part's own
reference expression and the derived definitions it reaches (``mutations``), evaluates
them on every variant, and reports each one that differs from the reference by more
than the noise yet falls inside the part's tolerance (``check_near_misses``). The
author then tightens ``rtol``, or waives the near miss under the part's
``near_misses`` with a reason (FORMAT.md, "Near misses"). Listed mistakes get the same
test: each must lie outside the tolerance on every variant.

The mutations (each labelled in words a reviewer can match):
- ``drop `TERM` from `SITE```: each term of a sum, in the answer or in a derived
  definition it reaches (the short prompts' own prefill, Q/K/V/O beside S and P);
- ``drop factor `N` from `SITE```: a count (a param or derived integer up to
  ``MAX_COUNT``) left out of the product a definition is (per-GPU where the aggregate
  was asked);
- ```N` + 1 in `SITE``` / ``- 1``: off by one on a derived count (one the candidate
  computes, such as the steps of a ring; not a count the statement gives);
- ```gpu.fp8_dense` for `gpu.bf16_dense```-style swaps of a catalogue field for its
  neighbour: another peak of the same GPU, a neighbouring dtype's bytes, per-direction
  for bidirectional bandwidth, active for total parameters, KV heads for heads;
- ```GB` read as `GiB` in `SITE```: binary for decimal prefixes (and back), in unit
  names and in catalogue sizes;
- ``answer x2``, ``/2``, ``x8``, ``/8``, ``+ 1``, ``- 1`` (the last two on integer answers).

Evaluation is in floats, in base units (``grading.expressions.compiled``), so a few
thousand near misses per question cost milliseconds; the unmutated expression must
reproduce the reference, else the part is skipped.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pint

from grading.expressions import (
    Binary,
    ExpressionError,
    Name,
    Negate,
    Number,
    evaluate,
    to_text,
    walk,
)
from grading.expressions.compiled import compile_float, evaluate_at
from grading.expressions.evaluation import context_resolver
from grading.kinds.slips import reached_definitions

ANSWER = "answer"
# Near misses found in the bank when this check arrived and not reviewed yet:
# {slug: {part id: [label, ...]}}. Review an entry (tighten, list, or waive with a
# reason in the question) and delete it; entries no longer found fail validation.
# Off by one, or a count left out of a product, only for counts a person keeps in their
# head (GPUs, steps, requests), not for widths such as a head dimension of 128.
MAX_COUNT = 16
# Catalogue fields swapped for a neighbour: field -> fields of the same entry.
_FIELD_SWAPS = {
    "params": ("active_params",), "active_params": ("params",),
    "heads": ("kv_heads",), "kv_heads": ("heads",),
    "bandwidth": ("total_bandwidth",), "total_bandwidth": ("bandwidth",),
    # a peak for its neighbour: FP8 for BF16 and back, TF32 for FP32 and back
    "fp8_dense": ("bf16_dense",), "bf16_dense": ("fp8_dense",), "fp16_dense": ("fp8_dense",),
    "int8_dense": ("bf16_dense",), "fp32_dense": ("tf32_dense",), "tf32_dense": ("fp32_dense",),
}
_HALVED_FIELDS = {"nvlink_bandwidth": "per-direction"}
_PREFIX_SWAPS = {"kB": "KiB", "KB": "KiB", "MB": "MiB", "GB": "GiB", "TB": "TiB", "PB": "PiB"}
_PREFIX_SWAPS.update({binary: decimal for decimal, binary in list(_PREFIX_SWAPS.items())[1:]})
_PREFIX_SWAPS["KiB"] = "kB"
_BINARY_RATIOS = {"kilobyte": 1.024, "megabyte": 2**20 / 1e6, "gigabyte": 2**30 / 1e9,
                  "terabyte": 2**40 / 1e12, "kibibyte": 1e3 / 1024, "mebibyte": 1e6 / 2**20,
                  "gibibyte": 1e9 / 2**30, "tebibyte": 1e12 / 2**40}


@dataclass(frozen=True)
class Mutation:
    label: str
    site: str  # ANSWER or a derived name whose definition is replaced
    tree: object


@dataclass(frozen=True)
class NearMiss:
    label: str
    value: float  # base units
    reference: float  # base units


def near_misses(answer: str, definitions: Mapping[str, str], context: Mapping, *,
                rtol: float, atol_base: float, noise: float,
                labels: set[str] | None = None) -> list[NearMiss] | None:
    """The mutations of ``answer`` that differ from the reference by more than
    ``noise`` (relative) yet lie within ``rtol`` / ``atol_base`` (base units) of it, on
    the variant ``context``; None when the expression cannot be evaluated in floats.
    ``labels``, when given, collects every mutation's label."""
    graph = _Graph(answer, definitions, context)
    reference = graph.value()
    if reference is None:
        return None
    found = []
    for mutation in graph.mutations():
        if labels is not None:
            labels.add(mutation.label)
        value = graph.value(mutation)
        if value is None:
            continue
        difference = abs(value - reference)
        if difference > noise * abs(reference) + atol_base / 3 and \
                difference <= rtol * abs(reference) + atol_base:
            found.append(NearMiss(mutation.label, value, reference))
    return found


def base_float(value) -> float | None:
    """A context value as a float in base units, or None (text, an entry)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, pint.Quantity):
        magnitude = value.magnitude
        if not isinstance(magnitude, (int, float)):
            return None
        return float(magnitude) * _base_factor(value.units)
    return None


@functools.lru_cache(maxsize=1024)
def _base_factor(units) -> float:
    """What one of ``units`` is in base units (converting each value with pint is the
    slow part of this check)."""
    return float((1.0 * units).to_base_units().magnitude)


@functools.lru_cache(maxsize=4096)
def _structure(answer: str, definitions: tuple) -> tuple:
    """The trees of the answer and of the derived definitions it reaches, their order,
    their compiled float functions and their leaf names: the same on every variant."""
    answer_tree, reached = reached_definitions(answer, dict(definitions))
    trees = {ANSWER: answer_tree, **reached}
    order = list(reached)
    compiled = {site: compile_float(tree) for site, tree in trees.items()}
    leaves = sorted({node.name for tree in trees.values() for node in walk(tree)
                     if isinstance(node, Name) and node.name not in trees})
    return trees, order, compiled, leaves


class _Graph:
    """The answer and the derived definitions it reaches, as trees, with the variant's
    leaf values in base-unit floats."""

    def __init__(self, answer: str, definitions: Mapping[str, str], context: Mapping):
        self.answer_text = str(answer)
        self.context = context
        self.resolve = context_resolver(context)
        self.trees, self.order, self.compiled, leaf_names = _structure(
            self.answer_text, tuple((name, str(text)) for name, text in definitions.items()))
        self.leaves: dict[str, float] = {}
        self.ok = True
        for name in leaf_names:
            self._leaf(name)

    def _leaf(self, name: str) -> float | None:
        if name not in self.leaves:
            try:
                value = base_float(self.resolve(Name(name, 0)))
            except ExpressionError:
                value = None
            if value is None:
                self.ok = False
                value = math.nan
            self.leaves[name] = value
        return self.leaves[name]

    def raw(self, name: str):
        try:
            return self.resolve(Name(name, 0))
        except ExpressionError:
            return None

    def value(self, mutation: Mutation | None = None) -> float | None:
        """The answer in base units, with ``mutation`` applied."""
        if not self.ok:
            return None
        values = dict(self.leaves)
        if mutation is not None:
            for node in walk(mutation.tree):
                if isinstance(node, Name) and node.name not in values and node.name not in self.trees:
                    leaf = base_float(self.raw(node.name))
                    if leaf is None:
                        return None
                    values[node.name] = leaf
        for site in [*self.order, ANSWER]:
            if mutation is not None and mutation.site == site:
                function = compile_float(mutation.tree)
            else:
                function = self.compiled[site]
            try:
                result = evaluate_at(function, values)
            except KeyError:  # a name the float evaluation has no value for: skip it
                return None
            if result is None:
                return None
            values[site] = result
        return values[ANSWER]

    # -- the mutations ------------------------------------------------------------
    def mutations(self) -> Iterator[Mutation]:
        answer = self.trees[ANSWER]
        for factor, label in ((2, "x2"), (0.5, "/2"), (8, "x8"), (0.125, "/8")):
            yield Mutation(f"answer {label}", ANSWER, Binary("*", answer, Number(str(factor), factor)))
        if _is_int(self._answer_exact()):
            for sign in ("+", "-"):
                yield Mutation(f"answer {sign} 1", ANSWER, Binary(sign, answer, Number("1", 1.0)))
        for site, tree in self.trees.items():
            yield from self._site_mutations(site, tree)

    def _answer_exact(self):
        try:
            return evaluate(self.answer_text, self.context)
        except ExpressionError:
            return None

    def _site_mutations(self, site: str, tree) -> Iterator[Mutation]:
        where = f"`{site}`" if site != ANSWER else "the answer"
        for node in _chain_roots(tree, "+-"):
            terms = _terms(node)
            if len(terms) < 2:
                continue
            for index, (sign, term) in enumerate(terms):
                text = to_text(term)
                rest = terms[:index] + terms[index + 1:]
                yield Mutation(f"drop `{text}` from {where}", site, _replace(tree, node, _build(rest)))
        for node in _chain_roots(tree, "*/")[:1] if _is_product(tree) else ():
            factors = _factors(node)
            if len(factors) < 2:
                continue
            for index, (op, factor) in enumerate(factors):
                if not isinstance(factor, Name) or "." in factor.name:
                    continue
                if _is_count(self.raw(factor.name)) and self.raw(factor.name) >= 2:
                    rest = factors[:index] + factors[index + 1:]
                    yield Mutation(f"drop factor `{factor.name}` from {where}", site,
                                   _replace(tree, node, _build_product(rest)))
        names = sorted({n.name for n in walk(tree) if isinstance(n, Name)})
        for name in names:
            yield from self._name_mutations(site, where, tree, name)

    def _name_mutations(self, site: str, where: str, tree, name: str) -> Iterator[Mutation]:
        value = self.raw(name)
        target = Name(name, 0)
        if name in self.trees and _is_count(value) and value != 0:
            for sign in ("+", "-"):
                yield Mutation(f"`{name}` {sign} 1 in {where}", site,
                               _substitute(tree, name, Binary(sign, target, Number("1", 1.0))))
        if name in _PREFIX_SWAPS and name not in self.context:
            yield Mutation(f"`{name}` read as `{_PREFIX_SWAPS[name]}` in {where}", site,
                           _substitute(tree, name, Name(_PREFIX_SWAPS[name], 0)))
        if "." not in name:
            return
        entry_name, field = name.rsplit(".", 1)
        entry = self.raw(entry_name)
        if not isinstance(entry, Mapping):
            return
        for other in _FIELD_SWAPS.get(field, ()):
            if other in entry and base_float(entry[other]) is not None:
                yield Mutation(f"`{entry_name}.{other}` for `{name}` in {where}", site,
                               _substitute(tree, name, Name(f"{entry_name}.{other}", 0)))
        if field in _HALVED_FIELDS:
            yield Mutation(f"{_HALVED_FIELDS[field]} `{name}` (half) in {where}", site,
                           _substitute(tree, name, Binary("/", target, Number("2", 2.0))))
        if field == "bytes":
            yield from self._dtype_swaps(site, where, tree, name, value)
        if isinstance(value, pint.Quantity):
            ratio = _BINARY_RATIOS.get(str(value.units))
            if ratio:
                yield Mutation(f"`{name}` with binary and decimal prefixes swapped in {where}", site,
                               _substitute(tree, name, Binary("*", target, Number(repr(ratio), ratio))))

    def _dtype_swaps(self, site, where, tree, name, value) -> Iterator[Mutation]:
        """A neighbouring dtype's bytes: the next larger and the next smaller size."""
        dtypes = self.context.get("dtypes")
        mine = base_float(value)
        if not isinstance(dtypes, Mapping) or mine is None:
            return
        sizes: dict[float, str] = {}
        for key, entry in dtypes.items():
            size = base_float(entry.get("bytes")) if isinstance(entry, Mapping) else None
            if size is not None and size != mine:
                sizes.setdefault(size, key)
        larger = [size for size in sizes if size > mine]
        smaller = [size for size in sizes if size < mine]
        for pick in ([min(larger)] if larger else []) + ([max(smaller)] if smaller else []):
            other = f"dtypes.{sizes[pick]}.bytes"
            yield Mutation(f"`{other}` for `{name}` in {where}", site,
                           _substitute(tree, name, Name(other, 0)))


def _is_count(value) -> bool:
    return _is_int(value) and abs(value) <= MAX_COUNT


def _is_product(tree) -> bool:
    return isinstance(tree, Binary) and tree.op in "*/"


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- tree surgery (trees are frozen dataclasses: rebuild along the path) -----------
def _children(node) -> list:
    if isinstance(node, Binary):
        return [node.left, node.right]
    if isinstance(node, Negate):
        return [node.operand]
    if hasattr(node, "args"):
        return list(node.args)
    return []


def _chain_roots(tree, ops: str) -> list:
    """The top node of every chain of the binary operators in ``ops`` ("+-": each sum,
    "*/": each product)."""
    roots = []

    def visit(node, parent_in_chain: bool):
        in_chain = isinstance(node, Binary) and node.op in ops
        if in_chain and not parent_in_chain:
            roots.append(node)
        for child in _children(node):
            visit(child, in_chain)

    visit(tree, False)
    return roots


def _terms(node, sign: int = 1) -> list[tuple[int, object]]:
    if isinstance(node, Binary) and node.op in "+-":
        return _terms(node.left, sign) + _terms(node.right, sign if node.op == "+" else -sign)
    return [(sign, node)]


def _factors(node, op: str = "*") -> list[tuple[str, object]]:
    if isinstance(node, Binary) and node.op in "*/":
        right_op = node.op if op == "*" else ("/" if node.op == "*" else "*")
        return _factors(node.left, op) + _factors(node.right, right_op)
    return [(op, node)]


def _build(terms: list[tuple[int, object]]):
    sign, first = terms[0]
    tree = first if sign > 0 else Negate(first)
    for sign, term in terms[1:]:
        tree = Binary("+" if sign > 0 else "-", tree, term)
    return tree


def _build_product(factors: list[tuple[str, object]]):
    op, first = factors[0]
    tree = first if op == "*" else Binary("/", Number("1", 1.0), first)
    for op, factor in factors[1:]:
        tree = Binary(op, tree, factor)
    return tree


def _replace(tree, old, new):
    if tree is old:
        return new
    if isinstance(tree, Binary):
        return Binary(tree.op, _replace(tree.left, old, new), _replace(tree.right, old, new), tree.implicit)
    if isinstance(tree, Negate):
        return Negate(_replace(tree.operand, old, new))
    if hasattr(tree, "args"):
        return type(tree)(tree.function, tuple(_replace(arg, old, new) for arg in tree.args), tree.position)
    return tree


def _substitute(tree, name: str, new):
    if isinstance(tree, Name) and tree.name == name:
        return new
    if isinstance(tree, Binary):
        return Binary(tree.op, _substitute(tree.left, name, new), _substitute(tree.right, name, new),
                      tree.implicit)
    if isinstance(tree, Negate):
        return Negate(_substitute(tree.operand, name, new))
    if hasattr(tree, "args"):
        return type(tree)(tree.function, tuple(_substitute(arg, name, new) for arg in tree.args),
                          tree.position)
    return tree


# -- the validation check ------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    """A problem for validation: ``path`` into the question, the message, the variant's
    choices, and a key so the same fault on other variants is reported once."""

    path: tuple
    message: str
    choices: dict | None
    same_as: object


def check_near_misses(part_index: int, part_id: str, band, definitions: Mapping[str, str],
                      variants: list) -> list[Finding]:
    """Near misses of one part (a ``ToleranceBand``) over ``variants`` (each with
    ``context`` and ``choices``): unwaived ones inside the tolerance, listed mistakes
    inside it, and waivers that match no mutation at all."""
    noise = min(0.005, band.rtol / 3)
    findings: list[Finding] = []
    used: set[str] = set()
    labels_seen: set[str] = set()
    answer_path = ("parts", part_index, "answer")
    for variant in variants:
        context = variant.context
        misses = near_misses(band.answer, definitions, context, rtol=band.rtol,
                             atol_base=band.atol_base, noise=noise, labels=labels_seen)
        for group in _same_values(misses or (), noise):
            waivers = [prefix for prefix, _ in band.waivers
                       if any(miss.label.startswith(prefix) for miss in group)]
            if waivers:
                used.update(waivers)
                continue
            first = group[0]
            others = f" (and {len(group) - 1} more giving the same value)" if len(group) > 1 else ""
            findings.append(Finding(
                answer_path,
                f"part {part_id!r}: near miss {first.label}{others} gives {_relative(first)} the "
                f"reference, inside the tolerance (rtol {band.rtol:g}); tighten rtol, or waive it "
                f"under near_misses with a reason",
                variant.choices, ("near miss", part_id, first.label)))
        reference = _Graph(band.answer, definitions, context).value()
        for index, mistake in enumerate(band.mistakes):
            value = _Graph(mistake, definitions, context).value()
            if reference is None or value is None:
                continue
            label = f"mistakes[{index}]"
            if abs(value - reference) <= band.rtol * abs(reference) + band.atol_base:
                if any(label == prefix for prefix, _ in band.waivers):
                    used.add(label)
                    continue
                findings.append(Finding(
                    ("parts", part_index, "mistakes", index),
                    f"part {part_id!r}: listed mistake {label} {mistake!r} lies inside the tolerance "
                    f"({_relative(NearMiss(label, value, reference))} the reference, rtol {band.rtol:g})",
                    variant.choices, ("mistake inside", part_id, index)))
    for prefix, _reason in band.waivers:
        if prefix not in used and not prefix.startswith("mistakes[") and \
                not any(label.startswith(prefix) for label in labels_seen):
            findings.append(Finding(("parts", part_index, "near_misses"),
                                    f"part {part_id!r}: waiver {prefix!r} matches no near miss",
                                    None, ("unused waiver", part_id, prefix)))
    return findings


def _same_values(misses, noise: float) -> list[list[NearMiss]]:
    """Near misses grouped by value: mutations that land on the same number are one
    wrong answer, reported once (by the first label) and waived together."""
    groups: list[list[NearMiss]] = []
    for miss in misses:
        for group in groups:
            if abs(group[0].value - miss.value) <= noise * abs(group[0].value):
                group.append(miss)
                break
        else:
            groups.append([miss])
    return groups


def _relative(miss: NearMiss) -> str:
    if miss.reference == 0:
        return "0% from"
    share = (miss.value - miss.reference) / abs(miss.reference) * 100
    return f"{abs(share):.2g}% {'above' if share > 0 else 'below'}"
