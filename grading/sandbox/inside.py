"""The first code every sandboxed interpreter runs (passed as `python -I -B -c SOURCE`).

Two modes, both with a host (grading/sandbox/interpreter.py, grading/sandbox/zygote.py):

One job per interpreter: argv READY_FD PRELOAD (PRELOAD "1": import numpy and torch first)
  1. optionally preload, then write one byte b"R" to READY_FD and close it;
  2. read the job, a JSON object, from stdin until EOF: {"entry", "args", "rlimits",
     "cpu_seconds"};
  3. close every other descriptor, lower the rlimits to the job's, and run /sandbox/in/ENTRY
     as __main__ with cwd /sandbox/in.

A zygote: argv "zygote" CONTROL_FD (an AF_UNIX SOCK_SEQPACKET socket whose host end has
SO_PASSCRED, so the kernel stamps every message with the sender's PID as the host sees it).
It runs as PID 1 of the sandbox's PID namespace (bwrap --as-pid-1): a signal sent from
inside that namespace reaches PID 1 only if it has a handler, so it installs none, and no
job can kill, stop or interrupt it. It imports numpy and torch, makes itself non-dumpable
(so a job of the same UID can neither read its memory through /proc nor ptrace it) and
says b"R". Then, for each message:
  b"J" with three descriptors (the job's stdin, stdout, stderr): fork a child, which
     sends b"F" (its stamped PID: the host moves it into the job's cgroups), takes the
     three as 0, 1, 2, closes everything else, reads the job from stdin (the host writes
     it only once the child is in its cgroups) and runs it as in step 3 above. The zygote
     reaps until that child ends and answers b"X STATUS" (the wait status).
  b"P": reap every child (the host has killed what a job left), then answer b"P".
The zygote never reads a job (it only passes descriptors on), so no job's data is in the
memory the next child inherits.

It runs before any untrusted code, but nothing the host relies on comes back from it
except the zygote's answers, which only the zygote can send (the kernel's PID stamp).
Kept free of imports from the project: it runs with the sandbox's Python only.
"""

import json
import os
import resource
import sys


def close_other_descriptors() -> None:
    for fd_name in os.listdir("/proc/self/fd"):
        if int(fd_name) > 2:
            try:
                os.close(int(fd_name))
            except OSError:
                pass  # the directory listing's own descriptor


def run_job(job: dict) -> None:
    """Step 3: lower the limits and run the entry as __main__. Never returns."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_soft = int(usage.ru_utime + usage.ru_stime + job["cpu_seconds"]) + 1
    job["rlimits"]["RLIMIT_CPU"] = [cpu_soft, cpu_soft + 1]
    for name, (soft, hard) in job["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))

    os.chdir("/sandbox/in")
    entry = os.path.join("/sandbox/in", job["entry"])
    sys.argv = [entry, *job["args"]]
    sys.path[0:0] = ["/sandbox/in"]

    import atexit
    import runpy
    import threading
    import traceback

    def finish(code: int) -> None:
        """Exit as Python would (non-daemon threads joined, atexit run, streams flushed) but
        skip the interpreter's teardown: unloading torch costs half a second of CPU."""
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join()
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001  (a closed or broken stream: nothing to save)
                code = code or 120
        os._exit(code)

    try:
        runpy.run_path(entry, run_name="__main__")
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            finish(stop.code or 0)
        print(stop.code, file=sys.stderr)
        finish(1)
    except BaseException as error:  # noqa: BLE001  (report like Python would, minus our frames)
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename in ("<string>", "<frozen runpy>", runpy.__file__):
            tb = tb.tb_next
        traceback.print_exception(type(error), error, tb)
        finish(1)
    finish(0)


def one_job_main() -> None:
    ready_fd = int(sys.argv[1])
    if sys.argv[2] == "1":
        import numpy  # noqa: F401  (the point is the import's cost, paid before the job)
        import torch  # noqa: F401
    os.write(ready_fd, b"R")
    os.close(ready_fd)
    job = json.loads(sys.stdin.buffer.read())
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    close_other_descriptors()
    run_job(job)


PR_SET_DUMPABLE = 4


def zygote_main() -> None:
    import ctypes
    import signal
    import socket

    # Python's own SIGINT handler would make PID 1 reachable by a job's kill(1, SIGINT).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    import numpy
    import torch  # noqa: F401  (preloaded for every child)

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")
    control = socket.socket(fileno=int(sys.argv[2]))
    os.chdir("/")
    control.send(b"R")
    while True:
        message, fds, _, _ = socket.recv_fds(control, 16, 3)
        if message == b"J" and len(fds) == 3:
            # A thread of the zygote would not exist in the child, but whatever lock it
            # held would: refuse rather than fork a child that may deadlock.
            if len(os.listdir("/proc/self/task")) != 1:
                control.send(b"E threads")
                continue
            child = os.fork()
            if child == 0:
                _zygote_child(control, fds, libc, numpy)
            for fd in fds:
                os.close(fd)
            while True:
                pid, status = os.waitpid(-1, 0)
                if pid == child:
                    break
            control.send(b"X %d" % status)
        elif message == b"P":
            try:
                while True:
                    os.waitpid(-1, 0)
            except ChildProcessError:
                pass  # no child left at all
            control.send(b"P")
        elif not message:
            os._exit(0)  # the host closed the control socket
        else:
            for fd in fds:
                os.close(fd)
            control.send(b"E message")


def _zygote_child(control, fds, libc, numpy) -> None:
    try:
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        control.send(b"F")
        close_other_descriptors()
        # Its memory is its own copy: dumpable again, like a fresh interpreter.
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
        job = json.loads(sys.stdin.buffer.read())
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        # random reseeds itself after fork; numpy's global generator does not, and every
        # child would otherwise draw the zygote's numbers.
        numpy.random.seed()
        run_job(job)
    except BaseException:  # noqa: BLE001  (never fall back into the zygote's loop)
        os._exit(125)


if sys.argv[1] == "zygote":
    zygote_main()
else:
    one_job_main()
