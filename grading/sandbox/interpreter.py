"""One sandboxed interpreter: started (optionally with numpy and torch preloaded), given
exactly one job, supervised, then destroyed together with its directories and slot.
"""

import json
import os
import selectors
import signal
import subprocess
import time

# The sibling modules themselves, not the package, whose __init__ imports this one.
import grading.sandbox.launch as launch
import grading.sandbox.slots as slots
from grading.sandbox.devices import check_devices, device_groups
from grading.sandbox.install import Install
from grading.sandbox.results import Limits, SandboxError, SandboxResult, Status
from grading.sandbox.workdir import RunDir, remove_stale

POLL_SECONDS = 0.02  # how often the supervisor checks the clock and the CPU counter


class Interpreter:
    """A sandboxed Python waiting for its job. Holds a slot until destroy().

    `ceilings` bound what a job on it may be given: rlimits can only be lowered once the
    interpreter runs, and /tmp's size is fixed when it starts.
    """

    def __init__(self, install: Install, ceilings: Limits, *, preload: bool, nice: int = 0,
                 devices: tuple[str, ...] = ()):
        self.ceilings = ceilings
        self.preload = preload
        self.nice = nice
        self.devices = check_devices(devices)
        self.slot = slots.acquire(install)
        self.rundir: RunDir | None = None
        self.process: subprocess.Popen | None = None
        self._ready_r: int | None = None
        try:
            remove_stale(install.runs, self.slot.user)
            self.rundir = RunDir(install.runs, self.slot.user, self.slot.uid, self.slot.gid,
                                 ceilings.max_result_bytes)
            self.slot.prepare_cgroups(ceilings.memory_bytes,
                                      ceilings.max_processes + launch.SANDBOX_OWN_PROCESSES)
            self._spawn(install, nice)
        except BaseException:
            self.destroy()
            raise

    def _spawn(self, install: Install, nice: int) -> None:
        ready_r, ready_w = os.pipe()
        seccomp_fd = os.open(install.seccomp_filter, os.O_RDONLY)
        # Preloading torch costs CPU seconds that RLIMIT_CPU counts; inside.py sets the
        # job's own budget on top of what it used, so the ceiling here only has to
        # cover the import.
        cpu_ceiling = int(self.ceilings.cpu_seconds) + (120 if self.preload else 2)
        argv = launch.command(
            install, uid=self.slot.uid, gid=self.slot.gid, procs_files=self.slot.procs_files(),
            inbox=self.rundir.inbox, outbox=self.rundir.outbox, ceilings=self.ceilings,
            cpu_ceiling=cpu_ceiling, nice=nice, seccomp_fd=seccomp_fd, ready_fd=ready_w,
            preload=self.preload, devices=self.devices, groups=device_groups(self.devices))
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(ready_w, seccomp_fd), env=launch.LAUNCH_ENV, cwd="/",
                start_new_session=True)
        finally:
            os.close(ready_w)
            os.close(seccomp_fd)
        self._ready_r = ready_r

    def wait_ready(self, timeout: float) -> None:
        """Block until the interpreter is ready for its job; SandboxError if it died."""
        selector = selectors.DefaultSelector()
        selector.register(self._ready_r, selectors.EVENT_READ)
        got = selector.select(timeout)
        selector.close()
        byte = os.read(self._ready_r, 1) if got else b""
        if byte != b"R":
            if got:
                self.process.wait(timeout=5)
            else:
                self._kill()
            how = f"exit status {self.process.returncode}" if got else f"not ready in {timeout:g} s"
            stderr = self.process.stderr.read(4096).decode(errors="replace").strip()
            raise SandboxError(f"the sandbox did not start ({how}): {stderr}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def run(self, files: dict[str, bytes], entry: str, args: tuple[str, ...],
            limits: Limits) -> SandboxResult:
        """Give the interpreter its job and supervise it to the end; then destroy it.

        Raises SandboxError (after destroying it) if the interpreter was unusable before
        the job started, so that the caller can try another one.
        """
        try:
            try:
                self.rundir.fill(files)
                self.rundir.resize_outbox(limits.max_result_bytes)
                self.slot.set_memory_limit(limits.memory_bytes)
                self.slot.prepare_pids(limits.max_processes + launch.SANDBOX_OWN_PROCESSES)
                job = json.dumps({
                    "entry": entry, "args": list(args), "cpu_seconds": limits.cpu_seconds,
                    "rlimits": launch.rlimit_values(limits)}).encode()
                if self.nice:
                    self.restore_priority()
                cpu_start, oom_start = self.slot.cpu_seconds(), self.slot.oom_kills()
                started = time.monotonic()
                self.process.stdin.write(job)
                self.process.stdin.close()
            except (OSError, ValueError) as exc:
                raise SandboxError(f"the interpreter could not take the job: {exc}") from exc
            return self._supervise(limits, started, cpu_start, oom_start)
        finally:
            self.destroy()

    def restore_priority(self) -> None:
        """A pooled interpreter starts at a lower priority; its job runs at the normal one,
        and so does its start once a caller is waiting for it.

        PRIO_USER reaches every thread of the slot user. Raising priority needs
        CAP_SYS_NICE; without it the job just runs niced, which is slower, not wrong.
        """
        try:
            os.setpriority(os.PRIO_USER, self.slot.uid, 0)
        except (PermissionError, ProcessLookupError):
            pass  # no right to raise it, or the slot user has no process left to raise

    def _supervise(self, limits: Limits, started: float, cpu_start: float,
                   oom_start: int) -> SandboxResult:
        captured = {self.process.stdout.fileno(): bytearray(),
                    self.process.stderr.fileno(): bytearray()}
        selector = selectors.DefaultSelector()
        for fd in captured:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        deadline = started + limits.wall_seconds
        verdict, note = None, ""
        while verdict is None:
            streams_open = bool(selector.get_map())
            if not streams_open and self.process.poll() is not None:
                break
            if streams_open:
                for key, _ in selector.select(POLL_SECONDS):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fd)
                        continue
                    captured[key.fd] += chunk
                    if len(captured[key.fd]) > limits.max_output_bytes:
                        name = "stdout" if key.fd == self.process.stdout.fileno() else "stderr"
                        verdict = Status.OUTPUT_LIMIT
                        note = f"{name} went past {limits.max_output_bytes} bytes"
                        break
            else:
                time.sleep(POLL_SECONDS)
            if verdict is None and time.monotonic() >= deadline:
                verdict, note = Status.TIME_LIMIT, f"wall clock passed {limits.wall_seconds:g} s"
            elif verdict is None and self.slot.cpu_seconds() - cpu_start > limits.cpu_seconds:
                verdict, note = Status.TIME_LIMIT, f"CPU time passed {limits.cpu_seconds:g} s"
        selector.close()
        if verdict is not None:
            self._kill()
        else:
            self.process.wait()
            # The PID namespace dies with its init; give the kernel a moment to reap.
            if not self.slot.wait_empty(1.0, kill=False):
                self._kill()
        wall = time.monotonic() - started
        cpu = self.slot.cpu_seconds() - cpu_start
        oom_killed = self.slot.oom_kills() > oom_start
        files, skipped = self.rundir.read_outputs(limits.max_result_bytes)
        stdout, stderr = (bytes(buf[:limits.max_output_bytes]).decode(errors="replace")
                          for buf in captured.values())
        status, exit_code, sig, why = _classify(self.process.returncode, verdict,
                                                oom_killed, cpu, limits)
        notes = [note or why, *(f"left out {item}" for item in skipped)]
        note = "; ".join(part for part in notes if part)
        return SandboxResult(status=status, exit_code=exit_code, signal=sig, stdout=stdout,
                             stderr=stderr, files=files, wall_seconds=wall, cpu_seconds=cpu,
                             peak_memory_bytes=self.slot.peak_memory_bytes(), note=note)

    def _kill(self) -> None:
        self.slot.kill_all()
        self.process.wait()

    def destroy(self) -> None:
        """Kill whatever is left, remove the directories and release the slot. Idempotent."""
        try:
            if self.process is not None and (self.process.poll() is None or self.slot.pids()):
                self._kill()
            if self.process is not None:
                for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                    try:
                        stream.close()
                    except OSError:
                        pass
            if self._ready_r is not None:
                os.close(self._ready_r)
                self._ready_r = None
            if self.rundir is not None:
                self.rundir.destroy()
                self.rundir = None
        finally:
            self.slot.release()


