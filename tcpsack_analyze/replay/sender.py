"""The simulated sender: a reference model (tcpsack_analyze.models) and what it puts on the wire.

A :class:`~tcpsack_analyze.models.base.SenderModel` says how much may be in flight (cwnd, pipe,
the receive window) and in which state the sender is; it does not pick segments, because in the
open loop the capture picks them. Here :class:`Sender` picks them as the RFCs say, then hands each
to the model (``on_send``), so the same model code runs both loops:

* entering fast recovery, the first unacknowledged segment goes at once (RFC 5681 section 3.2
  step 2 "fast retransmit", RFC 6675 section 5 step (4.3)), whatever cwnd says;
* a NewReno partial ACK resends the first unacknowledged segment (RFC 6582 section 3.2 step 5),
  and so does any partial ACK with ``bookkeeping="ns3"`` (ns-3's ``ProcessAck`` calls
  ``DoRetransmit`` on a partial ACK, SACK or not; with SACK unless the segment was resent already);
* with SACK, in recovery, RFC 6675 NextSeg() chooses: lost holes first, then new data, then the
  other holes, then one rescue retransmission (:meth:`~tcpsack_analyze.scoreboard.Scoreboard.next_seg`);
* a head the model marked lost outside recovery (``bookkeeping="ns3"``: ns-3's emulated SACK,
  :attr:`~tcpsack_analyze.models.base.SenderModel.head_marked_lost`) is resent once, window
  permitting, before new data (NextSeg rule 1 in any state, as ns-3's ``SendPendingData``);
* after a timeout (state ``loss``, also Tahoe's fast retransmit), go-back-N from the cumulative
  ACK up to what was sent before (RFC 5681 section 3.1), skipping SACKed data when the scoreboard
  kept it (only real SACK blocks: blocks a SACK model emulated from a non-SACK receiver's
  duplicate ACKs can cover a hole after a partial ACK, and skipping it would stall the transfer);
* otherwise new data while the window allows and the application has some.

The application (:class:`Application`) is a bulk transfer of ``total`` octets, or writes at
given times (a thin stream: ``write`` octets every ``interval_ns``, as paper 001's game and sensor
traffic; or the times a capture's sender first sent each octet).

A resend carries the outstanding data after it, up to SMSS (``bundle``, the default: Linux's
``tcp_retrans_collapse``, paper 001 section 4.3.2's piggybacking in retransmitted packets, which
matters for thin streams of small segments); with ``bundle=False`` it repeats the segment first
sent from there.

Left out: tail loss probes and RACK's reordering timer (no timer besides the RTO), pacing,
Nagle, bundling of unacknowledged data into *new* segments (paper 001 section 4.3.1), and
segments shorter than SMSS except at the end of what the application has written.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from tcpsack_analyze.events import Ack, Placement, Send
from tcpsack_analyze.models.base import LOSS, RECOVERY, SenderModel
from tcpsack_analyze.reader.decode import ACK, PSH

PSH_ACK = PSH | ACK


@dataclass(frozen=True)
class Application:
    """What the application gives the sender: ``total`` octets, all at time 0 (bulk), or
    ``write`` octets every ``interval_ns`` from time 0, or ``written`` octets by each of
    ``times_ns`` (cumulative, ascending)."""

    total: int
    write: int = 0
    interval_ns: int | None = None
    times_ns: tuple[int, ...] = ()
    written: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.total <= 0:
            raise ValueError(f"the application must have data to send, not {self.total} octets")
        if self.interval_ns is not None and (self.interval_ns <= 0 or self.write <= 0):
            raise ValueError("a periodic application needs write > 0 and interval_ns > 0")

    @property
    def bulk(self) -> bool:
        return self.interval_ns is None and not self.times_ns

    def available(self, now: int) -> int:
        """Octets written by ``now`` (from time 0)."""
        if self.interval_ns is not None:
            return min(self.total, (now // self.interval_ns + 1) * self.write)
        if self.times_ns:
            k = bisect_right(self.times_ns, now)
            return self.written[k - 1] if k else 0
        return self.total

    def next_write_ns(self, now: int) -> int | None:
        """When the application next writes after ``now`` (None: never again)."""
        if self.available(now) >= self.total:
            return None
        if self.interval_ns is not None:
            return (now // self.interval_ns + 1) * self.interval_ns
        k = bisect_right(self.times_ns, now)
        return self.times_ns[k] if k < len(self.times_ns) else None


@dataclass
class Sender:
    """A model and the segments it sends (module docstring). Octets count from ``start``."""

    model: SenderModel
    app: Application
    start: int = 1
    sent: list[Send] = field(default_factory=list)
    record: int = 0  # the next record number (shared with the ACKs by the simulator)
    loss_entries: int = 0  # entries into the loss state (an RTO, Tahoe's fast retransmit): cwnd falling edges
    bundle: bool = True  # a resend carries the outstanding data after it, up to SMSS (module docstring)
    _bounds: dict[int, int] = field(default_factory=dict)  # first octet -> end of each new segment (bundle off)
    _gbn: int | None = None  # go-back-N's next octet in the loss state
    _head_due: bool = False  # the first unacknowledged segment must go now
    _head_resent: int | None = None  # the marked-lost head resent outside recovery

    @property
    def done(self) -> bool:
        """Everything the application will write is acknowledged."""
        return self.model.board.high_ack >= self.start + self.app.total

    def on_ack(self, ack: Ack) -> None:
        m = self.model
        before_state, before_una = m.state, m.board.high_ack
        m.on_ack(ack)
        if m.state is LOSS and before_state is not LOSS:
            self.loss_entries += 1
            self._gbn = m.board.high_ack  # Tahoe: fast retransmit, then go-back-N in slow start
        elif m.state is RECOVERY and before_state is not RECOVERY:
            self._head_due = True  # fast retransmit
        elif (m.state is RECOVERY and before_state is RECOVERY and m.board.high_ack > before_una
              and (not m.uses_sack or (m.options.bookkeeping == "ns3"
                                       and (not m.receiver_sacks or m.board.high_ack >= m.board.high_rxt)))):
            # NewReno partial ACK (Reno leaves recovery on it); ns-3 resends the new head on any
            # partial ACK (DoRetransmit), with SACK unless it was resent already
            self._head_due = True
        if m.state is not LOSS:
            self._gbn = None

    def on_timeout(self, now: int) -> None:
        if self.model.state is not LOSS:
            self.loss_entries += 1
        self.model.on_timeout(now)
        self._gbn = self.model.board.high_ack
        self._head_due = False

    def transmit(self, now: int) -> list[Send]:
        """Everything the sender puts on the wire at ``now``, in order."""
        out = []
        while (seg := self._next(now)) is not None:
            start, end, forced, rescue = seg
            resent = start < self.model.board.high_data
            if not forced and not self._fits(end - start, resent):
                break
            out.append(self._send(now, start, end, resent, rescue))
        return out

    def _fits(self, length: int, resent: bool) -> bool:
        """cwnd - pipe has room for ``length`` octets; the receive window bounds only what goes
        beyond HighData (RFC 5681 section 3.1, RFC 6675 step (C)): a resend lies within it."""
        m = self.model
        return m.cwnd - m.pipe >= length if resent else m.can_send(length)

    def _next(self, now: int) -> tuple[int, int, bool, bool] | None:
        """The next segment as (start, end, sent whatever the window says, rescue)."""
        m, board, smss = self.model, self.model.board, self.model.smss
        una, high = board.high_ack, board.high_data
        if self._head_due:
            self._head_due = False
            if una < high:
                return una, self._resend_end(una), True, False
        if m.state is LOSS and self._gbn is not None:
            self._gbn = max(self._gbn, una)
            for a, b in board.sacked_ranges() if m.receiver_sacks else ():  # SACKed octets kept across the RTO
                if a <= self._gbn < b:
                    self._gbn = b
            if self._gbn < high:
                return self._gbn, self._resend_end(self._gbn), False, False
        if m.head_marked_lost and m.state is not RECOVERY and self._head_resent != una:
            self._head_resent = una
            return una, self._resend_end(una), False, False
        new = self.start + self.app.available(now) - high
        if m.uses_sack and m.state is RECOVERY:
            window_end = una + m.rwnd if m.rwnd is not None else None
            nxt = board.next_seg(max(new, 0), window_end)
            if nxt is None:
                return None
            end = nxt.end if nxt.start >= high or self.bundle else min(nxt.end, self._resend_end(nxt.start))
            return nxt.start, end, False, nxt.rule == 4
        if new > 0:
            return high, high + min(smss, new), False, False
        return None

    def _resend_end(self, start: int) -> int:
        """Where a resend from ``start`` ends: up to SMSS of what is outstanding (bundled), or
        the end of the segment first sent from there."""
        board = self.model.board
        full = min(start + self.model.smss, board.high_data)
        return full if self.bundle else min(self._bounds.get(start, full), full)

    def _send(self, now: int, start: int, end: int, resent: bool, rescue: bool) -> Send:
        send = Send(now, self.record, start, end, PSH_ACK, now, Placement.REXMIT if resent else Placement.NEW)
        self.record += 1
        if not resent and not self.bundle:
            self._bounds[start] = end
            if len(self._bounds) > 4096:  # forget the acknowledged ones now and then
                self._bounds = {a: b for a, b in self._bounds.items() if b > self.model.board.high_ack}
        self.model.on_send(send, rescue=rescue)
        if self._gbn is not None and start == self._gbn:
            self._gbn = end
        self.sent.append(send)
        return send


__all__ = ["Application", "Sender"]
