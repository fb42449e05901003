"""Captures (or flows) side by side, each against the first: the baseline.

The changes are those the source papers tabulate between runs on the same path (DOMAIN.md s. 9:
"ratios between runs, e.g. SACK throughput / Reno throughput"): the throughput ratio, and the
differences in retransmission rate, timeouts and retransmission delay. Jain's fairness index is
taken across the items' throughputs (between flows, when the items are flows).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tcpsack_analyze.compare.metrics import Figures, jain_index

CHANGES = ("throughput_ratio", "retransmission_rate_change", "timeouts_change", "rtd_median_change_ms", "rtd_p99_change_ms")


@dataclass(frozen=True)
class Changes:
    """One item against the baseline: new / baseline for throughput, new - baseline otherwise."""

    item: str
    throughput_ratio: float | None
    retransmission_rate_change: float | None
    timeouts_change: int
    rtd_median_change_ms: float | None
    rtd_p99_change_ms: float | None


@dataclass(frozen=True)
class Comparison:
    """The items (the first is the baseline), each later item's changes, and the fairness index
    across all items' throughputs."""

    items: tuple[Figures, ...]
    changes: tuple[Changes, ...]
    jain: float | None


def _diff(new: float | None, base: float | None) -> float | None:
    return None if new is None or base is None else new - base


def changes(base: Figures, new: Figures) -> Changes:
    ratio = None if new.throughput_Bps is None or not base.throughput_Bps else new.throughput_Bps / base.throughput_Bps
    return Changes(
        new.label, ratio, _diff(new.retransmission_rate, base.retransmission_rate), new.timeouts - base.timeouts,
        _diff(new.rtd_median_ms, base.rtd_median_ms), _diff(new.rtd_p99_ms, base.rtd_p99_ms),
    )


def side_by_side(items: Sequence[Figures]) -> Comparison:
    """Compare ``items[1:]`` with ``items[0]``."""
    if not items:
        raise ValueError("nothing to compare")
    return Comparison(
        tuple(items), tuple(changes(items[0], x) for x in items[1:]),
        jain_index([x.throughput_Bps for x in items if x.throughput_Bps is not None]),
    )
