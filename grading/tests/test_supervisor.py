"""The supervisor restarts what exits and the worker whose heartbeat is late (real processes)."""

import sys
import time

from grading.supervisor import Child, Supervisor

SLEEP_FOREVER = [sys.executable, "-c", "import time; time.sleep(600)"]
EXIT_AT_ONCE = [sys.executable, "-c", "pass"]


def _wait_exited(child, timeout=10.0):
    deadline = time.monotonic() + timeout
    while child.running() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_child_that_exits_is_started_again():
    worker, beat = Child("worker", SLEEP_FOREVER), Child("beat", EXIT_AT_ONCE)
    supervisor = Supervisor(worker=worker, others=[beat], startup_grace=60)
    try:
        for child in supervisor.children():
            child.start()
        _wait_exited(beat)
        first_worker = worker.process.pid
        supervisor.check_once()
        assert beat.restarts == 1
        assert worker.restarts == 0 and worker.process.pid == first_worker
    finally:
        for child in supervisor.children():
            child.stop()


def test_a_worker_whose_heartbeat_is_late_is_restarted_after_its_grace():
    worker = Child("worker", SLEEP_FOREVER)
    problems = ["worker 'w' last ran its heartbeat 50 s ago"]
    supervisor = Supervisor(worker=worker, worker_problem=lambda: problems[0], startup_grace=0.5)
    try:
        worker.start()
        supervisor.check_once()
        assert worker.restarts == 0  # still within its startup grace
        time.sleep(0.6)
        old = worker.process
        supervisor.check_once()
        assert worker.restarts == 1 and old.poll() is not None and worker.running()
        problems[0] = None
        time.sleep(0.6)
        supervisor.check_once()
        assert worker.restarts == 1
    finally:
        worker.stop()


def test_stop_kills_the_whole_process_group():
    # A child that ignores SIGTERM and has a grandchild: both go.
    code = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); time.sleep(600)")
    child = Child("stubborn", [sys.executable, "-c", code])
    child.start()
    time.sleep(0.5)
    started = time.monotonic()
    child.stop(grace=0.5)
    assert not child.running() and time.monotonic() - started < 10
