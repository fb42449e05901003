"""The time-sequence graph of one direction, as tcptrace/xplot and Wireshark draw it.

x: seconds since the connection's first packet; y: sequence numbers relative to the direction's
ISN. Drawn from the direction's events and loss records (:mod:`~tcpsack_analyze.plots.source`):

* each data segment as a vertical tick from its first to its last byte;
* each retransmission (:class:`~tcpsack_analyze.loss.records.Retransmission`) as a marker at
  its middle byte, in the colour and shape of its trigger (fast, early, recovery, RTO, TLP,
  ambiguous), ringed when it was later shown spurious;
* the cumulative ACK as a step line through every ACK event, the receive window's right edge
  (ACK + advertised window) as another, and each SACK block as a vertical range at its ACK's
  time (D-SACK blocks apart);
* holes filled below the highest sequence seen (:class:`~tcpsack_analyze.loss.records.Fill`,
  by cause: a retransmission, which is how one shows at a receiver-side capture, or reordering);
* zero-window probes; lost transmissions (downstream: seen here then lost; upstream: never seen,
  marked where the hole appeared); with a lab truth file, the emulator's drops.

:func:`marks` computes what is drawn (plain arrays, shared with the interactive page of
:mod:`~tcpsack_analyze.plots.interactive`), :func:`draw` draws them with matplotlib, and
:func:`timeseq` does both. A window (:func:`window`) draws one time range, or the close-up of one
loss incident (from a few events before its original transmission to its covering ACK, with its
triggers and latencies in the title). Above :data:`THIN_ABOVE` ticks or ACK points, ticks and
lines are thinned to what the pixel columns can show (:mod:`~tcpsack_analyze.plots.decimate`);
retransmissions, losses and drops never are.
"""
from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tcpsack_analyze.events import Placement
from tcpsack_analyze.loss.records import DOWNSTREAM, TRIGGERS, UPSTREAM
from tcpsack_analyze.loss.regions import incident_resends
from tcpsack_analyze.loss.table import RecordTable
from tcpsack_analyze.plots import style
from tcpsack_analyze.plots.decimate import envelope, m4, union_per_column
from tcpsack_analyze.plots.kernel import truth_drops
from tcpsack_analyze.plots.source import DirectionData, PlotError
from tcpsack_analyze.truth import Truth

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["CONTEXT", "THIN_ABOVE", "Points", "Ranges", "TimeSeqMarks", "Window", "draw", "incident_windows", "marks", "seq_range", "timeseq", "window"]

CONTEXT = 3  # events shown before an incident's original transmission (as ``details``)
THIN_ABOVE = 20_000  # ticks or line points of one kind beyond which they are thinned
COLUMNS = 2 * int(style.FIGSIZE[0] * style.DPI)  # pixel columns thinning keeps (twice the width)
CROWDED = 300  # point marks (retransmissions, losses, drops) beyond which they are drawn half size


@dataclass(frozen=True)
class Window:
    """The time range drawn, ns on the capture clock (inclusive), and what it shows."""

    start_ns: int
    end_ns: int
    caption: str = ""
    short: str = ""  # a shorter caption, for lists


@dataclass(frozen=True)
class Points:
    """Marks at points: x seconds, y sequence number; ``index`` the capture record of each."""

    x: np.ndarray
    y: np.ndarray
    index: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))

    def __len__(self) -> int:
        return int(self.x.size)


@dataclass(frozen=True)
class Ranges:
    """Vertical ranges [lo, hi] at x seconds."""

    x: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def __len__(self) -> int:
        return int(self.x.size)

    def polyline(self) -> tuple[np.ndarray, np.ndarray]:
        """The ranges as one line broken by NaN (x, x, NaN per range): drawn as one path, which
        is what keeps a graph of a million segments fast."""
        gap = np.full(self.x.size, np.nan)
        return (np.column_stack([self.x, self.x, gap]).ravel(),
                np.column_stack([self.lo.astype(np.float64), self.hi.astype(np.float64), gap]).ravel())


