"""The pure part of bench/bench_scale.py: statistics, /proc readings and the rules that
name a shared bottleneck, kept apart so bench/test_scale_figures.py checks them without
workers."""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

TARGET_RATIO = 1.8

# ---------------------------------------------------------------- pure helpers


def percentile(samples, fraction: float) -> float:
    """The nearest-rank percentile (the house benches' p99)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def cpu_busy_fraction(before: list[int], after: list[int]) -> float:
    """Share of CPU time not idle between two /proc/stat "cpu" lines' counters (user,
    nice, system, idle, iowait, irq, softirq, steal): idle and iowait count as idle."""
    deltas = [b - a for a, b in zip(before, after)]
    total = sum(deltas[:8])
    return 1.0 - (deltas[3] + deltas[4]) / total if total else 0.0


def held_inodes(proc_locks: str) -> set[int]:
    """Inodes of the files /proc/locks shows an FLOCK on (its field MAJ:MIN:INODE)."""
    inodes = set()
    for line in proc_locks.splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[5].count(":") == 2:
            inodes.add(int(fields[5].rsplit(":", 1)[1]))
    return inodes


@dataclass
class RunFigures:
    """What one worker count measured; the numbers bottleneck() reasons from."""

    workers: int
    submitted: int
    correct: int
    elapsed_s: float
    latencies: list[float]
    services: list[float]
    run_seconds: list[float]
    cpu_busy: float  # share of the machine's CPU time that was not idle
    machine_cpu_s: float  # CPU seconds used on the machine, by anyone
    stack_cpu_s: float  # by the workers and their sandboxes (stack_ticks)
    # Until the warm pools were full again after the last verdict (the interpreters that
    # replace the batch's last jobs import torch after it): the whole cost of the batch.
    job_stack_cpu_s: float
    job_worker_cpu_s: float  # of which the Celery processes themselves
    db_active_mean: float
    db_lock_wait_share: float
    slots_held_max: int
    problems: list[str] = field(default_factory=list)

    @property
    def throughput(self) -> float:
        return self.correct / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def busy_workers(self) -> float:
        return sum(self.services) / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def per_job(self, seconds: float) -> float:
        return seconds / self.submitted if self.submitted else 0.0

    def cores(self, seconds: float) -> float:
        """CPU seconds as cores busy on average over the run."""
        return seconds / self.elapsed_s if self.elapsed_s > 0 else 0.0


def bottleneck(base: RunFigures, scaled: RunFigures, slot_count: int) -> str:
    """Where the evidence puts the shared bottleneck when `scaled` (more workers) did
    not reach TARGET_RATIO times `base`'s throughput; checked in this order:

    - sandbox slot locks: every slot was held at some sample (a job waited for a lease);
    - the broker: the workers were idle a tenth of the time or more (summed service time
      under 90% of workers x elapsed), so jobs did not reach them fast enough;
    - the database: backends waited on locks in 5% of samples, or one was active on
      average (a single serialised writer);
    - the CPU: the machine was 90% busy or more and each job's service time grew, so the
      workers were busy but each went slower (the figures say how much of the CPU went to
      this stack's workers and sandboxes and how much to the rest of the machine);
    otherwise it says the cause was not found."""
    ratio = scaled.throughput / base.throughput if base.throughput else 0.0
    if ratio >= TARGET_RATIO:
        return f"none: x{ratio:.2f} meets the target x{TARGET_RATIO}"
    if scaled.slots_held_max >= slot_count:
        return f"sandbox slot locks: all {slot_count} slots were held at once"
    if scaled.busy_workers < 0.9 * scaled.workers:
        return (f"the broker (or dispatch): {scaled.workers} workers were busy {scaled.busy_workers:.2f} "
                "on average, so they waited for jobs")
    if scaled.db_lock_wait_share >= 0.05 or scaled.db_active_mean >= 1.0:
        return (f"the database: {scaled.db_active_mean:.2f} backends active on average, lock waits in "
                f"{scaled.db_lock_wait_share:.0%} of samples")
    base_service, scaled_service = statistics.median(base.services), statistics.median(scaled.services)
    if scaled.cpu_busy >= 0.9 and scaled_service > base_service:
        return (f"the CPU: {os.cpu_count()} cores {scaled.cpu_busy:.0%} busy with {scaled.workers} workers "
                f"({base.cpu_busy:.0%} with {base.workers}); the workers were busy but each job's service time "
                f"grew from {base_service:.2f} s to {scaled_service:.2f} s; this stack had "
                f"{scaled.cores(scaled.stack_cpu_s):.2f} cores ({base.cores(base.stack_cpu_s):.2f} with "
                f"{base.workers}), the rest of the machine "
                f"{scaled.cores(scaled.machine_cpu_s - scaled.stack_cpu_s):.2f}; "
                f"{scaled.per_job(scaled.job_stack_cpu_s - scaled.job_worker_cpu_s):.2f} CPU s per job in the "
                "sandbox")
    return "not found: no shared resource was saturated in these samples"


# ---------------------------------------------------------------- machine readings


def read_cpu_counters() -> list[int]:
    with open("/proc/stat") as stat:
        return [int(value) for value in stat.readline().split()[1:]]


@dataclass(frozen=True)
class ProcessTicks:
    """One process's line of /proc/PID/stat, in clock ticks: its own CPU time and that of
    the children it has reaped (which include their own reaped children)."""

    ppid: int
    own: int
    reaped: int
    is_worker: bool
    runnable: bool = False  # running, waiting for a CPU, or in a disk wait


def parse_stat(text: str) -> tuple[int, int, int, bool]:
    """(ppid, utime + stime, cutime + cstime, runnable) from a /proc/PID/stat line; the
    command name in parentheses may hold spaces and parentheses, so split after the last."""
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]), fields[0] in "RD"


def stack_ticks(processes: dict[int, ProcessTicks], roots: set[int]) -> tuple[int, int, int]:
    """(all, workers' own) CPU ticks of `roots` and their live descendants, the reaped
    ones included through their parents, and how many of them are runnable: the bench's
    own stack, apart from whatever else runs on the machine. What is not the Celery
    processes' own time is the sandboxes' (the launchers a pool process reaps add to its
    reaped time, not its own; each launcher reaps everything under it)."""
    children: dict[int, list[int]] = {}
    for pid, process in processes.items():
        children.setdefault(process.ppid, []).append(pid)
    total = workers = runnable = 0
    stack = [pid for pid in roots if pid in processes]
    while stack:
        pid = stack.pop()
        process = processes[pid]
        total += process.own + process.reaped
        workers += process.own if process.is_worker else 0
        runnable += process.runnable
        stack.extend(children.get(pid, ()))
    return total, workers, runnable


def read_processes() -> dict[int, ProcessTicks]:
    processes = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            is_worker = b"celery" in Path(entry.path, "cmdline").read_bytes()
        except OSError:
            continue  # it ended while the directory was read
        ppid, own, reaped, runnable = parse_stat(stat)
        processes[int(entry.name)] = ProcessTicks(ppid, own, reaped, is_worker, runnable)
    return processes
