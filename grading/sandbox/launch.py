"""The command line that starts one sandboxed interpreter.

    launcher.py (root: a subreaper; its child joins the slot's cgroups, sets the rlimit
    ceilings and the nice level, becomes the slot user with no new privileges)
    -> bwrap (new user, PID, network, IPC, UTS and cgroup namespaces; a read-only system;
       seccomp) -> the sandbox's Python running inside.py

The child was in the cgroups before it exec'd bwrap, so nothing it starts escapes them.
A zygote (zygote_command, grading/sandbox/zygote.py) goes through the same chain.
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
    spec = _launcher_spec(uid=uid, gid=gid, groups=groups, procs_files=procs_files, nice=nice,
                          ceilings=ceilings, cpu_ceiling=cpu_ceiling, close=[seccomp_fd, ready_fd])
    bwrap = [
        *_system_arguments(install, tmp=["--size", str(ceilings.tmp_bytes), "--tmpfs", "/tmp"]),
        "--proc", "/proc", "--dev", "/dev", *bwrap_device_arguments(devices),
        "--ro-bind", str(inbox), "/sandbox/in",
        "--bind", str(outbox), "/sandbox/out",
        "--chdir", "/sandbox/in",
        "--seccomp", str(seccomp_fd),
        "--remount-ro", "/",
        "--",
    ]
    return [
        sys.executable, "-I", "-S", LAUNCHER, spec, *bwrap,
        str(install.python), "-I", "-B", "-c", INSIDE_SOURCE, str(ready_fd), "1" if preload else "0",
    ]


def zygote_command(install: Install, *, uid: int, gid: int, procs_files: list[str],
                   sandbox_dir: Path, tmp_dir: Path, shm_dir: Path, ceilings: Limits,
                   cpu_ceiling: int, nice: int, seccomp_fd: int, control_fd: int) -> list[str]:
    """argv for a zygote (grading/sandbox/zygote.py): the same chain and the same system,
    but the sandbox's program is PID 1 of its namespace (--as-pid-1: no job can signal it),
    and /sandbox, /tmp and /dev/shm are directories the host empties after every job.
    """
    spec = _launcher_spec(uid=uid, gid=gid, groups=(), procs_files=procs_files, nice=nice,
                          ceilings=ceilings, cpu_ceiling=cpu_ceiling, close=[seccomp_fd, control_fd])
    bwrap = [
        *_system_arguments(install, tmp=["--bind", str(tmp_dir), "/tmp"]),
        "--as-pid-1",
        "--proc", "/proc", "--dev", "/dev",
        "--bind", str(shm_dir), "/dev/shm",
        # bwrap's /dev is a tmpfs the sandbox may write to, and the host cannot empty it;
        # device nodes (and /dev/shm, its own mount) still open for writing.
        "--remount-ro", "/dev",
        "--bind", str(sandbox_dir), "/sandbox",
        "--chdir", "/",
        "--seccomp", str(seccomp_fd),
        "--remount-ro", "/",
        "--",
    ]
    return [
        sys.executable, "-I", "-S", LAUNCHER, spec, *bwrap,
        str(install.python), "-I", "-B", "-c", INSIDE_SOURCE, "zygote", str(control_fd),
    ]


def _launcher_spec(*, uid: int, gid: int, groups, procs_files: list[str], nice: int, ceilings: Limits,
                   cpu_ceiling: int, close: list[int]) -> str:
    """What launcher.py is told (JSON): the cgroups to join, the user to become, the
    rlimit ceilings and the descriptors its child keeps for bwrap."""
    rlimits = rlimit_values(ceilings)
    rlimits["RLIMIT_CPU"] = (cpu_ceiling, cpu_ceiling + 1)
    return json.dumps({"parent": os.getpid(), "cgroup_procs": procs_files, "nice": nice, "uid": uid,
                       "gid": gid, "groups": list(groups), "rlimits": rlimits, "close": close})


def _system_arguments(install: Install, *, tmp: list[str]) -> list[str]:
    """bwrap's namespaces, environment and read-only system; ``tmp`` makes /tmp."""
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
        *tmp,
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
    return args
