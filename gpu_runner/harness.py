"""The kernel harness: runs INSIDE the sandbox (a fresh process per run), next to the
candidate's ``solution.py``.

Usage (``grading.kinds.kernel.judging`` does this): ``python kernel_harness.py OUT_DIR``
with these files in the working directory: ``kernel_plan.json`` (what to do),
``cases.json`` and the input ``.npy`` files (``grading.judge.cases.encode_cases``),
``judge_harness.py`` (``grading/judge/harness.py``: its result encoding is reused, so
the host reads kernel outputs with the code judge's ``decode_output``), and
``timing.py`` (``gpu_runner/timing.py``: the stopping rule).

The plan's ``mode`` is ``interpret`` (Triton's interpreter on the CPU: correctness only)
or ``gpu``. On a GPU the harness checks correctness, times the ``timed`` shapes, then
runs the same cases again: outputs ``c<n>`` before timing and ``a<n>`` after. A plan
with no cases only times (that is how the reference kernel is timed, in a process of
its own so its source never shares a process with a candidate's).

Written for the host, all in the code judge's ``{"value": ...}`` format: ``<case id>.json``
per case, ``_launches.json`` (Triton launches per case id), under the interpreter ``_tiles.json`` (the most
elements any one program's tensor held) and, on a GPU, ``_timing.json`` (raw samples in ms per
shape, the stop reason, the device as torch sees it, and ``do_bench``'s median when the
plan asks for it). Nothing here is trusted: the candidate shares this process. The host
reads these files as data, recomputes every statistic from the raw samples, checks the
outputs against references it computed itself, and rejects times below the physical
floor.

What that does not stop: the candidate's code can write ``_timing.json`` itself, with
samples that are plausible (above the floor) but not measured. Outputs cannot be forged
that way (the host checks them against its own references, after timing too), but a
forged speed verdict can. Closing it needs the clock out of this process, for example a
second sandboxed process that owns the inputs and the events and checks a sample of the
outputs of every timed batch; that has to be built and measured on a GPU.
"""

import json
import os
import sys
import tempfile
import time

PLAN_FILE = "kernel_plan.json"
MANIFEST_FILE = "cases.json"


def main(out_dir):
    with open(PLAN_FILE, encoding="utf-8") as handle:
        plan = json.load(handle)
    interpret = plan["mode"] == "interpret"
    if interpret:
        # Must be set before triton is imported: @triton.jit reads it when it decorates.
        os.environ["TRITON_INTERPRET"] = "1"
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(tempfile.gettempdir(), "triton-cache"))

    import judge_harness  # noqa: E402  (the code judge's encoder, sent alongside)
    import torch  # noqa: E402
    import triton  # noqa: E402

    launches = _LaunchCounter(triton)
    tiles = _TileMeter() if interpret else None
    device = "cpu" if interpret else "cuda"
    try:
        module = judge_harness._import_solution()
        entrypoint = getattr(module, plan["entrypoint"])
    except BaseException as error:  # noqa: BLE001 - SystemExit at import is an error too
        judge_harness._write(out_dir, "_import", {"error": judge_harness._describe_error(error)})
        return
    with open(MANIFEST_FILE, encoding="utf-8") as handle:
        cases = json.load(handle)["cases"]
    counts = {}
    if plan.get("check", True):
        _run_cases(entrypoint, cases, "c", device, out_dir, launches, counts, judge_harness, torch)
    if plan.get("timed"):
        timing = _time_shapes(entrypoint, plan, torch, triton, judge_harness)
        judge_harness._write(out_dir, "_timing", {"value": timing})
        if plan.get("check", True):
            _run_cases(entrypoint, cases, "a", device, out_dir, launches, counts, judge_harness, torch)
    judge_harness._write(out_dir, "_launches", {"value": counts})
    if tiles is not None:
        judge_harness._write(out_dir, "_tiles", {"value": {"largest": tiles.largest}})


class _TileMeter:
    """The most elements one tensor of one program held, under the interpreter (which
    runs the grid one program at a time, every value a ``TensorHandle``): the tile a GPU
    would have to keep in one SM's registers. A warning for the candidate, not a
    security boundary (the candidate shares this process)."""

    def __init__(self):
        self.largest = 0
        from triton.runtime import interpreter

        original = interpreter.TensorHandle.__post_init__

        def measured(handle, _original=original):
            size = getattr(handle.data, "size", 0)
            if isinstance(size, int) and size > self.largest:
                self.largest = size
            return _original(handle)

        interpreter.TensorHandle.__post_init__ = measured


