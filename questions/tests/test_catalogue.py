"""The catalogue's facts hang together, and the loader reports broken files precisely.

The invariants recompute figures from independent ones (parameter counts from the
architecture, FP max values from the bit layout, per-direction from total bandwidth),
so a mistyped number in a YAML file fails here rather than in a candidate's grade.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grading.quantities import parse_quantity
from questions.catalogue import CATALOGUE_DIR, CatalogueError, load_catalogue

FORMAT_KEYS = {
    "gpus": {"h100_sxm", "h200", "a100_80gb", "b200", "l40s", "mi300x"},
    "models": {"llama31_8b", "llama33_70b", "llama31_405b", "mixtral_8x7b", "deepseek_v3"},
    "dtypes": {"fp32", "bf16", "fp16", "fp8", "int8", "int4"},
    "links": {"nvlink4", "nvlink5", "pcie4_x16", "pcie5_x16", "ib_ndr", "eth_400g", "eth_100g"},
}


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def same_dimension(value, unit: str) -> bool:
    return (
        hasattr(value, "dimensionality")
        and value.dimensionality == parse_quantity(f"1 {unit}").dimensionality
    )


def in_unit(value, unit: str) -> float:
    return value.to(parse_quantity(f"1 {unit}").units).magnitude


def is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


# --- the keys FORMAT.md promises -------------------------------------------------


@pytest.mark.parametrize("section", sorted(FORMAT_KEYS))
def test_every_key_promised_by_format_is_present(catalogue, section):
    assert FORMAT_KEYS[section] <= set(catalogue[section])


def test_every_entry_names_a_source(catalogue):
    for section, entries in catalogue.items():
        for key, entry in entries.items():
            assert len(entry["source"]) > 20, f"{section}.{key} has no real source"


# --- gpus ------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(FORMAT_KEYS["gpus"]))
def test_gpu_core_fields_have_the_right_dimensions(catalogue, key):
    gpu = catalogue["gpus"][key]
    assert same_dimension(gpu["memory"], "GB")
    assert same_dimension(gpu["hbm_bandwidth"], "GB/s")
    assert same_dimension(gpu["bf16_dense"], "TFLOP/s")
    assert same_dimension(gpu["tdp"], "W")
    assert same_dimension(gpu["price_per_hour"], "USD/hour")
    assert is_count(gpu["sms"])


@pytest.mark.parametrize("key", sorted(FORMAT_KEYS["gpus"]))
def test_gpu_peaks_scale_by_two_per_halving_of_precision(catalogue, key):
    # Tensor cores double throughput each time the operand width halves; a sparse
    # figure copied by mistake would break this ratio or the check against fp16.
    gpu = catalogue["gpus"][key]
    bf16 = in_unit(gpu["bf16_dense"], "TFLOP/s")
    assert in_unit(gpu["fp16_dense"], "TFLOP/s") == pytest.approx(bf16)
    # 0.02: the L40S datasheet rounds TF32 to 183 against BF16 362.05.
    assert in_unit(gpu["tf32_dense"], "TFLOP/s") == pytest.approx(bf16 / 2, rel=0.02)
    assert in_unit(gpu["int8_dense"], "TFLOP/s") == pytest.approx(2 * bf16, rel=0.03)
    if "fp8_dense" in gpu:
        assert in_unit(gpu["fp8_dense"], "TFLOP/s") == pytest.approx(2 * bf16, rel=0.03)
    if "fp4_dense" in gpu:
        assert in_unit(gpu["fp4_dense"], "TFLOP/s") == pytest.approx(4 * bf16, rel=0.03)


def test_a100_has_no_fp8_and_l40s_has_no_nvlink(catalogue):
    assert "fp8_dense" not in catalogue["gpus"]["a100_80gb"]
    assert "nvlink_bandwidth" not in catalogue["gpus"]["l40s"]


@pytest.mark.parametrize("key", sorted(FORMAT_KEYS["gpus"]))
def test_gpu_per_sm_limits_agree_with_each_other(catalogue, key):
    gpu = catalogue["gpus"][key]
    warp_size = gpu.get("wavefront_size", 32)
    assert gpu["max_warps_per_sm"] * warp_size == gpu["max_threads_per_sm"]
    assert in_unit(gpu["regfile_per_sm"], "B") == gpu["registers_per_sm"] * 4
    if "smem_per_block" in gpu:
        assert in_unit(gpu["smem_per_block"], "KiB") < in_unit(gpu["smem_per_sm"], "KiB")
    assert same_dimension(gpu["l2_cache"], "MB")


def test_tensor_peak_matches_sm_count_and_clock_for_h100(catalogue):
    # 132 SMs x 4096 dense BF16 FLOP per clock per Hopper SM x tensor clock.
    h100 = catalogue["gpus"]["h100_sxm"]
    clock_hz = in_unit(h100["tensor_clock"], "MHz") * 1e6
    assert h100["sms"] * 4096 * clock_hz == pytest.approx(
        in_unit(h100["bf16_dense"], "TFLOP/s") * 1e12, rel=0.001
    )


def test_h200_differs_from_h100_only_in_memory(catalogue):
    h100, h200 = catalogue["gpus"]["h100_sxm"], catalogue["gpus"]["h200"]
    for field in ("bf16_dense", "fp8_dense", "sms", "l2_cache", "nvlink_bandwidth"):
        assert h200[field] == h100[field]
    assert h200["memory"] > h100["memory"]
    assert h200["hbm_bandwidth"] > h100["hbm_bandwidth"]


# --- models ----------------------------------------------------------------------


def gqa_layer_attention_params(model) -> int:
    hidden, head_dim = model["hidden"], model["head_dim"]
    return 2 * hidden * model["heads"] * head_dim + 2 * hidden * model["kv_heads"] * head_dim


def swiglu_params(hidden: int, width: int) -> int:
    return 3 * hidden * width


def embedding_params(model) -> int:
    copies = 1 if model["tied_embeddings"] else 2  # input table and LM head
    return copies * model["vocab"] * model["hidden"]


@pytest.mark.parametrize("key", ["llama31_8b", "llama33_70b", "llama31_405b"])
def test_dense_llama_parameter_count_follows_from_its_shape(catalogue, key):
    model = catalogue["models"][key]
    per_layer = gqa_layer_attention_params(model) + swiglu_params(
        model["hidden"], model["intermediate"]
    )
    counted = embedding_params(model) + model["layers"] * per_layer
    assert counted == pytest.approx(model["params"], rel=0.01)
    assert model["active_params"] == model["params"]


def test_mixtral_total_and_active_counts_follow_from_its_shape(catalogue):
    model = catalogue["models"]["mixtral_8x7b"]
    expert = swiglu_params(model["hidden"], model["moe_intermediate"])
    attention = gqa_layer_attention_params(model)
    total = embedding_params(model) + model["layers"] * (attention + model["experts"] * expert)
    active = embedding_params(model) + model["layers"] * (
        attention + model["active_experts"] * expert
    )
    assert total == pytest.approx(model["params"], rel=0.01)
    assert active == pytest.approx(model["active_params"], rel=0.01)


def test_deepseek_v3_counts_follow_from_its_mla_and_moe_shape(catalogue):
    model = catalogue["models"]["deepseek_v3"]
    hidden, heads = model["hidden"], model["heads"]
    qk_head = model["qk_nope_head_dim"] + model["qk_rope_head_dim"]
    attention = (
        hidden * model["q_lora_rank"]  # query down-projection
        + model["q_lora_rank"] * heads * qk_head  # query up-projection
        + hidden * (model["kv_lora_rank"] + model["qk_rope_head_dim"])  # KV down + rope key
        + model["kv_lora_rank"] * heads * (model["qk_nope_head_dim"] + model["v_head_dim"])
        + heads * model["v_head_dim"] * hidden  # output projection
    )
    expert = swiglu_params(hidden, model["moe_intermediate"])
    moe_layers = model["layers"] - model["dense_layers"]
    shared = embedding_params(model) + model["layers"] * attention + model[
        "dense_layers"
    ] * swiglu_params(hidden, model["intermediate"])
    total = shared + moe_layers * (model["experts"] + model["shared_experts"]) * expert
    active = shared + moe_layers * (model["active_experts"] + model["shared_experts"]) * expert
    # params excludes the MTP module; the active count is rounded to 37 B by DeepSeek.
    assert total == pytest.approx(model["params"], rel=0.01)
    assert active == pytest.approx(model["active_params"], rel=0.03)


@pytest.mark.parametrize("key", sorted(FORMAT_KEYS["models"]))
def test_model_shape_fields_are_consistent(catalogue, key):
    model = catalogue["models"][key]
    for field in ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate",
                  "vocab", "max_context"):
        assert is_count(model[field]), field
    assert model["heads"] % model["kv_heads"] == 0
    assert model["active_params"] <= model["params"]
    if model["attention"] == "gqa":
        assert model["heads"] * model["head_dim"] == model["hidden"]
    if model["architecture"] == "moe":
        assert model["active_experts"] < model["experts"]
        assert model["dense_layers"] < model["layers"]


# --- dtypes ----------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(FORMAT_KEYS["dtypes"] | {"fp8_e5m2", "fp4_e2m1"}))
def test_dtype_bytes_match_bits(catalogue, key):
    dtype = catalogue["dtypes"][key]
    assert same_dimension(dtype["bytes"], "B")
    assert in_unit(dtype["bytes"], "bit") == dtype["bits"]


@pytest.mark.parametrize("key", ["fp32", "bf16", "fp16", "fp8", "fp8_e5m2", "fp4_e2m1"])
def test_float_layout_adds_up_and_gives_its_max_normal(catalogue, key):
    dtype = catalogue["dtypes"][key]
    mantissa, exponent = dtype["mantissa_bits"], dtype["exponent_bits"]
    assert 1 + exponent + mantissa == dtype["bits"]
    bias = 2 ** (exponent - 1) - 1
    if key == "fp4_e2m1":  # no inf/NaN: the top exponent and all mantissas are finite
        largest = (2 - 2.0**-mantissa) * 2.0 ** (2**exponent - 1 - bias)
    elif key == "fp8":  # E4M3fn: top exponent finite, only its all-ones mantissa is NaN
        largest = (2 - 2.0 ** (1 - mantissa)) * 2.0 ** (2**exponent - 1 - bias)
    else:  # IEEE-style: the top exponent is reserved for inf/NaN
        largest = (2 - 2.0**-mantissa) * 2.0 ** (2**exponent - 2 - bias)
    assert dtype["max_normal"] == pytest.approx(largest, rel=1e-12)


@pytest.mark.parametrize("key", ["int8", "int4"])
def test_integer_range_is_twos_complement(catalogue, key):
    dtype = catalogue["dtypes"][key]
    assert dtype["min_value"] == -(2 ** (dtype["bits"] - 1))
    assert dtype["max_value"] == 2 ** (dtype["bits"] - 1) - 1


# --- links -----------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(FORMAT_KEYS["links"]))
def test_link_fields_have_the_right_dimensions(catalogue, key):
    link = catalogue["links"][key]
    assert same_dimension(link["bandwidth"], "GB/s")
    assert same_dimension(link["latency"], "us")
    if "total_bandwidth" in link:
        assert in_unit(link["total_bandwidth"], "GB/s") == pytest.approx(
            2 * in_unit(link["bandwidth"], "GB/s")
        )
    if "line_rate" in link:
        assert in_unit(link["line_rate"], "GB/s") == pytest.approx(
            in_unit(link["bandwidth"], "GB/s")
        )


def test_gpu_nvlink_figures_are_the_links_totals(catalogue):
    gpus, links = catalogue["gpus"], catalogue["links"]
    for gpu in ("h100_sxm", "h200"):
        assert gpus[gpu]["nvlink_bandwidth"] == links["nvlink4"]["total_bandwidth"]
    assert gpus["b200"]["nvlink_bandwidth"] == links["nvlink5"]["total_bandwidth"]


# --- the loader --------------------------------------------------------------------


def test_loading_twice_returns_the_cached_catalogue():
    assert load_catalogue() is load_catalogue(CATALOGUE_DIR)


@pytest.fixture
def copied_catalogue(tmp_path) -> Path:
    for file in CATALOGUE_DIR.glob("*.yaml"):
        shutil.copy(file, tmp_path / file.name)
    return tmp_path


def replace_in(file: Path, old: str, new: str) -> None:
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("file", "old", "new", "expected"),
    [
        ("gpus.yaml", "hbm_bandwidth: 3.35 TB/s", "hbm_bandwidth: 3.35 TB",
         "gpus.yaml: h100_sxm.hbm_bandwidth"),
        ("gpus.yaml", "memory: 80 GB", "memory: 80 zorks",
         "gpus.yaml: h100_sxm.memory"),
        ("models.yaml", "params: 8.03e+9", "params: 8.03e9",
         "models.yaml: llama31_8b.params"),
        ("models.yaml", "  kv_heads: 8\n", "",
         "models.yaml: llama31_8b: missing required field 'kv_heads'"),
        ("links.yaml", "latency: 2 us", "latency: 2 GB",
         "links.yaml: nvlink4.latency"),
        ("dtypes.yaml", "bits: 32", "bits: 32 B", "dtypes.yaml: fp32.bits"),
    ],
)
def test_broken_entry_is_reported_with_file_key_and_field(
    copied_catalogue, file, old, new, expected
):
    replace_in(copied_catalogue / file, old, new)
    with pytest.raises(CatalogueError, match=expected.replace(".", r"\.")):
        load_catalogue(copied_catalogue)


def test_missing_section_file_is_reported(copied_catalogue):
    (copied_catalogue / "links.yaml").unlink()
    with pytest.raises(CatalogueError, match=r"links\.yaml"):
        load_catalogue(copied_catalogue)
