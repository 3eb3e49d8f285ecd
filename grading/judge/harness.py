"""The trusted harness: runs INSIDE the sandbox, next to the candidate's ``solution.py``.

Usage (the judge does this): ``python harness.py OUT_DIR`` with ``cases.json`` and the
input ``.npy`` files in the working directory. For every case it calls the entrypoint
and writes ``OUT_DIR/<case id>.json``: ``{"value": tree}`` (arrays in the tree are
``{"__ndarray__": "<case id>.<n>.npy"}``, saved without pickle) or ``{"error": {type,
message, traceback, line}}`` (``line``: the innermost line of ``solution.py`` in the
traceback, or null). When a method call of a class entrypoint's script raises, the
record also holds ``"partial"``: the return values of the calls before it, encoded the
same way, so the host can tell a wrong earlier call from the exception. An import
failure is written as ``OUT_DIR/_import.json``.

Nothing here is trusted by the host: the candidate's code shares this process and could
change any of it. The host only reads these files as data (no pickle) and compares them
with references it computed itself, so the worst a candidate can do by tampering is
fail. This file must run with the standard library and NumPy alone, and must not import
the grading package (it is not in the sandbox).
"""

import importlib.util
import json
import os
import sys
import traceback

import numpy as np

SOLUTION_FILE = "solution.py"
ARRAY_TAG = "__ndarray__"
MAX_MESSAGE_CHARS = 2000
MAX_TRACEBACK_FRAMES = 12


def main(out_dir):
    with open("cases.json", encoding="utf-8") as handle:
        manifest = json.load(handle)
    try:
        module = _import_solution()
        entrypoint = getattr(module, manifest["entrypoint"])
    except BaseException as error:  # noqa: BLE001 - SystemExit at import is an error too
        _write(out_dir, "_import", {"error": _describe_error(error)})
        return
    for case in manifest["cases"]:
        try:
            value = _run_case(entrypoint, case)
            document = {"value": _encode(value, out_dir, case["id"], [0], 0)}
        except ScriptStopped as stopped:
            document = {"error": _describe_error(stopped.error)}
            try:
                document["partial"] = _encode(stopped.results, out_dir, case["id"], [0], 0)
            except BaseException:  # noqa: BLE001 - an unreadable earlier result: report the exception alone
                pass
        except BaseException as error:  # noqa: BLE001 - sys.exit() in a call fails that case
            if isinstance(error, KeyboardInterrupt):
                raise
            document = {"error": _describe_error(error)}
        _write(out_dir, case["id"], document)


def _import_solution():
    spec = importlib.util.spec_from_file_location("solution", os.path.abspath(SOLUTION_FILE))
    module = importlib.util.module_from_spec(spec)
    sys.modules["solution"] = module
    spec.loader.exec_module(module)
    return module


def _load(encoded):
    if "npy" in encoded:
        return np.load(encoded["npy"], allow_pickle=False)
    return encoded["json"]


def _run_case(entrypoint, case):
    args = [_load(value) for value in case["args"]]
    kwargs = {key: _load(value) for key, value in case["kwargs"].items()}
    if case["calls"] is None:
        return entrypoint(*args, **kwargs)
    instance = entrypoint(*args, **kwargs)
    results = []
    for call in case["calls"]:
        try:
            method = getattr(instance, call["method"])
            call_args = [_load(value) for value in call["args"]]
            call_kwargs = {key: _load(value) for key, value in call["kwargs"].items()}
            results.append(method(*call_args, **call_kwargs))
        except BaseException as error:  # noqa: BLE001 - the calls before it still count
            if isinstance(error, KeyboardInterrupt):
                raise
            raise ScriptStopped(results, error) from None
    return results


class ScriptStopped(Exception):
    """A method call of a script raised ``error``; ``results`` are the calls' before it."""

    def __init__(self, results, error):
        super().__init__()
        self.results, self.error = results, error


class UnreadableResult(TypeError):
    """The entrypoint returned something the judge cannot read as data."""


def _encode(value, out_dir, cid, counter, depth):
    if depth > 30:
        raise UnreadableResult("the return value is nested too deeply")
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        tensor = value.detach().cpu()
        if tensor.dtype in (torch.bfloat16,):
            tensor = tensor.float()  # NumPy has no bfloat16
        value = tensor.numpy()
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise UnreadableResult("returned an array of Python objects (dtype=object); return numbers")
        name = f"{cid}.{counter[0]}.npy"
        counter[0] += 1
        np.save(os.path.join(out_dir, name), value, allow_pickle=False)
        return {ARRAY_TAG: name}
    if isinstance(value, np.generic):
        return _encode(value.item(), out_dir, cid, counter, depth + 1)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_encode(item, out_dir, cid, counter, depth + 1) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _encode(item, out_dir, cid, counter, depth + 1) for key, item in value.items()}
    raise UnreadableResult(f"returned a {type(value).__name__}, which the judge cannot read")


def _describe_error(error):
    """The error with a traceback trimmed to the candidate's own frames, and the line of
    the innermost of them."""
    frames = traceback.extract_tb(error.__traceback__)
    lines = []
    line = None
    for frame in frames:
        if os.path.basename(frame.filename) == SOLUTION_FILE:
            line = frame.lineno
            lines.append(f'  File "{SOLUTION_FILE}", line {frame.lineno}, in {frame.name}')
            if frame.line:
                lines.append(f"    {frame.line.strip()}")
    if frames and os.path.basename(frames[-1].filename) != SOLUTION_FILE:
        last = frames[-1]
        lines.append(f"  (raised inside {os.path.basename(last.filename)}, line {last.lineno}, in {last.name})")
    lines = lines[-2 * MAX_TRACEBACK_FRAMES:]
    message = str(error)
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + "..."
    return {"type": type(error).__name__, "message": message, "traceback": "\n".join(lines), "line": line}


def _write(out_dir, name, document):
    path = os.path.join(out_dir, f"{name}.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/sandbox/out")
