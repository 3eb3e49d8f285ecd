"""Units: the registry, catalogue quantity strings, dimension words, number display."""

import pint
import pytest

from grading.expressions import ExpressionError, read_quantity
from grading.quantities import parse_quantity, parse_unit, preferred_display
from grading.units import UNIT_NAMES, describe_dimension, format_number, ureg


@pytest.mark.parametrize(
    ("text", "unit", "magnitude"),
    [
        ("3.35 TB/s", "B/s", 3.35e12),
        ("80 GB", "B", 80e9),
        ("989.4 TFLOP/s", "FLOP/s", 989.4e12),
        ("700 W", "W", 700),
        ("2 B", "B", 2),
        ("0.5 B", "B", 0.5),
        ("50 MB", "B", 50e6),
        ("228 KiB", "B", 228 * 1024),
        ("1.5 us", "s", 1.5e-6),
        ("98.32 USD/hour", "USD/s", 98.32 / 3600),
        ("400 Gbit/s", "B/s", 400e9 / 8),
        ("20 Gibit", "B", 20 * 2**30 / 8),
        ("1 Kibit", "B", 1024 / 8),
        ("3 Mibit", "B", 3 * 2**20 / 8),
        ("2 Tibit", "B", 2 * 2**40 / 8),
        ("8 Gibit/s", "B/s", 2**30),
        ("800 bit/s", "B/s", 100),
        ("1980 MHz", "Hz", 1.98e9),
    ],
)
def test_catalogue_strings_parse_to_quantities(text, unit, magnitude):
    quantity = parse_quantity(text)
    assert isinstance(quantity, pint.Quantity)
    assert quantity.m_as(unit) == pytest.approx(magnitude, rel=1e-12)


def test_plain_number_string_is_a_dimensionless_quantity():
    quantity = parse_quantity("8.03e+9")
    assert quantity.dimensionless and quantity.magnitude == pytest.approx(8.03e9)


def test_bits_and_bytes_have_a_dimension_unlike_pints_default():
    with pytest.raises(pint.DimensionalityError):
        parse_quantity("1 GB") + parse_quantity("1 s")
    assert parse_quantity("8 bit").m_as("B") == 1


@pytest.mark.parametrize("text", ["3 Gb", "2 TFLOPS", "1 foo", "3 GB +", "4 Mb/s"])
def test_bad_catalogue_strings_are_refused(text):
    with pytest.raises(ExpressionError):
        parse_quantity(text)


def test_decimal_and_binary_prefixes_differ():
    assert parse_quantity("1 GiB").m_as("GB") == pytest.approx(1.073741824)
    assert parse_quantity("1 KB").m_as("B") == 1000


@pytest.mark.parametrize(
    ("units", "words"),
    [
        ("second", "a time"),
        ("byte", "a data size (bytes)"),
        ("byte/second", "a bandwidth (bytes per second)"),
        ("token/second", "a throughput (tokens per second)"),
        ("dimensionless", "a plain number"),
    ],
)
def test_dimensions_are_described_in_words(units, words):
    assert describe_dimension(ureg.parse_units(units).dimensionality) == words


def test_unknown_dimension_falls_back_to_base_units():
    text = describe_dimension(ureg.parse_units("byte/second**2").dimensionality)
    assert text == "a quantity in B/s^2"


@pytest.mark.parametrize(
    ("value", "text"),
    [(41.791, "41.8"), (0.0418, "0.0418"), (1234.5, "1230"), (7e10, "7e10"),
     (9.999, "10"), (4096, "4096"), (4096.0, "4096"), (-1.234e-5, "-1.23e-5"), (0, "0")],
)
def test_numbers_show_three_significant_figures(value, text):
    assert format_number(value) == text


def test_display_unit_converts_and_formats():
    assert parse_unit("ms").format(parse_quantity("0.0418 s")) == "41.8 ms"
    assert parse_unit("%").format(0.5) == "50%"
    assert parse_unit("").format(3.0) == "3"


def test_display_unit_refuses_other_dimensions():
    with pytest.raises(pint.DimensionalityError):
        parse_unit("ms").magnitude_of(parse_quantity("1 GB"))


def test_compound_units_are_shown_in_a_readable_unit():
    floor = parse_quantity("140 GB") / parse_quantity("3.35 TB/s")
    assert preferred_display(floor) == "41.8 ms"
    assert preferred_display(parse_quantity("141e9 B")) == "141 GB"
    assert preferred_display(parse_quantity("228 KiB")) == "228 KiB"


def test_whitelist_has_no_ambiguous_spellings():
    for ambiguous in ("Gb", "Mb", "Tb", "TFLOPS", "TFLOPs", "GFLOPs"):
        assert ambiguous not in UNIT_NAMES


def test_bits_with_binary_prefixes_read_like_bytes_with_them():
    for prefix in ("Ki", "Mi", "Gi", "Ti"):
        assert parse_quantity(f"8 {prefix}bit").m_as("B") == parse_quantity(f"1 {prefix}B").m_as("B")
    assert parse_quantity("1 Gibit").m_as("Gbit") == pytest.approx(1.073741824)


@pytest.mark.parametrize(("text", "question"), [("3 Gib", "Gibit (gibibits) or GiB"),
                                                ("1 Kib/s", "Kibit (kibibits) or KiB")])
def test_binary_prefixed_b_is_asked_about(text, question):
    with pytest.raises(ExpressionError, match=question.replace("(", r"\(").replace(")", r"\)")):
        read_quantity(text)
