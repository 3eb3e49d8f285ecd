"""A zygote: one sandboxed interpreter per slot that imports numpy and torch once and forks
a fresh child for every job (the fork-server pattern of Android's zygote and Python's
forkserver), so that back-to-back jobs do not each pay the import.

It starts through the same chain as a one-job interpreter (launch.zygote_command: the
launcher puts it in the slot's cgroups and makes it the slot's unprivileged user; bwrap
gives it the same namespaces, read-only system and seccomp filter) and runs inside.py's
zygote mode as PID 1 of its PID namespace. For every job the host here:
  1. makes the job's in/ and out/ and empties /tmp and /dev/shm (zygote_dirs.py), and a
     child cgroup of the slot ("job") with the job's memory and process limits;
  2. hands the zygote three pipe ends (the job's stdin, stdout, stderr); the zygote forks;
     the child announces itself, and the kernel stamps that message with its PID;
  3. moves that PID into the job's cgroups and only then writes the job (JSON) to its
     stdin, so no code of the job runs outside its cgroups;
  4. supervises the job as interpreter.py does, with the job's own counters; the verdict
     comes from the child's wait status (which the zygote, not the job, reports), the
     job's cgroups and the host's own clock;
  5. checks the zygote before the next job: every process of the job gone, the
     directories empty, the job's cgroups removed, the zygote alive, single-threaded,
     not stopped, with no signal pending, and answering a ping. If anything is off, or a
     job had to be killed or left a process behind, the zygote is destroyed (and the pool
     starts a new one), so nothing a job did can reach the next.
Nothing of a job is in the zygote's memory (it never reads a job), a job cannot signal it
(PID 1: signals from inside its namespace are dropped unless it handles them, and it
handles none), read or write its memory (non-dumpable; ptrace and process_vm_* are killed
by seccomp) or use its descriptors (each child closes all but its own three). SysV IPC and
POSIX message queues, which would outlive a job in the shared IPC namespace, are switched
off in that namespace at start (limits of zero, set by the host).
"""

import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import time

import grading.sandbox.launch as launch
import grading.sandbox.slots as slots
from grading.sandbox.install import CGROUP_CONTROLLERS, Install
from grading.sandbox.interpreter import POLL_SECONDS, _classify
from grading.sandbox.results import Limits, SandboxError, SandboxResult, Status
from grading.sandbox.workdir import remove_stale
from grading.sandbox.zygote_dirs import ZygoteDirs

JOB_CGROUP = "job"
# Above the jobs' memory ceiling, for the zygote itself (numpy and torch): a job meets its
# own cgroup's limit first, so the OOM killer never has to choose the zygote.
ZYGOTE_MEMORY_BYTES = 1 << 30
# The zygote's own CPU ceiling (the import, then a fork per job); a job's child lowers it.
ZYGOTE_CPU_SECONDS = 3600
CHILD_SECONDS = 5.0  # from handing over a job to the child's announcement
PING_SECONDS = 5.0
KILL_SECONDS = 5.0
# The IPC namespace outlives every job: nothing may be created in it (the host writes
# these sysctls for that namespace only).
IPC_LOCKDOWN = (
    ("/proc/sys/kernel/shmmni", "0"),
    ("/proc/sys/kernel/msgmni", "0"),
    ("/proc/sys/kernel/sem", "0 0 0 0"),
    ("/proc/sys/fs/mqueue/queues_max", "0"),
)
_CREDENTIALS = struct.Struct("iII")


