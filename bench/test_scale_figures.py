"""bench/scale_figures.py: the accounting and the bottleneck rules bench_scale.py reports
from, checked on made-up readings (no workers, no database)."""

import dataclasses

from scale_figures import (
    ProcessTicks,
    RunFigures,
    bottleneck,
    cpu_busy_fraction,
    held_inodes,
    parse_stat,
    percentile,
    stack_ticks,
)


def test_parse_stat_reads_past_a_command_name_with_spaces_and_parentheses():
    line = "4242 (python (x) y) R 17 4242 17 0 -1 4194304 100 0 0 0 250 31 7 2 20 0 1 0 99 1 1 18446744073709551615"
    assert parse_stat(line) == (17, 281, 9, True)
    assert parse_stat(line.replace(") R ", ") S "))[3] is False


def test_stack_ticks_counts_the_workers_tree_and_its_reaped_children_only():
    processes = {
        100: ProcessTicks(ppid=1, own=10, reaped=0, is_worker=True),  # the worker's main process
        101: ProcessTicks(ppid=100, own=5, reaped=40, is_worker=True),  # its pool child: launchers reaped
        102: ProcessTicks(ppid=101, own=1, reaped=20, is_worker=False, runnable=True),  # a live launcher
        103: ProcessTicks(ppid=102, own=7, reaped=0, is_worker=False),  # the interpreter under it
        200: ProcessTicks(ppid=1, own=900, reaped=0, is_worker=False, runnable=True),  # someone else's
    }
    assert stack_ticks(processes, {100}) == (10 + 5 + 40 + 1 + 20 + 7, 15, 1)
    assert stack_ticks(processes, {100, 999}) == stack_ticks(processes, {100})  # a worker that has gone


def test_held_inodes_reads_flocks_and_ignores_posix_locks():
    proc_locks = ("1: FLOCK  ADVISORY  WRITE 13952 fe:00:1482756 0 EOF\n"
                  "2: POSIX  ADVISORY  READ 13969 fe:00:2148190 128 128\n"
                  "3: FLOCK  ADVISORY  WRITE 14000 00:2f:77 0 EOF\n")
    assert held_inodes(proc_locks) == {1482756, 77}


def test_cpu_busy_fraction_counts_iowait_as_idle():
    before = [100, 0, 50, 800, 50, 0, 0, 0, 0, 0]
    after = [200, 0, 100, 850, 100, 0, 0, 0, 0, 0]  # 150 busy, 100 idle or iowait
    assert cpu_busy_fraction(before, after) == 0.6


def test_percentile_is_nearest_rank():
    assert percentile(range(1, 101), 0.99) == 99
    assert percentile([3.0], 0.99) == 3.0


def _figures(**changes) -> RunFigures:
    base = RunFigures(workers=1, submitted=40, correct=40, elapsed_s=100.0, latencies=[50.0] * 40,
                      services=[2.5] * 40, run_seconds=[0.2] * 40, cpu_busy=0.95, machine_cpu_s=190.0,
                      stack_cpu_s=60.0, job_stack_cpu_s=55.0, job_worker_cpu_s=2.0, db_active_mean=0.05,
                      db_lock_wait_share=0.0, slots_held_max=3)
    return dataclasses.replace(base, **changes)


def test_bottleneck_is_none_when_the_target_is_met():
    assert bottleneck(_figures(), _figures(workers=2, elapsed_s=50.0, services=[2.5] * 40), 16).startswith("none")


def test_bottleneck_names_the_cpu_when_busy_workers_each_went_slower():
    scaled = _figures(workers=2, elapsed_s=80.0, services=[3.8] * 40, cpu_busy=0.99)  # x1.25, busy 1.9
    assert bottleneck(_figures(), scaled, 16).startswith("the CPU")


def test_bottleneck_names_the_broker_when_workers_waited_for_jobs():
    scaled = _figures(workers=2, elapsed_s=80.0, services=[2.5] * 40)  # busy 1.25 of 2
    assert bottleneck(_figures(), scaled, 16).startswith("the broker")


def test_bottleneck_names_slot_locks_and_the_database_before_the_cpu():
    slow = {"workers": 2, "elapsed_s": 80.0, "services": [3.8] * 40, "cpu_busy": 0.99}
    assert bottleneck(_figures(), _figures(**slow, slots_held_max=16), 16).startswith("sandbox slot locks")
    assert bottleneck(_figures(), _figures(**slow, db_lock_wait_share=0.2), 16).startswith("the database")
