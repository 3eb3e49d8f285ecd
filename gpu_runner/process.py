"""Where a kernel run's process comes from: the sandbox, or (trusted code only) a plain one.

Every run is a fresh process, whichever is used, with the signature of
``grading.sandbox.run_python`` (``files``, ``entry``, ``args``, ``limits``) and its
``SandboxResult`` back:

- ``sandbox_runner(on_gpu)``: the bubblewrap sandbox. Candidate code only ever runs
  here. Under the interpreter it may use a warm interpreter (each serves one run). On a
  GPU it needs the sandbox to bind the NVIDIA device nodes: ``run_python`` must accept
  ``devices=`` (see ``gpu_sandbox_missing``); until it does, a GPU worker grades under
  the interpreter and says why.
- ``plain_runner``: a child process of this Python with a time limit. For REVIEWED code
  from the bank only (the device check runs the reference, slow and wrong examples on a
  lent GPU machine that has no sandbox installed).
"""

from __future__ import annotations

import functools
import glob
import inspect
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grading.sandbox.results import Limits, SandboxResult, Status

SANDBOX_OUT_DIR = "/sandbox/out"


def nvidia_device_nodes() -> tuple[str, ...]:
    """The device files CUDA opens: the control node, UVM, every GPU, and the caps."""
    nodes = glob.glob("/dev/nvidia*") + glob.glob("/dev/nvidia-caps/*")
    return tuple(sorted(node for node in nodes if not os.path.isdir(node)))


def gpu_sandbox_missing() -> str:
    """"" when the sandbox can give a run the GPU, else why not."""
    try:
        from grading.sandbox import run_python
    except Exception as error:  # noqa: BLE001 - a broken install says why
        return f"the sandbox does not import: {error}"
    if "devices" not in inspect.signature(run_python).parameters:
        return "the sandbox cannot bind GPU devices yet (run_python has no devices= option)"
    if not nvidia_device_nodes():
        return "no /dev/nvidia* device nodes on this machine"
    return ""


def sandbox_runner(on_gpu: bool):
    """``run_python`` set up for a kernel run (see the module docstring)."""
    from grading.sandbox import run_python

    if not on_gpu:
        return functools.partial(run_python, warm=True)
    return functools.partial(run_python, warm=False, devices=nvidia_device_nodes())


def plain_runner(*, files: dict[str, bytes], entry: str, args: tuple[str, ...] = (),
                 limits: Limits = Limits(), warm: bool = False) -> SandboxResult:
    """Run ``entry`` among ``files`` in a fresh child process (NOT sandboxed: trusted
    code only). ``/sandbox/out`` in ``args`` is replaced by the run's own output folder;
    everything written there comes back as ``files``. Only ``limits.wall_seconds`` is
    enforced."""
    del warm  # every plain run is a fresh process
    with tempfile.TemporaryDirectory(prefix="kernel-run-") as root:
        inbox, outbox = Path(root, "in"), Path(root, "out")
        outbox.mkdir()
        for name, content in files.items():
            path = inbox / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        argv = [sys.executable, "-B", entry, *(str(outbox) if arg == SANDBOX_OUT_DIR else arg for arg in args)]
        env = {**os.environ, "TRITON_CACHE_DIR": os.environ.get("TRITON_CACHE_DIR", str(Path(root, "triton")))}
        env.pop("TRITON_INTERPRET", None)  # the harness sets it from the plan
        started = time.monotonic()
        try:
            done = subprocess.run(argv, cwd=inbox, env=env, capture_output=True, timeout=limits.wall_seconds)
        except subprocess.TimeoutExpired as expired:
            return _result(Status.TIME_LIMIT, None, expired.stdout, expired.stderr, outbox, started,
                           f"wall clock passed {limits.wall_seconds:g} s")
        if done.returncode < 0:
            return _result(Status.KILLED, None, done.stdout, done.stderr, outbox, started,
                           f"ended by signal {-done.returncode}", signal=-done.returncode)
        status = Status.OK if done.returncode == 0 else Status.EXITED
        note = "" if done.returncode == 0 else f"exit code {done.returncode}"
        return _result(status, done.returncode, done.stdout, done.stderr, outbox, started, note)


def _result(status, exit_code, stdout, stderr, outbox: Path, started: float, note: str,
            signal: int | None = None) -> SandboxResult:
    files = {str(path.relative_to(outbox)): path.read_bytes() for path in outbox.rglob("*") if path.is_file()}
    return SandboxResult(status=status, exit_code=exit_code, signal=signal,
                         stdout=(stdout or b"").decode(errors="replace"),
                         stderr=(stderr or b"").decode(errors="replace"), files=files,
                         wall_seconds=time.monotonic() - started, cpu_seconds=0.0,
                         peak_memory_bytes=None, note=note)