class Zygote:
    """A ready zygote holding a slot until destroy(). run() serves one job and may be
    called again while alive() holds; `on_done(zygote)` is told after every job."""

    def __init__(self, install: Install, ceilings: Limits, *, nice: int = 0, on_done=None):
        self.ceilings = ceilings
        self.nice = nice
        self.on_done = on_done
        self.jobs_served = 0
        self.slot = slots.acquire(install)
        self.job = self.slot.child(JOB_CGROUP)
        self.dirs: ZygoteDirs | None = None
        self.process: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.pid: int | None = None  # the zygote's PID on the host
        self.broken = False
        try:
            remove_stale(install.runs, self.slot.user)
            self.job.remove_cgroups()  # empty: acquire() killed what a crashed holder left
            self.dirs = ZygoteDirs(install.runs, self.slot.user, self.slot.uid, self.slot.gid)
            self.slot.prepare_cgroups(ceilings.memory_bytes + ZYGOTE_MEMORY_BYTES,
                                      ceilings.max_processes + launch.SANDBOX_OWN_PROCESSES)
            self._spawn(install)
        except BaseException:
            self.destroy()
            raise

    def _spawn(self, install: Install) -> None:
        host_end, sandbox_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The kernel then stamps every message with its sender's PID in our namespace.
        host_end.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.control = host_end
        seccomp_fd = os.open(install.seccomp_filter, os.O_RDONLY)
        try:
            argv = launch.zygote_command(
                install, uid=self.slot.uid, gid=self.slot.gid,
                procs_files=self.slot.procs_files(), sandbox_dir=self.dirs.sandbox,
                tmp_dir=self.dirs.tmp, shm_dir=self.dirs.shm, ceilings=self.ceilings,
                cpu_ceiling=ZYGOTE_CPU_SECONDS, nice=self.nice, seccomp_fd=seccomp_fd,
                control_fd=sandbox_end.fileno())
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, pass_fds=(sandbox_end.fileno(), seccomp_fd),
                env=launch.LAUNCH_ENV, cwd="/", start_new_session=True)
        finally:
            sandbox_end.close()
            os.close(seccomp_fd)

    # --- start ---------------------------------------------------------------------
    def wait_ready(self, timeout: float) -> None:
        """Block until the zygote has imported its modules; SandboxError if it failed."""
        try:
            message, pid = self._receive(timeout)
        except SandboxError as exc:
            self._kill()
            raise SandboxError(f"the zygote did not start ({exc}): {self._stderr()}") from None
        if message != b"R" or not self._is_zygote(pid):
            self._kill()
            raise SandboxError(f"the zygote did not start ({message!r}): {self._stderr()}")
        self.pid = pid
        self._lock_down_ipc()
        self.restore_priority()  # its children inherit its priority

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return ""
        return self.process.stderr.read(4096).decode(errors="replace").strip()

    def _is_zygote(self, pid: int | None) -> bool:
        """pid is the sandbox's program: slot user, child of the bwrap our launcher ran."""
        if pid is None:
            return False
        bwrap = _status_field(pid, "PPid")
        return (bwrap is not None and _status_field(int(bwrap), "PPid") == str(self.process.pid)
                and _status_field(pid, "Uid", 0) == str(self.slot.uid))

    def _lock_down_ipc(self) -> None:
        """Write IPC_LOCKDOWN in the zygote's IPC namespace. The kernel lets only the
        namespace's root write these, and bwrap's outer user namespace maps the slot user
        to root: so they are written as the slot user (from the host's mount namespace,
        whose /proc/sys is writable, unlike the sandbox's)."""
        script = "".join(f"echo {value} > {path} && " for path, value in IPC_LOCKDOWN) + "true"
        done = subprocess.run(
            ["nsenter", f"--ipc=/proc/{self.pid}/ns/ipc", f"--setuid={self.slot.uid}",
             f"--setgid={self.slot.gid}", "--", "/bin/sh", "-c", script],
            env=launch.LAUNCH_ENV, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=10, check=False)
        if done.returncode != 0:
            self._kill()
            raise SandboxError(f"cannot switch off IPC in the zygote: {done.stderr.decode().strip()}")

    # --- state -----------------------------------------------------------------------
    def alive(self) -> bool:
        return (not self.broken and self.process is not None and self.process.poll() is None
                and self.pid is not None)

    def _running(self) -> bool:
        """The zygote exists and is not stopped (State R, S or D in /proc)."""
        state = _status_field(self.pid, "State")
        return state is not None and state.split()[0] in ("R", "S", "D")

    def restore_priority(self) -> None:
        """As Interpreter.restore_priority: the pool starts zygotes niced; jobs run at 0."""
        try:
            os.setpriority(os.PRIO_USER, self.slot.uid, 0)
        except (PermissionError, ProcessLookupError):
            pass

    # --- a job -----------------------------------------------------------------------
    def run(self, files: dict[str, bytes], entry: str, args: tuple[str, ...],
            limits: Limits) -> SandboxResult:
        """Serve one job. SandboxError (the zygote is then destroyed) if it could not be
        started, before any of its code ran, so the caller can try elsewhere."""
        healthy = False
        pipes: list[int] = []
        try:
            try:
                if not self.alive():
                    raise SandboxError("the zygote is not running")
                self.dirs.start_job(files, limits.max_result_bytes, limits.tmp_bytes)
                self._make_job_cgroups(limits)
                stdin_r, stdin_w = os.pipe()
                out_r, out_w = os.pipe()
                err_r, err_w = os.pipe()
                pipes += [stdin_w, out_r, err_r]
                try:
                    socket.send_fds(self.control, [b"J"], [stdin_r, out_w, err_w])
                finally:
                    for fd in (stdin_r, out_w, err_w):
                        os.close(fd)
                message, child = self._receive(CHILD_SECONDS)
                if message != b"F" or _status_field(child, "PPid") != str(self.pid):
                    raise SandboxError(f"the zygote answered {message!r}, not a child")
                for procs in self.job.procs_files():
                    with open(procs, "w") as handle:
                        handle.write(str(child))
                job = json.dumps({"entry": entry, "args": list(args),
                                  "cpu_seconds": limits.cpu_seconds,
                                  "rlimits": launch.rlimit_values(limits)}).encode()
                started = time.monotonic()
                _write_all(stdin_w, job)
                os.close(pipes.pop(0))
            except (OSError, ValueError) as exc:
                raise SandboxError(f"the zygote could not take the job: {exc}") from exc
            result, clean = self._supervise(limits, started, pipes[0], pipes[1])
            self.jobs_served += 1
            healthy = clean and self._ready_for_next()
            return result
        finally:
            for fd in pipes:
                os.close(fd)
            if not healthy:
                self.destroy()
            if self.on_done is not None:
                self.on_done(self)

    def _make_job_cgroups(self, limits: Limits) -> None:
        self.job.remove_cgroups()
        for controller in CGROUP_CONTROLLERS:
            self.job.cgroup(controller).mkdir()
        self.job.set_memory_limit(limits.memory_bytes)
        self.job.prepare_pids(limits.max_processes)

    def _supervise(self, limits: Limits, started: float, out_r: int,
                   err_r: int) -> tuple[SandboxResult, bool]:
        """Run the job to its end; (result, True if it ended without being killed)."""
        captured = {out_r: bytearray(), err_r: bytearray()}
        selector = selectors.DefaultSelector()
        for fd in captured:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        selector.register(self.control, selectors.EVENT_READ)
        deadline = started + limits.wall_seconds
        verdict, note, wait_status, clean = None, "", None, True
        while True:
            streams_open = any(fd in captured for fd in selector.get_map())
            if wait_status is not None and not streams_open:
                break
            for key, _ in selector.select(POLL_SECONDS):
                if key.fileobj is self.control:
                    message, pid = self._receive(0)
                    selector.unregister(self.control)
                    if message.startswith(b"X ") and pid == self.pid:
                        wait_status = int(message[2:])
                    else:  # the zygote died or misbehaved: the namespace is gone with it
                        self.broken, clean = True, False
                        wait_status = wait_status or signal.SIGKILL
                        note = "the sandbox's zygote ended during the job"
                    continue
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                captured[key.fd] += chunk
                if len(captured[key.fd]) > limits.max_output_bytes and verdict is None:
                    name = "stdout" if key.fd == out_r else "stderr"
                    verdict = Status.OUTPUT_LIMIT
                    note = f"{name} went past {limits.max_output_bytes} bytes"
            if wait_status is None and not self._running():
                # Stopped or gone (from outside: no job can signal it): it will not
                # report, so the job ends here, and the zygote with it.
                self.broken, clean = True, False
                self._kill_job()
                wait_status = signal.SIGKILL
                note = note or "the sandbox's zygote stopped during the job"
                continue
            if verdict is None and wait_status is None:
                if time.monotonic() >= deadline:
                    verdict, note = Status.TIME_LIMIT, f"wall clock passed {limits.wall_seconds:g} s"
                elif self.job.cpu_seconds() > limits.cpu_seconds:
                    verdict, note = Status.TIME_LIMIT, f"CPU time passed {limits.cpu_seconds:g} s"
            if verdict is not None or (wait_status is not None and streams_open and self.job.pids()):
                # Killed, or the job's main process ended and left others holding its
                # pipes: end them all (a one-job sandbox's namespace dies with its main).
                clean = False
                self._kill_job()
                if verdict is not None and wait_status is None:
                    wait_status = self._await_exit()
                if verdict is not None:
                    break
        selector.close()
        wall = time.monotonic() - started
        cpu = self.job.cpu_seconds()
        files, skipped = self.dirs.read_outputs(limits.max_result_bytes)
        stdout, stderr = (bytes(buf[:limits.max_output_bytes]).decode(errors="replace")
                          for buf in captured.values())
        status, exit_code, sig, why = _classify(
            os.waitstatus_to_exitcode(wait_status), verdict, self.job.oom_kills() > 0, cpu, limits)
        notes = [note or why, *(f"left out {item}" for item in skipped)]
        return SandboxResult(
            status=status, exit_code=exit_code, signal=sig, stdout=stdout, stderr=stderr,
            files=files, wall_seconds=wall, cpu_seconds=cpu,
            peak_memory_bytes=self.job.peak_memory_bytes(),
            note="; ".join(part for part in notes if part)), clean

    def _kill_job(self) -> None:
        try:
            self.job.kill_all(KILL_SECONDS)
        except SandboxError:
            self.broken = True  # the zygote goes, and its namespace with it

    def _await_exit(self) -> int:
        """The killed child's wait status, from the zygote (SIGKILL if it cannot say)."""
        try:
            message, pid = self._receive(KILL_SECONDS)
        except SandboxError:
            message, pid = b"", None
        if message.startswith(b"X ") and pid == self.pid:
            return int(message[2:])
        self.broken = True
        return signal.SIGKILL

    def _ready_for_next(self) -> bool:
        """Everything of the job is gone and the zygote is as it was (module docstring)."""
        try:
            if self.job.pids():
                return False
            if not self.dirs.finish_job():
                return False
            self.job.remove_cgroups()
            self.control.send(b"P")
            message, pid = self._receive(PING_SECONDS)
            if message != b"P" or pid != self.pid or not self.alive():
                return False
            return (self._running() and _status_field(self.pid, "Threads") == "1"
                    and int(_status_field(self.pid, "SigPnd"), 16) == 0
                    and int(_status_field(self.pid, "ShdPnd"), 16) == 0)
        except (OSError, SandboxError, TypeError, ValueError):
            return False

    # --- plumbing --------------------------------------------------------------------
    def _receive(self, timeout: float) -> tuple[bytes, int | None]:
        """The next message on the control socket and the PID the kernel stamped on it."""
        if timeout and not _readable(self.control, timeout):
            raise SandboxError(f"no answer from the zygote in {timeout:g} s")
        message, ancillary, _, _ = self.control.recvmsg(64, socket.CMSG_SPACE(_CREDENTIALS.size))
        pid = None
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = _CREDENTIALS.unpack(data[:_CREDENTIALS.size])[0]
        return message, pid

    def _kill(self) -> None:
        self.slot.kill_all()
        self.process.wait()

    def destroy(self) -> None:
        """Kill the zygote and everything of its slot, remove its directories and cgroups,
        release the slot. Idempotent: once the slot is released another sandbox may hold
        it, so a second call must not look at (let alone kill) what runs there."""
        if self.slot.lock_fd is None:
            return
        self.broken = True
        try:
            if self.process is not None and (self.process.poll() is None or self.slot.pids()):
                self._kill()
            if self.control is not None:
                self.control.close()
                self.control = None
            if self.process is not None and self.process.stderr is not None:
                self.process.stderr.close()
            if self.dirs is not None:
                self.dirs.destroy()
                self.dirs = None
            self.job.remove_cgroups()
        finally:
            self.slot.release()


def _readable(sock: socket.socket, timeout: float) -> bool:
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        return bool(selector.select(timeout))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _status_field(pid: int | None, name: str, index: int | None = None) -> str | None:
    """A field of /proc/PID/status ("PPid" -> "123"), or None if there is no such process."""
    try:
        lines = open(f"/proc/{pid}/status").read().splitlines()
    except (OSError, TypeError):
        return None
    for line in lines:
        key, _, value = line.partition(":")
        if key == name:
            value = value.strip()
            return value.split()[index] if index is not None else value
    return None
