"""Near misses (issue 18): wrong answers the bank's tolerances once accepted, and hints
that named the wrong slip. Each test grades the reviewed wrong answers on the parts and
variants where they slipped through."""

import copy

import pytest
import yaml

import grading
import grading.expressions
from questions import variants
from questions.loader import BANK_DIR, load_file
from questions.schema import Question
from questions.validation import validate_text


def question(path):
    return Question.from_data(load_file(BANK_DIR / path).data)


def grade(path, part_id, text, **choices):
    q = question(path)
    part = next(p for p in q.parts if p.id == part_id)
    context = variants.draw_variant(q, 0, choices=choices).context
    return grading.grade(part.raw, text, context)


def reference(path, part_id, **choices):
    q = question(path)
    context = variants.draw_variant(q, 0, choices=choices).context
    return variants.reference_values(q, context)[part_id]


FLASH = "attention/128-flashattention-l2-reuse.yaml"


@pytest.mark.parametrize(("seq", "wrong", "right"), [(8192, "64", "65"), (16384, "128", "129")])
def test_ratio_real_rejects_n_over_d(seq, wrong, right):
    assert grade(FLASH, "ratio_real", right, seq=seq).correct
    verdict = grade(FLASH, "ratio_real", wrong, seq=seq)
    assert not verdict.correct and "1 + N/d" in verdict.feedback


def test_naive_rejects_s_and_p_alone():
    assert grade(FLASH, "naive", "520 MiB", seq=8192).correct
    verdict = grade(FLASH, "naive", "512 MiB", seq=8192)
    assert not verdict.correct and "S and P alone" in verdict.feedback


def test_the_check_catches_ratio_real_as_it_was():
    data = yaml.safe_load((BANK_DIR / FLASH).read_text())
    old = copy.deepcopy(data)
    part = next(p for p in old["parts"] if p["id"] == "ratio_real")
    part.pop("rtol")
    part.pop("near_misses")
    part["mistakes"] = [m for m in part["mistakes"] if m["answer"] != "sp_bytes / qkvo_bytes"]
    report = validate_text(yaml.safe_dump(old, sort_keys=False), "old.yaml")
    messages = [problem.message for problem in report.problems]
    assert any(m.startswith("part 'ratio_real': near miss drop `qkvo_bytes` from `naive_bytes`")
               and "inside the tolerance (rtol 0.03)" in m and "seq=8192" in m for m in messages), messages
    assert validate_text(yaml.safe_dump(data, sort_keys=False), "new.yaml").ok


HOL = "scheduling/023-head-of-line-blocking.yaml"


@pytest.mark.parametrize(("gpu", "long_alone"), [("h100_sxm", "1.49 s"), ("a100_80gb", "4.737 s")])
def test_ttft_fcfs_rejects_the_long_prompt_alone(gpu, long_alone):
    verdict = grade(HOL, "ttft_fcfs", long_alone, gpu=gpu, short_len=512)
    assert not verdict.correct
    assert "their own prefill step" in verdict.feedback


def test_stall_is_an_exact_count():
    path = "quantization/132-bf16-running-sum-stalls.yaml"
    assert grade(path, "stall", "256", dtype="bf16").correct
    assert not grade(path, "stall", "257", dtype="bf16").correct


RING = "parallelism/073-ring-allreduce-latency-steps.yaml"


@pytest.mark.parametrize("link", ["nvlink4", "nvlink5"])
@pytest.mark.parametrize("model", ["llama33_70b", "llama31_405b"])
def test_ring_time_rejects_the_full_message_per_step(link, model):
    q = question(RING)
    context = variants.draw_variant(q, 0, choices={"link": link, "model": model}).context
    full = grading.expressions.evaluate("ring_latency_term + steps * msg / beta", context)
    verdict = grade(RING, "ring_time", f"{full.m_as('us'):.6g} us", link=link, model=model)
    assert not verdict.correct and "one chunk" in verdict.feedback


def doubled(path, part_id, **choices):
    value = reference(path, part_id, **choices)
    unit = next(p for p in question(path).parts if p.id == part_id).unit
    if unit:
        return f"{2 * value.m_as(unit) if hasattr(value, 'm_as') else 2 * value:.6g} {unit}"
    return f"{2 * value:.6g}"


