"""Run untrusted Python in a sandbox and report what happened.

    result = run_python(files={"solution.py": b"print(1)"}, entry="solution.py")

The code runs as an unprivileged slot user inside bubblewrap (no network, its own PID
namespace, a read-only system, seccomp), under rlimits and cgroup limits, with a
wall-clock kill. See grading/sandbox/launch.py for the layers, scripts/setup-sandbox for
what the machine needs, and sandbox_available() to find out whether it has it.

Inside, `files` lie read-only under /sandbox/in (the working directory), /sandbox/out
is writable and comes back as SandboxResult.files, /tmp is private and small, and the
Python has numpy and torch (CPU).
"""

from grading.sandbox.devices import check_devices
from grading.sandbox.install import current_install, sandbox_available
from grading.sandbox.interpreter import Interpreter
from grading.sandbox.pool import take_warm
from grading.sandbox.results import Limits, SandboxError, SandboxResult, Status
from grading.sandbox.workdir import check_input_name

__all__ = ["Limits", "SandboxError", "SandboxResult", "Status", "run_python",
           "sandbox_available"]

# How long a cold interpreter may take to come up before the sandbox counts as broken.
COLD_START_SECONDS = 30.0


def run_python(*, files: dict[str, bytes], entry: str, args: tuple[str, ...] = (),
               limits: Limits = Limits(), warm: bool = True,
               devices: tuple[str, ...] = ()) -> SandboxResult:
    """Run /sandbox/in/ENTRY with the sandbox's Python and return what happened.

    files: relative path -> content, placed read-only under /sandbox/in; entry must be
    one of them. args become sys.argv[1:]. With warm=True the run goes to the warm pool
    when it has room (grading/sandbox/pool.py): a zygote that has imported numpy and torch
    forks a fresh child for it (or, with TRAINER_SANDBOX_ZYGOTE=0, a pre-started
    interpreter serves it, one run each); otherwise, or with warm=False, a fresh
    interpreter starts. Anything the code does ends
    up in the result; SandboxError means the sandbox itself failed (not installed, every
    slot busy, bwrap refused to start). ValueError: bad file names or entry.

    devices: character devices under /dev to bind in (a GPU worker's /dev/nvidia*, see
    grading.sandbox.devices); a run with devices always starts a fresh interpreter.
    """
    for name in files:
        for parent in check_input_name(name).parents:
            if str(parent) in files:
                raise ValueError(f"{parent} is a file and also a directory of {name}")
    if entry not in files:
        raise ValueError(f"entry {entry!r} is not one of the files")
    args = tuple(str(arg) for arg in args)
    devices = check_devices(devices)
    if warm and not devices:
        interpreter = take_warm(limits)
        if interpreter is not None:
            try:
                return interpreter.run(files, entry, args, limits)
            except SandboxError:
                pass  # it broke before the job began; a cold start is still honest
    ok, reason = sandbox_available()
    if not ok:
        raise SandboxError(reason)
    interpreter = Interpreter(current_install(), limits, preload=False, devices=devices)
    try:
        interpreter.wait_ready(COLD_START_SECONDS)
    except BaseException:
        interpreter.destroy()
        raise
    return interpreter.run(files, entry, args, limits)
