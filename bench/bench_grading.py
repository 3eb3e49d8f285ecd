"""Latency of the grading engine, per answer kind and per class of answer.

Grades numeric and formula parts with correct, wrong, mistaken and invalid answers,
``--repetitions`` times each, through ``grading.grade`` with the part's RAW mapping
(as the Django service calls it, so spec loading is included); prints p50/p99 in ms.

Two passes: ``cold`` clears the engine's caches (loaded specs, parsed author
expressions, unit lookups, symbolic comparisons) before every call, the worst case;
``warm`` keeps them, the steady state of a server. Target: p99 < 50 ms in-process.

The scratchpad case grades a 20-line scratchpad (right, and with one slip) for a
numeric part, step by step, next to its baseline: the same final answer graded alone,
in the same run. Target: p99 < 50 ms for the scratchpad too.

Parts come from the question bank when ``questions`` can load it (every numeric and
formula part, variant seed 1), plus a representative inline set; ``--specs FILE`` adds
parts from a YAML list of ``{part: {...}, context: {...}}`` (context values as in a
catalogue: "3.35 TB/s" strings are quantities).

    .venv/bin/python bench/bench_grading.py [--repetitions 20] [--no-bank] [--specs FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grading  # noqa: E402
from grading.expressions import parse_trusted  # noqa: E402
from grading.expressions.symbolic import _compare_cached  # noqa: E402
from grading.kinds.numeric import steps as numeric_steps  # noqa: E402
from grading.kinds.numeric.working import _read_working  # noqa: E402
from grading.quantities import parse_quantity, parse_unit  # noqa: E402
from grading.variants import build_context  # noqa: E402

CATALOGUE = {
    "gpus": {"h100_sxm": {"name": "H100", "hbm_bandwidth": "3.35 TB/s",
                          "bf16_dense": "989.4 TFLOP/s", "memory": "80 GB", "tdp": "700 W",
                          "sms": 132}},
    "models": {"llama33_70b": {"name": "Llama 3.3 70B", "params": 70.6e9, "layers": 80,
                               "kv_heads": 8, "head_dim": 128}},
    "dtypes": {"bf16": {"name": "BF16", "bytes": "2 B"}},
}
PARAMS = {"gpu": {"catalogue": "gpus", "choices": ["h100_sxm"]},
          "model": {"catalogue": "models", "choices": ["llama33_70b"]},
          "dtype": {"catalogue": "dtypes", "choices": ["bf16"]},
          "batch": {"choices": [32]}, "context_length": {"choices": ["8192 token"]}}
DERIVED = {
    "weight_bytes": "model.params * dtype.bytes",
    "floor": "weight_bytes / gpu.hbm_bandwidth",
    "kv_per_token": "2 * model.layers * model.kv_heads * model.head_dim * dtype.bytes / token",
    "kv_total": "kv_per_token * context_length * batch",
    "throughput": "batch * token / (floor + kv_total / gpu.hbm_bandwidth)",
    "ridge": "gpu.bf16_dense / gpu.hbm_bandwidth",
}
SYMBOLS_KV = {
    "L": {"description": "layers", "range": [16, 128], "integer": True},
    "h_kv": {"description": "KV heads", "range": [1, 16], "integer": True},
    "d": {"description": "head dim", "range": [64, 256], "integer": True},
    "b": {"description": "bytes per element", "range": [0.5, 4], "unit": "B"},
}
INLINE_PARTS = [
    {"id": "floor", "kind": "numeric", "answer": "floor", "unit": "ms",
     "mistakes": [{"answer": "floor * 8", "feedback": "Bits, not bytes."}]},
    {"id": "kv", "kind": "numeric", "answer": "kv_total", "unit": "GB",
     "partial": {"rtol": 0.15, "score": 0.5},
     "mistakes": [{"answer": "kv_total / 2", "feedback": "K and V."}]},
    {"id": "tps", "kind": "numeric", "answer": "throughput", "unit": "tokens/s"},
    {"id": "ridge", "kind": "numeric", "answer": "ridge", "unit": "FLOP/B"},
    {"id": "kv_formula", "kind": "formula", "symbols": SYMBOLS_KV,
     "answer": "2 * L * h_kv * d * b",
     "mistakes": [{"answer": "L * h_kv * d * b", "feedback": "K and V."}]},
    {"id": "crossover", "kind": "formula", "answer": "F * b / (2 * W)",
     "symbols": {"F": {"range": [1e14, 5e15]}, "W": {"range": [5e11, 1e13]},
                 "b": {"range": [0.25, 2]}},
     "mistakes": [{"answer": "F * b / W", "feedback": "2 FLOP per MAC."}]},
    {"id": "flash_io", "kind": "formula", "answer": "N^2 * d^2 / M + N * d",
     "symbols": {"N": {"range": [512, 131072], "integer": True},
                 "d": {"range": [64, 256], "integer": True},
                 "M": {"range": [16384, 262144], "integer": True}}},
    {"id": "waves", "kind": "formula", "answer": "ceil(B * H / S) * log2(T)",
     "symbols": {"B": {"range": [1, 64], "integer": True},
                 "H": {"range": [8, 128], "integer": True},
                 "S": {"range": [78, 160], "integer": True},
                 "T": {"range": [2, 65536], "integer": True}}},
]
# 20 steps for the inline "floor" part (weight bytes over one H100's bandwidth), with
# the KV cache, the step time, throughput and the compute time worked out on the way.
SCRATCHPAD_LINES = [
    "params = 70.6e9", "bytes_per = 2 B", "w = params * bytes_per", "layers = 80", "kv_heads = 8",
    "head_dim = 128", "kv_tok = 2 * layers * kv_heads * head_dim * bytes_per", "ctx = 8192", "batch = 32",
    "kv = kv_tok * ctx * batch", "bw = 3.35 TB/s", "t_w = w / bw", "t_kv = kv / bw", "t_step = t_w + t_kv",
    "tps = batch / t_step", "work = 2 FLOP * params * batch", "peak = 989.4 TFLOP/s", "t_compute = work / peak",
    "ratio = t_w / t_compute", "> floor = w / bw",
]
SCRATCHPADS = {
    "right": "\n".join(SCRATCHPAD_LINES),
    "one slip": "\n".join(line.replace("2 B", "1 B") for line in SCRATCHPAD_LINES),
}
INVALID_NUMERIC = ["41.8 Gb", "9**9**9**9", "x" * 10_000, "__import__('os')", "((1 ms",
                   "5 TFLOPS", "1 foo", "3 GB + 2 s", "", "1,000 ms"]
INVALID_FORMULA = ["Lhd", "9**9**9**9", "x" * 10_000, "__import__('os')", "((L",
                   "factorial(10**8)", "2 +", "lambda: 1", "", "().__class__"]


def inline_cases() -> list[tuple[dict, dict]]:
    choices = {name: spec["choices"][0] for name, spec in PARAMS.items()}
    context = build_context(PARAMS, DERIVED, choices, CATALOGUE)
    return [(part, context) for part in INLINE_PARTS]


def bank_cases() -> tuple[list[tuple[dict, dict]], str]:
    """Every numeric and formula part of the bank, in variant seed 1."""
    try:
        from questions import loader
        from questions.schema import Question
        from questions.variants import draw_variant
    except ImportError as error:
        return [], f"bank unavailable ({error})"
    if hasattr(loader, "load_bank"):
        questions = [Question.from_data(item.data) if hasattr(item, "data") else item
                     for item in loader.load_bank()]
    else:
        questions, skipped = [], 0
        for path in loader.bank_files():
            loaded = loader.load_file(path)
            try:
                questions.append(Question.from_data(loaded.data))
            except Exception:
                skipped += 1
    cases, broken = [], 0
    for question in questions:
        try:
            context = draw_variant(question, 1).context
        except Exception:
            broken += 1
            continue
        for part in question.parts:
            if part.kind in ("numeric", "formula"):
                cases.append((part.raw, context))
    return cases, f"bank: {len(questions)} questions ({broken} without a usable variant)"


def spec_file_cases(path: str) -> list[tuple[dict, dict]]:
    import yaml

    from grading.variants import plain_value

    cases = []
    for item in yaml.safe_load(Path(path).read_text()):
        context = {key: plain_value(value, label=key)
                   for key, value in (item.get("context") or {}).items()}
        cases.append((item["part"], context))
    return cases


def answers_for(part: dict, context: dict) -> dict[str, list[str]]:
    """{answer class: [texts]} for one part; classes without a text are left out."""
    kind = grading.get_kind(part["kind"])
    spec = kind.load_spec(part)
    correct = kind.reference_answer(spec, context)
    mistakes = [text for text, _ in kind.mistake_answers(spec, context)]
    if part["kind"] == "numeric":
        value = kind.reference_value(spec, context)
        wrong = f"{parse_unit(spec.unit.text).magnitude_of(value) * 1.37!r} {spec.unit.text}"
        invalid = INVALID_NUMERIC
    else:
        wrong = f"1.37 * ({spec.answer})"
        invalid = INVALID_FORMULA
    classes = {"correct": [correct], "wrong": [wrong], "invalid": invalid}
    if mistakes:
        classes["mistake"] = mistakes
    return classes


def clear_caches() -> None:
    grading._SPEC_CACHE.clear()
    parse_trusted.cache_clear()
    parse_unit.cache_clear()
    parse_quantity.cache_clear()
    _compare_cached.cache_clear()
    _read_working.cache_clear()
    numeric_steps._CACHE.clear()


def measure(cases, repetitions: int, cold: bool) -> dict:
    timings: dict[tuple[str, str], list[float]] = defaultdict(list)
    for part, context in cases:
        try:
            classes = answers_for(part, context)
        except grading.SpecError:
            continue  # a broken part is validation's business, not a latency sample
        for answer_class, texts in classes.items():
            for _ in range(repetitions):
                for text in texts:
                    if cold:
                        clear_caches()
                    started = time.perf_counter()
                    try:
                        grading.grade(part, text, context)
                    except grading.SpecError:
                        continue
                    timings[(part["kind"], answer_class)].append(
                        (time.perf_counter() - started) * 1e3)
    return timings


def measure_scratchpad(repetitions: int, cold: bool) -> dict:
    """The 20-line scratchpad cases and their baselines (the same answer, no working)."""
    part, context = next((part, context) for part, context in inline_cases() if part["id"] == "floor")
    kind = grading.get_kind(part["kind"])
    timings: dict[tuple[str, str], list[float]] = defaultdict(list)
    for label, scratchpad in SCRATCHPADS.items():
        answer = kind.scratchpad_answer(kind.load_spec(part), scratchpad)
        for _ in range(repetitions):
            for case, pad in ((f"{label}", scratchpad), (f"{label} base", "")):
                if cold:
                    clear_caches()
                started = time.perf_counter()
                verdict = grading.grade(part, answer, context, scratchpad=pad)
                timings[("scratch", case)].append((time.perf_counter() - started) * 1e3)
                if pad and len(verdict.steps) != len(SCRATCHPAD_LINES):
                    raise SystemExit(f"the scratchpad case graded {len(verdict.steps)} steps, not 20")
    return timings


def report_scratchpad(title: str, timings: dict) -> None:
    print(f"\n{title}: a 20-line scratchpad against its baseline (the same answer alone), this run")
    print(f"{'case':<12}{'n':>6}{'p50 ms':>10}{'p99 ms':>10}{'base p50':>10}{'base p99':>10}")
    for label in SCRATCHPADS:
        samples, base = timings[("scratch", label)], timings[("scratch", f"{label} base")]
        print(f"{label:<12}{len(samples):>6}{statistics.median(samples):>10.2f}{percentile(samples, 0.99):>10.2f}"
              f"{statistics.median(base):>10.2f}{percentile(base, 0.99):>10.2f}")


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(title: str, timings: dict) -> None:
    print(f"\n{title}")
    print(f"{'kind':<9}{'answers':<10}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    by_kind: dict[str, list[float]] = defaultdict(list)
    for (kind, answer_class), samples in sorted(timings.items()):
        by_kind[kind].extend(samples)
        print(f"{kind:<9}{answer_class:<10}{len(samples):>7}{statistics.median(samples):>10.2f}"
              f"{percentile(samples, 0.99):>10.2f}{max(samples):>10.2f}")
    for kind, samples in sorted(by_kind.items()):
        print(f"{kind:<9}{'all':<10}{len(samples):>7}{statistics.median(samples):>10.2f}"
              f"{percentile(samples, 0.99):>10.2f}{max(samples):>10.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--no-bank", action="store_true", help="inline parts only")
    parser.add_argument("--specs", help="YAML list of {part, context} to add")
    args = parser.parse_args(argv)

    cases = inline_cases()
    source = f"inline: {len(cases)} parts"
    if not args.no_bank:
        bank, note = bank_cases()
        cases += bank
        source += f"; {note}, {len(bank)} numeric/formula parts"
    if args.specs:
        extra = spec_file_cases(args.specs)
        cases += extra
        source += f"; {args.specs}: {len(extra)} parts"
    print(source)
    report("cold (caches cleared before every call)", measure(cases, args.repetitions, True))
    report("warm (steady state)", measure(cases, args.repetitions, False))
    report_scratchpad("cold", measure_scratchpad(args.repetitions, True))
    report_scratchpad("warm", measure_scratchpad(args.repetitions, False))


if __name__ == "__main__":
    main()
