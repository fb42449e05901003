"""RFC 6675 SACK scoreboard for one direction of a connection, sans-I/O.

The implementation is the compiled core's (``src/scoreboard.rs``, the one implementation of
IsLost, SetPipe and NextSeg, shared with the loss tracker); this module gives it its Python API.

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

Cost: the SACKed octets are a set of disjoint ranges (``src/rangeset.rs``), and nothing is ever
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

from tcpsack_analyze import _core

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


class Scoreboard(_core.Scoreboard):
    """RFC 6675 scoreboard and loss recovery state for one direction (see module docstring).

    Args:
        smss: sender maximum segment size in octets (SMSS).
        dup_thresh: DupThresh, the duplicate ACK threshold (3 in RFC 6675 section 2).
        start: the first sequence number (relative ISN + 1 after unwrapping; 0 by default).

    State (read-only properties): ``smss`` (settable: a capture may learn it late),
    ``dup_thresh``, ``high_ack`` (snd_una), ``high_data`` (snd_max), ``high_rxt``,
    ``rescue_rxt``, ``recovery_point``, ``in_recovery``, ``dup_acks``, ``high_sack``,
    ``sacked_bytes``, ``outstanding``, ``can_enter_recovery``, ``lost_below`` (the IsLost
    boundary: every un-SACKed octet below it is lost, none above). Queries: ``is_lost(seq)``,
    ``pipe(lost_below=None)`` (SetPipe; ``lost_below`` replaces the IsLost boundary for a RACK
    sender, RFC 8985 section 6.2), ``pipe_segments()``, ``sacked_within(start, end)``,
    ``holes()``. Events: ``on_send(seq, end, now, retransmission=None, *, rescue=False)``
    (ValueError for a segment that contradicts the sequence numbers), :meth:`on_ack`,
    ``update(cum_ack, blocks)`` (Update() alone, for the loss tracker), ``relay_sacked(start)``,
    ``enter_recovery(now)`` (RuntimeError when recovery cannot start now), ``on_rto(now,
    expunge_sack=True)``.
    """

    __slots__ = ()

    def sacked_ranges(self) -> Iterator[tuple[int, int]]:
        """The SACKed ranges above the cumulative ACK, in order."""
        return iter(super().sacked_ranges())

    def next_seg(self, available_new_data: int = 0, send_window_end: int | None = None) -> NextSegment | None:
        """NextSeg(), RFC 6675 section 4: the next range to send and the rule that chose it.

        Args:
            available_new_data: octets of unsent data the application has beyond HighData
                (rule 2).
            send_window_end: one past the highest octet the receiver's window allows
                (``snd_una + rwnd``); None for no limit (rule 2).

        A query only: nothing changes until the segment is passed to ``on_send``
        (with ``rescue=True`` for rule 4).
        """
        found = self._next_seg(available_new_data, send_window_end)
        return None if found is None else NextSegment(*found)

    def on_ack(self, cum_ack: int, sack_blocks: Sequence[tuple[int, int]], now: float) -> AckResult:
        """An ACK arrived at time ``now``: Update() and the section 5 ACK rules.

        ``sack_blocks`` are the SACK option's (left edge, right edge) pairs in the order they
        appear in the option (the first may be a D-SACK). Records the cumulative ACK and the
        SACK blocks (Update(), section 4; SACKed data above the cumulative ACK is kept across
        the end of recovery, step (A)), ends recovery when the cumulative ACK reaches
        RecoveryPoint (step (A)), resets and counts DupAcks, and tells whether loss recovery
        should start (steps (1), (2)).
        """
        return AckResult(*self._on_ack(cum_ack, list(sack_blocks), now))
