"""Formula parts: parsing, equivalence, mistakes, dimensions, MathML."""

import pytest

import grading
from grading.kinds.base import SpecError

KV = {
    "id": "kv_per_token", "kind": "formula", "prompt": "KV bytes per token?",
    "symbols": {
        "L": {"description": "layers", "range": [16, 128], "integer": True},
        "h_kv": {"description": "KV heads", "range": [1, 16], "integer": True},
        "d": {"description": "head dim", "range": [64, 256], "integer": True},
        "b": {"description": "bytes per element", "range": [1, 4], "unit": "B"},
    },
    "answer": "2 * L * h_kv * d * b",
    "mistakes": [{"answer": "L * h_kv * d * b", "feedback": "Keys and values are both cached."}],
}


def grade(text, part=KV):
    return grading.grade(part, text, {})


@pytest.mark.parametrize(
    "text",
    ["2*L*h_kv*d*b", "2 L h_kv d b", "b*d*h_kv*L*2", "(4 L h_kv d b)/2", "L h_kv d b + L h_kv d b",
     "2**1 * L * h_kv * d * b", "sqrt(4 L^2) h_kv d b", "2L·h_kv·d·b"],
)
def test_equivalent_formulas_are_correct(text):
    verdict = grade(text)
    assert verdict.valid and verdict.correct and verdict.score == 1, verdict.feedback


def test_symbolic_proof_is_reported():
    assert "algebra" in grade("L h_kv d b * 2").feedback
    assert "cannot follow" in grade("L h_kv d b 2").feedback  # "2 3" is never a product


def test_interpretation_shows_implicit_products_and_mathml():
    verdict = grading.interpret(KV, "2L h_kv d b", {})
    assert verdict.interpreted == "2·L·h_kv·d·b"
    assert verdict.interpreted_html.startswith("<math")
    assert "<msub><mi>h</mi>" in verdict.interpreted_html
    assert verdict.correct is None and verdict.expected == ""


def test_implicit_product_binds_before_division():
    assert grading.interpret(KV, "1/2L", {}).interpreted == "1 / (2·L)"


def test_mistake_feedback():
    verdict = grade("L*h_kv*d*b")
    assert verdict.correct is False and verdict.feedback == "Keys and values are both cached."


def test_constant_factor_slip():
    verdict = grade("4 L h_kv d b")
    assert verdict.correct is False and verdict.mistake == "slip:constant-factor"
    assert "factor of 2" in verdict.feedback


def test_wrong_formula():
    verdict = grade("2 L h_kv b + L d b")
    assert verdict.valid and verdict.correct is False and verdict.score == 0


def test_tiny_extra_term_is_caught_by_algebra():
    verdict = grade("2 L h_kv d b + 1e-12 b")
    assert verdict.correct is False and verdict.mistake == "tiny-difference"


def test_inconsistent_units_are_invalid():
    verdict = grade("2 L h_kv d + b")
    assert not verdict.valid
    assert "cannot add a plain number and a data size (bytes)" in verdict.feedback


def test_consistent_formula_of_wrong_dimension_is_wrong():
    verdict = grade("2 L h_kv d")
    assert verdict.valid and verdict.correct is False
    assert "a plain number; this part asks for a data size (bytes)" in verdict.feedback


def test_unknown_symbol_lists_the_allowed_ones_and_suggests_a_product():
    verdict = grade("2 Lh_kv d b")
    assert not verdict.valid
    assert "the symbols are L, h_kv, d, b" in verdict.feedback
    assert "L*h_kv" in verdict.feedback


def test_undefined_everywhere():
    verdict = grade("b / 0")
    assert verdict.correct is False and verdict.mistake == "undefined"


def test_functions_and_log_identities():
    part = {
        "id": "t", "kind": "formula", "answer": "log2(n) * ceil(m / 2)",
        "symbols": {"n": {"range": [2, 1024], "integer": True},
                    "m": {"range": [1, 100], "integer": True}},
    }
    assert grade("ceil(m/2) * log(n) / log(2)", part).correct
    assert not grade("floor(m/2) * log2(n)", part).correct


def test_large_formula_skips_algebra_but_still_decides():
    part = {"id": "p", "kind": "formula", "answer": "(x + y)^40 - (x + y)^40 + x",
            "symbols": {"x": {"range": [1, 2]}, "y": {"range": [1, 2]}}}
    verdict = grade("x", part)
    assert verdict.correct and "random points" in verdict.feedback


def test_reference_and_mistake_answers_round_trip():
    kind = grading.get_kind("formula")
    spec = kind.load_spec(KV)
    assert kind.grade(spec, kind.reference_answer(spec, {}), {}).correct
    for text, feedback in kind.mistake_answers(spec, {}):
        assert kind.grade(spec, text, {}).feedback == feedback


def test_sampling_respects_ranges_and_integers():
    spec = grading.load_part(KV)
    for point in spec.sample_points:
        assert 16 <= point["L"] <= 128 and point["L"] == int(point["L"])
        assert 1 <= point["b"] <= 4


def test_log_uniform_sampling_reaches_the_low_decade():
    part = {"id": "w", "kind": "formula", "answer": "x",
            "symbols": {"x": {"range": [1, 10000]}}}
    spec = grading.load_part(part)
    assert sum(point["x"] < 100 for point in spec.sample_points) >= 10


@pytest.mark.parametrize(
    ("change", "key"),
    [({"answer": "2 * L * q"}, "answer"),
     ({"symbols": {"L": {"range": [5, 1]}}}, "symbols.L.range"),
     ({"symbols": {"sqrt": {"range": [1, 2]}}}, "symbols.sqrt"),
     ({"symbols": {"x": {"range": [1, 2], "unit": "Gb"}}}, "symbols.x.unit"),
     ({"symbols": {"x": {"range": [0.1, 0.9], "integer": True}}}, "symbols.x.range"),
     ({"answer": "L + b"}, "answer"),
     ({"answer": "log(b - b)"}, "answer"),
     ({"mistakes": [{"answer": "zz", "feedback": "f"}]}, "mistakes[0].answer")],
)
def test_bad_specs_name_the_key(change, key):
    with pytest.raises(SpecError) as caught:
        grading.load_part({**KV, **change})
    assert caught.value.key == key
