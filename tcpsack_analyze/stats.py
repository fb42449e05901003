"""Summary statistics of samples, as reports give them."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Summary:
    """count, min, mean, max and population standard deviation (tcptrace's), plus percentiles."""

    count: int
    min: float | None
    mean: float | None
    max: float | None
    stddev: float | None
    median: float | None
    p90: float | None
    p99: float | None

    @staticmethod
    def of(samples: np.ndarray, scale: float = 1.0) -> Summary:
        """The summary of ``samples`` (any order: they are sorted first, so that the last bits
        of the mean and deviation do not depend on how the capture was cut into batches).

        Percentiles interpolate linearly between the closest ranks (numpy's default ``linear``
        method, Hyndman and Fan's type 7). Sums are taken in one order whatever the memory
        alignment of the array (numpy's pairwise ``sum``/``mean`` are not: the same samples
        could give two means, differing in the last bits): a few samples (most connections of a
        busy capture have one to a handful per direction) exactly, in plain Python
        (``math.fsum``), where numpy's per-call cost would be most of the work; many in sorted
        order with ``cumsum`` (sequential).
        """
        n = int(samples.size)
        if n == 0:
            return Summary(0, None, None, None, None, None, None, None)
        x: np.ndarray | list[float]
        if n <= _FEW:
            x = sorted(v * scale for v in samples.tolist())
            mean = math.fsum(x) / n
            std = math.sqrt(math.fsum((v - mean) ** 2 for v in x) / n)
        else:
            x = np.sort(samples).astype(np.float64) * scale
            mean = float(np.cumsum(x)[-1]) / n
            std = math.sqrt(float(np.cumsum(np.square(x - mean))[-1]) / n)
        return Summary(n, float(x[0]), mean, float(x[-1]), std, _quantile(x, 0.5), _quantile(x, 0.9), _quantile(x, 0.99))


_FEW = 64  # up to this many samples, Summary.of works on a Python list


def _quantile(x: np.ndarray | list[float], q: float) -> float:
    """The ``q`` quantile of the sorted ``x`` by linear interpolation between the closest ranks,
    as numpy's ``linear`` method computes it (from the lower value below the midpoint, from the
    upper one above it, so that the result stays within the two)."""
    h = q * (len(x) - 1)
    lo = math.floor(h)
    t = h - lo
    a = float(x[lo])
    b = float(x[min(lo + 1, len(x) - 1)])
    return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)


_NOTHING = np.empty(0, np.int64)  # shared by every empty bag: a many-flows capture holds four per connection
_NOTHING.flags.writeable = False


class SampleBag:
    """Non-negative integer samples (RTTs in ns), kept until the end for exact summaries.

    The samples of a long capture would grow with it (about 0.4 per packet), so the bag counts
    repeated values: every time the loose samples double, they are merged into sorted distinct
    values with counts, if that at least halves them. With microsecond timestamps, RTTs take few
    distinct values (a 10 ms spread is at most 10,000), so the bag stops growing; with nanosecond
    timestamps most are distinct and stay loose, 4 bytes each below 4.29 s. The order of the
    samples is not kept: :meth:`Summary.of` does not need it.
    """

    __slots__ = ("_values", "_counts", "_loose", "_loose_n", "_merge_at")

    FIRST_MERGE = 4096  # loose samples before the first merge

    def __init__(self) -> None:
        self._values = self._counts = _NOTHING  # distinct, sorted; and their counts (replaced, never written to)
        self._loose: list[np.ndarray] = []
        self._loose_n = 0
        self._merge_at = self.FIRST_MERGE

    def add(self, samples: np.ndarray) -> None:
        if not samples.size:
            return
        self._loose.append(samples.astype(np.uint32) if int(samples.max()) <= 0xFFFFFFFF else samples.astype(np.int64))
        self._loose_n += samples.size
        if self._loose_n >= self._merge_at:
            self._merge()

    def _merge(self) -> None:
        loose = np.concatenate(self._loose, dtype=np.int64)
        values, counts = np.unique(loose, return_counts=True)
        if 2 * values.size > loose.size:  # mostly distinct: counting would not save memory
            self._loose = [np.concatenate(self._loose)]
            self._merge_at = 2 * self._loose_n
            return
        if self._values.size:
            values, inverse = np.unique(np.concatenate([self._values, values]), return_inverse=True)
            merged = np.zeros(values.size, np.int64)
            np.add.at(merged, inverse, np.concatenate([self._counts, counts]))
            counts = merged
        self._values, self._counts = values, counts
        self._loose, self._loose_n = [], 0

    def __len__(self) -> int:
        return int(self._counts.sum()) + self._loose_n

    def min(self) -> int | None:
        """The smallest sample (None when empty), without expanding the counted values."""
        parts = [int(p.min()) for p in (self._values, *self._loose) if p.size]
        return min(parts, default=None)

    def array(self) -> np.ndarray:
        """Every sample (int64), counted values first, then the loose ones in the order added."""
        return np.concatenate([np.repeat(self._values, self._counts), *self._loose], dtype=np.int64)
