"""The command line that starts one sandboxed interpreter.

    launcher.py (root: a subreaper; its child joins the slot's cgroups, sets the rlimit
    ceilings and the nice level, becomes the slot user with no new privileges)
    -> bwrap (new user, PID, network, IPC, UTS and cgroup namespaces; a read-only system;
       seccomp) -> the sandbox's Python running inside.py

The child was in the cgroups before it exec'd bwrap, so nothing it starts escapes them.
The host's own files (/work, /root, /home, the database, the settings) are simply never
bound in.
"""

import json
import os
import sys
from pathlib import Path

from grading.sandbox.devices import bwrap_device_arguments
from grading.sandbox.install import BWRAP, Install
from grading.sandbox.results import Limits

INSIDE_SOURCE = (Path(__file__).with_name("inside.py")).read_text()

# The user and group the code sees inside (mapped to the slot's UID and GID outside).
INSIDE_UID = 1000
# bwrap's own processes (the outer one and the PID namespace's init) run as the slot user
# and count against its process limits too; these are on top of Limits.max_processes.
SANDBOX_OWN_PROCESSES = 2

LAUNCH_ENV = {"PATH": "/usr/bin:/bin"}
LAUNCHER = str(Path(__file__).with_name("launcher.py"))

_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FROM_INSTALL = ("passwd", "group", "hosts", "nsswitch.conf")
_ETC_FROM_HOST = ("/etc/ld.so.cache", "/etc/localtime")


def rlimit_values(limits: Limits) -> dict[str, tuple[int, int]]:
    """The rlimits for a job (RLIMIT_CPU is left to inside.py: it adds what preloading used)."""
    nproc = limits.max_processes + SANDBOX_OWN_PROCESSES
    return {
        "RLIMIT_NPROC": (nproc, nproc),
        "RLIMIT_NOFILE": (limits.max_open_files, limits.max_open_files),
        "RLIMIT_FSIZE": (limits.max_file_bytes, limits.max_file_bytes),
        "RLIMIT_CORE": (0, 0),
    }


def command(install: Install, *, uid: int, gid: int, procs_files: list[str], inbox: Path,
            outbox: Path, ceilings: Limits, cpu_ceiling: int, nice: int,
            seccomp_fd: int, ready_fd: int, preload: bool, devices: tuple[str, ...] = (),
            groups: tuple[int, ...] = ()) -> list[str]:
    """argv for subprocess: the chain described in the module docstring.

    The host's own Python runs the launcher (-I -S: no site, no environment), so it needs
    nothing from the sandbox's env; seccomp_fd and ready_fd must be passed to the child.
    ``devices`` (checked by grading.sandbox.devices) are bound in; ``groups`` are the
    supplementary groups the run keeps to open them.
    """
    rlimits = rlimit_values(ceilings)
    rlimits["RLIMIT_CPU"] = (cpu_ceiling, cpu_ceiling + 1)
    spec = {"parent": os.getpid(), "cgroup_procs": procs_files, "nice": nice, "uid": uid,
            "gid": gid, "groups": list(groups), "rlimits": rlimits, "close": [seccomp_fd, ready_fd]}
    return [
        sys.executable, "-I", "-S", LAUNCHER, json.dumps(spec),
        *bwrap_arguments(install, inbox=inbox, outbox=outbox, tmp_bytes=ceilings.tmp_bytes,
                         seccomp_fd=seccomp_fd, devices=devices),
        str(install.python), "-I", "-B", "-c", INSIDE_SOURCE, str(ready_fd), "1" if preload else "0",
    ]


def bwrap_arguments(install: Install, *, inbox: Path, outbox: Path, tmp_bytes: int,
                    seccomp_fd: int, devices: tuple[str, ...] = ()) -> list[str]:
    args = [
        BWRAP,
        "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
        "--unshare-uts", "--unshare-cgroup",
        "--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID), "--hostname", "sandbox",
        "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--clearenv",
        "--setenv", "PATH", f"{install.venv}/bin:/usr/bin:/bin",
        "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp",
        "--setenv", "LANG", "C.UTF-8",
        # One thread each: the machine has few cores and max_processes counts threads.
        "--setenv", "OMP_NUM_THREADS", "1", "--setenv", "MKL_NUM_THREADS", "1",
        "--setenv", "OPENBLAS_NUM_THREADS", "1",
        # /tmp first, so that a bind below it (an install under /tmp) is not hidden.
        "--size", str(tmp_bytes), "--tmpfs", "/tmp",
        "--ro-bind", "/usr", "/usr",
    ]
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--ro-bind", str(install.venv), str(install.venv)]
    for name in _ETC_FROM_INSTALL:
        args += ["--ro-bind", str(install.etc / name), f"/etc/{name}"]
    for path in _ETC_FROM_HOST:
        args += ["--ro-bind-try", path, path]
    args += ["--proc", "/proc", "--dev", "/dev", *bwrap_device_arguments(devices)]
    args += [
        "--ro-bind", str(inbox), "/sandbox/in",
        "--bind", str(outbox), "/sandbox/out",
        "--chdir", "/sandbox/in",
        "--seccomp", str(seccomp_fd),
        "--remount-ro", "/",
        "--",
    ]
    return args