@dataclass(frozen=True)
class TimeSeqMarks:
    """Everything one time-sequence graph draws, in seconds and relative sequence numbers."""

    title: str
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    data: Ranges
    data_count: int  # data segments in the window (``data`` holds fewer when thinned)
    rexmit: dict[str, Points]  # by trigger, every retransmission in the window
    spurious: Points
    ack: Points
    ack_count: int  # ACK events in the window (``ack`` holds fewer when thinned)
    rwnd: Points
    sack: Ranges
    sack_count: int  # SACK blocks in the window (``sack`` holds fewer when thinned)
    dsack: Ranges
    probes: Points
    lost: dict[str, Points]  # DOWNSTREAM / UPSTREAM
    fills: dict[str, Points]  # holes filled below the highest sequence seen, by cause
    drops: Points  # the emulator's, from a truth file

    @property
    def thinned(self) -> bool:
        return len(self.data) < self.data_count or len(self.ack) < self.ack_count or len(self.sack) < self.sack_count


def window(data: DirectionData, *, from_s: float | None = None, to_s: float | None = None, around_loss: int | None = None) -> Window:
    """The time range to draw: ``from_s``..``to_s`` seconds since the connection's first packet
    (either may be None: from the first / to the last event), or the close-up of loss incident
    ``around_loss`` (its position in the direction's incident table, ``data.loss.incidents``).
    Raises :class:`PlotError` for an incident that does not exist or a range without events."""
    ev = data.require_events()
    if around_loss is not None:
        n = len(data.loss.incident_table)
        if not 0 <= around_loss < n:
            have = f"incidents 0-{n - 1}" if n else "no loss incidents"
            raise PlotError(f"{data.name}: no loss incident {around_loss} (it has {have})")
        return incident_windows(data)[around_loss]
    lo = int(ev.time_ns.min()) if from_s is None else data.start_ns + round(from_s * 1e9)
    hi = int(ev.time_ns.max()) if to_s is None else data.start_ns + round(to_s * 1e9)
    inside = np.count_nonzero((ev.time_ns >= lo) & (ev.time_ns <= hi))
    if not inside:
        shown = f"{'start' if from_s is None else f'{from_s:g} s'} to {'end' if to_s is None else f'{to_s:g} s'}"
        raise PlotError(f"{data.name}: no packets from {shown} (its events span {data.seconds(ev.time_ns.min()):.3f}-{data.seconds(ev.time_ns.max()):.3f} s)")
    return Window(lo, hi, "" if from_s is None and to_s is None else f"{data.seconds(lo):.3f}-{data.seconds(hi):.3f} s")


def incident_windows(data: DirectionData) -> list[Window]:
    """The close-up of each loss incident of ``data``, in the order of ``data.loss.incidents``:
    from :data:`CONTEXT` events before its original transmission to its covering ACK (or, not
    seen, :data:`CONTEXT` events after its last retransmission), captioned with its bytes,
    retransmissions and triggers, and its two recovery latencies (DOMAIN.md section 5). Events
    are taken to be in time order, as a capture's records are."""
    t = data.require_events().time_ns
    out = []
    for k, (inc, resends) in enumerate(zip(data.loss.incidents, incident_resends(data.loss))):
        before = int(np.searchsorted(t, inc.first_ns, side="left"))
        lo = int(t[max(before - CONTEXT, 0)]) if before else inc.first_ns
        hi = inc.covered_ns
        if hi is None:
            after = int(np.searchsorted(t, inc.last_rexmit_ns, side="right"))
            hi = int(t[min(after + CONTEXT, t.size) - 1]) if t.size else inc.last_rexmit_ns
        triggers = ", ".join(sorted({r.trigger + (" (spurious)" if r.spurious else "") for r in resends})) or "filled"
        to_ack = "not seen" if inc.latency_ack_ns is None else f"{inc.latency_ack_ns / 1e6:.1f} ms"
        caption = (
            f"loss incident {k}: bytes {inc.start}-{inc.end} lost {inc.where}, {inc.retransmissions} retransmission(s): {triggers}; "
            f"first transmission to last retransmission {inc.latency_rexmit_ns / 1e6:.1f} ms, to covering ACK {to_ack}"
        )
        short = f"{k}: bytes {inc.start}-{inc.end}, {triggers}; to covering ACK {to_ack}"
        out.append(Window(lo, max(hi, lo), caption, short))
    return out


