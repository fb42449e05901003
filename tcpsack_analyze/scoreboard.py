"""RFC 6675 SACK scoreboard for one direction of a connection, sans-I/O.

The scoreboard is the sender-side bookkeeping of RFC 6675 ("A Conservative Loss Recovery
Algorithm Based on Selective Acknowledgment (SACK) for TCP"): which octets are cumulatively
ACKed or SACKed (section 3, ``Update()``), which are presumed lost (section 4, ``IsLost()``), how
many are in the network (``SetPipe()``), what to send next (``NextSeg()`` rules 1-4), and the
loss recovery state of section 5 (``DupAcks``, ``RecoveryPoint``, ``HighRxt``, ``RescueRxt``).

It reads no clock and no capture: every event comes in as a call with its time ``now``, so the
same object serves a capture replay and the reference sender models (DOMAIN.md sections 3, 8).
Sequence numbers are 64-bit unwrapped integers; ranges are half-open ``[start, end)``.
Congestion control (cwnd, ssthresh, PRR) is the caller's business: :class:`AckResult` says what an
ACK delivered and whether loss recovery should start, and :meth:`Scoreboard.enter_recovery`
returns the fast retransmission of step (4.3).

Cost: the SACKed octets are a :class:`~tcpsack_analyze.rangeset.RangeSet`, and nothing is ever
done per octet or per segment. IsLost, the loss boundary and NextSeg look at a handful of SACKed
ranges (a window near the octet of interest, widened until it holds enough of them);
SetPipe touches the ranges below HighRxt; updates cost a RangeSet insertion. With 10 000 holes
an ACK, a NextSeg and a SetPipe take microseconds to a few hundred microseconds.

Conventions and interpretations (RFC 6675 leaves these open or states them in octets):

* **Exclusive edges.** The RFC names octets (HighACK = highest octet cumulatively ACKed, HighData
  = highest octet sent). Here ``high_ack`` is ``snd_una`` (the first unACKed octet, the ACK field)
  and ``high_data`` is ``snd_max`` (one past the highest octet sent), so the RFC's "HighACK + 1"
  is ``high_ack`` and "HighData + 1" is ``high_data``. Likewise ``high_rxt`` and ``rescue_rxt``
  are one past the RFC's octet, and ``recovery_point`` is ``high_data`` at entry; recovery ends
  (section 5 step (A)) when the cumulative ACK reaches ``recovery_point``.
* **IsLost, "DupThresh discontiguous SACKed sequences".** Segment boundaries are not kept (a
  capture's TSO super-segments are SACKed in pieces, and retransmissions are repacketised), so
  SACKed segments are counted from the SACKed ranges: each maximal SACKed range above ``seq``
  counts as ``ceil(length / SMSS)`` segments, the least number of segments of at most SMSS that
  can have carried it. Separate (discontiguous) ranges always count separately, so three small
  SACKed segments with holes between them make the octet lost, while contiguous small segments
  are counted conservatively. "SACKed above seq" means SACKed octets with sequence numbers
  greater than ``seq``. The byte rule is literal: more than ``(DupThresh - 1) * SMSS`` SACKed
  octets above ``seq``. (Under this counting the byte rule implies the segment rule; both are
  evaluated anyway.) Since IsLost can only become false as ``seq`` grows, the lost octets are
  the un-SACKed octets below one boundary, :attr:`Scoreboard.lost_below`.
* **Retransmitted octets in SetPipe** are, as in the RFC, the un-SACKed octets below
  ``high_rxt`` (step (b): ``S1 <= HighRxt``). ``high_rxt`` only moves inside loss recovery
  (its definition: "highest sequence number which has been retransmitted during the current loss
  recovery phase"), and it is the maximum over retransmissions, so a capture whose sender
  retransmits out of order cannot lower it. The rescue retransmission does not move it (rule 4).
* **Segments from NextSeg** never cover SACKed octets: rules 1 and 3 return at most SMSS octets
  from the chosen octet to the end of its hole, rule 4 at most SMSS octets ending with the highest
  un-SACKed octet and starting in its hole. Rule 2 returns at most SMSS octets, limited by the
  application (``available_new_data``) and by the receiver window (``send_window_end``).
  Rule 1.b ("less than the highest octet covered by any received SACK") uses the SACKed octets
  still above the cumulative ACK.
* **Rule 4** is only offered inside loss recovery, once per entry ("if HighACK is greater than
  RescueRxt"): :meth:`Scoreboard.enter_recovery` sets RescueRxt to the end of the fast
  retransmission (step 4.3), so the rescue also waits until the cumulative ACK passes it;
  sending it (``on_send(..., rescue=True)``) sets RescueRxt to RecoveryPoint. Taken literally,
  "HighACK > RescueRxt" needs the cumulative ACK to go at least one octet beyond the fast
  retransmission: an ACK of exactly that segment does not yet allow the rescue.
  Rules 1-3 are a function of the scoreboard alone and are offered outside recovery too.
* **Fast retransmission** (step 4.3, "the segment starting with sequence number HighACK + 1"):
  up to SMSS octets from the first un-SACKed octet, ending at its hole, which is HighACK + 1
  except for a receiver that SACKs the octet at its own cumulative ACK.
* **Duplicate ACK** (section 2): an ACK with SACK blocks that cover octets between the new
  cumulative ACK and HighData that were not SACKed before, whatever else it does. DupAcks is
  reset by an ACK that advances the cumulative ACK, then counted (outside recovery) for a
  duplicate ACK, so an ACK doing both leaves it at 1 (section 5, in the RFC's order).
* **Order within one ACK**: Update(), then the exit of step (A), then the DupAcks rules (1)-(2).
  An ACK that ends one recovery and carries new SACK information can therefore report
  ``loss_detected`` for the next one.
* **D-SACK** (RFC 2883, as Linux's ``tcp_check_dsack``): the first block is a D-SACK when its
  left edge is below this ACK's cumulative ACK field, or when a second block exists and contains
  it. The D-SACK block needs no special handling in Update(): below the cumulative ACK it is
  ignored, and inside the second block it adds nothing the second block does not.
* **Data never seen sent**: a cumulative ACK or SACK block beyond HighData means the capture
  missed the send; HighData is advanced to it instead of failing (replaying a lossy capture).
  A cumulative ACK below HighACK (a reordered, stale ACK) does not move HighACK; its SACK blocks
  are still recorded.
* **Retransmission timeout** (section 5.1): :meth:`Scoreboard.on_rto` terminates recovery, sets
  RecoveryPoint to HighData and refuses a new recovery until the cumulative ACK reaches it;
  it expunges the SACK information by default, as RFC 2018 says a sender SHOULD. It also resets
  HighRxt to HighACK and DupAcks to 0 (our choice: the go-back-N retransmissions that follow are
  outside loss recovery and do not move HighRxt).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from tcpsack_analyze.acks import dsack_first_block
from tcpsack_analyze.rangeset import RangeSet

__all__ = ["AckResult", "NextSegment", "Scoreboard"]


class NextSegment(NamedTuple):
    """What NextSeg() (RFC 6675 section 4) says to send: ``[start, end)`` and the rule (1-4).

    A named tuple, so it unpacks as ``start, end, rule``.
    """

    start: int
    end: int
    rule: int


@dataclass(frozen=True, slots=True)
class AckResult:
    """What one ACK did to the scoreboard (RFC 6675 sections 2, 4 and 5; RFC 2883).

    Attributes:
        high_ack: the cumulative ACK point after this ACK (``snd_una``).
        newly_acked: octets newly covered by the cumulative ACK (0 for a stale ACK).
        newly_sacked: octets above the new cumulative ACK that this ACK SACKed for the first time.
        sacked_then_acked: octets of ``newly_acked`` that had been SACKed before.
        delivered: ``newly_acked + newly_sacked - sacked_then_acked``, the octets whose delivery
            this ACK reports for the first time (RFC 6937 DeliveredData).
        cumulative: the ACK advanced the cumulative ACK point (it resets DupAcks, section 5).
        duplicate: a duplicate ACK in the RFC 6675 sense (section 2): it SACKed octets not
            SACKed before, whatever else it did.
        dsack: the first SACK block when it is a D-SACK (RFC 2883), else None.
        dup_acks: the DupAcks counter after this ACK.
        loss_detected: not in recovery, recovery allowed, this ACK is a duplicate ACK and
            DupAcks >= DupThresh or IsLost(HighACK + 1) (section 5 steps (1), (2)): the sender
            should now call :meth:`Scoreboard.enter_recovery`.
        exited_recovery: this ACK reached RecoveryPoint and ended loss recovery (step (A)).
    """

    high_ack: int
    newly_acked: int
    newly_sacked: int
    sacked_then_acked: int
    delivered: int
    cumulative: bool
    duplicate: bool
    dsack: tuple[int, int] | None
    dup_acks: int
    loss_detected: bool
    exited_recovery: bool


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class Scoreboard:
    """RFC 6675 scoreboard and loss recovery state for one direction (see module docstring).

    Args:
        smss: sender maximum segment size in octets (SMSS).
        dup_thresh: DupThresh, the duplicate ACK threshold (3 in RFC 6675 section 2).
        start: the first sequence number (relative ISN + 1 after unwrapping; 0 by default).
    """

    def __init__(self, smss: int, dup_thresh: int = 3, start: int = 0) -> None:
        if smss <= 0:
            raise ValueError(f"smss must be positive, got {smss}")
        if dup_thresh <= 0:
            raise ValueError(f"dup_thresh must be positive, got {dup_thresh}")
        self._smss = smss
        self.dup_thresh = dup_thresh
        self._sacked = RangeSet()  # SACKed octets, always within [high_ack, high_data)
        self._sacked_bytes = 0
        self._high_ack = start
        self._high_data = start
        self._high_rxt = start
        self._rescue_rxt: int | None = None
        self._recovery_point: int | None = None
        self._in_recovery = False
        self._rto_recovery_point: int | None = None
        self._dup_acks = 0
        self._lost_below: int | None = None  # cache of the IsLost boundary, None = stale
        self._sacked_below_lost = 0  # SACKed octets below it (valid with the cache)
        self.recovery_start_time: float | None = None
        self.last_ack_time: float | None = None
        self.last_send_time: float | None = None

    @property
    def smss(self) -> int:
        """SMSS, the segment size IsLost counts in."""
        return self._smss

    @smss.setter
    def smss(self, value: int) -> None:
        """A capture may learn the SMSS late (no MSS option: the largest segment seen so far)."""
        if value <= 0:
            raise ValueError(f"smss must be positive, got {value}")
        if value != self._smss:
            self._smss = value
            self._lost_below = None

    # ------------------------------------------------------------------ state (read-only)

    @property
    def high_ack(self) -> int:
        """HighACK + 1 in the RFC's terms: the first octet not cumulatively ACKed (snd_una)."""
        return self._high_ack

    @property
    def high_data(self) -> int:
        """HighData + 1 in the RFC's terms: one past the highest octet sent (snd_max)."""
        return self._high_data

    @property
    def high_rxt(self) -> int:
        """One past HighRxt, the highest octet retransmitted in the current recovery."""
        return self._high_rxt

    @property
    def rescue_rxt(self) -> int | None:
        """One past RescueRxt (None when undefined): rule 4 needs ``high_ack > rescue_rxt``."""
        return self._rescue_rxt

    @property
    def recovery_point(self) -> int | None:
        """RecoveryPoint: ``high_data`` when recovery (or an RTO) began; None before any."""
        return self._recovery_point

    @property
    def in_recovery(self) -> bool:
        """Whether the sender is in SACK loss recovery (RFC 6675 section 5)."""
        return self._in_recovery

    @property
    def dup_acks(self) -> int:
        """DupAcks: duplicate ACKs since the last cumulative ACK, outside recovery."""
        return self._dup_acks

    @property
    def high_sack(self) -> int | None:
        """One past the highest SACKed octet above the cumulative ACK, or None."""
        return self._sacked.high

    @property
    def sacked_bytes(self) -> int:
        """Number of SACKed octets above the cumulative ACK."""
        return self._sacked_bytes

    @property
    def outstanding(self) -> int:
        """Octets sent and not cumulatively ACKed (FlightSize before SACK, DOMAIN.md 2)."""
        return self._high_data - self._high_ack

    def sacked_within(self, start: int, end: int) -> int:
        """SACKed octets in ``[start, end)``."""
        return self._sacked.overlap(start, end)

    def sacked_ranges(self) -> Iterator[tuple[int, int]]:
        """The SACKed ranges above the cumulative ACK, in order."""
        return iter(self._sacked)

    def holes(self) -> list[tuple[int, int]]:
        """The un-SACKed ranges of ``[high_ack, high_data)``, in order."""
        return self._sacked.gaps(self._high_ack, self._high_data)

    @property
    def can_enter_recovery(self) -> bool:
        """False while in recovery, or after an RTO until HighACK reaches its RecoveryPoint."""
        if self._in_recovery:
            return False
        return self._rto_recovery_point is None or self._high_ack >= self._rto_recovery_point

    # ------------------------------------------------------------------ IsLost

    @property
    def lost_below(self) -> int:
        """Every un-SACKed octet in ``[high_ack, lost_below)`` is lost (IsLost), none above.

        IsLost is monotone (fewer SACKed octets lie above a higher octet), so for un-SACKed
        octets it is a prefix, ending at the start of the highest SACKed range whose range and
        those above it satisfy IsLost. Found from the top down, looking at a window below the
        highest SACK that grows fourfold until it holds enough ranges: only about DupThresh
        ranges are visited however many holes there are. Cached until the SACKed set changes.
        """
        if self._lost_below is None:
            self._lost_below, above = self._find_lost_below()
            self._sacked_below_lost = self._sacked_bytes - above
        return self._lost_below

    def _find_lost_below(self) -> tuple[int, int]:
        """(lost_below, SACKed octets at or above it)."""
        high = self._sacked.high
        if high is None:
            return self._high_ack, 0
        limit = (self.dup_thresh - 1) * self.smss
        width = 2 * self.dup_thresh * self.smss
        while True:
            lo = max(self._high_ack, high - width)
            ranges = self._sacked.intersecting(lo, high)
            count = 0
            nbytes = 0
            for i in range(len(ranges) - 1, -1, -1):
                start, end = ranges[i]
                if i == 0 and start == lo and lo > self._high_ack:
                    break  # may be clipped by the window: widen it
                count += _ceil_div(end - start, self.smss)
                nbytes += end - start
                if count >= self.dup_thresh or nbytes > limit:
                    return start, nbytes
            else:
                if lo == self._high_ack:
                    return self._high_ack, self._sacked_bytes  # nothing is lost
            width *= 4

    def is_lost(self, seq: int) -> bool:
        """IsLost(seq), RFC 6675 section 4.

        True when at least DupThresh discontiguous SACKed segments, or more than
        ``(DupThresh - 1) * SMSS`` SACKed octets, lie above ``seq`` (octets ``> seq``). Each
        maximal SACKed range counts as ``ceil(length / SMSS)`` segments (module docstring).
        """
        if seq >= self._high_ack and seq not in self._sacked:
            # an un-SACKed octet: the ranges above it are those above its hole
            return seq < self.lost_below
        count = 0
        nbytes = 0
        limit = (self.dup_thresh - 1) * self.smss
        high = self._sacked.high
        if high is None:
            return False
        for start, end in self._sacked.intersecting(seq + 1, high):
            count += _ceil_div(end - start, self.smss)
            nbytes += end - start
        return count >= self.dup_thresh or nbytes > limit

    # ------------------------------------------------------------------ SetPipe

    def pipe(self, lost_below: int | None = None) -> int:
        """SetPipe(), RFC 6675 section 4: octets estimated in the network.

        For each octet of ``[HighACK, HighData)`` not SACKed: +1 if not IsLost, +1 if it is
        below ``high_rxt`` (retransmitted in this recovery).

        ``lost_below`` replaces the IsLost boundary (:attr:`lost_below`) for a sender with
        another loss detection: RACK (RFC 8985 section 6.2) in recovery presumes every
        un-SACKed octet below the highest SACK lost.
        """
        lo, hi = self._high_ack, self._high_data
        unsacked = (hi - lo) - self._sacked_bytes
        if lost_below is None:
            lost_end = self.lost_below
            lost = (lost_end - lo) - self._sacked_below_lost
        else:
            lost_end = min(max(lost_below, lo), hi)
            lost = (lost_end - lo) - self._sacked.overlap(lo, lost_end) if lost_end > lo else 0
        rxt_end = min(max(self._high_rxt, lo), hi)
        rxt = (rxt_end - lo) - self._sacked.overlap(lo, rxt_end) if rxt_end > lo else 0
        return unsacked - lost + rxt

    def pipe_segments(self) -> int:
        """SetPipe() counted in segments rather than octets.

        Each hole (maximal un-SACKed range) contributes ``ceil(n / SMSS)`` for its ``n`` octets
        that are not lost, plus ``ceil(m / SMSS)`` for its ``m`` octets below ``high_rxt``: the
        same "least number of segments" counting that IsLost applies to SACKed ranges.
        """
        lost_end = self.lost_below
        rxt_end = self._high_rxt
        total = 0
        for a, b in self.holes():
            not_lost = b - max(a, min(b, lost_end))
            rxt = max(0, min(b, rxt_end) - a)
            total += _ceil_div(not_lost, self.smss) + _ceil_div(rxt, self.smss)
        return total

    # ------------------------------------------------------------------ NextSeg

    def _first_hole_segment(self, seq: int) -> tuple[int, int] | None:
        """Up to SMSS octets from the lowest un-SACKed octet of ``[seq, high_data)`` to the end of
        its hole, or None. Looks at a window that grows fourfold until it holds a hole (between
        two SACKed ranges there always is one), so few ranges are visited."""
        width = 2 * self.smss
        while True:
            hi = min(self._high_data, seq + width)
            gaps = self._sacked.gaps(seq, hi)
            if gaps:
                start = gaps[0][0]
                break
            if hi == self._high_data:
                return None
            width *= 4
        return self._sacked.gaps(start, min(self._high_data, start + self.smss))[0]

    def _last_hole_segment(self) -> tuple[int, int] | None:
        """Up to SMSS octets ending with the highest un-SACKed octet of ``[high_ack,
        high_data)`` and starting in its hole, or None (windowed like the above)."""
        width = 2 * self.smss
        while True:
            lo = max(self._high_ack, self._high_data - width)
            gaps = self._sacked.gaps(lo, self._high_data)
            if gaps:
                end = gaps[-1][1]
                break
            if lo == self._high_ack:
                return None
            width *= 4
        return self._sacked.gaps(max(self._high_ack, end - self.smss), end)[-1]

    def next_seg(
        self, available_new_data: int = 0, send_window_end: int | None = None
    ) -> NextSegment | None:
        """NextSeg(), RFC 6675 section 4: the next range to send and the rule that chose it.

        Args:
            available_new_data: octets of unsent data the application has beyond HighData
                (rule 2).
            send_window_end: one past the highest octet the receiver's window allows
                (``snd_una + rwnd``); None for no limit (rule 2).

        A query only: nothing changes until the segment is passed to :meth:`on_send`
        (with ``rescue=True`` for rule 4).
        """
        first = max(self._high_ack, self._high_rxt)  # rule (1.a): S2 > HighRxt
        high_sack = self._sacked.high
        candidate = None
        if high_sack is not None and first < high_sack:
            candidate = self._first_hole_segment(first)
            if candidate is not None and candidate[0] >= high_sack:  # rule (1.b)
                candidate = None
        # rule 1: lowest lost octet not yet retransmitted, below the highest SACK
        if candidate is not None and candidate[0] < self.lost_below:
            return NextSegment(candidate[0], candidate[1], 1)
        # rule 2: new data, if the application has some and the receiver window allows
        n = min(self.smss, available_new_data)
        if send_window_end is not None:
            n = min(n, send_window_end - self._high_data)
        if n > 0:
            return NextSegment(self._high_data, self._high_data + n, 2)
        # rule 3: lowest un-SACKed octet not yet retransmitted, below the highest SACK
        if candidate is not None:
            return NextSegment(candidate[0], candidate[1], 3)
        # rule 4: one rescue retransmission per recovery, ending at the highest un-SACKed octet
        if self._in_recovery and (self._rescue_rxt is None or self._high_ack > self._rescue_rxt):
            rescue = self._last_hole_segment()
            if rescue is not None:
                return NextSegment(rescue[0], rescue[1], 4)
        return None

    # ------------------------------------------------------------------ events

    def on_send(
        self,
        seq: int,
        end: int,
        now: float,
        retransmission: bool | None = None,
        *,
        rescue: bool = False,
    ) -> None:
        """A data segment ``[seq, end)`` was sent at time ``now``.

        Octets below HighData are retransmitted, those above advance HighData (step C.3). In
        recovery a retransmission moves HighRxt up to its last retransmitted octet (step C.2),
        unless it is the rule 4 rescue retransmission (``rescue=True``), which sets RescueRxt to
        RecoveryPoint instead (rule 4).

        Args:
            retransmission: whether the segment repeats sent data; None infers it
                (``seq < high_data``). A value that contradicts the sequence numbers raises
                ValueError.
            rescue: the segment is the rescue retransmission of NextSeg() rule 4.
        """
        if end <= seq:
            raise ValueError(f"empty or inverted segment [{seq}, {end})")
        if seq > self._high_data:
            raise ValueError(
                f"segment [{seq}, {end}) leaves a gap after HighData {self._high_data}"
            )
        is_rxt = seq < self._high_data
        if retransmission is not None and retransmission != is_rxt:
            raise ValueError(
                f"segment [{seq}, {end}) with HighData {self._high_data}: "
                f"retransmission={retransmission} contradicts the sequence numbers"
            )
        if rescue and not is_rxt:
            raise ValueError("a rescue retransmission must repeat sent data")
        self.last_send_time = now
        if is_rxt and self._in_recovery:
            if rescue:
                self._rescue_rxt = self._recovery_point
            else:
                self._high_rxt = max(self._high_rxt, min(end, self._high_data))
        self._high_data = max(self._high_data, end)

    def on_ack(
        self, cum_ack: int, sack_blocks: Sequence[tuple[int, int]], now: float
    ) -> AckResult:
        """An ACK arrived at time ``now``: Update() and the section 5 ACK rules.

        ``sack_blocks`` are the SACK option's (left edge, right edge) pairs in the order they
        appear in the option (the first may be a D-SACK). Records the cumulative ACK and the
        SACK blocks (Update(), section 4; SACKed data above the cumulative ACK is kept across
        the end of recovery, step (A)), ends recovery when the cumulative ACK reaches
        RecoveryPoint (step (A)), resets and counts DupAcks, and tells whether loss recovery
        should start (steps (1), (2)).
        """
        self.last_ack_time = now
        # RFC 2883 D-SACK, judged against this ACK's own cumulative ACK field
        dsack: tuple[int, int] | None = None
        if sack_blocks:
            s1, e1 = sack_blocks[1] if len(sack_blocks) > 1 else (0, 0)
            if dsack_first_block(cum_ack, len(sack_blocks), *sack_blocks[0], s1, e1):
                dsack = sack_blocks[0]

        cumulative = cum_ack > self._high_ack
        newly_acked = cum_ack - self._high_ack if cumulative else 0
        sacked_then_acked, newly_sacked = self.update(cum_ack, sack_blocks)

        exited = False
        if (
            self._in_recovery
            and self._recovery_point is not None
            and self._high_ack >= self._recovery_point
        ):
            self._in_recovery = False
            exited = True

        duplicate = newly_sacked > 0
        if cumulative:
            self._dup_acks = 0
        loss_detected = False
        if duplicate and not self._in_recovery:
            self._dup_acks += 1
            if self.can_enter_recovery and (
                self._dup_acks >= self.dup_thresh or self.is_lost(self._high_ack)
            ):
                loss_detected = True

        return AckResult(
            high_ack=self._high_ack,
            newly_acked=newly_acked,
            newly_sacked=newly_sacked,
            sacked_then_acked=sacked_then_acked,
            delivered=newly_acked + newly_sacked - sacked_then_acked,
            cumulative=cumulative,
            duplicate=duplicate,
            dsack=dsack,
            dup_acks=self._dup_acks,
            loss_detected=loss_detected,
            exited_recovery=exited,
        )

    def update(self, cum_ack: int, sack_blocks: Sequence[tuple[int, int]]) -> tuple[int, int]:
        """Update() of RFC 6675 section 3 alone: record the cumulative ACK and the SACK blocks,
        without the section 5 rules (DupAcks, recovery) that :meth:`on_ack` adds. For code that
        keeps the receiver's SACK information without playing the sender (the loss tracker).
        Returns (SACKed octets the cumulative ACK now covers, octets newly SACKed)."""
        # data acknowledged but never seen sent (the capture missed the send) moves HighData
        if cum_ack > self._high_data:
            self._high_data = cum_ack
        sacked_then_acked = 0
        high_ack = self._high_ack
        if cum_ack > high_ack:
            sacked_then_acked = self._sacked.remove(high_ack, cum_ack)
            self._sacked_bytes -= sacked_then_acked
            self._high_ack = high_ack = cum_ack
            self._lost_below = None
        newly_sacked = 0
        for s, e in sack_blocks:
            if e > self._high_data:
                self._high_data = e
            if s < high_ack:
                s = high_ack
            if e > s:
                newly_sacked += self._sacked.add(s, e)
        if newly_sacked:
            self._sacked_bytes += newly_sacked
            self._lost_below = None
        return sacked_then_acked, newly_sacked

    def relay_sacked(self, start: int) -> None:
        """Lay the SACKed octets above the cumulative ACK out again as one range from ``start``
        (at most up to HighData), keeping their number; ``start`` at HighData forgets them.

        For a sender that emulates SACK from duplicate ACKs when the receiver sends none
        (Linux's ``tcp_add_reno_sack``): it knows how many segments arrived beyond the hole, not
        which, and a partial ACK that covers some of them (``tcp_remove_reno_sacks``: one ACKed
        segment was the hole, the rest had each caused a duplicate ACK) says nothing of where
        the others are. Left where they were laid, from the old cumulative ACK up, they would
        cover the new first hole. Never called on a real receiver's SACK information (the loss
        tracker does not call it)."""
        if not self._sacked_bytes:
            return
        start = max(start, self._high_ack)
        end = min(start + self._sacked_bytes, self._high_data)
        self._sacked = RangeSet()
        self._sacked_bytes = 0
        if end > start:
            self._sacked_bytes = self._sacked.add(start, end)
        self._lost_below = None

    def enter_recovery(self, now: float) -> tuple[int, int] | None:
        """Enter loss recovery (RFC 6675 section 5, step (4)); return the fast retransmission.

        Sets RecoveryPoint = HighData (4.1) and, for the returned segment (up to SMSS octets of
        the first hole, i.e. from HighACK + 1 in the RFC's terms), HighRxt = RescueRxt = its last
        octet (4.3), so that neither it nor a premature rescue is sent again. The caller sends
        it with :meth:`on_send` and halves cwnd itself (4.2). Returns None when nothing is
        outstanding. Raises RuntimeError when :attr:`can_enter_recovery` is False.
        """
        if not self.can_enter_recovery:
            raise RuntimeError("cannot enter loss recovery now (in recovery, or after an RTO)")
        self._in_recovery = True
        self._recovery_point = self._high_data
        self._rto_recovery_point = None
        self.recovery_start_time = now
        fast = self._first_hole_segment(self._high_ack)
        if fast is None:
            self._high_rxt = self._high_ack
            self._rescue_rxt = self._high_ack
            return None
        self._high_rxt = fast[1]
        self._rescue_rxt = fast[1]
        return fast

    def on_rto(self, now: float, expunge_sack: bool = True) -> None:
        """A retransmission timeout at ``now`` (RFC 6675 section 5.1).

        Terminates loss recovery, sets RecoveryPoint = HighData and refuses a new recovery
        until the cumulative ACK reaches it. HighRxt falls back to HighACK and DupAcks to 0.
        With ``expunge_sack`` (the default, RFC 2018's SHOULD) the SACK information is dropped.
        """
        self._in_recovery = False
        self._recovery_point = self._high_data
        self._rto_recovery_point = self._high_data
        self._high_rxt = self._high_ack
        self._dup_acks = 0
        if expunge_sack:
            self._sacked = RangeSet()
            self._sacked_bytes = 0
            self._lost_below = None