class _LaunchCounter:
    """Counts Triton kernel launches (compiled or interpreted) by wrapping ``run``. A
    sanity check that the answer is a Triton kernel, not a security boundary."""

    def __init__(self, triton):
        self.count = 0
        from triton.runtime import interpreter, jit

        for cls in (jit.JITFunction, interpreter.InterpretedFunction):
            original = cls.run

            def counted(function_self, *args, _original=original, **kwargs):
                if not kwargs.get("warmup", False):
                    self.count += 1
                return _original(function_self, *args, **kwargs)

            cls.run = counted


def _run_cases(entrypoint, cases, prefix, device, out_dir, launches, counts, judge_harness, torch):
    for case in cases:
        cid = prefix + case["id"][1:]
        before = launches.count
        try:
            args = [_load(value, device, torch) for value in case["args"]]
            kwargs = {key: _load(value, device, torch) for key, value in case["kwargs"].items()}
            value = entrypoint(*args, **kwargs)
            if device == "cuda":
                torch.cuda.synchronize()
            document = {"value": judge_harness._encode(value, out_dir, cid, [0], 0)}
        except BaseException as error:  # noqa: BLE001 - one case's crash fails that case
            if isinstance(error, KeyboardInterrupt):
                raise
            document = {"error": judge_harness._describe_error(error)}
        counts[cid] = launches.count - before
        judge_harness._write(out_dir, cid, document)


def _load(encoded, device, torch):
    if "npy" in encoded:
        import numpy as np

        return torch.from_numpy(np.load(encoded["npy"], allow_pickle=False)).to(device)
    return encoded["json"]


# ---------------------------------------------------------------- timing (GPU only)


def _time_shapes(entrypoint, plan, torch, triton, judge_harness):
    import timing

    policy = timing.TimingPolicy.from_json(plan["policy"])
    properties = torch.cuda.get_device_properties(0)
    l2_bytes = max(int(getattr(properties, "L2_cache_size", 0)), int(plan.get("l2_bytes", 0)))
    flush = torch.empty(timing.flush_bytes(l2_bytes), dtype=torch.uint8, device="cuda")
    report = {"device": {"name": torch.cuda.get_device_name(0), "l2_bytes": l2_bytes,
                         "sms": properties.multi_processor_count, "flush_bytes": flush.numel()},
              "shapes": []}
    for index, shape in enumerate(plan["timed"]):
        record = {"name": shape["name"]}
        try:
            sets = [_draw_inputs(shape, plan["timing_seed"] + 1000 * index + number, torch)
                    for number in range(max(1, int(shape["input_sets"])))]
            record.update(_sample(entrypoint, sets, flush, policy, timing, torch))
            if plan.get("do_bench"):
                args, kwargs = sets[0]
                record["do_bench_ms"] = triton.testing.do_bench(
                    lambda: entrypoint(*args, **kwargs), return_mode="median")
        except BaseException as error:  # noqa: BLE001 - reported; the host fails the run
            if isinstance(error, KeyboardInterrupt):
                raise
            record["error"] = judge_harness._describe_error(error)
        report["shapes"].append(record)
        sets = None  # free this shape's inputs before drawing the next shape's
    return report


def _sample(entrypoint, sets, flush, policy, timing, torch):
    """Warm up, then time calls in batches until ``timing.stop_reason`` says stop."""
    started = time.perf_counter()
    calls = 0
    while calls < policy.warmup_calls or time.perf_counter() - started < policy.warmup_seconds:
        args, kwargs = sets[calls % len(sets)]
        entrypoint(*args, **kwargs)
        calls += 1
        if calls % policy.batch == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    samples_ms = []
    while True:
        pairs = []
        for _ in range(policy.batch):
            args, kwargs = sets[(len(samples_ms) + len(pairs)) % len(sets)]
            flush.zero_()  # queued before the start event: see timing.py, step 2
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            entrypoint(*args, **kwargs)
            end.record()
            pairs.append((start, end))
        pairs[-1][1].synchronize()
        samples_ms += [start.elapsed_time(end) for start, end in pairs]
        reason = timing.stop_reason(samples_ms, sum(samples_ms) / 1000.0, policy)
        if reason:
            return {"samples_ms": samples_ms, "stop": reason, "warmup_calls": calls}


def _draw_inputs(shape, seed, torch):
    generator = torch.Generator(device="cuda")
    generator.manual_seed(seed)

    def draw(encoded):
        if "json" in encoded:
            return encoded["json"]
        spec = encoded["tensor"]
        dtype = getattr(torch, spec["dtype"])
        if spec["fill"] == "normal":
            values = torch.randn(spec["shape"], generator=generator, device="cuda", dtype=torch.float32)
            return values.mul_(spec["scale"]).to(dtype)
        return torch.randint(spec["low"], spec["high"], spec["shape"], generator=generator,
                             device="cuda", dtype=dtype)

    return [draw(value) for value in shape["args"]], {key: draw(value) for key, value in shape["kwargs"].items()}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/sandbox/out")