def seq_range(data: DirectionData, win: Window) -> tuple[float, float]:
    """The sequence numbers the data sends and ACKs of ``win`` span, padded by 3% (at least one
    MSS): the y range of a close-up."""
    ev = data.require_events()
    i0, i1 = np.searchsorted(ev.time_ns, [win.start_ns, win.end_ns], side="left")
    part = ev.take(slice(int(i0), int(i1) + 1))
    sends, acks = part.is_data, part.is_ack & (part.ack >= 0)
    seq = np.concatenate([part.start[sends], part.end[sends], part.ack[acks]])
    lo, hi = (float(seq.min()), float(seq.max())) if seq.size else (0.0, 1.0)
    pad = max((hi - lo) * 0.03, float(data.mss))
    return lo - pad, hi + pad


def marks(data: DirectionData, win: Window | None = None, truth: Truth | None = None, columns: int | None = None) -> TimeSeqMarks:
    """What the graph of ``data`` draws in ``win`` (the whole direction when None), thinned to
    ``columns`` pixel columns (:data:`COLUMNS` when None) above :data:`THIN_ABOVE` marks."""
    ev = data.require_events()
    columns = columns or COLUMNS
    win = win or window(data)
    keep = (ev.time_ns >= win.start_ns) & (ev.time_ns <= win.end_ns)
    x0, x1 = float(data.seconds(win.start_ns)), float(data.seconds(win.end_ns))
    t = data.seconds(ev.time_ns)

    sends = keep & ev.is_data
    data_x, data_lo, data_hi = t[sends], ev.start[sends], ev.end[sends]
    data_count = int(data_x.size)
    if data_count > THIN_ABOVE:
        data_x, data_lo, data_hi = envelope(data_x, data_lo, data_hi, x0, x1, columns)

    acks = keep & ev.is_ack & (ev.ack >= 0)
    ack_x, ack_y, ack_i = t[acks], ev.ack[acks], ev.index[acks]
    ack_count = int(ack_x.size)
    if ack_count > THIN_ABOVE:
        k = m4(ack_x, ack_y, x0, x1, columns)
        ack_x, ack_y, ack_i = ack_x[k], ack_y[k], ack_i[k]
    has_win = keep & ev.is_ack & (ev.ack >= 0) & (ev.win >= 0)
    win_x, win_y = t[has_win], ev.ack[has_win] + ev.win[has_win]
    if win_x.size > THIN_ABOVE:
        k = m4(win_x, win_y, x0, x1, columns)
        win_x, win_y = win_x[k], win_y[k]

    sack, dsack = _sack_ranges(data, keep)
    sack_count = len(sack)
    if sack_count > THIN_ABOVE:
        sack = Ranges(*union_per_column(sack.x, sack.lo, sack.hi, x0, x1, columns))
    probe = keep & ev.is_send & (ev.placement == Placement.PROBE)

    rexmit, spurious = _rexmits(data, win)
    lost = _lost(data, win)
    fills = _fills(data, win)
    drops = _drops(data, win, truth)

    seq = np.concatenate([ev.start[sends], ev.end[sends], ev.ack[acks], [p for pts in (*rexmit.values(), *lost.values(), drops) for p in pts.y]])
    ylo, yhi = (float(seq.min()), float(seq.max())) if seq.size else (0.0, 1.0)
    pad_y = max((yhi - ylo) * 0.03, float(data.mss))
    pad_x = max((x1 - x0) * 0.01, 1e-6)
    title = "\n".join([f"Time-sequence graph: {data.name}", *textwrap.wrap(win.caption, 130)])
    return TimeSeqMarks(
        title=title,
        xlim=(x0 - pad_x, x1 + pad_x),
        ylim=(ylo - pad_y, yhi + pad_y),
        data=Ranges(data_x, data_lo, data_hi),
        data_count=data_count,
        rexmit=rexmit,
        spurious=spurious,
        ack=Points(ack_x, ack_y, ack_i),
        ack_count=ack_count,
        rwnd=Points(win_x, win_y),
        sack=sack,
        sack_count=sack_count,
        dsack=dsack,
        probes=Points(t[probe], (ev.start[probe] + ev.end[probe]) / 2, ev.index[probe]),
        lost=lost,
        fills=fills,
        drops=drops,
    )