def _classify(returncode: int, verdict: Status | None, oom_killed: bool, cpu: float,
              limits: Limits) -> tuple[Status, int | None, int | None, str]:
    """(status, exit_code, signal, note) from bwrap's exit status and what was observed.

    bwrap exits with the code of the code it ran, or 128+N when a signal N ended it;
    a negative code means bwrap itself was killed (by the supervisor or the OOM killer).
    """
    if returncode < 0:
        exit_code, sig = None, -returncode
    elif returncode > 128 and returncode - 128 < signal.NSIG:
        exit_code, sig = None, returncode - 128
    else:
        exit_code, sig = returncode, None
    if verdict is not None:
        return verdict, exit_code, sig, ""
    if oom_killed:
        return Status.MEMORY_LIMIT, exit_code, sig, f"memory passed {limits.memory_bytes} bytes"
    if sig is None:
        if exit_code == 0:
            return Status.OK, 0, None, ""
        return Status.EXITED, exit_code, None, f"exit code {exit_code}"
    if sig == signal.SIGSYS:
        return Status.REJECTED, None, sig, "a forbidden system call (seccomp) ended it"
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.cpu_seconds):
        return Status.TIME_LIMIT, None, sig, f"CPU time passed {limits.cpu_seconds:g} s"
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    return Status.KILLED, None, sig, f"ended by {name}"
