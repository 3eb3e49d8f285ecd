"""Comparing a candidate's output with the trusted reference.

``compare_values(got, expected)`` returns None when they match and otherwise one line
saying where and by how much they differ. Floating-point arrays match when every
element is within ``atol + rtol * |expected|`` (``atol`` scaled by the reference's
largest magnitude, so the check means the same for data of any size) AND the whole
array is within ``norm_rtol`` in relative L2 norm; the norm check is what stops an
all-zeros answer from passing on a reference that is mostly tiny. NaN and infinities
must appear exactly where the reference has them.

Those lines quote values, which is right for a visible example only. For a case whose
data is hidden, ``describe_mismatch`` (and ``describe_call_mismatch`` for a class's
script) says what is wrong without quoting anything from either side.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    """How close a floating-point output must be. ``atol`` is relative to the
    reference's largest finite magnitude."""

    rtol: float
    atol: float
    norm_rtol: float


# Loose enough for a candidate who computes in the dtype itself (float32 sums in a
# different order, fused operations), tight enough to catch a wrong formula.
TOLERANCES = {
    np.dtype(np.float16): Tolerance(rtol=1e-2, atol=1e-3, norm_rtol=1e-2),
    np.dtype(np.float32): Tolerance(rtol=1e-4, atol=1e-5, norm_rtol=1e-4),
    np.dtype(np.float64): Tolerance(rtol=1e-9, atol=1e-12, norm_rtol=1e-9),
}


def tolerance_for(dtype) -> Tolerance:
    """The default tolerance for outputs of ``dtype`` (float32's for unknown floats)."""
    return TOLERANCES.get(np.dtype(dtype), TOLERANCES[np.dtype(np.float32)])


def compare_values(got: Any, expected: Any, tolerance: Tolerance | None = None,
                   where: str = "the result") -> str | None:
    """None if ``got`` matches ``expected``, else a one-line description of the first
    difference. ``expected`` is an array, list, dict, str, bool, int, float or None;
    ``tolerance`` applies to floats (default: by the expected array's dtype)."""
    if isinstance(expected, np.ndarray):
        return compare_arrays(got, expected, tolerance, where)
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return f"{where} is {_kind(got)}, expected a list of {len(expected)}"
        if len(got) != len(expected):
            return f"{where} has {len(got)} items, expected {len(expected)}"
        for index, (got_item, expected_item) in enumerate(zip(got, expected)):
            problem = compare_values(got_item, expected_item, tolerance, f"{where}[{index}]")
            if problem:
                return problem
        return None
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return f"{where} is {_kind(got)}, expected a dict"
        if set(got) != set(expected):
            return f"{where} has keys {sorted(got)}, expected {sorted(expected)}"
        for key in expected:
            problem = compare_values(got[key], expected[key], tolerance, f"{where}[{key!r}]")
            if problem:
                return problem
        return None
    if expected is None or isinstance(expected, (str, bool)):
        if type(got) is not type(expected) or got != expected:
            return f"{where} is {_show(got)}, expected {_show(expected)}"
        return None
    if isinstance(expected, (int, np.integer)):
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)) or got != expected:
            return f"{where} is {_show(got)}, expected {_show(expected)}"
        return None
    if isinstance(expected, (float, np.floating)):
        if isinstance(got, bool) or not isinstance(got, (int, float, np.integer, np.floating)):
            return f"{where} is {_kind(got)}, expected a number"
        return compare_arrays(np.asarray(float(got)), np.asarray(float(expected)),
                              tolerance or tolerance_for(np.float64), where)
    raise TypeError(f"cannot compare against a {type(expected).__name__}")


