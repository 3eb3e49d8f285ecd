"""The host-side launcher of one sandbox, run as root: `python -I -S launcher.py SPEC ARGV...`.

It exists for two things a plain exec chain cannot do:
- put the sandbox into the slot's cgroups, set rlimits and switch to the slot user in a
  fresh single-threaded process, before bwrap (and so anything untrusted) starts;
- reap. bwrap hands back the exit status as soon as the code it ran ends, while the PID
  namespace's init is still dying; that init is then orphaned, and a PID 1 that reaps
  slowly (or not at all, in a container without an init) collects zombies. The launcher
  is a child subreaper: orphans come to it, and it exits only when every descendant has
  been reaped, with bwrap's own exit status (or dying of the same signal).

SPEC is JSON: {"parent": pid, "cgroup_procs": [...], "nice": int, "uid": int, "gid": int,
"groups": [supplementary gids, to open the device nodes a run was given],
"rlimits": {"RLIMIT_X": [soft, hard]}, "close": [fds the launcher itself must not keep]}.
Only the host writes SPEC, so it is trusted; ARGV is bwrap's command line.
"""

import ctypes
import json
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
EXIT_LAUNCH_FAILED = 125


def _start_sandbox(spec: dict, argv: list[str], prctl) -> None:
    """In the forked child: join cgroups, set limits, drop to the slot user, exec bwrap."""
    try:
        pid = str(os.getpid())
        for path in spec["cgroup_procs"]:
            with open(path, "w") as procs:
                procs.write(pid)
        os.setpriority(os.PRIO_PROCESS, 0, spec["nice"])
        for name, (soft, hard) in spec["rlimits"].items():
            resource.setrlimit(getattr(resource, name), (soft, hard))
        os.setgroups(spec.get("groups", []))
        os.setresgid(spec["gid"], spec["gid"], spec["gid"])
        os.setresuid(spec["uid"], spec["uid"], spec["uid"])
        if prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        os.execv(argv[0], argv)
    except BaseException as error:  # noqa: BLE001  (report and give up; nothing ran yet)
        os.write(2, f"sandbox launcher: {error}\n".encode())
    os._exit(EXIT_LAUNCH_FAILED)


def main() -> None:
    spec = json.loads(sys.argv[1])
    argv = sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    # Die with the host process (the thread that started us), and take bwrap along: its
    # --die-with-parent fires when we die.
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != spec["parent"]:
        os._exit(EXIT_LAUNCH_FAILED)  # the host died before prctl took effect
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    sandbox = os.fork()
    if sandbox == 0:
        _start_sandbox(spec, argv, libc.prctl)

    # Hold none of the sandbox's pipes, so the host sees EOF when the sandbox closes them.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    for fd in spec["close"]:
        os.close(fd)

    status = None
    while True:
        try:
            pid, wait_status = os.wait()
        except ChildProcessError:
            break  # every descendant is reaped
        except InterruptedError:
            continue
        if pid == sandbox:
            status = wait_status
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
