"""Test cases and the data that crosses the sandbox boundary.

A ``Case`` is one call (or, for a class entrypoint, one script of method calls) with
named inputs. Going in, inputs become files: each NumPy array an ``.npy`` written without
pickle, everything else JSON in ``cases.json``. Coming out, the harness writes one JSON
file per case whose arrays are ``.npy`` files it names; ``decode_output`` reads them back
with ``allow_pickle=False`` and refuses anything it does not understand. No pickle
crosses the boundary in either direction.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MANIFEST_NAME = "cases.json"
# The harness writes each case's result as ``<case id>.json``; arrays inside it are
# ``{"__ndarray__": "<case id>.<n>.npy"}``.
ARRAY_TAG = "__ndarray__"
MAX_OUTPUT_JSON_BYTES = 4 * 1024 * 1024
MAX_OUTPUT_DEPTH = 32
_SAFE_FILE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


@dataclass(frozen=True)
class Call:
    """One method call on the instance a class entrypoint built."""

    method: str
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """One test of a candidate's entrypoint.

    - ``name`` names the situation ("tied logits at the cutoff"); the verdict quotes it.
    - ``group`` is the test group the case scores in (a part's ``groups``).
    - ``args``/``kwargs``: NumPy arrays or JSON values (numbers, strings, lists, dicts,
      None). For a function the call is ``entrypoint(*args, **kwargs)``; for a class,
      the constructor's.
    - ``calls``: for a class entrypoint, the methods called in order on the instance;
      the case's output is the list of their return values. ``None`` for functions.
    - ``secret``: trusted-side data for the reference and the check (an analytic
      distribution, a bound); never sent to the sandbox.
    """

    name: str
    group: str
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    calls: tuple[Call, ...] | None = None
    secret: Mapping[str, Any] = field(default_factory=dict)

    def describe_inputs(self, limit: int = 600) -> str:
        """The inputs written out in full (for visible examples only), cut at ``limit``."""
        pieces = [_short_repr(value) for value in self.args]
        pieces += [f"{key}={_short_repr(value)}" for key, value in self.kwargs.items()]
        text = f"({', '.join(pieces)})"
        if self.calls is not None:
            steps = "; ".join(
                f".{call.method}({', '.join(_short_repr(arg) for arg in call.args)})" for call in self.calls
            )
            text = f"{text} then {steps}"
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def describe_shapes(self) -> str:
        """Shapes and dtypes of the array inputs, sizes of the others: what a hidden
        case may reveal."""
        pieces = [_shape_of(value) for value in self.args]
        pieces += [f"{key}: {_shape_of(value)}" for key, value in self.kwargs.items()]
        text = ", ".join(pieces)
        if self.calls is not None:
            text = f"{text}; {len(self.calls)} method calls"
        return text


def _short_repr(value: Any) -> str:
    if isinstance(value, np.ndarray):
        with np.printoptions(threshold=40, edgeitems=4, precision=6, linewidth=10**6):
            text = " ".join(np.array2string(value, separator=", ").split())
        return f"np.array({text}, dtype={value.dtype})"
    return repr(value)


def _shape_of(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)}"
    if isinstance(value, (list, tuple, dict, str)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


# ---------------------------------------------------------------- going in


def case_id(index: int) -> str:
    return f"c{index:03d}"


def encode_cases(cases: list[Case], entrypoint: str) -> dict[str, bytes]:
    """The sandbox input files for ``cases``: ``cases.json`` plus one ``.npy`` per
    array argument. Raises ``TypeError`` for an input that is neither an array nor
    JSON (a judge module's bug)."""
    files: dict[str, bytes] = {}
    manifest = []
    for index, case in enumerate(cases):
        cid = case_id(index)
        counter = iter(range(10**6))

        def put(value: Any) -> dict:
            if isinstance(value, np.ndarray):
                if value.dtype.hasobject:
                    raise TypeError(f"case {case.name!r}: object arrays cannot be sent")
                name = f"{cid}_in{next(counter)}.npy"
                buffer = io.BytesIO()
                np.save(buffer, value, allow_pickle=False)
                files[name] = buffer.getvalue()
                return {"npy": name}
            _check_json(value, case.name)
            return {"json": value}

        entry = {
            "id": cid,
            "args": [put(value) for value in case.args],
            "kwargs": {key: put(value) for key, value in case.kwargs.items()},
            "calls": None,
        }
        if case.calls is not None:
            entry["calls"] = [
                {
                    "method": call.method,
                    "args": [put(value) for value in call.args],
                    "kwargs": {key: put(value) for key, value in call.kwargs.items()},
                }
                for call in case.calls
            ]
        manifest.append(entry)
    files[MANIFEST_NAME] = json.dumps({"entrypoint": entrypoint, "cases": manifest}).encode()
    return files


def _check_json(value: Any, case_name: str) -> None:
    try:
        json.dumps(value, allow_nan=True)
    except (TypeError, ValueError) as error:
        raise TypeError(f"case {case_name!r}: input {value!r} is not JSON: {error}") from None


# ---------------------------------------------------------------- coming out


class MalformedOutput(ValueError):
    """The sandbox's output for a case cannot be read as data the judge understands.

    ``str(error)`` may quote the output (a size, a file name the candidate chose);
    ``summary`` says why in words that quote nothing from it, for runs whose data is
    hidden (``grading.judge.runner.RunWords``)."""

    def __init__(self, message: str, summary: str = "the result is not what the harness writes"):
        super().__init__(message)
        self.summary = summary


@dataclass(frozen=True)
class RawOutcome:
    """What the harness reported for one case: a value, an error, or nothing. With an
    error from a method call of a script, ``partial`` is the list of the return values
    of the calls before it (None otherwise)."""

    present: bool
    value: Any = None
    error: Mapping | None = None
    partial: list | None = None


def decode_output(cid: str, files: Mapping[str, bytes]) -> RawOutcome:
    """Read case ``cid``'s result from the sandbox's output files. A missing file is
    ``present=False``; anything unreadable raises ``MalformedOutput``."""
    raw = files.get(f"{cid}.json")
    if raw is None:
        return RawOutcome(present=False)
    if len(raw) > MAX_OUTPUT_JSON_BYTES:
        raise MalformedOutput(f"the result file is {len(raw)} bytes, more than the judge reads",
                              "the result file is larger than the judge reads")
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise MalformedOutput(f"the result file is not JSON ({type(error).__name__})",
                              "the result file is not JSON") from None
    if not isinstance(document, dict) or set(document) not in ({"value"}, {"error"}, {"error", "partial"}):
        raise MalformedOutput("the result file is not what the harness writes",
                              "the result file is not what the harness writes")
    if "error" in document:
        error = document["error"]
        if not isinstance(error, dict) or not all(isinstance(error.get(key), str) for key in ("type", "message")):
            raise MalformedOutput("the error record is not what the harness writes",
                                  "the error record is not what the harness writes")
        partial = _restore(document["partial"], cid, files, 0, set()) if "partial" in document else None
        if partial is not None and not isinstance(partial, list):
            raise MalformedOutput("the results before the error are not a list",
                                  "the result file is not what the harness writes")
        return RawOutcome(present=True, error=error, partial=partial)
    return RawOutcome(present=True, value=_restore(document["value"], cid, files, 0, set()))


def _restore(node: Any, cid: str, files: Mapping[str, bytes], depth: int, loaded: set) -> Any:
    if depth > MAX_OUTPUT_DEPTH:
        raise MalformedOutput("the result is nested too deeply", "the result is nested too deeply")
    if isinstance(node, dict):
        if set(node) == {ARRAY_TAG}:
            return _load_array(node[ARRAY_TAG], cid, files, loaded)
        return {key: _restore(value, cid, files, depth + 1, loaded) for key, value in node.items()}
    if isinstance(node, list):
        return [_restore(value, cid, files, depth + 1, loaded) for value in node]
    if node is None or isinstance(node, (str, bool, int, float)):
        return node
    raise MalformedOutput(f"unexpected {type(node).__name__} in the result", "the result holds unexpected data")


def _load_array(name: Any, cid: str, files: Mapping[str, bytes], loaded: set) -> np.ndarray:
    if not isinstance(name, str) or not _SAFE_FILE_NAME.match(name) or not name.startswith(f"{cid}."):
        raise MalformedOutput("the result names an array file the harness would not write",
                              "the result names an array file the harness would not write")
    # The harness names each file once; decoding one file many times would multiply it.
    if name in loaded:
        raise MalformedOutput(f"the result names the array file {name} more than once",
                              "the result names an array file more than once")
    loaded.add(name)
    data = files.get(name)
    if data is None:
        raise MalformedOutput(f"the array file {name} is missing", "an array file it names is missing")
    try:
        _check_npy_size(data)
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as error:  # noqa: BLE001 - whatever NumPy makes of a crafted header
        # allow_pickle=False turns an object array (a pickle) into a ValueError.
        raise MalformedOutput(f"the array file {name} is not a plain .npy array ({error})",
                              "an array file is not a plain .npy array") from None
    if not isinstance(array, np.ndarray) or array.dtype.hasobject:
        raise MalformedOutput(f"the array file {name} is not a plain .npy array",
                              "an array file is not a plain .npy array")
    return array


def _check_npy_size(data: bytes) -> None:
    """Refuse a .npy whose header claims other than the data it holds, before NumPy
    allocates what the header claims (it does so up front)."""
    stream = io.BytesIO(data)
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise MalformedOutput(f"format version {version[0]}.{version[1]}")
    if not all(type(size) is int and size >= 0 for size in shape):
        raise MalformedOutput(f"shape {shape!r}")
    count = math.prod(shape)
    if dtype.itemsize == 0 and count:
        raise MalformedOutput(f"{count} elements of zero bytes")
    if count * dtype.itemsize != len(data) - stream.tell():
        raise MalformedOutput(f"its header claims {count * dtype.itemsize} bytes of data, "
                              f"the file holds {len(data) - stream.tell()}")
