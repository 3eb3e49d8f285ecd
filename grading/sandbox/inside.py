"""The first code every sandboxed interpreter runs (passed as `python -I -B -c SOURCE`).

Contract with the host (grading/sandbox/interpreter.py):
  argv: READY_FD PRELOAD       (PRELOAD "1": import numpy and torch first)
  1. optionally preload, then write one byte b"R" to READY_FD and close it;
  2. read the job, a JSON object, from stdin until EOF: {"entry", "args", "rlimits",
     "cpu_seconds"};
  3. close every other descriptor, lower the rlimits to the job's, and run /sandbox/in/ENTRY
     as __main__ with cwd /sandbox/in.
It runs before any untrusted code, but nothing the host relies on comes back from it:
the verdict comes from the exit status and the cgroups.
Kept free of imports from the project: it runs with the sandbox's Python only.
"""

import json
import os
import resource
import sys

READY_FD = int(sys.argv[1])
if sys.argv[2] == "1":
    import numpy  # noqa: F401  (the point is the import's cost, paid before the job)
    import torch  # noqa: F401

os.write(READY_FD, b"R")
os.close(READY_FD)
job = json.loads(sys.stdin.buffer.read())

null = os.open("/dev/null", os.O_RDONLY)
os.dup2(null, 0)
os.close(null)
for fd_name in os.listdir("/proc/self/fd"):
    if int(fd_name) > 2:
        try:
            os.close(int(fd_name))
        except OSError:
            pass  # the directory listing's own descriptor

usage = resource.getrusage(resource.RUSAGE_SELF)
cpu_soft = int(usage.ru_utime + usage.ru_stime + job["cpu_seconds"]) + 1
job["rlimits"]["RLIMIT_CPU"] = [cpu_soft, cpu_soft + 1]
for name, (soft, hard) in job["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (soft, hard))

os.chdir("/sandbox/in")
entry = os.path.join("/sandbox/in", job["entry"])
sys.argv = [entry, *job["args"]]
sys.path[0:0] = ["/sandbox/in"]

import atexit  # noqa: E402
import runpy  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402


def _finish(code: int) -> None:
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
        _finish(stop.code or 0)
    print(stop.code, file=sys.stderr)
    _finish(1)
except BaseException as error:  # noqa: BLE001  (report like Python would, minus our frames)
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in ("<string>", "<frozen runpy>", runpy.__file__):
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb)
    _finish(1)
_finish(0)
