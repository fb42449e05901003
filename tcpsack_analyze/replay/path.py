"""The path a replay runs over, fitted from one direction of a capture.

What the capture shows is measured; what it does not is an assumption, and :class:`PathFit`
says which is which (``notes``):

* base RTT: the smallest RTT sample of the direction (data/ACK pairs and timestamps:
  ``rtt_ms`` / ``rtt_ts_ms`` of the report), plus the capture point -> sender -> capture point
  turnaround when the capture was not made near the sender (DOMAIN.md section 1);
* bottleneck: only when the RTT samples show a queue (their 90th percentile at least
  :data:`QUEUE_SHOWN` times the smallest, both with the turnaround added away from the sender,
  where the samples cover only the path beyond the capture point; the percentile, not the largest, because a delayed ACK
  stretches a few samples by its timer, up to 200-500 ms): the rate is the fastest delivery over any one
  base RTT (octets cumulatively ACKed or SACKed over a window of one base RTT, the way BBR
  estimates BtlBw), the queue the 90th-percentile queueing delay at that rate, in segments.
  Otherwise there is no bottleneck (the sender's window and the losses set the pace), and the
  notes say so;
* receiver: SACK when the ACKs carried SACK blocks; delayed ACKs unless most of the ACKs that
  advance the cumulative ACK in order (by at most two segments) cover one segment
  (:func:`acks_every_segment`); with too few of those, when the report infers them (fewer than
  0.75 ACKs per data segment, a ratio that the duplicate ACKs of a lossy transfer, sent at once
  by any receiver, push up: ns-3's delayed-ACK receiver reads 0.83 on
  ``newreno_nosack_prr_rate_250``); the delayed-ACK timer is an assumption (40 ms, Linux's
  minimum, unless given); the receive window is the largest the receiver advertised;
* the data: the octets between the direction's lowest and highest data octet, segments of SMSS
  (the most common payload length, as ``infer``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.events import EventBatch
from tcpsack_analyze.replay.simulate import NS, Path
from tcpsack_analyze.scoreboard import Scoreboard

QUEUE_SHOWN = 1.2  # 90th-percentile RTT / smallest at least this: the capture shows a queue
IN_ORDER_ACKS_MIN = 20  # in-order ACKs needed to read the receiver's ACK pattern from them
DEFAULT_DELACK_MS = 40.0


@dataclass(frozen=True)
class PathFit:
    """A path fitted from a capture direction, and what was measured or assumed (``notes``)."""

    path: Path
    smss: int
    octets: int
    notes: tuple[str, ...]


def delivered(events: EventBatch, smss: int) -> tuple[np.ndarray, np.ndarray]:
    """(ACK times, octets delivered by then) of a direction: the cumulative ACK plus the octets
    SACKed above it, kept by the one scoreboard (RFC 6675 Update()), or, from a receiver that
    does not SACK, one SMSS per duplicate ACK (as Linux's ``tcp_add_reno_sack``), up to HighData;
    never less than before. So the cumulative ACK's jump at the end of a recovery is not a burst of delivery."""
    acks = np.flatnonzero(events.is_ack & (events.ack >= 0))
    # HighData by each ACK: an emulated segment never lies beyond what was sent (duplicate ACKs
    # of spurious resends would otherwise count as delivery past the end of the data)
    sent_end = np.where(events.is_data, events.end, 0)
    high_data = np.maximum.accumulate(sent_end)[acks] if acks.size else sent_end[:0]
    board = Scoreboard(smss)
    out = np.empty(acks.size, np.int64)
    best = 0
    for k, i in enumerate(acks.tolist()):
        blocks = events.blocks(i)
        board.update(int(events.ack[i]), blocks)
        if events.dup[i] and not blocks:
            end = min(board.high_ack + 2 * smss + board.sacked_bytes, int(high_data[k]))
            if end > board.high_ack + smss:
                board.update(board.high_ack, [(board.high_ack + smss, end)])
        best = max(best, board.high_ack + board.sacked_bytes)
        out[k] = best
    return events.time_ns[acks], out


def acks_every_segment(events: EventBatch, smss: int) -> tuple[bool, float] | None:
    """Whether the receiver ACKs every segment, and the share of in-order ACKs that cover one
    segment: among the ACKs that advance the cumulative ACK by at most two segments (in order; a
    repaired hole moves it further), a receiver with delayed ACKs covers two segments with most
    (RFC 5681 section 4.2: an ACK for at least every second full-sized segment), one without
    covers one. None with fewer than :data:`IN_ORDER_ACKS_MIN` such ACKs."""
    a = events.ack[events.is_ack & (events.ack >= 0)].astype(np.int64)
    advance = np.diff(np.maximum.accumulate(a))
    in_order = advance[(advance > 0) & (advance <= 2 * smss)]
    if in_order.size < IN_ORDER_ACKS_MIN:
        return None
    share = float((in_order <= smss).mean())
    return share >= 0.5, share


def delivery_rate(events: EventBatch, window_ns: int, smss: int) -> float | None:
    """The largest delivery (:func:`delivered`) over any ``window_ns`` of ACKs, in octets/s."""
    t, cum = delivered(events, smss)
    if window_ns <= 0 or t.size < 2:
        return None
    lo = np.searchsorted(t, t - window_ns, side="left")
    progress = cum - cum[lo]
    span = np.maximum(t - t[lo], window_ns)
    rate = float((progress / span).max()) * NS
    return rate if rate > 0 else None


def fit_path(
    events: EventBatch,
    smss: int,
    *,
    rtt_min_ms: float | None,
    rtt_high_ms: float | None,
    turnaround_ns: int | None,
    near_sender: bool,
    delayed_acks: bool | None,
    window: int | None,
    delack_ms: float | None = None,
) -> PathFit | str:
    """Fit a :class:`PathFit` to a direction's events (sender view), or say why not."""
    from tcpsack_analyze.replay.outcome import transfer_span

    octets = transfer_span(events)[0]
    if octets <= 0:
        return "no data sent in this direction: nothing to replay"
    if not (events.is_ack.any()):
        return "no ACKs for this direction's data (one-way capture?): no path to fit"
    if rtt_min_ms is None or rtt_min_ms <= 0:
        return "no RTT sample in this direction: no path to fit"
    notes = []
    rtt_ns = int(rtt_min_ms * 1e6)
    extra = 0 if near_sender else (turnaround_ns or 0)
    if extra:
        notes.append(f"base RTT {(rtt_ns + extra) / 1e6:.1f} ms: smallest RTT sample beyond the capture point "
                     f"({rtt_ns / 1e6:.2f} ms) + {extra / 1e6:.1f} ms turnaround to the sender")
    else:
        notes.append(f"base RTT {rtt_ns / 1e6:.1f} ms: smallest RTT sample")
    rtt_ns += extra
    rate = queue = None
    if rtt_high_ms is not None and rtt_high_ms * 1e6 + extra >= QUEUE_SHOWN * rtt_ns:
        rate = delivery_rate(events, rtt_ns, smss)
        if rate is not None:
            queue = max(1, round((rtt_high_ms - rtt_min_ms) * 1e6 / NS * rate / smss))
            notes.append(f"bottleneck {rate * 8 / 1e6:.3g} Mbit/s: fastest delivery over one base RTT; "
                         f"queue {queue} segments: 90th-percentile RTT - smallest at that rate")
    sack = bool((events.nsack > 0).any())
    if rate is None:
        notes.append("no bottleneck: the RTT samples show no queue (90th percentile < "
                     f"{QUEUE_SHOWN:g} x smallest)")
    notes.append("receiver SACKs (the ACKs carry SACK blocks)" if sack else "receiver does not SACK")
    every = acks_every_segment(events, smss)
    if every is not None:
        delayed = not every[0]
        how = f" ({every[1]:.0%} of the in-order ACKs cover one segment)"
    else:
        delayed = True if delayed_acks is None else delayed_acks
        how = " (assumed: too few segments to tell)" if delayed_acks is None else " (ACKs per data segment)"
    notes.append(("delayed ACKs" if delayed else "an ACK per segment") + how)
    delack = DEFAULT_DELACK_MS if delack_ms is None else delack_ms
    notes.append(f"delayed-ACK timer {delack:g} ms" + (" (assumed: Linux's minimum)" if delack_ms is None else " (given)"))
    win = window if window and window > 0 else 1 << 30
    notes.append(f"receive window {win} octets (largest advertised)" if window else "receive window unlimited (none seen)")
    path = Path(rtt_ns, rate, queue, sack, delayed, int(delack * 1e6), win)
    return PathFit(path, smss, octets, tuple(notes))


__all__ = ["DEFAULT_DELACK_MS", "IN_ORDER_ACKS_MIN", "QUEUE_SHOWN", "PathFit", "acks_every_segment", "delivery_rate", "fit_path"]
