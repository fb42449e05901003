"""The simulated receiver: cumulative ACKs, SACK blocks and delayed ACKs, as a stage.

Sans-I/O: :meth:`Receiver.on_segment` takes a segment and the time it arrives and returns the
ACK to send now, if any; :meth:`Receiver.on_timer` fires the delayed-ACK timer. The simulator
carries the ACKs back over the reverse path.

* Delayed ACKs (RFC 1122 section 4.2.3.2, RFC 5681 section 4.2): an in-order segment is
  acknowledged with the next one (every second full segment) or when the timer, started by the
  first unacknowledged one, runs out (``delack_ns``: Linux's 40 ms minimum by default). Without
  delayed ACKs every segment is acknowledged at once.
* Immediate ACKs (RFC 5681 section 4.2): for a segment above a hole, one that fills a hole, or a
  duplicate; they carry the SACK blocks. Also for the segment that completes the transfer
  (``end``): the sender closes after its last write, and the FIN that follows the last segment
  is acknowledged at once (Linux, ns-3), which acknowledges the data with it; without this the
  last odd segment would wait for the delayed-ACK timer, which no capture of a closed transfer
  shows.
* SACK (RFC 2018 section 4): up to ``max_blocks`` blocks (3 beside timestamps), the first the
  block holding the segment that triggered the ACK, the rest the other most recently changed
  ones.
* Timestamps (RFC 7323 section 4.3): the ACK echoes the TSval of the segment that last advanced
  the cumulative ACK, so a resend that fills a hole is echoed, and Eifel (RFC 3522) works.

Left out: D-SACK (RFC 2883; a duplicate is acknowledged, not reported), a receive window that
changes (the path's fixed window is advertised), and quick-ACK modes beyond the rules above.
"""
from __future__ import annotations

from dataclasses import dataclass

from tcpsack_analyze.rangeset import RangeSet


@dataclass(frozen=True)
class AckOut:
    """An ACK the receiver sends: cumulative ACK, SACK blocks, echoed TSval."""

    ack: int
    sack: tuple[tuple[int, int], ...]
    tsecr: int | None


class Receiver:
    """One direction's receiver (module docstring). ``start``: the first data octet."""

    def __init__(self, start: int, *, sack: bool = True, delayed: bool = True, delack_ns: int = 40_000_000,
                 max_blocks: int = 3, end: int | None = None) -> None:
        self.rcv_nxt = start
        self.end = end  # one past the last data octet: its segment is acknowledged at once (the FIN)
        self.sack = sack
        self.delayed = delayed
        self.delack_ns = delack_ns
        self.max_blocks = max_blocks
        self.above = RangeSet()  # data received above rcv_nxt
        self.recent: list[tuple[int, int]] = []  # blocks in the order last changed, latest first
        self.ts_recent: int | None = None
        self.unacked = 0  # in-order segments not yet acknowledged
        self.timer_ns: int | None = None  # when the delayed-ACK timer runs out
        self.acks_sent = 0

    def on_segment(self, start: int, end: int, tsval: int | None, now: int) -> AckOut | None:
        """A data segment ``[start, end)`` arrives at ``now``; returns the ACK to send now."""
        if end <= self.rcv_nxt or self.above.overlap(start, end) == end - max(start, self.rcv_nxt):
            return self._ack(None)  # a duplicate: acknowledge at once (RFC 5681 section 4.2)
        if start > self.rcv_nxt:
            self.above.add(start, end)
            self._touch(start, end)
            return self._ack((start, end))  # above a hole: immediate duplicate ACK with SACK
        filled_hole = bool(self.above)
        self.rcv_nxt = max(self.rcv_nxt, end)
        low = self.above.low
        while low is not None and low <= self.rcv_nxt:  # what was above joins
            block = next(iter(self.above))
            self.rcv_nxt = max(self.rcv_nxt, block[1])
            self.above.remove(*block)
            low = self.above.low
        self.recent = [b for b in self.recent if b[1] > self.rcv_nxt]
        if tsval is not None:
            self.ts_recent = tsval
        if filled_hole or not self.delayed or (self.end is not None and self.rcv_nxt >= self.end):
            return self._ack(None)
        self.unacked += 1
        if self.unacked >= 2:
            return self._ack(None)
        if self.timer_ns is None:
            self.timer_ns = now + self.delack_ns
        return None

    def on_timer(self, now: int) -> AckOut | None:
        """The delayed-ACK timer ran out at ``now``."""
        if self.timer_ns is None or now < self.timer_ns:
            return None
        return self._ack(None)

    def _touch(self, start: int, end: int) -> None:
        """The block holding ``[start, end)`` changed: it becomes the most recent."""
        merged = next((b for b in self.above if b[0] <= start and end <= b[1]), (start, end))
        self.recent = [merged] + [b for b in self.recent if b[1] < merged[0] or b[0] > merged[1]]

    def _ack(self, latest: tuple[int, int] | None) -> AckOut:
        self.unacked = 0
        self.timer_ns = None
        self.acks_sent += 1
        blocks: tuple[tuple[int, int], ...] = ()
        if self.sack and self.above:
            live = set(self.above)
            ordered = [b for b in self.recent if b in live] + sorted(live - set(self.recent), reverse=True)
            blocks = tuple(ordered[: self.max_blocks])
        return AckOut(self.rcv_nxt, blocks, self.ts_recent)


__all__ = ["AckOut", "Receiver"]
