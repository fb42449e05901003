"""Throughput over time (papers 000 figures 6 and 10): one curve per direction, captures overlaid.

Throughput in a time bin is the data the receiver newly acknowledged in it: the growth of the
highest cumulative ACK of the direction's ACK events, times 8 over the bin width (Mbit/s). All
curves share one bin width, a fiftieth of the longest direction drawn (at least 1 ms), so they
compare; x is seconds since each connection's first packet.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tcpsack_analyze.plots import style
from tcpsack_analyze.plots.source import (
    CaptureData,
    DirectionData,
    PlotError,
    capture_name,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["BINS", "MAX_SERIES", "acked_per_bin", "throughput"]

BINS = 50
MAX_SERIES = 10  # directions drawn (those that moved the most data)


def acked_per_bin(d: DirectionData, edges_s: np.ndarray) -> np.ndarray:
    """Bytes newly cumulatively acknowledged in each bin ``[edges[i], edges[i+1])`` (seconds
    since the connection's first packet)."""
    ev = d.require_events()
    rows = ev.is_ack & (ev.ack >= 0)
    t = d.seconds(ev.time_ns[rows])
    order = np.argsort(t, kind="stable")
    t, highest = t[order], np.maximum.accumulate(ev.ack[rows][order]) if rows.any() else np.empty(0, np.int64)
    at = np.searchsorted(t, edges_s, side="left")  # ACKs before each edge
    first = highest[0] if highest.size else 0
    level = np.where(at > 0, highest[np.maximum(at - 1, 0)] if highest.size else 0, first)
    return np.diff(level).astype(np.float64)


def throughput(captures: Sequence[CaptureData], *, from_s: float | None = None, to_s: float | None = None) -> Figure:
    """Throughput over time of the chosen directions of ``captures``, from ``from_s`` to ``to_s``
    seconds (default: all). Raises :class:`PlotError` for a range with no ACK in it."""
    dirs = sorted((d for cd in captures for d in cd.directions), key=lambda d: -d.report.unique_bytes)[:MAX_SERIES]
    ends = [float(d.seconds(d.require_events().time_ns.max())) for d in dirs]
    lo = 0.0 if from_s is None else from_s
    hi = max(ends) if to_s is None else to_s
    width = max((hi - lo) / BINS, 1e-3)
    edges = lo + width * np.arange(max(int(np.ceil((hi - lo) / width)), 1) + 1)
    fig, ax = style.axes()
    several = len({d.capture for d in dirs}) > 1
    drawn = 0
    for k, d in enumerate(dirs):
        acked = acked_per_bin(d, edges)
        if not acked.any():
            continue
        drawn += 1
        name = f"{capture_name(d.capture)} " if several else ""
        mean = "" if d.report.throughput_Bps is None else f", mean {d.report.throughput_Bps * 8 / 1e6:.2f} Mbit/s"
        ax.stairs(acked * 8 / width / 1e6, edges, color=style.SERIES_COLORS[k % len(style.SERIES_COLORS)], lw=1.5,
                  label=f"{name}conn {d.conn.id} ({d.conn.label}) {d.direction.label}{mean}", gid=f"throughput:{d.capture}:{d.conn.id}:{d.direction.label}")
    if not drawn:
        raise PlotError(f"{', '.join(sorted({capture_name(d.capture) for d in dirs}))}: no data acknowledged from {lo:.3f} s to {hi:.3f} s")
    ax.set(xlabel="time since the connection's first packet (s)", ylabel="throughput (Mbit/s, newly ACKed data)",
           xlim=(edges[0], edges[-1]))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    what = dirs[0].name if len(dirs) == 1 else "; ".join(sorted({capture_name(d.capture) for d in dirs}))
    ax.set_title(f"Throughput ({width * 1e3:.0f} ms bins): {what}", fontsize=10)
    return fig
