"""Bank questions whose deciding assumption used to be left open (issue 18): each names
its convention, and the other reading gets feedback that says so. Graded through
`manage.py grade --choice`, which these tests also cover, as an author would."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

LLAMA_8B_ON_H100 = ["--choice", "model=llama31_8b", "--choice", "gpu=h100_sxm",
                    "--choice", "dtype=bf16", "--choice", "batch=16", "--choice", "context=4096"]
TABLE = "input-embedding table"


def grade(slug, part, answer, *choices):
    out = StringIO()
    call_command("grade", slug, "--part", part, "--answer", answer, *choices, "--json", stdout=out)
    return json.loads(out.getvalue())


def validate(slug):
    out = StringIO()
    call_command("validate_questions", "--question", slug, stdout=out)
    return out.getvalue()


def test_decode_floor_excludes_the_embedding_table_and_names_the_other_convention():
    excluded = grade("decode-floor-from-weights", "floor", "4.48 ms", *LLAMA_8B_ON_H100)
    assert excluded["correct"], excluded["feedback"]
    included = grade("decode-floor-from-weights", "floor", "4.79 ms", *LLAMA_8B_ON_H100)
    assert not included["correct"] and TABLE in included["feedback"]
    assert "GiB" not in included["feedback"]


def test_decode_floor_tells_the_conventions_apart_on_the_70b():
    choices = ["--choice", "model=llama33_70b", "--choice", "gpu=h100_sxm",
               "--choice", "dtype=bf16", "--choice", "batch=16", "--choice", "context=4096"]
    assert grade("decode-floor-from-weights", "floor", "10.38 ms", *choices)["correct"]
    included = grade("decode-floor-from-weights", "floor", "10.54 ms", *choices)
    assert not included["correct"] and TABLE in included["feedback"]


@pytest.mark.parametrize(("part", "included", "excluded"),
                         [("ceiling", "417 token/s", "446 token/s")])
def test_vendor_ceiling_follows_the_convention(part, included, excluded):
    choices = ["--choice", "model=llama31_8b", "--choice", "gpu=h100_sxm"]
    assert grade("vendor-claim-one-division", part, excluded, *choices)["correct"]
    verdict = grade("vendor-claim-one-division", part, included, *choices)
    assert not verdict["correct"] and TABLE in verdict["feedback"]


def test_knee_follows_the_convention():
    choices = ["--choice", "gpu=h100_sxm", "--choice", "context=4096"]
    assert grade("throughput-hyperbola-knee", "knee_batch", "27.96", *choices)["correct"]
    verdict = grade("throughput-hyperbola-knee", "knee_batch", "29.9", *choices)
    assert not verdict["correct"] and TABLE in verdict["feedback"]


def test_joules_per_token_follow_the_convention():
    choices = ["--choice", "gpu=h100_sxm", "--choice", "batch=64", "--choice", "context=512"]
    assert grade("joules-per-token", "j1", "1.60 J/token", *choices)["correct"]
    verdict = grade("joules-per-token", "j1", "1.706 J/token", *choices)
    assert not verdict["correct"] and TABLE in verdict["feedback"]


def test_kv_transfer_names_the_half_attention_reading():
    verdict = grade("disaggregated-prefill-kv-transfer", "egress_rate", "8.8 GB/s",
                    "--choice", "gpu=h100_sxm")
    assert not verdict["correct"] and "half the attention FLOPs" in verdict["feedback"]
    assert "binary" not in verdict["feedback"]
    assert grade("disaggregated-prefill-kv-transfer", "egress_rate", "8.54 GB/s")["correct"]


def test_l2_working_set_names_the_gqa_reading():
    verdict = grade("flashattention-l2-reuse", "working_set", "4.19 MB",
                    "--choice", "gpu=h100_sxm", "--choice", "seq=8192")
    assert not verdict["correct"] and "grouped-query attention" in verdict["feedback"]
    assert grade("flashattention-l2-reuse", "working_set", "12.6 MB",
                 "--choice", "gpu=h100_sxm", "--choice", "seq=8192")["correct"]


def test_grade_choice_is_checked_against_the_question():
    with pytest.raises(CommandError, match="no parameter 'modle'"):
        grade("decode-floor-from-weights", "floor", "1 ms", "--choice", "modle=llama31_8b")
    with pytest.raises(CommandError, match=r"'17' is not a choice of batch \(choices: 16, 64\)"):
        grade("decode-floor-from-weights", "floor", "1 ms", "--choice", "batch=17")
    with pytest.raises(CommandError, match="NAME=VALUE"):
        grade("decode-floor-from-weights", "floor", "1 ms", "--choice", "llama31_8b")


def test_grade_choice_picks_the_variant():
    picked = grade("decode-floor-from-weights", "floor", "1 ms", *LLAMA_8B_ON_H100)
    assert picked["expected"] == "4.48 ms"
    seventy = grade("decode-floor-from-weights", "floor", "1 ms",
                    "--choice", "model=llama33_70b", "--choice", "gpu=h100_sxm",
                    "--choice", "dtype=bf16", "--choice", "batch=16", "--choice", "context=4096")
    assert seventy["expected"] == "10.38 ms"


@pytest.mark.parametrize("slug", ["decode-floor-from-weights", "vendor-claim-one-division",
                                  "mbu-both-operands", "throughput-hyperbola-knee",
                                  "joules-per-token", "disaggregated-prefill-kv-transfer",
                                  "flashattention-l2-reuse"])
def test_the_changed_questions_validate_one_at_a_time(slug):
    output = validate(slug)
    assert "1 of 1 OK" in output and slug in output


def test_validate_question_matches_the_slug_exactly():
    # "kv-transfer" ends two file names but is no question's slug
    with pytest.raises(CommandError, match="no question 'kv-transfer'"):
        validate("kv-transfer")
