"""The harness's timing loop, driven by a fake CUDA that keeps a GPU clock and a log:
warm-up calls are not timed, the L2 flush comes before every start event (so its time
is never counted), events bracket exactly one call, input sets rotate, and sampling stops
when timing.stop_reason says so. (On a GPU, gpu_runner/device_check.py checks the real
loop against triton.testing.do_bench.)"""

import pytest

from gpu_runner import harness, timing


class FakeCuda:
    def __init__(self, log):
        self.log = log
        self.clock_ms = 0.0

    def synchronize(self):
        self.log.append("sync")

    def Event(self, enable_timing=False):  # noqa: N802 - torch's name
        assert enable_timing
        return FakeEvent(self)


class FakeEvent:
    def __init__(self, cuda):
        self.cuda = cuda
        self.at = None

    def record(self):
        self.at = self.cuda.clock_ms
        self.cuda.log.append("event")

    def synchronize(self):
        self.cuda.log.append("sync")

    def elapsed_time(self, end):
        return end.at - self.at


class FakeTorch:
    def __init__(self):
        self.log = []
        self.cuda = FakeCuda(self.log)


class FakeFlush:
    def __init__(self, torch, cost_ms):
        self.torch = torch
        self.cost_ms = cost_ms

    def zero_(self):
        self.torch.log.append("flush")
        self.torch.cuda.clock_ms += self.cost_ms


def make_kernel(torch, durations_ms):
    calls = iter(durations_ms)

    def kernel(set_id):
        torch.log.append(f"call {set_id}")
        torch.cuda.clock_ms += next(calls)

    return kernel


POLICY = timing.TimingPolicy(warmup_calls=4, warmup_seconds=0.0, min_samples=20, max_samples=200,
                             target_relative_error=0.005, max_seconds=10.0, batch=10)
SETS = [((0,), {}), ((1,), {}), ((2,), {})]


def run(durations_ms, flush_ms=5.0, policy=POLICY):
    torch = FakeTorch()
    kernel = make_kernel(torch, durations_ms)
    record = harness._sample(kernel, SETS, FakeFlush(torch, flush_ms), policy, timing, torch)
    return record, torch.log


def test_warm_up_calls_come_before_any_event():
    record, log = run([1.0] * 100)
    first_event = log.index("event")
    warm_calls = [entry for entry in log[:first_event] if entry.startswith("call")]
    assert len(warm_calls) == POLICY.warmup_calls == record["warmup_calls"]
    assert "sync" in log[:first_event]  # the warm-up drains before timing starts


def test_every_timed_call_is_flushed_then_bracketed_by_its_own_events():
    _, log = run([1.0] * 100)
    timed = log[log.index("event") - 1:]
    groups = [entry for entry in timed if entry != "sync"]
    for index in range(0, len(groups), 4):
        flush, start, call, end = groups[index:index + 4]
        assert (flush, start, end) == ("flush", "event", "event") and call.startswith("call")


def test_samples_are_the_kernels_time_without_the_flush():
    durations = [1.0 + 0.01 * (index % 3) for index in range(100)]
    record, _ = run(durations, flush_ms=50.0)
    expected = durations[POLICY.warmup_calls:POLICY.warmup_calls + len(record["samples_ms"])]
    assert record["samples_ms"] == pytest.approx(expected)


def test_input_sets_rotate_between_timed_calls():
    _, log = run([1.0] * 100)
    timed_calls = [entry for entry in log[log.index("event"):] if entry.startswith("call")]
    assert timed_calls[:6] == ["call 0", "call 1", "call 2", "call 0", "call 1", "call 2"]


def test_identical_times_stop_as_stable_after_the_floor():
    record, _ = run([1.0] * 100)
    assert record["stop"] == "stable"
    assert len(record["samples_ms"]) == POLICY.min_samples  # two batches of ten


def test_a_slow_kernel_stops_on_the_time_cap():
    policy = timing.TimingPolicy(warmup_calls=1, warmup_seconds=0.0, min_samples=20, max_seconds=0.05, batch=10)
    record, _ = run([10.0] * 100, policy=policy)  # 10 ms a call: one batch is 0.1 s
    assert record["stop"] == "time_cap" and len(record["samples_ms"]) == 10
