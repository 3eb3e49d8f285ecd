"""The warm pool: sandboxed interpreters that have imported numpy and torch and wait for a job.

Importing torch costs a second or more here, so each process keeps `size` of them
(TRAINER_SANDBOX_WARM, default 2) started ahead of time, of one of two kinds:
- zygotes (TRAINER_SANDBOX_ZYGOTE=1, the default; grading/sandbox/zygote.py): each forks
  a fresh child per job and comes back to the pool after it, once it has checked that
  nothing of the job is left; one that fails the check is destroyed and replaced.
- one-job interpreters (TRAINER_SANDBOX_ZYGOTE=0): each serves exactly one job and is
  then destroyed; a background thread starts its replacement. The interpreter, its slot
  lease, its directories and its namespaces are all new for every job, but back-to-back
  jobs wait for a torch import each.

The pool is made lazily, once per process, on the first warm request, so it works in a
Celery prefork child (a pool inherited through fork() belongs to the parent and is
ignored), and it is shut down at exit (a Celery child ends with os._exit, so connect
shutdown() to celery's worker_process_shutdown signal there). Should the process die
without running its exit hooks, the launchers' parent-death signal and bwrap's
--die-with-parent take the interpreters down with it, the kernel drops the slot locks,
and the next pool made on the machine clears what was left on disk.
"""

import atexit
import logging
import os
import threading
import time

import grading.sandbox.slots as slots  # the module, not the package, whose __init__ imports this one
from grading.sandbox.install import current_install, sandbox_available
from grading.sandbox.interpreter import Interpreter
from grading.sandbox.results import Limits, SandboxError
from grading.sandbox.workdir import remove_stale
from grading.sandbox.zygote import Zygote

log = logging.getLogger(__name__)

# What a pooled interpreter can take: rlimits can be lowered for a job but never raised,
# so they start generous; memory and out/'s size are set when the job arrives; /tmp's
# size is fixed at start and must match the job's.
POOL_CEILINGS = Limits(cpu_seconds=60, wall_seconds=60, memory_bytes=1 << 30,
                       max_processes=64, max_open_files=1024, max_file_bytes=1 << 30)
READY_SECONDS = 60.0
CLOSE_SECONDS = 10.0
POOL_NICE = 10  # replenishing should not slow the job that is running


