"""How a kernel is timed on a GPU, and what the samples are allowed to mean.

Standard library only: the trusted host judges samples with these functions, and the
harness (inside the sandbox, next to the candidate's code) imports this same file to
decide when to stop sampling. The host never trusts the harness's conclusions; it
recomputes everything here from the raw samples.

The method (each step is pinned by gpu_runner/tests/test_timing.py):

1. Warm-up. The first call compiles the Triton kernel and the next few settle the
   allocator and the clocks; none of them is timed (``TimingPolicy.warmup_calls`` and
   ``warmup_seconds``, whichever lasts longer).
2. An L2 flush before every timed call: the harness writes a buffer of at least
   ``L2_FLUSH_FACTOR`` times the L2 size (``flush_bytes``), so each timed call reads its
   inputs from HBM, as in a model where the previous layer evicted them. The flush is
   queued before the start event, so the GPU is busy flushing while Python launches the
   kernel: the launch latency of a small kernel is not counted as its time.
3. CUDA events bracket each call on the stream: GPU time, not host time.
4. Fresh inputs: timed calls rotate through several independently drawn input sets, so
   no call sees the data the previous one left behind (a problem whose inputs must stay
   fixed says so with one set).
5. Enough repetitions for a stable median: sampling stops once the median's relative
   standard error is below ``target_relative_error`` (after at least ``min_samples``),
   or when ``max_seconds`` of timed calls or ``max_samples`` is reached (``stop_reason``).
   The median, not the mean: a preemption or a clock dip is one outlier, not a bias.
6. The reference kernel is timed the same way, on the same device, in the same grading
   run, and both are reported side by side.
7. A median below the physical floor (bytes over peak bandwidth, or FLOPs over peak
   FLOP/s) is impossible for a kernel that did the work: it is an invalid measurement,
   never a pass (``judge_speed``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

L2_FLUSH_FACTOR = 2  # flush at least twice the L2: a write of exactly L2 size can leave lines behind
MIN_FLUSH_BYTES = 256 << 20  # what triton.testing.do_bench flushes; we never flush less

# For normal samples the median's standard error is sqrt(pi/2) * sigma / sqrt(n); sigma is
# estimated robustly from the median absolute deviation (1.4826 * MAD).
_MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)
_MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class TimingPolicy:
    """When sampling stops. Times in seconds."""

    warmup_calls: int = 5
    warmup_seconds: float = 0.05
    min_samples: int = 20
    max_samples: int = 2000
    target_relative_error: float = 0.005
    max_seconds: float = 1.0
    batch: int = 10  # samples recorded between synchronisations (events are read per batch)

    def to_json(self) -> dict:
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: dict) -> TimingPolicy:
        return cls(**{key: data[key] for key in vars(cls()) if key in data})


def flush_bytes(l2_bytes: int) -> int:
    """The size of the buffer written before each timed call (see the module docstring)."""
    return max(MIN_FLUSH_BYTES, L2_FLUSH_FACTOR * int(l2_bytes))


def median(samples) -> float:
    values = sorted(samples)
    if not values:
        raise ValueError("no samples")
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def median_relative_error(samples) -> float:
    """The median's standard error over the median (robust: from the MAD). Infinite for
    fewer than three samples or a non-positive median."""
    if len(samples) < 3:
        return math.inf
    center = median(samples)
    if center <= 0:
        return math.inf
    spread = median([abs(value - center) for value in samples]) * _MAD_TO_SIGMA
    return _MEDIAN_SE_FACTOR * spread / math.sqrt(len(samples)) / center


def stop_reason(samples, timed_seconds: float, policy: TimingPolicy) -> str | None:
    """Why sampling should stop now, or None to go on: ``"stable"`` (enough samples and a
    small relative error), ``"time_cap"`` or ``"sample_cap"``. The floor comes first: no
    stop before ``min_samples`` unless the time cap is hit."""
    count = len(samples)
    if count >= policy.max_samples:
        return "sample_cap"
    if timed_seconds >= policy.max_seconds and count >= 3:
        return "time_cap"
    if count >= policy.min_samples and median_relative_error(samples) <= policy.target_relative_error:
        return "stable"
    return None


@dataclass(frozen=True)
class Work:
    """What one call must do at least: bytes that cross HBM and arithmetic."""

    bytes: int
    flops: int


@dataclass(frozen=True)
class Peak:
    """The device's peaks from the catalogue, in bytes/s and FLOP/s."""

    bandwidth: float
    flops: float


def floor_seconds(work: Work, peak: Peak) -> float:
    """The physical floor: no kernel that does ``work`` can take less."""
    memory = work.bytes / peak.bandwidth if peak.bandwidth > 0 else 0.0
    compute = work.flops / peak.flops if peak.flops > 0 else 0.0
    return max(memory, compute)


class SpeedStatus:
    PASS = "pass"
    TOO_SLOW = "too_slow"
    INVALID = "invalid"  # below the physical floor: the measurement cannot be right
    UNSCORED = "unscored"  # no catalogue peak for this device: raw times only


@dataclass(frozen=True)
class SpeedJudgement:
    """One timed shape judged. ``rate`` is bytes/s for the bandwidth metric, FLOP/s for
    the flops metric; ``fraction`` is ``rate`` over the peak (None when unscored)."""

    status: str
    median_seconds: float
    rate: float
    fraction: float | None
    floor_seconds: float | None


def judge_speed(median_s: float, work: Work, peak: Peak | None, metric: str, threshold: float) -> SpeedJudgement:
    """Judge a median time. ``metric`` is ``"bandwidth"`` or ``"flops"``; a pass is a
    fraction of the peak of at least ``threshold``. Without a peak (a GPU not in the
    catalogue) the time is reported, unscored."""
    if metric not in ("bandwidth", "flops"):
        raise ValueError(f"unknown metric {metric!r}")
    if not median_s > 0:
        return SpeedJudgement(SpeedStatus.INVALID, median_s, 0.0, None, None)
    amount = work.bytes if metric == "bandwidth" else work.flops
    rate = amount / median_s
    if peak is None:
        return SpeedJudgement(SpeedStatus.UNSCORED, median_s, rate, None, None)
    floor = floor_seconds(work, peak)
    fraction = rate / (peak.bandwidth if metric == "bandwidth" else peak.flops)
    if median_s < floor:
        return SpeedJudgement(SpeedStatus.INVALID, median_s, rate, fraction, floor)
    status = SpeedStatus.PASS if fraction >= threshold else SpeedStatus.TOO_SLOW
    return SpeedJudgement(status, median_s, rate, fraction, floor)


def agrees(first: float, second: float, tolerance: float = 0.10) -> bool:
    """Whether two timings of the same thing agree within ``tolerance`` of the second."""
    return second > 0 and abs(first - second) <= tolerance * second
