"""What loss forensics produces, as plain data (DOMAIN.md sections 4-7).

One :class:`Retransmission` per retransmitted wire segment, one :class:`Fill` per hole in the
sequence space filled later (reordering, or a loss upstream of the capture point), one
:class:`RecoveryEpisode` per recovery (fast/SACK recovery or a timeout), and one
:class:`LossIncident` per original segment that was retransmitted or filled late.

Sequence numbers (``start``/``end``) are relative to the direction's ISN (the SYN is 0, the first
data byte 1) or, without a SYN, to the first sequence number seen; ``seq`` is the 32-bit value on
the wire. Times are nanoseconds since the epoch (``*_ns``) on the capture clock; delays are
nanoseconds. The numbers are what the capture shows at its vantage point: a delay measured near
the receiver is the sender's delay shifted by the path, see ``docs/report.md``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tcpsack_analyze.loss.states import CaState, EpisodeEnd, Spurious, Trigger, ca_state

# Retransmission triggers and spurious evidence (domain.md section 4; loss/states.py)
FAST, EARLY, RECOVERY, RTO, TLP, OTHER, AMBIGUOUS = Trigger.FAST, Trigger.EARLY, Trigger.RECOVERY, Trigger.RTO, Trigger.TLP, Trigger.OTHER, Trigger.AMBIGUOUS
TRIGGERS = tuple(t.value for t in Trigger)  # plain strings: option choices, table keys
# the minimum-RTT rule and the ACK that an earlier resend below it caused are both EARLY_ACK
SPURIOUS_DSACK, SPURIOUS_EIFEL, SPURIOUS_EARLY_ACK, SPURIOUS_ACKED = Spurious.DSACK, Spurious.EIFEL, Spurious.EARLY_ACK, Spurious.ACKED

# Where a loss happened relative to the capture point (DOMAIN.md section 7)
DOWNSTREAM = "downstream"  # seen here, then retransmitted: lost between here and the receiver
UPSTREAM = "upstream"  # never seen here, filled later by a retransmission


@dataclass(slots=True)
class Retransmission:
    """One retransmitted data segment (any overlap with bytes already seen, as tcptrace)."""

    conn: int
    direction: str  # "a2b" or "b2a": the data sender's direction
    index: int  # record number in the capture (0-based)
    time_ns: int
    seq: int  # 32-bit sequence number on the wire
    start: int  # relative sequence numbers of the payload [start, end)
    end: int
    nth: int  # 1 for the first retransmission of these bytes, 2 for the second...
    trigger: str  # one of TRIGGERS
    episode: int | None  # RecoveryEpisode.id within the direction
    rtd_ns: int | None  # since the previous transmission of these bytes (DOMAIN.md s. 5); None if unseen
    dupacks: int  # duplicate ACKs since the last advance, before this resend
    sacked_segments: int  # SACKed segments above ``start`` before this resend
    silence_ns: int  # since the last ACK or send of this direction, before this resend
    since_ack_ns: int | None  # since the last ACK of the receiver
    flight_segments: int  # outstanding segments (snd_max - snd_una over the MSS), before it
    backoff: int  # doublings of the timer interval since the first timer resend of its run (tracker._timer_interval)
    rto_estimate_ns: int | None  # RFC 6298 RTO from the RTT samples seen so far, if any
    srtt_ns: int | None
    highest: bool  # it resent the highest outstanding segment
    thin: bool  # <= thin threshold segments in flight when sent
    tsval: int = -1  # its TCP timestamp value, -1 without the option
    rto_run: int = 0  # a timer resend's place in its run of timer resends without progress (1 for the first); 0 otherwise
    rto_interval_ns: int | None = None  # a timer resend's timer interval as the capture shows it; None otherwise
    episode_trigger: str | None = None  # trigger of the episode this resend belongs to
    spurious: str | None = None  # one of SPURIOUS_* when later shown unnecessary
    covered_ns: int | None = None  # the first ACK covering its end
    evidence: str = ""  # one line: why this trigger

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def ca_state(self) -> CaState:
        """The sender state the trigger implies (:func:`ca_state`)."""
        return ca_state(self.trigger, self.episode_trigger)


@dataclass(slots=True)
class Fill:
    """Bytes below the highest sequence seen that arrive for the first time (a hole filled)."""

    conn: int
    direction: str
    index: int
    time_ns: int
    seq: int
    start: int
    end: int
    opened_ns: int  # when the data above the hole was first seen
    cause: str  # "retransmission" (lost upstream), "reordering", "ambiguous"
    evidence: str = ""


@dataclass(slots=True)
class RecoveryEpisode:
    """From the first retransmission until snd_una passes the recovery point (RFC 6675 s. 5)."""

    conn: int
    direction: str
    id: int
    trigger: str  # trigger of its first retransmission: fast, early, rto, tlp, ambiguous
    start_ns: int
    start_index: int
    recovery_point: int  # snd_max when it began (relative)
    end_ns: int | None = None
    ended: str = "end_of_capture"  # "full_ack", "rto", "undone" (its first resend was spurious), "end_of_capture"
    retransmissions: int = 0
    holes: int = 0  # distinct byte ranges repaired
    rtos: int = 0
    sack_in_use: bool = False  # SACK blocks arrived during the episode
    spurious: int = 0

    @property
    def duration_ns(self) -> int | None:
        return None if self.end_ns is None else self.end_ns - self.start_ns

    @property
    def sack_finished_without_rto(self) -> bool:
        return sack_finished_without_rto(self.sack_in_use, self.rtos, self.ended)


def sack_finished_without_rto(sack_in_use: bool, rtos: int, ended: str) -> bool:
    """An episode that SACK repaired: SACK blocks arrived, no timeout, ended by a full ACK."""
    return sack_in_use and rtos == 0 and ended == EpisodeEnd.FULL_ACK


@dataclass(slots=True)
class LostTransmission:
    """One transmission of a data segment that did not reach the receiver (DOMAIN.md s. 7).

    Near the sender: a transmission followed by a retransmission that was not spurious. Near the
    receiver: the first transmission of a hole later filled by a retransmission (then ``index``
    is None: it was never seen, and ``time_ns`` is when the hole became visible).
    """

    conn: int
    direction: str
    index: int | None
    time_ns: int
    seq: int
    start: int
    end: int
    original: bool  # the first transmission of these bytes (not a retransmission)
    where: str  # DOWNSTREAM or UPSTREAM


@dataclass(slots=True)
class LossIncident:
    """One original segment that needed repair: its transmissions and what the wait cost."""

    conn: int
    direction: str
    start: int
    end: int
    seq: int
    first_index: int | None  # None when the original was never seen here (upstream loss)
    first_ns: int  # first transmission (or, upstream, when the hole opened)
    retransmissions: int
    last_rexmit_ns: int
    covered_ns: int | None  # the ACK that finally covered it; None if never seen
    where: str  # DOWNSTREAM or UPSTREAM of the capture point
    lost: bool  # at least one transmission did not arrive (not all resends spurious)
    lost_transmissions: int  # transmissions of these bytes that did not arrive
    triggers: list[str] = field(default_factory=list)
    thin: bool = False

    @property
    def latency_rexmit_ns(self) -> int:
        """First transmission to last retransmission (DOMAIN.md section 5)."""
        return self.last_rexmit_ns - self.first_ns

    @property
    def latency_ack_ns(self) -> int | None:
        """First transmission to the covering ACK: what the application waited."""
        return None if self.covered_ns is None else self.covered_ns - self.first_ns
