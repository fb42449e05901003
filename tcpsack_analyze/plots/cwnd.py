"""The congestion window's visible traces over time (papers 000 figures 4, 5, 8 and 9).

The cwnd is not on the wire (DOMAIN.md section 8). Drawn, in segments of the direction's MSS:

* the flight size and the RFC 6675 SACK pipe after each event (:mod:`~tcpsack_analyze.plots.flight`);
* the times of timeout retransmissions, as vertical lines (the falling edges of cwnd);
* with a lab truth file, the sender kernel's cwnd and ssthresh at each ACK, the true curve,
  with its falls to one segment counted;
* ``models``: curves of reference sender models (inferred cwnd, ssthresh), one line each, as
  the caller gives them (:class:`ModelCurve`); none are drawn unless given.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tcpsack_analyze.plots import style
from tcpsack_analyze.plots.flight import flight
from tcpsack_analyze.plots.kernel import kernel_series
from tcpsack_analyze.plots.source import DirectionData
from tcpsack_analyze.plots.timeseq import window
from tcpsack_analyze.truth import Truth

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["ModelCurve", "cwnd", "falls_to_one"]


@dataclass(frozen=True)
class ModelCurve:
    """A sender model's curve: its name, seconds since the connection's first packet, and
    values in segments (a step after each time)."""

    label: str
    t: np.ndarray
    segments: np.ndarray


def falls_to_one(cwnd_segments: np.ndarray) -> int:
    """How many times the curve falls from above one segment to one or less (DOMAIN.md s. 9)."""
    low = cwnd_segments <= 1
    return int(np.count_nonzero(low[1:] & ~low[:-1]))


def cwnd(
    d: DirectionData,
    *,
    from_s: float | None = None,
    to_s: float | None = None,
    truth: Truth | None = None,
    models: Sequence[ModelCurve] = (),
    ax: Axes | None = None,
) -> Figure:
    """The cwnd figure of ``d`` from ``from_s`` to ``to_s`` seconds (default: all). Raises
    :class:`~tcpsack_analyze.plots.source.PlotError` for a range without packets."""
    win = window(d, from_s=from_s, to_s=to_s)
    lo, hi = float(d.seconds(win.start_ns)), float(d.seconds(win.end_ns))
    fig, ax = style.axes(ax)
    series = flight(d)
    m = (series.t >= lo) & (series.t <= hi)
    ax.plot(series.t[m], series.flight[m], drawstyle="steps-post", color="tab:blue", lw=3, alpha=0.5, label="flight size (snd_max - snd_una)", gid="flight")
    ax.plot(series.t[m], series.pipe[m], drawstyle="steps-post", color="tab:orange", lw=1.2, label="SACK pipe (RFC 6675)", gid="pipe")
    rto = series.rto_s[(series.rto_s >= lo) & (series.rto_s <= hi)]
    if rto.size:
        ax.vlines(rto, 0, 1, transform=ax.get_xaxis_transform(), colors=style.TRIGGER_MARKS["rto"].color, linestyles="dotted", lw=1.2,
                  label=f"RTO retransmission ({rto.size})", gid="rto")
    kernel = kernel_series(truth, d) if truth is not None else None
    if kernel is not None:
        k = (kernel.t >= lo) & (kernel.t <= hi)
        ax.plot(kernel.t[k], kernel.cwnd[k], drawstyle="steps-post", color="black", lw=1.5,
                label=f"kernel cwnd (truth; {falls_to_one(kernel.cwnd[k])} falls to 1 segment)", gid="kernel-cwnd")
        ax.plot(kernel.t[k], kernel.ssthresh[k], drawstyle="steps-post", color="gray", lw=1.2, linestyle="--", label="kernel ssthresh (truth)",
                gid="kernel-ssthresh")
    for n, model in enumerate(models):
        k = (model.t >= lo) & (model.t <= hi)
        ax.plot(model.t[k], model.segments[k], drawstyle="steps-post", lw=1.2, color=style.SERIES_COLORS[(n + 2) % len(style.SERIES_COLORS)],
                label=model.label, gid=f"model:{model.label}")
    ax.set_xlim(lo, max(hi, lo + 1e-3))  # a single event still gets a range
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time since the connection's first packet (s)")
    ax.set_ylabel(f"segments (MSS {d.mss} bytes)")
    ax.set_title(f"Congestion window traces: {d.name}" + (f"\n{win.caption}" if win.caption else ""), fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return fig
