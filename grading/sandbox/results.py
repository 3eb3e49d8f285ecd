"""The sandbox's data at its edges: the limits a run gets and the result it gives back."""

from dataclasses import dataclass
from enum import StrEnum


class SandboxError(RuntimeError):
    """The sandbox itself failed (not installed, no free slot, bwrap refused to start).

    Never raised for anything the submitted code did: that is a SandboxResult.
    """


class Status(StrEnum):
    """How a run ended. A StrEnum, so `result.status == "ok"` holds as well."""

    OK = "ok"                      # exit code 0
    EXITED = "exited"              # nonzero exit code
    TIME_LIMIT = "time_limit"      # wall clock or CPU time exceeded
    MEMORY_LIMIT = "memory_limit"  # the memory cgroup's OOM killer fired
    OUTPUT_LIMIT = "output_limit"  # stdout or stderr went past max_output_bytes
    KILLED = "killed"              # ended by another signal
    REJECTED = "rejected"          # a forbidden syscall (seccomp) ended it


@dataclass(frozen=True)
class Limits:
    """What one run may use. Sizes in bytes, times in seconds.

    cpu_seconds is the CPU time of all the run's processes together; max_processes
    counts processes and threads of the solution (the sandbox's own two are extra).
    max_file_bytes caps each file written, tmp_bytes the private /tmp, and
    max_result_bytes the whole of /sandbox/out (which is what comes back as files).
    """

    cpu_seconds: float = 5
    wall_seconds: float = 10
    memory_bytes: int = 1 << 30
    max_processes: int = 16
    max_open_files: int = 64
    max_file_bytes: int = 16 << 20
    max_output_bytes: int = 64 << 10  # stdout and stderr each, captured
    tmp_bytes: int = 64 << 20
    max_result_bytes: int = 16 << 20  # files read back from out/

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not value > 0:
                raise ValueError(f"Limits.{name} must be positive, not {value!r}")


@dataclass(frozen=True)
class SandboxResult:
    """What happened to one run.

    stdout and stderr are capped at Limits.max_output_bytes each and decoded with
    errors="replace". files holds the regular files the run left under /sandbox/out,
    keyed by their path relative to it ("result.npy", "sub/x.txt"); links, devices and
    anything else are left out. wall_seconds and cpu_seconds are measured from the moment
    the job started (in a warm interpreter: after numpy and torch were imported).
    peak_memory_bytes is the memory cgroup's high-water mark: in a one-job interpreter the
    interpreter included; in a zygote's child what the job allocated and the pages of the
    preloaded interpreter it changed (the zygote's own memory is not the job's).
    note says, in words, why a status is not "ok" ("" when it is).
    """

    status: Status
    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    files: dict[str, bytes]
    wall_seconds: float
    cpu_seconds: float
    peak_memory_bytes: int | None
    note: str