class WarmPool:
    """Keeps up to `size` ready interpreters (or zygotes); thread-safe."""

    def __init__(self, size: int, ceilings: Limits = POOL_CEILINGS, *, zygotes: bool = False):
        self.size = size
        self.ceilings = ceilings
        self.zygotes = zygotes
        self._install = current_install()
        self._ready: list[Interpreter | Zygote] = []
        self._starting = 0
        self._lent = 0  # zygotes serving a job: they come back, so they count as held
        self._in_flight: Interpreter | Zygote | None = None  # the one the filler is starting
        self._closed = False
        self._changed = threading.Condition()
        # The filler thread lives as long as the pool: the launcher's parent-death signal
        # fires when the *thread* that started it ends, so it must not be a short-lived one.
        self._filler = threading.Thread(target=self._fill_forever, name="sandbox-warm-pool",
                                        daemon=True)
        self._filler.start()

    def take(self, limits: Limits, wait_seconds: float) -> Interpreter | Zygote | None:
        """A ready interpreter able to honour `limits`, or None.

        If none is ready but one is starting, wait for it up to wait_seconds: it is ahead
        of a cold start that would import the same libraries.
        """
        if not self._accepts(limits):
            return None
        deadline = time.monotonic() + wait_seconds
        stale: list[Interpreter] = []
        chosen = None
        with self._changed:
            while chosen is None and not self._closed:
                while self._ready and chosen is None:
                    candidate = self._ready.pop(0)
                    if candidate.alive():
                        chosen = candidate
                    else:
                        stale.append(candidate)
                remaining = deadline - time.monotonic()
                if chosen is not None or self._starting == 0 or remaining <= 0:
                    break
                if self._in_flight is not None:
                    self._in_flight.restore_priority()  # a caller waits for it now
                self._changed.wait(remaining)
            if chosen is not None and self.zygotes:
                self._lent += 1
            self._changed.notify_all()  # the filler has room again
        for interpreter in stale:
            interpreter.destroy()
        return chosen

    def wait_ready(self, count: int, timeout: float) -> bool:
        """Wait until `count` interpreters are ready (for benchmarks and tests)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self._ready) < count and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return len(self._ready) >= count

    def _returned(self, zygote: Zygote) -> None:
        """A lent zygote's job is over: keep it if it passed its checks, else forget it."""
        with self._changed:
            self._lent -= 1
            keep = zygote.alive() and not self._closed
            if keep:
                self._ready.append(zygote)
            self._changed.notify_all()
        if not keep:
            zygote.destroy()

    def _accepts(self, limits: Limits) -> bool:
        c = self.ceilings
        # A zygote sizes /tmp for each job, but its slot's memory is set once for all.
        sized = (limits.memory_bytes <= c.memory_bytes if self.zygotes
                 else limits.tmp_bytes == c.tmp_bytes)
        return (sized and limits.max_processes <= c.max_processes
                and limits.max_open_files <= c.max_open_files
                and limits.max_file_bytes <= c.max_file_bytes
                and limits.cpu_seconds <= c.cpu_seconds)

    def _fill_forever(self) -> None:
        failures = 0
        while True:
            with self._changed:
                while (not self._closed
                       and len(self._ready) + self._starting + self._lent >= self.size):
                    self._changed.wait()
                if self._closed:
                    return
                self._starting += 1
            interpreter = self._start_one()
            with self._changed:
                self._starting -= 1
                if interpreter is not None and not self._closed:
                    self._ready.append(interpreter)
                    interpreter = None
                    failures = 0
                else:
                    failures += 1
                self._changed.notify_all()
            if interpreter is not None:  # the pool closed while it was starting
                interpreter.destroy()
            if self._closed:
                return
            if failures:
                time.sleep(min(30.0, 0.5 * 2 ** failures))

    def _start_one(self) -> Interpreter | Zygote | None:
        """Start an interpreter and wait until it is ready; None if that failed.

        While it starts it is _in_flight, so that close() can kill it; it leaves that
        state under the lock before anything else touches it, so close() never kills a
        slot this pool has already given back.
        """
        try:
            if self.zygotes:
                interpreter = Zygote(self._install, self.ceilings, nice=POOL_NICE,
                                     on_done=self._returned)
            else:
                interpreter = Interpreter(self._install, self.ceilings, preload=True,
                                          nice=POOL_NICE)
        except SandboxError as exc:
            log.warning("warm sandbox failed to start (%s); retrying", exc)
            return None
        with self._changed:
            self._in_flight = interpreter
            discard = self._closed
        try:
            if not discard:
                interpreter.wait_ready(READY_SECONDS)
        except SandboxError as exc:
            if not self._closed:
                log.warning("warm sandbox failed to start (%s); retrying", exc)
            discard = True
        with self._changed:
            self._in_flight = None
        if discard:
            interpreter.destroy()
            return None
        return interpreter

    def close(self) -> None:
        """Destroy the ready interpreters and stop replenishing."""
        with self._changed:
            self._closed = True
            ready, self._ready = self._ready, []
            if self._in_flight is not None:
                # Ends the filler's wait_ready; the filler then destroys it.
                self._in_flight.slot.kill_all()
            self._changed.notify_all()
        for interpreter in ready:
            interpreter.destroy()
        self._filler.join(timeout=CLOSE_SECONDS)


_pool: WarmPool | None = None
_pool_pid: int | None = None
_pool_lock = threading.Lock()


def _pool_size() -> int:
    return max(0, int(os.environ.get("TRAINER_SANDBOX_WARM", "2")))


def _use_zygotes() -> bool:
    return os.environ.get("TRAINER_SANDBOX_ZYGOTE", "1") != "0"


def get_pool() -> WarmPool | None:
    """This process's pool, created on first use; None if disabled or unavailable."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is not None and _pool_pid == os.getpid():
            return _pool
        if _pool_size() == 0 or not sandbox_available()[0]:
            return None
        install = current_install()
        # Processes that died without their exit hooks (Celery and multiprocessing children
        # end with os._exit) leave run directories behind; clear those of idle slots.
        slots.sweep_unused(install, lambda slot: remove_stale(install.runs, slot.user))
        _pool, _pool_pid = WarmPool(_pool_size(), zygotes=_use_zygotes()), os.getpid()
        return _pool


def take_warm(limits: Limits, wait_seconds: float = 5.0) -> Interpreter | Zygote | None:
    pool = get_pool()
    return pool.take(limits, wait_seconds) if pool is not None else None


def shutdown() -> None:
    """Close this process's pool (registered with atexit)."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None and _pool_pid == os.getpid():
        pool.close()


def _forget_after_fork() -> None:
    # The child must not touch the parent's interpreters, nor its lock (it may have been
    # held by another thread at the fork).
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


atexit.register(shutdown)
os.register_at_fork(after_in_child=_forget_after_fork)
