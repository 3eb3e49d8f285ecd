"""What a kernel question's trusted judge module provides (``KernelJudge``).

A kernel judge is a ``grading.judge.Judge`` (same file convention: ``questions/bank/
<topic>/<seed>-<slug>.judge.py`` defines ``JUDGES = {part_id: judge}``), with two sizes
of hidden cases and the shapes it is timed on:

- ``interpreter_cases(rng)``: small shapes that Triton's interpreter runs on a CPU in
  a few seconds, with every edge case the question promises (non-powers of two, sizes
  below one block, fully masked tiles, ...);
- ``gpu_cases(rng)``: on a GPU, the same edge cases plus the full-size shapes;
- ``timed_shapes()``: the shapes timed on a GPU, each with the minimum bytes that must
  cross HBM and the FLOPs (``Work``) that the fraction of peak is computed from, and
  the recipe the harness draws the timing inputs from (on the device, fresh sets).

The candidate's entrypoint is called with ``torch`` tensors (array inputs, on the
device: CPU under the interpreter, CUDA on a GPU) and plain JSON values, and returns a
tensor (or a list of them). ``reference(case)`` is computed here, in float64 NumPy,
and ``check`` compares with ``tolerance`` (NaN and infinities must match exactly; see
``grading.judge.compare``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpu_runner.timing import Work
from grading.judge.cases import Case
from grading.judge.compare import Tolerance, compare_arrays, compare_values
from grading.judge.contract import Judge

TORCH_DTYPES = ("float16", "bfloat16", "float32", "uint8", "int8", "int32", "int64")


@dataclass(frozen=True)
class TensorRecipe:
    """How the harness draws one timing input on the device: ``normal`` (mean 0,
    standard deviation ``scale``) or ``integers`` in [low, high)."""

    shape: tuple[int, ...]
    dtype: str
    fill: str = "normal"
    scale: float = 1.0
    low: int = 0
    high: int = 1

    def __post_init__(self):
        if self.dtype not in TORCH_DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {TORCH_DTYPES}")
        if self.fill not in ("normal", "integers"):
            raise ValueError(f"fill {self.fill!r} is not normal or integers")

    @property
    def nbytes(self) -> int:
        size = int(np.prod(self.shape, dtype=np.int64))
        return size * {"float16": 2, "bfloat16": 2, "float32": 4, "uint8": 1, "int8": 1,
                       "int32": 4, "int64": 8}[self.dtype]

    def to_json(self) -> dict:
        return {"tensor": {"shape": list(self.shape), "dtype": self.dtype, "fill": self.fill,
                           "scale": self.scale, "low": self.low, "high": self.high}}


@dataclass(frozen=True)
class TimedShape:
    """One shape the kernel is timed on. ``args``/``kwargs`` hold ``TensorRecipe``s and
    plain JSON values; ``work`` is the minimum traffic and arithmetic of one call (the
    byte count the question states: every input read once, every output written once).
    ``input_sets`` independent sets rotate between timed calls (1 when the problem
    needs its inputs fixed)."""

    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    work: Work = Work(0, 0)
    input_sets: int = 3

    def to_json(self) -> dict:
        def encode(value):
            return value.to_json() if isinstance(value, TensorRecipe) else {"json": value}

        return {"name": self.name, "args": [encode(value) for value in self.args],
                "kwargs": {key: encode(value) for key, value in self.kwargs.items()},
                "input_sets": self.input_sets}

    @property
    def input_bytes(self) -> int:
        values = list(self.args) + list(self.kwargs.values())
        return sum(value.nbytes for value in values if isinstance(value, TensorRecipe))


class KernelJudge(Judge):
    """The trusted half of one kernel part (see the module docstring). Subclasses set
    ``tolerance`` and implement the three case methods and ``reference``."""

    tolerance: Tolerance = Tolerance(rtol=1e-2, atol=1e-3, norm_rtol=1e-2)

    def interpreter_cases(self, rng: np.random.Generator) -> list[Case]:
        raise NotImplementedError

    def gpu_cases(self, rng: np.random.Generator) -> list[Case]:
        """Default: the interpreter's edge cases; judges add their full-size shapes."""
        return self.interpreter_cases(rng)

    def timed_shapes(self) -> list[TimedShape]:
        raise NotImplementedError

    def hidden_cases(self, rng: np.random.Generator) -> list[Case]:
        return self.interpreter_cases(rng)

    def cases(self, rng: np.random.Generator, on_gpu: bool) -> list[Case]:
        return self.gpu_cases(rng) if on_gpu else self.interpreter_cases(rng)

    def check(self, case: Case, got: Any, expected: Any) -> str | None:
        return compare_values(got, expected, self.tolerance)


def check_sum_of_products(got: Any, expected: np.ndarray, magnitude: np.ndarray, rtol: float,
                          where: str = "the result") -> str | None:
    """For outputs that are sums of products (a GEMV's rows): each element must be within
    ``rtol`` times ``magnitude``, the sum of the absolute values of its terms. Rounding
    errors scale with that sum, not with the result, so a row whose terms cancel does not
    fail an honest answer; a wrong layout or offset is off by about the result itself.
    Shape, dtype and NaN/infinity are checked as ``compare_arrays`` does."""
    if not isinstance(got, np.ndarray) or got.shape != expected.shape or got.dtype.kind not in "iuf":
        return compare_arrays(got, expected)
    with np.errstate(invalid="ignore", over="ignore"):
        got = got.astype(np.float64)
        if not np.isfinite(got).all():
            index = tuple(int(i) for i in np.argwhere(~np.isfinite(got))[0])
            return f"{where} at {index} is {got[index]}, expected {float(expected[index]):.6g}"
        excess = np.abs(got - expected.astype(np.float64)) - rtol * magnitude
    if (excess > 0).any():
        index = tuple(int(i) for i in np.unravel_index(int(np.argmax(excess)), excess.shape))
        return (f"{where} at {index} is {got[index]:.6g}, expected {float(expected[index]):.6g} "
                f"(allowed error {rtol * float(magnitude[index]):.3g}: {rtol:g} of the sum of |terms|)")
    return None
