"""Variants: deterministic draws and the evaluation context."""

import pytest

from grading.kinds.base import SpecError
from grading.variants import build_context, draw_choices, plain_value

CATALOGUE = {
    "gpus": {
        "h100_sxm": {"name": "NVIDIA H100 SXM", "hbm_bandwidth": "3.35 TB/s",
                     "memory": "80 GB", "sms": 132, "source": "2 datasheets"},
        "h200": {"name": "NVIDIA H200", "hbm_bandwidth": "4.8 TB/s", "memory": "141 GB",
                 "sms": 132, "source": "datasheet"},
    },
    "models": {
        "llama33_70b": {"name": "Llama 3.3 70B", "params": 70_600_000_000, "layers": 80},
        "llama31_8b": {"name": "Llama 3.1 8B", "params": 8.03e9, "layers": 32},
    },
    "dtypes": {"bf16": {"name": "BF16", "bytes": "2 B", "bits": 16}},
    "links": {},
}

PARAMS = {
    "gpu": {"catalogue": "gpus", "choices": ["h100_sxm", "h200"]},
    "model": {"catalogue": "models", "choices": ["llama33_70b", "llama31_8b"]},
    "dtype": {"catalogue": "dtypes", "choices": ["bf16"]},
    "batch": {"choices": [1, 8, 32, 64]},
    "context_length": {"choices": ["4096 token"]},
}

DERIVED = {
    "weight_bytes": "model.params * dtype.bytes",
    "floor": "weight_bytes / gpu.hbm_bandwidth",
}


def test_same_seed_gives_same_choices():
    assert draw_choices(PARAMS, 7) == draw_choices(PARAMS, 7)


def test_different_seeds_cover_every_choice():
    seen = {name: set() for name in PARAMS}
    for seed in range(200):
        for name, choice in draw_choices(PARAMS, seed).items():
            seen[name].add(choice)
    for name, spec in PARAMS.items():
        assert seen[name] == set(spec["choices"]), name


def test_adding_a_param_does_not_reshuffle_the_others():
    extended = {**PARAMS, "tp": {"choices": [1, 2, 4, 8]}}
    for seed in range(20):
        drawn = draw_choices(extended, seed)
        del drawn["tp"]
        assert drawn == draw_choices(PARAMS, seed)


def test_context_resolves_catalogue_params_and_derived_values():
    choices = {"gpu": "h100_sxm", "model": "llama33_70b", "dtype": "bf16", "batch": 8,
               "context_length": "4096 token"}
    context = build_context(PARAMS, DERIVED, choices, CATALOGUE)
    assert context["gpu"]["hbm_bandwidth"].m_as("TB/s") == 3.35
    assert context["gpu"]["key"] == "h100_sxm"
    assert context["gpu"]["source"] == "2 datasheets"  # text even though it starts with 2
    assert context["batch"] == 8
    assert context["context_length"].m_as("token") == 4096
    assert context["models"]["llama31_8b"]["layers"] == 32
    assert context["floor"].m_as("ms") == pytest.approx(141.2e9 / 3.35e12 * 1e3)


@pytest.mark.parametrize(
    ("params", "derived", "choices", "key"),
    [
        (PARAMS, {"bad": "gpu.hbm_bandwidth + dtype.bytes"}, None, "derived.bad"),
        (PARAMS, {"bad": "later + 1", "later": "2"}, None, "derived.bad"),
        (PARAMS, {}, {"gpu": "b300"}, "params.gpu.choices"),
        ({"gpu": {"catalogue": "gpuz", "choices": ["h100_sxm"]}}, {}, {"gpu": "h100_sxm"},
         "params.gpu.catalogue"),
        ({"batch": {"choices": []}}, {}, {}, "params.batch.choices"),
        ({"gpus": {"choices": [1]}}, {}, {"gpus": 1}, "params.gpus"),
    ],
)
def test_bad_specs_name_the_key(params, derived, choices, key):
    base = {"gpu": "h100_sxm", "model": "llama33_70b", "dtype": "bf16", "batch": 1,
            "context_length": "4096 token"}
    with pytest.raises(SpecError) as caught:
        build_context(params, derived, {**base, **(choices or {})}, CATALOGUE)
    assert caught.value.key == key


def test_bad_catalogue_quantity_names_the_field():
    catalogue = {"gpus": {"x": {"name": "X", "memory": "80 Gb"}}}
    with pytest.raises(SpecError) as caught:
        build_context({}, {}, {}, catalogue)
    assert caught.value.key == "catalogue.gpus.x.memory"


def test_quantity_text_may_be_negative_and_other_text_stays_text():
    change = plain_value("-95.9 us", label="lab value")
    assert change.m_as("us") == pytest.approx(-95.9)
    assert plain_value("-0.25", label="x") == pytest.approx(-0.25)
    assert plain_value("h100", label="x") == "h100"
    assert plain_value("-", label="x") == "-"
