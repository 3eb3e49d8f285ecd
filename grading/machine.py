"""This machine's effects (``grading.effects.Effects``): its sandbox, the bank's judges,
its GPU if it has one. The grading shell and validation pass these to the kinds; the
kinds that run code fall back on them when a caller passes none."""

from __future__ import annotations

import functools

from gpu_runner import process
from grading import sandbox
from grading.effects import Effects
from grading.judge.contract import load_judge


def sandbox_unavailable_reason() -> str:
    """"" when the sandbox can run code here, else why not."""
    ok, reason = sandbox.sandbox_available()
    return "" if ok else (reason or "the sandbox is not installed")


@functools.cache
def local_effects() -> Effects:
    """This machine's effects: its sandbox, the bank's judges, its GPU (if any)."""
    return Effects(sandbox_unavailable=sandbox_unavailable_reason, load_judge=load_judge,
                   run_python=sandbox.run_python, kernel_place=process.kernel_place,
                   kernel_runner=process.sandbox_runner)
