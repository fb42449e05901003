"""Did a metric move beyond run-to-run noise? Several baseline runs against several new runs.

Method: a bootstrap confidence interval of the difference of medians (new - baseline) of the
pooled per-flow samples (Efron and Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13:
the percentile interval). Each side is resampled with replacement on its own, ``resamples``
times, from a generator seeded by ``seed``, so the result is deterministic. A metric *moved* when
the interval excludes 0: +1 up, -1 down, 0 within noise. Medians, not means: one flow's RTO
stall should not move the verdict by itself. With fewer than 2 samples on a side there is no
interval and the verdict is None (a rule on it then fails closed).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.compare.metrics import Figures

# the per-flow figures tested, each a field of Figures
TESTED = ("throughput_Bps", "retransmission_rate", "timeouts", "rtd_median_ms", "rtd_p99_ms", "latency_ack_p99_ms")
DEFAULT_RESAMPLES = 10_000
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Shift:
    """One metric, baseline against new."""

    metric: str
    baseline_n: int
    new_n: int
    baseline_median: float | None
    new_median: float | None
    difference: float | None  # new median - baseline median
    ci_low: float | None
    ci_high: float | None
    moved: int | None  # +1 / -1 beyond noise, 0 within it, None without an interval


@dataclass(frozen=True)
class NoiseTest:
    """The verdict per metric and the method that gave it, named in the output."""

    method: str
    baseline_captures: int
    new_captures: int
    shifts: tuple[Shift, ...]
    throughput_ratio: float | None  # median new throughput / median baseline throughput


def bootstrap_median_difference(
    base: Sequence[float], new: Sequence[float], *, resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """Percentile bootstrap interval of median(new) - median(base)."""
    rng = np.random.default_rng(seed)
    b, n = np.asarray(base, float), np.asarray(new, float)
    mb = np.median(b[rng.integers(0, len(b), (resamples, len(b)))], axis=1)
    mn = np.median(n[rng.integers(0, len(n), (resamples, len(n)))], axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(mn - mb, [tail, 100 - tail])
    return float(low), float(high)


def _shift(metric: str, base: list[float], new: list[float], resamples: int, confidence: float, seed: int) -> Shift:
    mb = float(np.median(base)) if base else None
    mn = float(np.median(new)) if new else None
    diff = None if mb is None or mn is None else mn - mb
    if len(base) < 2 or len(new) < 2:
        return Shift(metric, len(base), len(new), mb, mn, diff, None, None, None)
    low, high = bootstrap_median_difference(base, new, resamples=resamples, confidence=confidence, seed=seed)
    moved = 1 if low > 0 else -1 if high < 0 else 0
    return Shift(metric, len(base), len(new), mb, mn, diff, low, high, moved)


def noise_test(
    baseline: Sequence[Figures], new: Sequence[Figures], *, baseline_captures: int, new_captures: int,
    resamples: int = DEFAULT_RESAMPLES, confidence: float = DEFAULT_CONFIDENCE, seed: int = 0,
) -> NoiseTest:
    """Test every metric of :data:`TESTED` on the pooled per-flow samples of both sides."""
    shifts = []
    for metric in TESTED:
        b = [float(v) for f in baseline if (v := getattr(f, metric)) is not None]
        n = [float(v) for f in new if (v := getattr(f, metric)) is not None]
        shifts.append(_shift(metric, b, n, resamples, confidence, seed))
    tp = shifts[0]
    ratio = tp.new_median / tp.baseline_median if tp.new_median is not None and tp.baseline_median else None
    method = (f"bootstrap {confidence:.0%} CI of the difference of medians (new - baseline) of per-flow samples, "
              f"percentile method, {resamples} resamples, seed {seed}")
    return NoiseTest(method, baseline_captures, new_captures, tuple(shifts), ratio)
