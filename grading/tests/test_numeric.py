"""Numeric parts: reading, tolerance, mistakes, classic slips, partial credit."""

import pytest

import grading
from grading.kinds.base import SpecError
from grading.quantities import parse_quantity

CONTEXT = {
    "weight_bytes": parse_quantity("140 GB"),
    "gpu": {"hbm_bandwidth": parse_quantity("3.35 TB/s"), "price_per_hour":
            parse_quantity("3 USD/hour")},
    "batch": 32,
    "utilization": 0.42,
}
FLOOR = {
    "id": "floor", "kind": "numeric", "prompt": "Decode floor?",
    "answer": "weight_bytes / gpu.hbm_bandwidth", "unit": "ms",
    "mistakes": [{"answer": "weight_bytes * 8 / gpu.hbm_bandwidth",
                  "feedback": "You counted bits, not bytes."}],
}
REFERENCE_MS = 140 / 3.35  # 41.79
# The same context as a question builds it: weight_bytes is derived from a dtype's bytes,
# so the bytes-per-element cause of a factor of 2 applies (grading.kinds.slips).
DERIVED_CONTEXT = {**CONTEXT, "model": {"params": 70e9}, "dtype": {"bytes": parse_quantity("2 B")},
                   "__derived__": {"weight_bytes": "model.params * dtype.bytes"}}


def grade(text, part=FLOOR, context=CONTEXT):
    return grading.grade(part, text, context)


@pytest.mark.parametrize(
    "text",
    ["41.8 ms", "0.0418 s", "4.18e-2 s", "140 GB / (3.35 TB/s)", "41791 us", "41.8",
     "2*70e9 B / (3.35 TB/s)", "4.18 × 10^-2 s", "41.8ms"],
)
def test_equal_values_in_any_unit_are_correct(text):
    verdict = grade(text)
    assert verdict.valid and verdict.correct and verdict.score == 1.0, verdict.feedback
    assert verdict.expected == "41.79 ms"


def test_interpretation_shows_the_conversion():
    assert grade("0.0418 s").interpreted == "0.0418 s = 41.8 ms"
    assert grade("140 GB / (3.35 TB/s)").interpreted == "140 GB / (3.35 TB / s) = 41.79 ms"
    assert "no unit given" in grade("41.8").interpreted


def test_interpret_reveals_nothing():
    verdict = grading.interpret(FLOOR, "0.0418 s", CONTEXT)
    assert verdict.valid and verdict.correct is None and verdict.expected == ""
    assert verdict.interpreted == "0.0418 s = 41.8 ms"


def test_wrong_value_is_wrong_without_revealing_the_answer():
    verdict = grade("60 ms")
    assert verdict.valid and verdict.correct is False and verdict.score == 0
    assert "41.8" not in verdict.feedback


def test_listed_mistake_gets_its_feedback():
    verdict = grade("334 ms")
    assert verdict.correct is False
    assert verdict.feedback == "You counted bits, not bytes."
    assert verdict.mistake == "mistakes[0]"


@pytest.mark.parametrize(
    ("factor", "slip"),
    [(1 / 8, "bits-vs-bytes"), (2, "factor-of-two"), (0.5, "factor-of-two"),
     (2**30 / 1e9, "binary-vs-decimal"), (1e9 / 2**30, "binary-vs-decimal"),
     (1000, "power-of-ten"), (1e-6, "power-of-ten"), (-1, "sign")],
)
def test_classic_slips_are_named(factor, slip):
    verdict = grade(f"{REFERENCE_MS * factor!r} ms", context=DERIVED_CONTEXT)
    assert verdict.correct is False
    assert verdict.mistake == f"slip:{slip}"
    assert f"{REFERENCE_MS * factor:.3g}" not in verdict.feedback


def test_percent_slip_only_for_percent_parts():
    part = {"id": "u", "kind": "numeric", "answer": "utilization", "unit": "%"}
    assert grade("42%", part).correct
    assert grade("42", part).correct  # read in the part's unit
    assert grade("0.42", part).correct  # a bare fraction for a percentage
    assert grade("4200", part).mistake == "slip:percent-vs-fraction"


def test_a_listed_mistake_is_recognised_as_a_bare_fraction_on_a_percent_part():
    part = {"id": "u", "kind": "numeric", "answer": "utilization", "unit": "%",
            "mistakes": [{"answer": "1 - utilization", "feedback": "That is the idle share."}]}
    for text in ("58%", "58", "0.58"):
        verdict = grade(text, part)
        assert verdict.mistake == "mistakes[0]" and verdict.feedback == "That is the idle share.", text
    plain = {**part, "unit": "", "answer": "utilization * 100",
             "mistakes": [{"answer": "(1 - utilization) * 100", "feedback": "That is the idle share."}]}
    assert grade("58", plain).mistake == "mistakes[0]" and grade("0.58", plain).mistake is None