def _sack_ranges(data: DirectionData, keep: np.ndarray) -> tuple[Ranges, Ranges]:
    """SACK blocks of the ACKs in the window as ranges at their ACK's time; the first block of
    an ACK marked D-SACK goes to the second result."""
    ev = data.require_events()
    rows = np.flatnonzero(keep & ev.is_ack & (ev.nsack > 0))
    n = ev.nsack[rows]
    row = np.repeat(rows, n)
    block = np.arange(row.size) - np.repeat(np.cumsum(n) - n, n)  # position in its ACK's option
    srow = ev.sack_row[row]  # the SACK blocks are kept only for the ACKs that carry some
    lo, hi = ev.sack[srow, block, 0], ev.sack[srow, block, 1]
    is_d = ev.dsack[row] & (block == 0)
    x = data.seconds(ev.time_ns[row])
    return Ranges(x[~is_d], lo[~is_d], hi[~is_d]), Ranges(x[is_d], lo[is_d], hi[is_d])


_NONE = Points(np.empty(0), np.empty(0))


def _grouped(data: DirectionData, table: RecordTable, win: Window, key: Sequence[object], values: Iterable[object]) -> dict[Any, Points]:
    """The records of a loss table sent (or seen) in the window, at their time and middle byte,
    grouped by ``key`` (one value per record) for each of ``values`` that occurs."""
    t, _ = table.ints("time_ns")
    start, _ = table.ints("start")
    end, _ = table.ints("end")
    index, _ = table.ints("index")
    by = np.asarray(key, dtype=object)
    inside = (t >= win.start_ns) & (t <= win.end_ns)
    x, y = data.seconds(t), (start + end) / 2
    return {v: Points(x[m], y[m], index[m]) for v in values if (m := inside & (by == v)).any()}


def _rexmits(data: DirectionData, win: Window) -> tuple[dict[str, Points], Points]:
    """Every retransmission record in the window, by trigger, and the spurious ones."""
    table = data.loss.retransmission_table
    spurious = [s is not None for s in table.column("spurious")]
    return _grouped(data, table, win, table.column("trigger"), TRIGGERS), _grouped(data, table, win, spurious, (True,)).get(True, _NONE)


def _lost(data: DirectionData, win: Window) -> dict[str, Points]:
    """Lost transmissions in the window, by where they were lost."""
    table = data.loss.lost_table
    return _grouped(data, table, win, table.column("where"), (DOWNSTREAM, UPSTREAM))


def _fills(data: DirectionData, win: Window) -> dict[str, Points]:
    """The holes filled in the window (:class:`~tcpsack_analyze.loss.records.Fill`), by cause:
    near the receiver, this is where a retransmission shows."""
    table = data.loss.fill_table
    return _grouped(data, table, win, table.column("cause"), style.FILLS)


def _drops(data: DirectionData, win: Window, truth: Truth | None) -> Points:
    if truth is None:
        return _NONE
    d = truth_drops(truth, data)
    m = (d.t >= data.seconds(win.start_ns)) & (d.t <= data.seconds(win.end_ns))
    return Points(d.t[m], (d.start[m] + d.end[m]) / 2)


