"""Retransmission delay (DOMAIN.md section 5): CDF, histogram, and recovery latency per incident.

Three panels, several captures overlaid (the per-variant comparisons of the RTD thesis):

* the CDF of the RTD samples (``LossResult.rtd_samples_ns``, ms) of each chosen direction and,
  thick, pooled over a capture's chosen directions (each weighs by its samples, as the report
  pools them). The curve joins the sorted samples at cumulative share i/(n-1), numpy's linear
  percentile rule, so the x where it crosses 0.5, 0.9 and 0.99 is exactly the report's median,
  p90 and p99, which are marked on it;
* the histogram of the pooled samples (log-spaced bins when they span more than 50x);
* each loss incident's recovery latency against its first transmission's time: to the covering
  ACK (what the application waited, dots) and to the last retransmission (crosses).
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
from tcpsack_analyze.stats import Summary

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["MAX_DIRECTIONS", "cdf", "rtd"]

MAX_DIRECTIONS = 8  # per capture, the directions with the most samples get their own CDF
MS = 1e-6
_DASHES = ("--", ":", "-.", (0, (5, 1, 1, 1)))  # per-direction curves, thin, under the pooled one


def cdf(samples_ms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x (sorted samples) and y (share i/(n-1); 1 for a single sample) of the drawn CDF."""
    x = np.sort(samples_ms)
    y = np.arange(x.size) / (x.size - 1) if x.size > 1 else np.ones(x.size)
    return x, y


def rtd(captures: Sequence[CaptureData]) -> Figure:
    """The RTD figure of the chosen directions of ``captures`` (see the module docstring).
    Raises :class:`PlotError` when none of them retransmitted anything."""
    pooled = {cd.path: np.concatenate([d.loss.rtd_samples_ns for d in cd.directions]) * MS for cd in captures}
    if not any(s.size for s in pooled.values()):
        which = ", ".join(capture_name(cd.path) for cd in captures)
        raise PlotError(f"{which}: no retransmissions in the chosen directions, so no RTD to draw")
    fig, (ax_cdf, ax_hist, ax_lat) = style.panels(3)
    names = _names(captures)
    for k, cd in enumerate(captures):
        color = style.SERIES_COLORS[k % len(style.SERIES_COLORS)]
        _draw_cdfs(ax_cdf, cd, pooled[cd.path], color, names[cd.path])
        _draw_latency(ax_lat, cd, color, names[cd.path])
    _draw_histogram(ax_hist, captures, pooled, names)

    ax_cdf.set(xlabel="RTD (ms)", ylabel="cumulative share of RTD samples", title="RTD CDF", ylim=(0, 1.02))
    ax_hist.set(xlabel="RTD (ms)", ylabel="RTD samples", title="RTD histogram (pooled)")
    ax_lat.set(xlabel="first transmission, s since the connection's first packet", ylabel="recovery latency (ms)",
               title="recovery latency per loss incident")
    for ax in (ax_cdf, ax_hist, ax_lat):
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle(f"Retransmission delay: {_title(captures)}", fontsize=10)
    return fig


def _names(captures: Sequence[CaptureData]) -> dict[str, str]:
    return {cd.path: capture_name(cd.path) for cd in captures}


def _title(captures: Sequence[CaptureData]) -> str:
    if len(captures) == 1 and len(captures[0].directions) == 1:
        return captures[0].directions[0].name
    return "; ".join(f"{n} ({len(cd.directions)} direction(s) with data)" for cd, n in zip(captures, _names(captures).values()))


def _draw_cdfs(ax: Axes, cd: CaptureData, pooled_ms: np.ndarray, color: str, name: str) -> None:
    with_samples = sorted((d for d in cd.directions if d.loss.rtd_samples_ns.size), key=lambda d: -d.loss.rtd_samples_ns.size)
    if len(with_samples) > 1:
        for n, d in enumerate(with_samples[:MAX_DIRECTIONS]):
            x, y = cdf(d.loss.rtd_samples_ns * MS)
            ax.plot(x, y, color=color, lw=1, alpha=0.7, linestyle=_DASHES[n % len(_DASHES)], label=f"{name} conn {d.conn.id} {d.direction.label} ({x.size})",
                    gid=f"cdf:{cd.path}:{d.conn.id}:{d.direction.label}")
    if not pooled_ms.size:
        return
    x, y = cdf(pooled_ms)
    s = Summary.of(pooled_ms)
    ax.plot(x, y, color=color, lw=2.2, label=f"{name} pooled ({x.size} samples, median {s.median:.1f} ms)", gid=f"cdf:{cd.path}")
    at = [(v, q) for v, q in ((s.median, 0.5), (s.p90, 0.9), (s.p99, 0.99)) if v is not None]
    ax.plot([v for v, _ in at], [q for _, q in at], linestyle="none", marker="o", color=color, markeredgecolor="black",
            gid=f"percentiles:{cd.path}")


def _draw_histogram(ax: Axes, captures: Sequence[CaptureData], pooled: dict[str, np.ndarray], names: dict[str, str]) -> None:
    every = np.concatenate(list(pooled.values()))
    lo, hi = float(every.min()), float(every.max())
    log = lo > 0 and hi / lo > 50
    bins = np.geomspace(lo, hi, 41) if log else np.histogram_bin_edges(every, bins=40)
    for k, cd in enumerate(captures):
        if pooled[cd.path].size:
            counts, _ = np.histogram(pooled[cd.path], bins=bins)
            ax.stairs(counts, bins, lw=1.5, color=style.SERIES_COLORS[k % len(style.SERIES_COLORS)],
                      label=f"{names[cd.path]} ({pooled[cd.path].size})", gid=f"hist:{cd.path}")
    if log:
        ax.set_xscale("log")


def _draw_latency(ax: Axes, cd: CaptureData, color: str, name: str) -> None:
    first, ack, rexmit = [], [], []
    for d in cd.directions:
        x, to_ack, to_rexmit = _latencies(d)
        first.append(x)
        ack.append(to_ack)
        rexmit.append(to_rexmit)
    x, to_ack, to_rexmit = np.concatenate(first), np.concatenate(ack), np.concatenate(rexmit)
    if not x.size:
        return
    ax.plot(x, to_ack, linestyle="none", marker="o", markersize=4, color=color, label=f"{name}: to covering ACK ({np.isfinite(to_ack).sum()})",
            gid=f"latency-ack:{cd.path}")
    ax.plot(x, to_rexmit, linestyle="none", marker="x", markersize=4, color=color, alpha=0.7,
            label=f"{name}: to last retransmission ({x.size})", gid=f"latency-rexmit:{cd.path}")


def _latencies(d: DirectionData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per incident: first transmission (s), latency to the covering ACK (ms, NaN when not
    seen) and to the last retransmission (ms)."""
    table = d.loss.incident_table
    first, _ = table.ints("first_ns")
    covered, seen = table.ints("covered_ns")
    last, _ = table.ints("last_rexmit_ns")
    to_ack = np.where(seen, (covered - first) * MS, np.nan)
    return d.seconds(first), to_ack, (last - first) * MS