@pytest.mark.parametrize(("path", "part_id"), [
    ("parallelism/068-megatron-split-placement-bytes.yaml", "prefill_comm"),
    ("parallelism/068-megatron-split-placement-bytes.yaml", "payload"),
    ("parallelism/073-ring-allreduce-latency-steps.yaml", "crossover"),
    ("kernels/042-int4-dequant-instruction-budget.yaml", "weights_per_sm_clk"),
])
def test_a_factor_of_two_without_a_kv_cache_does_not_mention_k_and_v(path, part_id):
    verdict = grade(path, part_id, doubled(path, part_id))
    assert not verdict.correct and "K and V" not in verdict.feedback


@pytest.mark.parametrize(("path", "part_id", "formula"), [
    ("parallelism/073-ring-allreduce-latency-steps.yaml", "ring_formula",
     "2 * (2 * (N - 1) * alpha + 2 * (N - 1) * S / (N * beta))"),
    ("kernels/042-int4-dequant-instruction-budget.yaml", "budget_formula", "2 * S * r * f * b / W"),
])
def test_a_formula_off_by_two_without_a_kv_cache_does_not_mention_k_and_v(path, part_id, formula):
    verdict = grade(path, part_id, formula)
    assert not verdict.correct and "K and V" not in verdict.feedback


def test_a_kv_question_still_hears_about_k_and_v():
    path = "kv-cache/018-disaggregated-kv-transfer-bandwidth.yaml"
    value = reference(path, "kv_request").m_as("GB")
    verdict = grade(path, "kv_request", f"{value / 2:.6g} GB")
    assert "keys and values" in verdict.feedback  # the listed mistake
    assert "K and V" in grade(path, "kv_request", f"{value * 2:.6g} GB").feedback


def test_fp8_peak_with_bf16_bytes_is_not_called_bits_vs_bytes():
    verdict = grade("quantization/047-w4a16-crossover-batch.yaml", "cross_int4", "591", gpu="h100_sxm")
    assert not verdict.correct and "FP8 peak" in verdict.feedback


def test_int4_with_fp16_scales_is_not_called_binary_vs_decimal():
    verdict = grade("quantization/051-mxfp4-vs-nvfp4-scales.yaml", "bits_mx", "4.125 bit")
    assert not verdict.correct and "prefix" not in verdict.feedback
    assert verdict.mistake is None


def test_half_time_share_is_not_pinned_on_sparsity_alone():
    verdict = grade("quantization/053-fine-grained-fp8-promotion.yaml", "time_share", "50%", gpu="h100_sxm")
    assert not verdict.correct and "promotion FMA is 2 FLOP" in verdict.feedback


def test_node_aggregate_egress_is_named_as_such():
    path = "kv-cache/018-disaggregated-kv-transfer-bandwidth.yaml"
    value = reference(path, "egress_gpu", gpus_per_nic=8).m_as("GB/s")
    verdict = grade(path, "egress_gpu", f"{8 * value:.6g} GB/s", gpus_per_nic=8)
    assert not verdict.correct and "whole node" in verdict.feedback


def test_at_tp8_the_bits_mistake_and_one_gpu_mistake_are_both_named():
    path = "roofline/001-decode-floor-from-weights.yaml"
    choices = {"gpu": "h100_sxm", "model": "llama33_70b", "dtype": "bf16", "batch": 64, "context": 8192}
    q = question(path)
    context = variants.draw_variant(q, 0, choices=choices).context
    assert context["tp"] == 8
    one_gpu = grading.expressions.evaluate("weight_bytes / gpu.hbm_bandwidth", context).m_as("ms")
    verdict = grade(path, "floor", f"{one_gpu:.4g} ms", **choices)
    assert not verdict.correct
    assert "counts bits" in verdict.feedback and "through one GPU" in verdict.feedback


def test_the_closest_explanation_wins_and_a_slip_needs_its_premise():
    part = {"id": "t", "kind": "numeric", "answer": "4.17 * ms", "unit": "ms"}
    # 4.48 ms is 7.4% above a time that no size went into: a plain miss, not GiB vs GB.
    verdict = grading.grade(part, "4.48 ms", {})
    assert verdict.mistake is None and verdict.feedback == "Not within 3% of the reference."
    listed = {**part, "mistakes": [{"answer": "4.17 * ms * 1.08", "feedback": "Eight percent."}],
              "answer": "4.17 * GB / (1 * TB/s)"}
    # Both the GiB slip (x1.074) and the listed mistake (x1.08) match 4.49 ms; the mistake is closer.
    assert grading.grade(listed, "4.50 ms", {}).mistake == "mistakes[0]"
    assert grading.grade(listed, "4.47 ms", {}).mistake == "slip:binary-vs-decimal"
