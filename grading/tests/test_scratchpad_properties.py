"""Property tests for scratchpad steps (no Django): every equivalent rewrite of a correct
step still matches its intermediate, and every perturbed one does not.

Rewrites: the value in another unit of its dimension, scaled and scaled back within the
line, split over two steps, or written with typographic operators. Perturbations:
the value times a factor beyond the part's tolerance (either way).
"""

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import grading
from grading.quantities import parse_unit
from questions.schema import Question
from questions.variants import draw_variant

BANK = Path(__file__).resolve().parents[2] / "questions" / "bank"
VARIANT = {"gpu": "h100_sxm", "model": "llama33_70b", "dtype": "bf16", "batch": 16, "context": 4096}
QUESTION = Question.from_data(yaml.safe_load((BANK / "roofline/001-decode-floor-from-weights.yaml").read_text()))
CONTEXT = draw_variant(QUESTION, 0, choices=VARIANT).context
PART = QUESTION.part("floor").raw
# (the intermediate's plain name, its derived name, units to write it in)
TARGETS = [
    ("weight bytes", "weight_bytes", ["B", "kB", "MB", "GB", "TB", "GiB", "bit", "Gbit"]),
    ("aggregate bandwidth", "bw_total", ["B/s", "GB/s", "TB/s", "TiB/s", "Gbit/s"]),
    ("the decode floor", None, ["s", "ms", "us", "ns", "min"]),
    ("kv bytes", "kv_bytes", ["MB", "GB", "MiB"]),
]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _value(derived: str | None):
    if derived is None:
        kind = grading.get_kind("numeric")
        return kind.reference_value(kind.load_spec(PART), CONTEXT)
    return CONTEXT[derived]


def _in(unit: str, value) -> str:
    return repr(parse_unit(unit).magnitude_of(value))


def _matched(scratchpad: str) -> str:
    verdict = grading.grade(PART, "1 ms", CONTEXT, scratchpad=scratchpad)
    assert verdict.valid, verdict.feedback
    return verdict.steps[-1].matched


targets = st.sampled_from(TARGETS).flatmap(
    lambda target: st.tuples(st.just(target), st.sampled_from(target[2])))
factors = st.floats(min_value=0.01, max_value=100, allow_nan=False, allow_infinity=False)


@SETTINGS
@given(targets, factors, st.sampled_from(["scaled", "split", "typographic"]))
def test_equivalent_rewrites_of_a_correct_step_match_its_intermediate(target, factor, form):
    (label, derived, _units), unit = target
    value = _value(derived)
    number = _in(unit, value)
    if form == "scaled":  # (v / k) unit * k, in one line
        scratchpad = f"x = ({number} / {factor!r}) {unit} * {factor!r}"
    elif form == "split":  # over two steps
        scratchpad = f"part = {float(number) / factor!r} {unit}\nx = part * {factor!r}"
    else:
        scratchpad = f"x = {factor!r} × {float(number) / factor!r} {unit}"
    assert _matched(scratchpad) == label


@SETTINGS
@given(targets, st.floats(min_value=1.021, max_value=50, allow_nan=False), st.booleans())
def test_perturbed_steps_do_not_match_their_intermediate(target, factor, smaller):
    (label, derived, _units), unit = target
    value = _value(derived) * (1 / factor if smaller else factor)
    assert _matched(f"x = {_in(unit, value)} {unit}") != label


@pytest.mark.parametrize("label, derived, units", TARGETS)
def test_each_target_is_an_intermediate_of_the_part(label, derived, units):
    assert _matched(f"x = {_in(units[0], _value(derived))} {units[0]}") == label