def compare_arrays(got: Any, expected: np.ndarray, tolerance: Tolerance | None = None,
                   where: str = "the result") -> str | None:
    """``compare_values`` for an array reference (see the module docstring)."""
    if isinstance(got, (list, tuple, int, float)) and not isinstance(got, bool):
        try:
            got = np.asarray(got)
        except ValueError:
            return f"{where} is a ragged list, expected an array of shape {expected.shape}"
    if not isinstance(got, np.ndarray):
        return f"{where} is {_kind(got)}, expected an array of shape {expected.shape}"
    if got.shape != expected.shape:
        return f"{where} has shape {got.shape}, expected {expected.shape}"
    if expected.dtype == np.bool_:
        if got.dtype != np.bool_:
            return f"{where} has dtype {got.dtype}, expected bool"
        return _first_difference(got, expected, where)
    if expected.dtype.kind in "iu":
        if got.dtype.kind not in "iu":
            return f"{where} has dtype {got.dtype}, expected an integer dtype"
        return _first_difference(got, expected, where)
    if got.dtype.kind not in "iuf":
        return f"{where} has dtype {got.dtype}, expected floating point"
    return _compare_floats(got.astype(np.float64), expected.astype(np.float64),
                           tolerance or tolerance_for(expected.dtype), where)


def _compare_floats(got: np.ndarray, expected: np.ndarray, tolerance: Tolerance, where: str) -> str | None:
    with np.errstate(invalid="ignore", over="ignore"):
        return _compare_finite_floats(got, expected, tolerance, where)


def _compare_finite_floats(got: np.ndarray, expected: np.ndarray, tolerance: Tolerance, where: str) -> str | None:
    finite = np.isfinite(expected)
    nonfinite_mismatch = ~finite & ~((got == expected) | (np.isnan(got) & np.isnan(expected)))
    nonfinite_mismatch |= finite & ~np.isfinite(got)
    if nonfinite_mismatch.any():
        index = _index(np.argwhere(nonfinite_mismatch)[0])
        return f"{_at(where, index)} is {_show(got[index])}, expected {_show(expected[index])}"
    if not finite.any():
        return None
    scale = float(np.max(np.abs(expected[finite])))
    allowed = tolerance.atol * scale + tolerance.rtol * np.abs(expected)
    error = np.where(finite, np.abs(got - expected), 0.0)
    excess = np.where(finite, error - allowed, -np.inf)
    if (excess > 0).any():
        index = _index(np.unravel_index(int(np.argmax(excess)), expected.shape))
        return (f"{_at(where, index)} is {_show(got[index])}, expected {_show(expected[index])} "
                f"(max error {float(error.max()):.3g}, allowed {float(allowed[index]):.3g} there)")
    reference_norm = float(np.linalg.norm(expected[finite]))
    if reference_norm > 0:
        if not np.any(got[finite]):
            return f"{where} is all zeros, expected a non-zero result"
        relative = float(np.linalg.norm(got[finite] - expected[finite])) / reference_norm
        if relative > tolerance.norm_rtol:
            return (f"{where} differs from the expected by {relative:.3g} in relative norm "
                    f"(allowed {tolerance.norm_rtol:.3g})")
    return None


def _first_difference(got: np.ndarray, expected: np.ndarray, where: str) -> str | None:
    differs = got != expected
    if not differs.any():
        return None
    index = _index(np.argwhere(differs)[0])
    return (f"{where} differs at {int(differs.sum())} of {differs.size} entries; "
            f"first at {index}: {_show(got[index])}, expected {_show(expected[index])}")


def _at(where: str, index: tuple) -> str:
    return f"{where} at {index}" if index else where


def _index(position) -> tuple:
    return tuple(int(value) for value in position)


def _show(value: Any) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return f"{value:.6g}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _kind(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return f"a {type(value).__name__}"


