"""The side effects grading needs, handed to the kinds that run code.

The kinds decide verdicts; they do not reach out. What a code or kernel part needs from
the world outside the engine is gathered in one ``Effects`` object that the caller
passes in:

- ``sandbox_unavailable()``: "" when candidate code can run on this machine, else why
  not (the sandbox's install);
- ``load_judge(path, part_id)``: the part's trusted judge, read from the question bank;
- ``run_python``: the sandbox that runs a code answer (``grading.sandbox.run_python``);
- ``kernel_place()``: (on a GPU, note) for a kernel answer: whether this machine has a
  GPU the sandbox can hand a run, and if it has one it cannot use, why;
- ``kernel_runner(on_gpu)``: the process a kernel run gets there.

``grading.grade`` and the kinds take ``effects=``; without it the kinds that run code use
``grading.machine.local_effects()``, this machine's, which is what the grading shell and
validation pass. Tests hand the kinds effects of their own (a sandbox that
is missing, a GPU that is present) instead of patching modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Effects:
    sandbox_unavailable: Callable[[], str]
    load_judge: Callable[[str, str], object]
    run_python: Callable[..., object]
    kernel_place: Callable[[], tuple[bool, str]]
    kernel_runner: Callable[[bool], Callable[..., object]]

    def replace(self, **changes) -> Effects:
        """These effects with some swapped (``effects.replace(sandbox_unavailable=...)``)."""
        return Effects(**{**self.__dict__, **changes})
