"""What a lab truth file (:mod:`tcpsack_analyze.truth`) says about one plotted direction.

The truth names flows by their sender's address and port and gives absolute 32-bit sequence
numbers and capture-clock seconds; the figures want the connection's direction, sequence numbers
relative to its ISN and seconds since the connection's first packet. This module does that
translation, for the emulator's drops (time-sequence graph) and the kernel's cwnd (cwnd figure).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.events import Dir
from tcpsack_analyze.plots.source import DirectionData
from tcpsack_analyze.truth import PROBE_COLUMNS, Flow, Truth

__all__ = ["KernelSeries", "TruthDrops", "flow_of", "kernel_series", "truth_drops"]

NO_SSTHRESH = 1 << 30  # Linux's "infinite" initial ssthresh (TCP_INFINITE_SSTHRESH 0x7fffffff)


@dataclass(frozen=True)
class TruthDrops:
    """Data segments of the direction that the emulator dropped: seconds, relative [start, end)."""

    t: np.ndarray
    start: np.ndarray
    end: np.ndarray
    where: list[str | None]


@dataclass(frozen=True)
class KernelSeries:
    """The sender kernel's cwnd and ssthresh (segments) at each ACK, seconds; ssthresh NaN while
    it is still Linux's 'infinite' initial value."""

    t: np.ndarray
    cwnd: np.ndarray
    ssthresh: np.ndarray


def flow_of(truth: Truth, data: DirectionData) -> Flow | None:
    """The truth's flow whose sender sends this direction's data, or None."""
    c = data.conn
    src, sport, dst, dport = (c.a_addr, c.a_port, c.b_addr, c.b_port) if data.direction is Dir.A2B else (c.b_addr, c.b_port, c.a_addr, c.a_port)
    for f in truth.flows:
        if (f.src, f.sport, f.dst, f.dport) == (src, sport, dst, dport):
            return f
    return None


def truth_drops(truth: Truth, data: DirectionData) -> TruthDrops:
    """The emulator's drops of this direction's data segments (none when the truth does not
    know the flow, or its ISN). Sequence numbers become relative modulo 2**32, which is exact
    for the lab's transfers (far below 4 GB)."""
    flow = flow_of(truth, data)
    drops = [] if flow is None or flow.isn is None else truth.data_drops(flow.id)
    isn = 0 if flow is None or flow.isn is None else flow.isn
    t = np.array([d.t for d in drops], dtype=np.float64)
    start = np.array([((d.seq or 0) - isn) % (1 << 32) for d in drops], dtype=np.int64)
    end = start + np.array([d.len or 0 for d in drops], dtype=np.int64)
    return TruthDrops(data.seconds(np.round(t * 1e9).astype(np.int64)) if drops else t, start, end, [d.where for d in drops])


def kernel_series(truth: Truth, data: DirectionData) -> KernelSeries | None:
    """The kernel's cwnd and ssthresh of this direction's sender, or None when the truth has no
    probes of its flow."""
    flow = flow_of(truth, data)
    if flow is None or not truth.probes:
        return None
    rows = np.asarray(truth.probes, dtype=np.float64)
    col = {name: k for k, name in enumerate(PROBE_COLUMNS)}
    rows = rows[rows[:, col["flow"]] == flow.id]
    if not len(rows):
        return None
    ssthresh = rows[:, col["ssthresh"]].copy()
    ssthresh[ssthresh >= NO_SSTHRESH] = np.nan
    t = data.seconds(np.round(rows[:, col["t"]] * 1e9).astype(np.int64))
    return KernelSeries(t, rows[:, col["cwnd"]], ssthresh)
