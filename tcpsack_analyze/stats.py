"""Summary statistics of samples, as reports give them."""
from __future__ import annotations

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
        if samples.size == 0:
            return Summary(0, None, None, None, None, None, None, None)
        x = samples.astype(np.float64) * scale
        p50, p90, p99 = np.percentile(x, [50, 90, 99])
        return Summary(int(x.size), float(x.min()), float(x.mean()), float(x.max()), float(x.std()), float(p50), float(p90), float(p99))
