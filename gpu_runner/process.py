"""Where a kernel run's process comes from: the sandbox, or (trusted code only) a plain one.

Every run is a fresh process, whichever is used, with the signature of
``grading.sandbox.run_python`` (``files``, ``entry``, ``args``, ``limits``) and its
``SandboxResult`` back:

- ``sandbox_runner(on_gpu)``: the bubblewrap sandbox. Candidate code only ever runs
  here. Under the interpreter it may use a warm interpreter (each serves one run). On a
  GPU each run is a fresh interpreter given the NVIDIA device nodes (``devices=``, see
  ``grading.sandbox.devices``); ``gpu_sandbox_missing`` says why a GPU worker cannot
  do that, and then it grades under the interpreter and says why.
- ``plain_runner``: a child process of this Python with a time limit. For REVIEWED code
  from the bank only (the device check runs the reference, slow and wrong examples on a
  lent GPU machine that has no sandbox installed).
"""

from __future__ import annotations

import functools
import glob
import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpu_runner import devices
from grading import sandbox
from grading.sandbox import install as sandbox_install
from grading.sandbox.devices import check_devices
from grading.sandbox.results import Limits, SandboxResult, Status

SANDBOX_OUT_DIR = "/sandbox/out"


def nvidia_device_nodes() -> tuple[str, ...]:
    """The device files CUDA opens: the control node, UVM, every GPU, and the caps."""
    nodes = glob.glob("/dev/nvidia*") + glob.glob("/dev/nvidia-caps/*")
    return tuple(sorted(node for node in nodes if stat.S_ISCHR(os.lstat(node).st_mode)))


def gpu_sandbox_missing() -> str:
    """"" when the sandbox can give a run the GPU, else why not."""
    ok, why = sandbox.sandbox_available()
    if not ok:
        return f"the sandbox is not ready: {why}"
    nodes = nvidia_device_nodes()
    if not nodes:
        return "no /dev/nvidia* device nodes on this machine"
    toolchain = triton_toolchain_missing()
    if toolchain:
        return toolchain
    try:
        check_devices(nodes)
    except ValueError as error:
        return f"the GPU's device nodes cannot be given to the sandbox: {error}"
    return ""


def triton_toolchain_missing() -> str:
    """"" when the sandbox can build Triton's launchers: on a GPU, Triton compiles a
    small C module per kernel signature with ``gcc`` against the headers of the
    sandbox's Python (Debian's, so ``/usr/include/python3.N``); else what is missing
    (scripts/setup-sandbox installs both on a machine with a GPU)."""
    if not os.access("/usr/bin/gcc", os.X_OK):
        return "the sandbox has no C compiler for Triton's launchers (/usr/bin/gcc)"
    version = _venv_version(sandbox_install.current_install().venv / "pyvenv.cfg")
    if version is None:
        return "cannot tell the sandbox Python's version (pyvenv.cfg)"
    header = f"/usr/include/python{version}/Python.h"
    if not os.path.isfile(header):
        return f"the sandbox has no Python headers for Triton's launchers ({header})"
    return ""


def _venv_version(config: Path) -> str | None:
    try:
        lines = config.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "version" and value.strip().count(".") >= 1:
            return ".".join(value.strip().split(".")[:2])
    return None


def kernel_place() -> tuple[bool, str]:
    """(on_gpu, note): a kernel run uses a GPU when this machine has one and the sandbox
    can give it to a run; a GPU the sandbox cannot reach is named in the note."""
    name = devices.local_gpu_name()
    if name is None:
        return False, ""
    missing = gpu_sandbox_missing()
    if missing:
        return False, f"this grader has a {name}, but {missing}"
    return True, ""


def sandbox_runner(on_gpu: bool):
    """``run_python`` set up for a kernel run (see the module docstring)."""
    if not on_gpu:
        return functools.partial(sandbox.run_python, warm=True)
    return functools.partial(sandbox.run_python, warm=False, devices=nvidia_device_nodes())


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