def compare_call_results(calls, got: Any, expected: list, number_rtol: float = 1e-9,
                         prefix: bool = False) -> str | None:
    """For a class entrypoint's script: ``got`` must be the list of return values of
    ``calls`` (``Call`` objects) in order. Numbers compare as numbers (an int 30 and a
    float 30.0 are the same), within ``number_rtol`` (relative, at least 1e-12 absolute);
    everything else with ``compare_values``. The message names the call by its index
    and method, never by its arguments (the script may be hidden). With ``prefix``,
    ``got`` may hold only the first calls' values (the next call raised)."""
    if not isinstance(got, list) or len(got) > len(expected) or (len(got) != len(expected) and not prefix):
        count = len(got) if isinstance(got, list) else "no"
        return f"the script recorded {count} results, expected {len(expected)}"
    for index, (call, got_item, expected_item) in enumerate(zip(calls, got, expected)):
        problem = _call_result_problem(f"call {index + 1} of {len(calls)} (.{call.method})", got_item,
                                       expected_item, number_rtol)
        if problem:
            return problem
    return None


def describe_call_mismatch(calls, got: Any, expected: list, number_rtol: float = 1e-9,
                           prefix: bool = False) -> str:
    """``describe_mismatch`` for a class entrypoint's script: which call went wrong (its
    index and method, as ``compare_call_results`` names it), never what it returned.
    ``prefix`` as for ``compare_call_results``."""
    if not isinstance(got, list) or len(got) > len(expected) or (len(got) != len(expected) and not prefix):
        return "the script recorded the wrong number of results"
    for index, (call, got_item, expected_item) in enumerate(zip(calls, got, expected)):
        if _call_result_problem("", got_item, expected_item, number_rtol):
            return f"call {index + 1} of {len(calls)} (.{call.method}) returned the wrong value"
    return "the script's results are wrong"


def _call_result_problem(where: str, got_item: Any, expected_item: Any, number_rtol: float) -> str | None:
    if _is_number(expected_item) and _is_number(got_item):
        allowed = max(1e-12, number_rtol * abs(float(expected_item)))
        if not abs(float(got_item) - float(expected_item)) <= allowed:
            return f"{where} returned {_show(got_item)}, expected {_show(expected_item)}"
        return None
    return compare_values(got_item, expected_item, where=f"{where} returned value")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def describe_mismatch(got: Any, expected: Any, where: str = "the result") -> str:
    """What is wrong with ``got``, for a case whose data is hidden: in words that quote
    nothing derived from ``got`` or ``expected`` (no values, no positions, no sizes), since
    the candidate chooses ``got`` and could spell hidden inputs in it. A check has already
    found them different; this only says how, in general terms."""
    try:
        return _mismatch_words(got, expected, where)
    except Exception:  # noqa: BLE001 - odd candidate data: say no more than this
        return f"{where} is the wrong value"


def _mismatch_words(got: Any, expected: Any, where: str) -> str:
    if isinstance(expected, np.ndarray):
        if isinstance(got, (list, tuple, int, float)) and not isinstance(got, bool):
            try:
                got = np.asarray(got)
            except ValueError:
                return f"{where} is a ragged list, not an array"
        if not isinstance(got, np.ndarray):
            return f"{where} is not an array"
        if got.shape != expected.shape:
            return f"{where} is an array of the wrong shape"
        kind = expected.dtype.kind
        wanted = {"b": "bool", "i": "an integer dtype", "u": "an integer dtype"}.get(kind, "floating point")
        accepted_kinds = {"b": "b", "i": "iu", "u": "iu"}.get(kind, "iuf")
        if got.dtype.kind not in accepted_kinds:
            return f"{where} has the wrong dtype (expected {wanted})"
        if expected.dtype.kind == "f" and not np.array_equal(np.isfinite(got), np.isfinite(expected)):
            return f"{where} has NaN or infinity where the expected result does not"
        return f"{where} has the wrong values"
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return f"{where} is not a list"
        if len(got) != len(expected):
            return f"{where} is a list of the wrong length"
        for index, (got_item, expected_item) in enumerate(zip(got, expected)):
            if compare_values(got_item, expected_item) is not None:
                return _mismatch_words(got_item, expected_item, f"{where}[{index}]")
        return f"{where} is the wrong value"
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return f"{where} is not a dict"
        if set(got) != set(expected):
            return f"{where} is a dict with the wrong keys"
        return f"{where} has a wrong value in it"
    return f"{where} is the wrong value"
