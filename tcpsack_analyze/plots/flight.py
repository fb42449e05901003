"""Flight size and SACK pipe of one direction over time, replayed through the RFC 6675 scoreboard.

The events of the direction (:mod:`~tcpsack_analyze.events`) drive a
:class:`~tcpsack_analyze.scoreboard.Scoreboard` in capture order: each data send is
``on_send``, each ACK ``on_ack``; an ACK that detects loss enters recovery (``enter_recovery``),
and a retransmission the loss tracker classified as a timeout (trigger ``rto``) is preceded by
``on_rto``. After each event the series take:

* flight size: ``outstanding``, snd_max - snd_una (DOMAIN.md section 2), and
* pipe: ``pipe()``, RFC 6675's estimate of the octets in the network,

both in segments of the direction's MSS. A send that starts above snd_max (the capture missed
segments before it, placement ``GAP``) is replayed from snd_max, as if the missed bytes had been
sent with it. Flight size is a lower bound of cwnd while the sender is cwnd-limited.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.loss.records import RTO
from tcpsack_analyze.plots.source import DirectionData
from tcpsack_analyze.scoreboard import Scoreboard

__all__ = ["FlightSeries", "flight"]


@dataclass(frozen=True)
class FlightSeries:
    """After each event: seconds since the connection's first packet, flight size and pipe
    (segments); ``rto_s``: when the timeout retransmissions were sent."""

    t: np.ndarray
    flight: np.ndarray
    pipe: np.ndarray
    rto_s: np.ndarray


def flight(d: DirectionData) -> FlightSeries:
    """Replay ``d``'s events through a scoreboard (see the module docstring)."""
    ev = d.require_events()
    data = ev.is_data & (ev.end > ev.start)
    acks = ev.is_ack & (ev.ack >= 0)
    rows = np.flatnonzero(data | acks)
    table = d.loss.retransmission_table
    rto_index = {i for i, trig in zip(table.ints("index")[0].tolist(), table.column("trigger")) if trig == RTO}
    first = min(int(ev.start[data].min()) if data.any() else 0, int(ev.ack[acks].min()) if acks.any() else 0)
    sb = Scoreboard(d.mss, start=first)
    time_ns, index = ev.time_ns[rows].tolist(), ev.index[rows].tolist()
    flight_b = np.empty(rows.size, np.int64)
    pipe_b = np.empty(rows.size, np.int64)
    for k, r in enumerate(rows.tolist()):
        now = time_ns[k] / 1e9
        if data[r]:
            if index[k] in rto_index:
                sb.on_rto(now)
            sb.on_send(min(int(ev.start[r]), sb.high_data), int(ev.end[r]), now)
        else:
            result = sb.on_ack(int(ev.ack[r]), ev.blocks(r), now)
            if result.loss_detected:
                sb.enter_recovery(now)
        flight_b[k] = sb.outstanding
        pipe_b[k] = sb.pipe()
    rto_ns = np.array([time_ns[k] for k in range(rows.size) if data[rows[k]] and index[k] in rto_index], dtype=np.int64)
    return FlightSeries(d.seconds(ev.time_ns[rows]), flight_b / d.mss, pipe_b / d.mss, d.seconds(rto_ns))