@pytest.mark.parametrize(
    ("text", "message"),
    [("140 GB", "that is a data size (bytes); this part asks for a time (ms)"),
     ("3 TB/s", "that is a bandwidth"),
     ("$3", "amount of money"),
     ("5 tokens", "number of tokens")],
)
def test_dimension_mismatch_is_invalid_and_names_both(text, message):
    verdict = grade(text)
    assert not verdict.valid and message in verdict.feedback


@pytest.mark.parametrize(
    ("text", "unit", "read_as", "suggestion"),
    [("128256/8 B", "B", "128256 / (8 B)", "(128256 / 8) B"),
     ("128256/8 kB", "kB", "128256 / (8 kB)", "(128256 / 8) kB"),
     ("3/2 ms", "ms", "3 / (2 ms)", "(3 / 2) ms"),
     ("2 * 1000/8 GB/s", "GB/s", "2 * 1000 / (8 GB / s)", "(2 * 1000 / 8) (GB / s)")],
)
def test_unit_binding_to_a_divisor_says_how_it_was_read_and_suggests_brackets(
        text, unit, read_as, suggestion):
    part = {"id": "n", "kind": "numeric", "answer": f"16032 * {unit.split('/')[0]}"
            + (" / s" if "/" in unit else ""), "unit": unit}
    verdict = grade(text, part)
    assert not verdict.valid
    assert f"read as {read_as}; did you mean {suggestion}?" in verdict.feedback
    assert grade(suggestion, part).valid


def test_no_bracket_suggestion_when_regrouping_does_not_fix_the_dimension():
    verdict = grade("140 GB / 2 s")  # a bandwidth for a time: brackets do not help
    assert not verdict.valid and "did you mean" not in verdict.feedback


def test_bits_with_binary_prefixes_are_graded_like_bytes():
    part = {"id": "n", "kind": "numeric", "answer": "2.5 * GiB", "unit": "GiB"}
    assert grade("20 Gibit", part).correct
    assert grade("2.5 GiB", part).correct
    rate = {"id": "r", "kind": "numeric", "answer": "1 * GiB / s", "unit": "GB/s"}
    assert grade("8 Gibit/s", rate).correct


def test_billions_typed_as_bytes_get_a_hint():
    part = {"id": "n", "kind": "numeric", "answer": "70e9"}
    verdict = grade("70B", part)
    assert not verdict.valid and "billion" in verdict.feedback
    assert grade("70 billion", part).correct


@pytest.mark.parametrize(("text", "question"),
                         [("41.8 Gb", "Gbit (gigabits) or GB"), ("1 TFLOPs", "TFLOP/s")])
def test_ambiguous_units_are_asked_about(text, question):
    verdict = grade(text)
    assert not verdict.valid and question in verdict.feedback


def test_tolerance_edges():
    inside, outside = REFERENCE_MS * 1.0299, REFERENCE_MS * 1.0301
    assert grade(f"{inside!r} ms").correct
    assert not grade(f"{outside!r} ms").correct
    tight = {**FLOOR, "rtol": 0.001}
    assert not grade("41.9 ms", tight).correct
    assert grade("41.79 ms", tight).correct


def test_absolute_tolerance_for_answers_near_zero():
    part = {"id": "z", "kind": "numeric", "answer": "0 * s", "unit": "ms", "atol": 0.5}
    assert grade("0.4 ms", part).correct
    assert not grade("0.6 ms", part).correct


def test_partial_credit_band():
    part = {**FLOOR, "partial": {"rtol": 0.15, "score": 0.5}}
    close = grade(f"{REFERENCE_MS * 1.12!r} ms", part)
    assert close.correct is False and close.score == 0.5 and "partial" in close.feedback
    assert grade(f"{REFERENCE_MS * 1.2!r} ms", part).score == 0



def test_the_miss_message_states_the_tolerance_the_part_uses():
    assert grade("50 ms").feedback.startswith("Not within 3% of the reference.")
    tight = {**FLOOR, "rtol": 0.002, "partial": {"rtol": 0.1, "score": 0.5}}
    close = grade(f"{REFERENCE_MS * 1.05!r} ms", tight)
    assert close.feedback.startswith("Close: within 10% of the reference but not within 0.2%")
    absolute = {**FLOOR, "rtol": 0, "atol": 0.5}
    assert grade("43 ms", absolute).feedback.startswith("Not within 0.5 ms of the reference.")
    count = {"id": "blocks", "kind": "numeric", "prompt": "How many blocks?", "answer": "batch * 7",
             "rtol": 0, "atol": 0.5}
    assert grade("224", count).correct
    assert grade("225", count).feedback.startswith("Not the reference value: an exact count is expected here.")


def test_reference_and_mistake_answers_round_trip():
    kind = grading.get_kind("numeric")
    spec = kind.load_spec(FLOOR)
    reference = kind.reference_answer(spec, CONTEXT)
    assert reference == "41.8 ms"
    assert kind.grade(spec, reference, CONTEXT).correct
    for text, feedback in kind.mistake_answers(spec, CONTEXT):
        assert kind.grade(spec, text, CONTEXT).feedback == feedback


