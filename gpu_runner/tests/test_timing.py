"""The timing statistics, on synthetic samples: the stopping rule, the median's error,
the physical floor and the fraction of peak (gpu_runner/timing.py's method, steps 1-7)."""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_runner import timing
from gpu_runner.timing import Peak, SpeedStatus, TimingPolicy, Work

H200 = Peak(bandwidth=4.8e12, flops=989.4e12)
POLICY = TimingPolicy(min_samples=20, max_samples=500, target_relative_error=0.005, max_seconds=1.0)


def noisy(center: float, spread: float, count: int, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [center * math.exp(rng.gauss(0.0, spread)) for _ in range(count)]


def test_median_is_the_middle_and_ignores_an_outlier():
    assert timing.median([3.0, 1.0, 2.0]) == 2.0
    assert timing.median([4.0, 1.0, 2.0, 3.0]) == 2.5
    samples = [10e-6] * 30 + [5e-3]  # one preempted call, 500 times slower
    assert timing.median(samples) == 10e-6
    assert sum(samples) / len(samples) > 1.5 * 10e-6  # the mean would be 17 us: that is why not the mean


def test_relative_error_falls_like_one_over_root_n():
    small = timing.median_relative_error(noisy(1e-4, 0.05, 25, seed=1))
    large = timing.median_relative_error(noisy(1e-4, 0.05, 2500, seed=1))
    assert 6 < small / large < 14  # sqrt(100) = 10, with sampling noise


def test_relative_error_is_infinite_without_enough_samples():
    assert timing.median_relative_error([1.0, 1.0]) == math.inf
    assert timing.median_relative_error([0.0, 0.0, 0.0]) == math.inf


def test_no_stop_before_the_floor_even_when_samples_are_identical():
    for count in range(3, POLICY.min_samples):
        assert timing.stop_reason([1e-5] * count, count * 1e-5, POLICY) is None
    assert timing.stop_reason([1e-5] * POLICY.min_samples, 2e-4, POLICY) == "stable"


def test_noisy_samples_keep_sampling_until_the_error_is_small():
    samples = noisy(1e-4, 0.05, 500, seed=2)
    stopped_at = next(count for count in range(1, 501)
                      if timing.stop_reason(samples[:count], sum(samples[:count]), POLICY))
    assert stopped_at > POLICY.min_samples
    assert timing.median_relative_error(samples[:stopped_at]) <= POLICY.target_relative_error
    assert timing.median_relative_error(samples[:stopped_at - 1]) > POLICY.target_relative_error


def test_a_stable_stop_gives_a_median_close_to_the_true_one():
    for seed in range(20):
        samples = noisy(50e-6, 0.05, 2000, seed=seed)
        count = next(count for count in range(1, 2001)
                     if timing.stop_reason(samples[:count], sum(samples[:count]), POLICY))
        assert abs(timing.median(samples[:count]) - 50e-6) / 50e-6 < 0.02


def test_time_cap_stops_a_slow_kernel_and_sample_cap_a_noisy_fast_one():
    assert timing.stop_reason([0.4, 0.5, 0.6], 1.5, POLICY) == "time_cap"
    assert timing.stop_reason([0.6, 0.6], 1.2, POLICY) is None  # fewer than three samples: no median
    wild = noisy(1e-6, 1.0, POLICY.max_samples, seed=3)
    assert timing.stop_reason(wild, sum(wild), POLICY) == "sample_cap"


def test_policy_round_trips_through_json():
    policy = TimingPolicy(min_samples=7, max_seconds=0.25)
    assert TimingPolicy.from_json(policy.to_json()) == policy


def test_flush_is_at_least_twice_the_l2_and_never_below_do_bench():
    assert timing.flush_bytes(50_000_000) == 256 << 20
    assert timing.flush_bytes(200_000_000) == 400_000_000
    assert timing.flush_bytes(0) == 256 << 20


def test_a_kernel_at_the_threshold_passes_and_below_it_is_too_slow():
    work = Work(bytes=int(4.8e9), flops=0)  # 1 ms at H200's peak
    at = timing.judge_speed(2e-3, work, H200, "bandwidth", 0.5)  # exactly 50% of peak
    assert at.status == SpeedStatus.PASS and at.fraction == pytest.approx(0.5)
    below = timing.judge_speed(2.1e-3, work, H200, "bandwidth", 0.5)
    assert below.status == SpeedStatus.TOO_SLOW
    assert below.rate == pytest.approx(4.8e9 / 2.1e-3)


def test_a_time_below_the_memory_floor_is_invalid():
    work = Work(bytes=int(4.8e9), flops=0)
    judged = timing.judge_speed(0.9e-3, work, H200, "bandwidth", 0.5)
    assert judged.status == SpeedStatus.INVALID
    assert judged.floor_seconds == pytest.approx(1e-3)


def test_a_time_below_the_compute_floor_is_invalid_for_a_flops_metric():
    work = Work(bytes=int(1e9), flops=int(989.4e12 * 1e-3))  # 1 ms of tensor-core peak
    assert timing.judge_speed(0.8e-3, work, H200, "flops", 0.25).status == SpeedStatus.INVALID
    fine = timing.judge_speed(2e-3, work, H200, "flops", 0.25)
    assert fine.status == SpeedStatus.PASS and fine.fraction == pytest.approx(0.5)


def test_an_unknown_gpu_reports_raw_rates_unscored():
    judged = timing.judge_speed(1e-3, Work(int(1e9), 0), None, "bandwidth", 0.5)
    assert judged.status == SpeedStatus.UNSCORED
    assert judged.rate == pytest.approx(1e12) and judged.fraction is None


def test_zero_or_negative_time_is_invalid():
    assert timing.judge_speed(0.0, Work(1, 0), H200, "bandwidth", 0.5).status == SpeedStatus.INVALID


@given(
    bytes_moved=st.integers(min_value=1, max_value=10**12),
    flops=st.integers(min_value=0, max_value=10**15),
    fraction_of_floor=st.floats(min_value=0.01, max_value=0.999),
    threshold=st.floats(min_value=0.01, max_value=1.0),
)
def test_nothing_below_the_physical_floor_ever_passes(bytes_moved, flops, fraction_of_floor, threshold):
    work = Work(bytes_moved, flops)
    floor = timing.floor_seconds(work, H200)
    for metric in ("bandwidth", "flops"):
        judged = timing.judge_speed(floor * fraction_of_floor, work, H200, metric, threshold)
        assert judged.status == SpeedStatus.INVALID


def test_agreement_within_ten_percent():
    assert timing.agrees(1.09, 1.0) and timing.agrees(0.91, 1.0)
    assert not timing.agrees(1.11, 1.0) and not timing.agrees(1.0, 0.0)
