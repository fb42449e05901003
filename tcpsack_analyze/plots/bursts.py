"""Loss patterns (DOMAIN.md section 7): burst lengths against the Gilbert-Elliott fit, losses per window.

Two panels, one group of bars per direction with losses (several captures side by side):

* the observed burst-length histogram (``LossPattern.burst_histogram``), and beside each bar,
  hatched, the number of bursts of that length the direction's Gilbert-Elliott fit
  (``LossPattern.gilbert_elliott``) expects over as many transmissions
  (:func:`expected_bursts`);
* the losses-per-window histogram (``LossPattern.losses_per_event_histogram``: losses within
  one round trip, one congestion signal).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tcpsack_analyze.loss.patterns import GilbertElliott
from tcpsack_analyze.plots import style
from tcpsack_analyze.plots.source import (
    CaptureData,
    DirectionData,
    PlotError,
    capture_name,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["MAX_SERIES", "bursts", "expected_bursts"]

MAX_SERIES = 6  # directions drawn (those with the most losses)


def expected_bursts(fit: GilbertElliott, segments: int, max_length: int) -> np.ndarray:
    """Expected number of bursts of length 1..``max_length`` in ``segments`` transmissions
    under ``fit``, with the chain in its stationary state (runs at the sequence's two ends are
    counted as if preceded and followed by a delivered transmission).

    Per transmission the chain moves (good->bad ``p``, bad->good ``r``), then the transmission is
    lost with its state's probability, so a run of exactly b losses after a delivered
    transmission has probability ``pi D_ok (T D_lost)^b T D_ok 1``, counted at each of the
    ``segments - b + 1`` places it can start.
    """
    T = np.array([[1 - fit.p, fit.p], [fit.r, 1 - fit.r]])
    total = fit.p + fit.r
    pi = np.array([fit.r / total, fit.p / total]) if total > 0 else np.array([1.0, 0.0])
    lost = np.diag([fit.loss_good, fit.loss_bad])
    ok = np.eye(2) - lost
    out = np.zeros(max_length)
    row = pi @ ok  # delivered, then the run
    ones_after = T @ ok @ np.ones(2)  # the run ends: delivered
    for b in range(1, max_length + 1):
        row = row @ T @ lost
        out[b - 1] = max(segments - b + 1, 0) * float(row @ ones_after)
    return out


def bursts(captures: Sequence[CaptureData]) -> Figure:
    """The loss-pattern figure of the chosen directions of ``captures``. Raises
    :class:`PlotError` when none of them lost anything."""
    lossy = sorted((d for cd in captures for d in cd.directions if d.report.loss.pattern.lost), key=lambda d: -d.report.loss.pattern.lost)
    if not lossy:
        names = ", ".join(capture_name(cd.path) for cd in captures)
        raise PlotError(f"{names}: no lost transmissions in the chosen directions, so no bursts to draw")
    shown = lossy[:MAX_SERIES]
    fig, (ax_b, ax_w) = style.panels(2, (13.0, 5.0))
    several = len({d.capture for d in shown}) > 1
    width = 0.8 / len(shown)
    for k, d in enumerate(shown):
        color = style.SERIES_COLORS[k % len(style.SERIES_COLORS)]
        name = _series_name(d, several)
        offset = (k - (len(shown) - 1) / 2) * width
        _draw_bursts(ax_b, d, name, color, offset, width)
        hist = d.report.loss.pattern.losses_per_event_histogram
        if hist:
            sizes = np.array(sorted(hist))
            ax_w.bar(sizes + offset, [hist[s] for s in sizes], width=width, color=color, label=f"{name} ({sum(hist.values())} windows)",
                     gid=f"windows:{d.capture}:{d.conn.id}:{d.direction.label}")
    ax_b.set(xlabel="burst length b (consecutive lost transmissions)", ylabel="bursts", title="burst lengths: observed and Gilbert-Elliott fit")
    ax_w.set(xlabel="losses in one window (one RTT)", ylabel="loss windows (events)", title="losses per window")
    for ax in (ax_b, ax_w):
        ax.xaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    what = shown[0].name if len(shown) == 1 else "; ".join(sorted({capture_name(d.capture) for d in shown}))
    fig.suptitle(f"Loss bursts: {what}" + (f" ({len(shown)} of {len(lossy)} directions with losses)" if len(shown) > 1 else ""), fontsize=10)
    return fig


def _series_name(d: DirectionData, several_captures: bool) -> str:
    own = f"conn {d.conn.id} {d.direction.label}"
    return f"{capture_name(d.capture)} {own}" if several_captures else own


def _draw_bursts(ax: Axes, d: DirectionData, name: str, color: str, offset: float, width: float) -> None:
    pattern = d.report.loss.pattern
    hist = pattern.burst_histogram
    lengths = np.array(sorted(hist))
    observed = ax.bar(lengths + offset - width / 4, [hist[b] for b in lengths], width=width / 2, color=color,
                      label=f"{name}: observed ({pattern.bursts} bursts, mean {pattern.burst_mean:.2f})",
                      gid=f"bursts:{d.capture}:{d.conn.id}:{d.direction.label}")
    fit = pattern.gilbert_elliott
    if fit is None:
        observed.set_label(f"{observed.get_label()}, no fit")
        return
    longest = int(lengths.max()) + 3  # the fit's tail beyond the longest burst seen
    expected = expected_bursts(fit, pattern.segments, longest)
    ax.bar(np.arange(1, longest + 1) + offset + width / 4, expected, width=width / 2, facecolor="none", edgecolor=color, hatch="//",
           label=f"{name}: Gilbert-Elliott (p={fit.p:.4f}, r={fit.r:.3f})", gid=f"expected:{d.capture}:{d.conn.id}:{d.direction.label}")
