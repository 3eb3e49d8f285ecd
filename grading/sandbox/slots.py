"""Slots: one unprivileged user and one cgroup per concurrent sandbox, leased with a lock.

RLIMIT_NPROC counts every process of a real UID, and "kill everything of this UID" is
only safe when nothing else runs as it, so two sandboxes never share a slot: a slot is
held through an exclusive flock on its lock file for as long as its sandbox lives, across
threads and processes alike (the kernel drops the lock if the holder dies).
"""

import fcntl
import os
import pwd
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grading.sandbox.install import (
    CGROUP_CONTROLLERS,
    CGROUP_PARENT,
    CGROUP_ROOT,
    SLOT_USER_PREFIX,
    Install,
)
from grading.sandbox.results import SandboxError

# How long acquire() waits for a free slot before giving up.
SLOT_WAIT_SECONDS = 60.0


@dataclass
class Slot:
    """A leased slot. Release it exactly once (release() is idempotent)."""

    index: int
    uid: int
    gid: int
    lock_fd: int | None
    # A child cgroup of the slot's ("job"): a zygote's job gets its own limits and
    # counters there, while the zygote stays in the slot's cgroup.
    sub: str = ""

    @property
    def user(self) -> str:
        return f"{SLOT_USER_PREFIX}{self.index}"

    def cgroup(self, controller: str) -> Path:
        path = CGROUP_ROOT / controller / CGROUP_PARENT / self.user
        return path / self.sub if self.sub else path

    def child(self, name: str) -> "Slot":
        """The same slot seen through its child cgroup `name` (holds no lease of its own)."""
        return Slot(index=self.index, uid=self.uid, gid=self.gid, lock_fd=None, sub=name)

    def remove_cgroups(self) -> None:
        """Remove a child's cgroups (they must be empty); the slot's own are kept."""
        if self.sub:
            for controller in CGROUP_CONTROLLERS:
                try:
                    self.cgroup(controller).rmdir()
                except FileNotFoundError:
                    pass

    # --- cgroup files -----------------------------------------------------------
    def _write(self, controller: str, name: str, value: str) -> None:
        (self.cgroup(controller) / name).write_text(value)

    def _read(self, controller: str, name: str) -> str:
        return (self.cgroup(controller) / name).read_text()

    def procs_files(self) -> list[str]:
        """The cgroup.procs files a launcher writes its PID into, one per controller."""
        return [str(self.cgroup(c) / "cgroup.procs") for c in CGROUP_CONTROLLERS]

    def pids(self) -> set[int]:
        """Processes in the cgroups, and in their children (a zygote's job, see child())."""
        found: set[int] = set()
        for controller in CGROUP_CONTROLLERS:
            for procs in (self.cgroup(controller) / "cgroup.procs",
                          *self.cgroup(controller).glob("*/cgroup.procs")):
                try:
                    found.update(int(p) for p in procs.read_text().split())
                except FileNotFoundError:
                    pass
        return found

    def prepare_cgroups(self, memory_bytes: int, max_tasks: int) -> None:
        """Create the slot's cgroups if need be, set limits and zero the counters."""
        for controller in CGROUP_CONTROLLERS:
            self.cgroup(controller).mkdir(parents=True, exist_ok=True)
        self.set_memory_limit(memory_bytes)
        self._write("memory", "memory.max_usage_in_bytes", "0")
        self._write("memory", "memory.failcnt", "0")
        self.prepare_pids(max_tasks)
        self._write("cpuacct", "cpuacct.usage", "0")

    def prepare_pids(self, max_tasks: int) -> None:
        self._write("pids", "pids.max", str(max_tasks))

    def set_memory_limit(self, memory_bytes: int) -> None:
        """Set the memory limit (and memory+swap to the same, so swap is no way out).

        The kernel insists memsw >= mem at every step, so the order depends on the
        direction. Raises OSError (EBUSY) when the group already uses more than asked.
        """
        memsw = self.cgroup("memory") / "memory.memsw.limit_in_bytes"
        current = int(self._read("memory", "memory.limit_in_bytes"))
        steps = [("memory.limit_in_bytes", memory_bytes)]
        if memsw.exists():
            if memory_bytes > current:
                steps.insert(0, ("memory.memsw.limit_in_bytes", memory_bytes))
            else:
                steps.append(("memory.memsw.limit_in_bytes", memory_bytes))
        for name, value in steps:
            self._write("memory", name, str(value))

    def cpu_seconds(self) -> float:
        return int(self._read("cpuacct", "cpuacct.usage")) / 1e9

    def peak_memory_bytes(self) -> int:
        return int(self._read("memory", "memory.max_usage_in_bytes"))

    def oom_kills(self) -> int:
        """How many processes the memory cgroup's OOM killer has ended so far."""
        for line in self._read("memory", "memory.oom_control").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        # Kernels before 4.13 lack the counter; hitting the limit is the best evidence.
        return int(self._read("memory", "memory.failcnt"))

    # --- killing ------------------------------------------------------------------
    def kill_all(self, timeout: float = 5.0) -> None:
        """SIGKILL every process of the slot and wait until the cgroups are empty.

        kill(-1) sent *as the slot user* reaches every process of that UID in one
        atomic sweep, so a fork bomb cannot outrun it; the cgroup sweep afterwards
        catches anything the UID check could miss. Raises SandboxError if processes
        survive `timeout` seconds (the slot is then unsafe to reuse).

        Through a child cgroup (child()) only that cgroup's processes are killed, by
        sweeps: the UID's other processes (a zygote) live on. Its pids.max bounds
        what a fork bomb can add between two sweeps.
        """
        if self.sub:
            self.wait_empty(timeout, kill=True)
            return
        subprocess.run(
            ["kill", "-s", "KILL", "--", "-1"],
            user=self.uid, group=self.gid, extra_groups=[],
            env={"PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )
        self.wait_empty(timeout, kill=True)

    def wait_empty(self, timeout: float, kill: bool) -> bool:
        """Wait until no process is left in the slot's cgroups; SIGKILL them if `kill`."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.pids()
            if not left:
                return True
            if time.monotonic() > deadline:
                if kill:
                    raise SandboxError(f"processes {sorted(left)} of {self.user} survive SIGKILL")
                return False
            if kill:
                for pid in left:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            time.sleep(0.002)

    def release(self) -> None:
        if self.lock_fd is not None:
            os.close(self.lock_fd)  # closing drops the flock
            self.lock_fd = None


def sweep_unused(install: Install, tidy: Callable[[Slot], None]) -> None:
    """Call tidy(slot) for every slot nobody holds right now, leasing each meanwhile.

    For clearing what processes that died without cleaning up left behind.
    """
    for index in range(install.slot_count()):
        slot = _try_lock(install, index)
        if slot is not None:
            try:
                if slot.pids():
                    slot.kill_all()
                tidy(slot)
            finally:
                slot.release()


def _try_lock(install: Install, index: int) -> Slot | None:
    """The slot `index`, leased, or None if someone holds it."""
    fd = os.open(install.locks / f"{SLOT_USER_PREFIX}{index}.lock",
                 os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    try:
        entry = pwd.getpwnam(f"{SLOT_USER_PREFIX}{index}")
    except KeyError:
        os.close(fd)
        raise SandboxError(f"slot user {SLOT_USER_PREFIX}{index} is missing "
                           "(run scripts/setup-sandbox)") from None
    return Slot(index=index, uid=entry.pw_uid, gid=entry.pw_gid, lock_fd=fd)


def acquire(install: Install, wait_seconds: float = SLOT_WAIT_SECONDS) -> Slot:
    """Lease a free slot, waiting up to wait_seconds for one; raise SandboxError if none.

    The slot comes back empty: any process a crashed previous holder left behind is
    killed first.
    """
    count = install.slot_count()
    if count < 1:
        raise SandboxError("no sandbox slots are configured (run scripts/setup-sandbox)")
    deadline = time.monotonic() + wait_seconds
    # Start at a per-process offset so concurrent workers do not all fight over slot 0.
    start = os.getpid() % count
    while True:
        for step in range(count):
            slot = _try_lock(install, (start + step) % count)
            if slot is None:
                continue
            try:
                if slot.pids():
                    slot.kill_all()
            except BaseException:
                slot.release()
                raise
            return slot
        if time.monotonic() > deadline:
            raise SandboxError(f"all {count} sandbox slots stayed busy for {wait_seconds:.0f} s")
        time.sleep(0.02)