def test_reference_keeps_figures_a_tight_tolerance_needs():
    kind = grading.get_kind("numeric")
    spec = kind.load_spec({**FLOOR, "rtol": 0})
    assert kind.grade(spec, kind.reference_answer(spec, CONTEXT), CONTEXT).correct


def test_answer_values_feed_solutions():
    values = grading.answer_values([FLOOR], CONTEXT)
    assert values["floor"].m_as("ms") == pytest.approx(REFERENCE_MS)


@pytest.mark.parametrize(
    ("change", "key"),
    [({"unit": "Gb"}, "unit"), ({"unit": "kilobyte"}, "unit"), ({"answer": "1 +"}, "answer"),
     ({"rtol": -1}, "rtol"), ({"partial": {"rtol": 0.01, "score": 0.5}}, "partial.rtol"),
     ({"partial": {"rtol": 0.2, "score": 1.5}}, "partial.score"),
     ({"mistake": []}, "mistake"), ({"id": "Bad Id"}, "id"),
     ({"mistakes": [{"answer": "1"}]}, "mistakes[0].feedback")],
)
def test_bad_specs_name_the_key(change, key):
    with pytest.raises(SpecError) as caught:
        grading.load_part({**FLOOR, **change})
    assert caught.value.key == key


def test_reference_of_the_wrong_dimension_is_a_spec_error():
    part = {**FLOOR, "unit": "GB"}
    with pytest.raises(SpecError, match="is a time but the unit asks for a data size"):
        grade("1 GB", part)


def test_a_rate_written_after_a_slash_is_one_unit():
    from grading.expressions import read_quantity

    reading = read_quantity("500 GB / 50 GB/s")
    assert reading.text == "500 GB / (50 GB / s)"
    assert abs(reading.value.to("s").magnitude - 10) < 1e-9
    # A plain number after the slash still divides the whole left side.
    assert abs(read_quantity("10 GB/s / 2").value.to("GB/s").magnitude - 5) < 1e-9


def test_tight_tolerances_are_not_reported_as_zero_percent():
    from grading.kinds.numeric import _percent

    assert _percent(0.001) == "0.1%" and _percent(0.03) == "3%"


def test_an_answer_just_outside_tolerance_is_not_blamed_on_binary_prefixes():
    import grading

    part = {"id": "t", "kind": "numeric", "answer": "11.6 * ms", "unit": "ms"}
    verdict = grading.grade(part, "12 ms", {})
    assert verdict.correct is False and verdict.mistake is None
    sized = {"id": "s", "kind": "numeric", "answer": "100 * GB", "unit": "GB"}
    assert grading.grade(sized, "93.13 GB", {}).mistake == "slip:binary-vs-decimal"  # 100 GB in GiB


def test_binary_prefixes_are_not_blamed_for_a_miss_on_a_count_or_a_percentage():
    import grading

    wide = {"rtol": 0.03, "partial": {"rtol": 0.1, "score": 0.5}}
    for unit in ("%", ""):
        part = {"id": "p", "kind": "numeric", "answer": "34.3", "unit": unit, **wide}
        verdict = grading.grade(part, f"{34.3 / 1.0737:.3f}", {})
        assert verdict.mistake is None and "binary" not in verdict.feedback, unit
    count = {"id": "c", "kind": "numeric", "answer": "4", "unit": ""}
    assert grading.grade(count, "2", {}).mistake is None  # a miscount, not K and V
    kv = {"model": {"kv_heads": 8}}
    big = {**count, "answer": "512 * model.kv_heads"}
    assert grading.grade(big, "2048", kv).mistake == "slip:factor-of-two"  # K and V, not a miscount
    assert grading.grade({**count, "answer": "4096"}, "2048", {}).mistake is None  # no premise for 2
    # A time is blamed on binary prefixes only when a size went into it.
    timed = {"id": "t", "kind": "numeric", "answer": "34.3 * ms", "unit": "ms", **wide}
    assert grading.grade(timed, f"{34.3 / 1.0737:.3f} ms", {}).mistake is None
    sized = {**timed, "answer": "34.3 * GB / (1 * TB/s)"}
    assert grading.grade(sized, f"{34.3 / 1.0737:.3f} ms", {}).mistake == "slip:binary-vs-decimal"


@pytest.mark.parametrize(("answer", "unit", "reference"), [
    ("417/s", "tokens/s", "417 * token/s"),
    ("417 tok/s", "tokens/s", "417 * token/s"),
    ("295 tokens", "", "295"),
    ("1.43x", "", "1.43"),
])
def test_counts_of_tokens_and_ratios_read_as_people_write_them(answer, unit, reference):
    import grading

    verdict = grading.grade({"id": "c", "kind": "numeric", "answer": reference, "unit": unit}, answer, {})
    assert verdict.valid and verdict.correct, verdict.feedback


def test_mistake_feedback_is_filled_in_for_the_variant():
    import grading

    part = {"id": "f", "kind": "numeric", "answer": "n * 2", "unit": "",
            "mistakes": [{"answer": "n", "feedback": "You split it {{ n }} ways."}]}
    assert grading.grade(part, "7", {"n": 7}).feedback == "You split it 7 ways."