def draw(m: TimeSeqMarks, ax: Axes | None = None) -> Figure:
    """Draw ``m`` on ``ax`` (a new figure when None). Each kind of mark is one artist whose
    ``gid`` names it (``data``, ``ack``, ``rwnd``, ``sack``, ``dsack``, ``probe``,
    ``rexmit:<trigger>``, ``spurious``, ``lost:<where>``, ``fill:<cause>``, ``truth-drops``), so tests and notebooks
    can find what was drawn."""
    fig, ax = style.axes(ax)
    big = m.thinned

    def ranges(r: Ranges, mark: style.Mark, gid: str, label: str, lw: float) -> None:
        if len(r):
            x, y = r.polyline()
            ax.plot(x, y, color=mark.color, lw=lw, label=label, gid=gid, rasterized=big, zorder=2, solid_capstyle="butt")

    crowded = sum(map(len, (*m.rexmit.values(), *m.lost.values(), m.drops))) > CROWDED

    def points(p: Points, mark: style.Mark, gid: str, size: float, z: float, **kw: object) -> None:
        if len(p):
            ax.plot(p.x, p.y, linestyle="none", marker=mark.marker, color=mark.color, markersize=size / 2 if crowded else size,
                    label=f"{mark.label} ({len(p)})",
                    gid=gid, zorder=z, **kw)  # type: ignore[arg-type]

    def thinned(drawn: int, count: int) -> str:
        return f"{count}, thinned to pixel columns" if drawn < count else f"{count}"

    ranges(m.data, style.DATA, "data", f"{style.DATA.label} ({thinned(len(m.data), m.data_count)})", 1.2)
    ranges(m.sack, style.SACK, "sack", f"{style.SACK.label} ({thinned(len(m.sack), m.sack_count)})", 2.5)
    ranges(m.dsack, style.DSACK, "dsack", f"{style.DSACK.label} ({len(m.dsack)})", 2.5)
    if len(m.ack):
        ax.plot(m.ack.x, m.ack.y, drawstyle="steps-post", color=style.ACK.color, lw=1.0, label=f"{style.ACK.label} ({m.ack_count} ACKs)",
                gid="ack", zorder=3, rasterized=big)
    if len(m.rwnd):
        ax.plot(m.rwnd.x, m.rwnd.y, drawstyle="steps-post", color=style.RWND.color, lw=1.0, label=style.RWND.label, gid="rwnd", zorder=1,
                rasterized=big)
    points(m.probes, style.PROBE, "probe", 6, 4)
    for trig, p in m.rexmit.items():
        points(p, style.TRIGGER_MARKS[trig], f"rexmit:{trig}", 7, 5)
    points(m.spurious, style.SPURIOUS, "spurious", 12, 6, markerfacecolor="none", markeredgewidth=0.8, alpha=0.7)
    points(m.lost.get(DOWNSTREAM, _NONE), style.LOST_DOWN, f"lost:{DOWNSTREAM}", 9, 7, markeredgewidth=2)
    points(m.lost.get(UPSTREAM, _NONE), style.LOST_UP, f"lost:{UPSTREAM}", 9, 7, markeredgewidth=2)
    for cause, p in m.fills.items():
        points(p, style.FILLS[cause], f"fill:{cause}", 7, 5)
    points(m.drops, style.TRUTH_DROP, "truth-drops", 7, 8)

    ax.set_xlim(*m.xlim)
    ax.set_ylim(*m.ylim)
    ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    ax.set_xlabel("time since the connection's first packet (s)")
    ax.set_ylabel("relative sequence number (bytes)")
    ax.set_title(m.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return fig


def timeseq(
    data: DirectionData,
    *,
    from_s: float | None = None,
    to_s: float | None = None,
    around_loss: int | None = None,
    truth: Truth | None = None,
    ax: Axes | None = None,
) -> Figure:
    """The time-sequence graph of ``data`` (whole, ``from_s``..``to_s`` seconds, or the close-up
    of loss incident ``around_loss``), with the emulator's drops from ``truth`` when given."""
    return draw(marks(data, window(data, from_s=from_s, to_s=to_s, around_loss=around_loss), truth), ax)

