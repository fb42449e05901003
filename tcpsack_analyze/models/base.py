"""The reference sender model: one small abstract base, sans-I/O (DOMAIN.md section 8).

A :class:`SenderModel` is the congestion control of one data sender, driven by events that
carry their own time (aioquic's ``quic/congestion/base.py`` is the pattern): :meth:`on_send`
for a segment the sender put on the wire, :meth:`on_ack` for an ACK it received,
:meth:`on_timeout` when its retransmission timer expires. Between events the model answers
what it allows: :attr:`cwnd`, :attr:`ssthresh`, :attr:`pipe`, :meth:`send_window`,
:meth:`can_send`, the :attr:`state` and the timer's :attr:`rto_deadline_ns`. Nothing here
reads a clock, a socket or a capture.

Contracts (what a subclass may change, and where):

* The base owns the sequence bookkeeping (the one RFC 6675 scoreboard,
  :class:`~tcpsack_analyze.scoreboard.Scoreboard`, fed SACK blocks only when the model
  :attr:`uses_sack`, emulated from duplicate ACKs as Linux does when the receiver sends none),
  the RTT samples and retransmission timer (RFC 6298, :mod:`.rto`), the
  duplicate-ACK count, the RTO response (RFC 5681 section 3.1 equation 4 and RFC 6298 5.5-5.7)
  and slow-start / congestion-avoidance growth (RFC 5681 section 3.1, :mod:`.growth`).
* A subclass decides what an ACK means for loss recovery (:meth:`_on_ack`) and what entering
  recovery does (:meth:`enter_recovery`); it may change how ssthresh is computed on a
  congestion signal (:meth:`_ssthresh_on_loss`) and how congestion avoidance grows
  (:meth:`_increase_ca`). ``cwnd`` and ``ssthresh`` are octets; :data:`INFINITE` is the
  initial ssthresh (RFC 5681: "arbitrarily high").
* After an RTO (state :attr:`State.LOSS`) every octet outstanding at the expiry is presumed
  lost (go-back-N, RFC 5681 section 3.1 and RFC 6675 section 5.1; Linux marks them lost): the
  pipe is what was resent since, plus new data; the state ends when the cumulative ACK reaches
  the octet that was highest at the expiry.

Subclasses register under a name with :func:`register`; :func:`model_class` looks one up and
also accepts a class, so a model written in a notebook goes wherever a name does.
"""
from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, fields
from typing import ClassVar, TypeVar

from tcpsack_analyze.events import Ack, Send
from tcpsack_analyze.models.growth import SLOW_START_RULES, slow_start_increase
from tcpsack_analyze.models.rto import NS, RetransmissionTimer
from tcpsack_analyze.scoreboard import AckResult, Scoreboard

INFINITE = 2**62  # the initial ssthresh, "arbitrarily high" (RFC 5681 section 3.1)


class State(str, enum.Enum):
    """The sender's congestion state (Linux's Open is slow start or congestion avoidance)."""

    SLOW_START = "slow_start"
    CONGESTION_AVOIDANCE = "congestion_avoidance"
    RECOVERY = "recovery"  # fast recovery (RFC 5681/6582) or SACK loss recovery (RFC 6675)
    LOSS = "loss"  # after a retransmission timeout, until the data then outstanding is ACKed


# the states as plain names: Python 3.11 looks enum members up slowly, and these are read per event
SLOW_START, CONGESTION_AVOIDANCE, RECOVERY, LOSS = State.SLOW_START, State.CONGESTION_AVOIDANCE, State.RECOVERY, State.LOSS


@dataclass(frozen=True)
class SenderOptions:
    """Options shared by every model (DOMAIN.md section 8). The defaults are the RFCs'.

    Attributes:
        initial_window: IW in segments (RFC 6928: 10; RFC 5681: 2 to 4).
        initial_ssthresh: the initial ssthresh in octets (None: "arbitrarily high", RFC 5681
            section 3.1; ns-3's dumbbell runs in tests/data/ns3 use 64 KiB).
        slow_start: slow-start growth rule, one of :data:`~.growth.SLOW_START_RULES`.
        abc_limit: ABC/LBC's L in segments (RFC 3465: 2).
        sabc_scale: SABC's S (paper 002 section 4).
        ssthresh_from: what a reduction is computed from: ``"flight"`` (RFC 5681 equation 4:
            ssthresh = FlightSize / 2; RFC 6937: RecoverFS = FlightSize) or ``"cwnd"`` (Linux's
            ``tcp_reno_ssthresh``: cwnd / 2 in whole segments, CUBIC's 717 / 1024, and PRR's
            RecoverFS = ``prior_cwnd``) or ``"pipe"`` (ns-3's ``GetSsThresh(BytesInFlight)``:
            half the RFC 6675 pipe with SACK; without, half the flight less a segment per
            duplicate ACK, which ns-3 counts as SACKed; RecoverFS = FlightSize).
        ca_growth: congestion-avoidance increase: ``"bytes"`` (one SMSS per cwnd of octets
            ACKed, RFC 5681 section 3.1's byte-counting form, Linux) or ``"per_ack"`` (RFC 5681
            equation 3, cwnd += max(1, SMSS * SMSS / cwnd) per ACK of new data, as ns-3's
            TcpNewReno: with delayed ACKs it grows half as fast).
        cwnd_validation: grow cwnd only while the sender uses it (RFC 7661; Linux's
            ``tcp_is_cwnd_limited``: in slow start while cwnd < 2 x the largest flight of the
            last two rounds, otherwise when that flight reached cwnd).
        dup_thresh: DupThresh (RFC 5681/6675: 3).
        reduction: recovery reduction of the SACK models: ``"prr"`` (RFC 6937) or ``"classic"``
            (RFC 6675 section 5: cwnd = ssthresh on entry).
        rack: RACK-style loss detection (RFC 8985 section 6.2), approximated without per-segment
            send times: in recovery every hole below the highest SACK counts as lost (reordering
            window 0, as Linux while it has seen no reordering); outside recovery a hole below
            SACKed data may be repaired before DupThresh duplicate ACKs (open-loop inference
            lets the observed sender's timing decide when the reordering window expired).
        tlp: tail loss probes (RFC 8985 section 7): with no duplicate ACK, a probe (new data or the
            highest outstanding segment) is allowed 2 SRTT after the last send.
        rto_min_s, rto_initial_s, rto_max_s, rto_backoff: the RFC 6298 timer (sections 2.1, 2.4,
            2.5, 5.5): 1 s, 1 s, 60 s, 2 by the RFC; Linux uses a 200 ms minimum and 120 s maximum.
        rto_min_on_variance: the minimum bounds the variance term, RTO = SRTT + max(rto_min,
            4 RTTVAR), as Linux's ``__tcp_set_rto``, instead of the RTO (RFC 6298 2.4).
        thin_threshold: a direction is thin with this many segments or fewer in flight
            (DOMAIN.md section 6).
        thin_linear_timeouts: no RTO backoff while thin (paper 001 section 4.1).
        thin_dupack: fast retransmit on the first duplicate ACK while thin (paper 001 section 4.2).
        full_ack_cwnd: NewReno's cwnd on the full ACK that ends recovery (RFC 6582 section 3.2
            step 6): ``"flight"`` (option 1, min(ssthresh, max(FlightSize, SMSS) + SMSS)) or
            ``"ssthresh"`` (option 2, as ns-3's ``TcpClassicRecovery::ExitRecovery``).
        k: k-SACK's loss count that signals congestion (paper 004: 2).
        undo: undo a spurious RTO (Eifel detection with timestamps, RFC 3522; response as Linux's
            ``tcp_try_undo_loss``, cf. RFC 4015): an ACK of new data that echoes a TSval older than
            the first retransmission's restores cwnd and ssthresh to their values before the RTO
            and ends the RTO state.
        expunge_sack_on_rto: drop the SACK information on an RTO (RFC 2018's SHOULD; Linux keeps
            it).
        bookkeeping: the SACK models' bookkeeping where ns-3 departs from the RFCs: ``"rfc"``
            (RFC 6675 and RFC 6937; SACK from a receiver that sends none emulated as Linux's
            ``tcp_add_reno_sack``: one segment per duplicate ACK, those a cumulative ACK covers
            taken away, all forgotten when recovery ends or in the RTO state) or ``"ns3"`` (ns-3
            3.44's ``TcpSocketBase`` and ``TcpTxBuffer``): the emulated count is kept when
            recovery ends, none is added in the RTO state and an RTO drops them
            (``ResetRenoSack``); a cumulative ACK that lands on an emulated segment marks the new
            head lost (``DiscardUpTo``, ``MarkHeadAsLost``), which is resent outside recovery and
            lets the next duplicate ACK start recovery (``IsLost(HighACK + 1)``); ssthresh from the
            pipe is half of ``BytesInFlight`` (outstanding less emulated); PRR's DeliveredData of
            a duplicate ACK is one segment more than it SACKs (while below RecoverFS), and without
            SACK PRR reads the pipe from before the duplicate ACK's emulated segment
            (:meth:`~tcpsack_analyze.models.sack.Sack._recovery_ack`).
        hystart: CUBIC leaves slow start early by HyStart's ACK-train and delay-increase tests
            (Ha and Rhee 2011; Linux's default).
        cubic_arithmetic: how CUBIC counts: ``"octets"`` (RFC 8312 on a window of octets,
            growing continuously), ``"linux"`` (``tcp_cubic.c``: packets, the 1024-scaled
            constants, ``cnt`` and ``snd_cwnd_cnt``) or ``"ns3"`` (ns-3's ``TcpCubic``: whole segments, an ACK
            counter against the integer ``cnt``, its TCP-friendly estimate, slow start by segments
            ACKed without a cap at ssthresh, growth only while cwnd-limited, its own HyStart
            thresholds, the minimum RTT forgotten on an RTO): :mod:`~tcpsack_analyze.models.cubic`.
    """

    initial_window: int = 10
    initial_ssthresh: int | None = None
    slow_start: str = "per_ack"
    abc_limit: int = 2
    sabc_scale: float = 0.5
    ssthresh_from: str = "flight"
    ca_growth: str = "bytes"
    cwnd_validation: bool = False
    dup_thresh: int = 3
    reduction: str = "prr"
    rack: bool = False
    tlp: bool = False
    rto_min_s: float = 1.0
    rto_initial_s: float = 1.0
    rto_max_s: float = 60.0
    rto_backoff: float = 2.0
    rto_min_on_variance: bool = False
    thin_threshold: int = 4
    thin_linear_timeouts: bool = False
    thin_dupack: bool = False
    full_ack_cwnd: str = "flight"
    k: int = 2
    undo: bool = False
    expunge_sack_on_rto: bool = True
    bookkeeping: str = "rfc"
    hystart: bool = False
    cubic_arithmetic: str = "octets"

    def __post_init__(self) -> None:
        if self.slow_start not in SLOW_START_RULES:
            raise ValueError(f"slow_start must be one of {', '.join(SLOW_START_RULES)}, not {self.slow_start!r}")
        if self.ssthresh_from not in ("flight", "cwnd", "pipe"):
            raise ValueError(f"ssthresh_from must be 'flight', 'cwnd' or 'pipe', not {self.ssthresh_from!r}")
        if self.ca_growth not in ("bytes", "per_ack"):
            raise ValueError(f"ca_growth must be 'bytes' or 'per_ack', not {self.ca_growth!r}")
        if self.full_ack_cwnd not in ("flight", "ssthresh"):
            raise ValueError(f"full_ack_cwnd must be 'flight' or 'ssthresh', not {self.full_ack_cwnd!r}")
        if self.cubic_arithmetic not in ("octets", "linux", "ns3"):
            raise ValueError(f"cubic_arithmetic must be 'octets', 'linux' or 'ns3', not {self.cubic_arithmetic!r}")
        if self.bookkeeping not in ("rfc", "ns3"):
            raise ValueError(f"bookkeeping must be 'rfc' or 'ns3', not {self.bookkeeping!r}")
        if self.reduction not in ("prr", "classic"):
            raise ValueError(f"reduction must be 'prr' or 'classic', not {self.reduction!r}")
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0 and f.name != "sabc_scale":
                raise ValueError(f"{f.name} must be positive, not {value!r}")

    @classmethod
    def rfc(cls) -> SenderOptions:
        """The RFCs' sender: RFC 5681 growth per ACK, 1 s minimum RTO, no RACK-TLP."""
        return cls()

    @classmethod
    def ns3(cls) -> SenderOptions:
        """ns-3's TcpSocketBase (3.44) with its defaults: the RFCs' sender with congestion
        avoidance per ACK (``TcpNewReno``), ssthresh from the pipe (``GetSsThresh(BytesInFlight)``),
        cwnd = ssthresh when recovery ends, SACK information kept across an RTO, SACK emulated
        from duplicate ACKs as ``TcpTxBuffer`` does, and ``TcpCubic``'s own arithmetic with
        HyStart on. Without SACK ns-3 runs the same RFC 6675 recovery over the emulated
        scoreboard: its ``TcpNewReno`` is the ``sack`` model here, not ``newreno``.
        ns-3's initial ssthresh, recovery (``TcpClassicRecovery`` or ``TcpPrrRecovery``) and
        minimum RTO are a scenario's settings: set ``initial_ssthresh``, ``reduction`` and
        ``rto_min_s`` to match."""
        return cls(ca_growth="per_ack", ssthresh_from="pipe", expunge_sack_on_rto=False, cubic_arithmetic="ns3",
                   hystart=True, full_ack_cwnd="ssthresh", bookkeeping="ns3")

    @classmethod
    def linux(cls) -> SenderOptions:
        """A Linux sender (5.x/6.x defaults): IW 10, slow start by bytes, ssthresh from cwnd,
        cwnd validation, PRR, RACK-TLP, RTO = SRTT + max(200 ms, 4 RTTVAR) up to 120 s, undo of spurious
        RTOs, SACK kept across an RTO, HyStart, CUBIC counted in packets as ``tcp_cubic.c``."""
        return cls(slow_start="bytes", ssthresh_from="cwnd", cwnd_validation=True, rack=True, tlp=True,
                   rto_min_s=0.2, rto_max_s=120.0, rto_min_on_variance=True, undo=True, expunge_sack_on_rto=False, hystart=True,
                   cubic_arithmetic="linux")


class SenderModel(ABC):
    """A congestion-control state machine driven by a sender's events (module docstring).

    Args:
        smss: the sender's maximum segment size in octets.
        options: shared options (:class:`SenderOptions`, the RFCs' by default).
        start: the first data octet (1 in the event stream's ISN-relative space).
    """

    name: ClassVar[str] = ""
    uses_sack: ClassVar[bool] = False

    def __init__(self, smss: int, options: SenderOptions | None = None, *, start: int = 1) -> None:
        if smss <= 0:
            raise ValueError(f"smss must be positive, got {smss}")
        self.smss = smss
        self.options = options or SenderOptions()
        o = self.options
        self.cwnd = o.initial_window * smss
        self.ssthresh = INFINITE if o.initial_ssthresh is None else o.initial_ssthresh
        self.state = self._open_state()
        self.board = Scoreboard(smss, o.dup_thresh, start)
        self.timer = RetransmissionTimer(o.rto_min_s, o.rto_initial_s, o.rto_max_s, o.rto_backoff, o.rto_min_on_variance)
        self.dup_acks = 0
        self.rwnd: int | None = None
        self.timeouts = 0
        self.recoveries = 0
        self.min_rtt_s: float | None = None
        self.last_send_ns: int | None = None
        self._ca_credit = 0.0  # octets ACKed towards the next congestion-avoidance increase
        self._after_rto = False
        self._loss_point = start  # HighData at the last RTO
        self._resent_high = start  # highest octet resent since the last RTO
        self._timed: tuple[int, int] | None = None  # (end, send time): Karn's one timed segment
        self._tsvals: deque[tuple[int, int]] = deque()  # (TSval, time) of first transmissions
        self._round_end = start
        self._flight_max = [0, 0]  # largest pipe after a send: previous round, this round
        self._sack_seen = False  # the receiver has sent SACK blocks
        self._undo: tuple[int, int] | None = None  # (cwnd, ssthresh) before the last RTO
        self._undo_tsval: int | None = None  # TSval of the first retransmission after it
        self._partial_acked = False  # bookkeeping="ns3": a partial ACK of this recovery restarted the timer
        self._head_lost_at: int | None = None  # bookkeeping="ns3": HighACK when its segment was marked lost
        self.pipe_after_send = 0  # :attr:`pipe` after the last :meth:`on_send` (saves a caller asking again)
        self.emulated_now = 0  # octets the last ACK was taken to SACK (emulated from a duplicate ACK)

    # ------------------------------------------------------------------ what the model allows

    @property
    def flight(self) -> int:
        """FlightSize: octets sent and not cumulatively ACKed (RFC 5681 section 2)."""
        return self.board.outstanding

    @property
    def pipe(self) -> int:
        """Octets the model believes are in the network: the RFC 6675 pipe with SACK (with
        ``rack``, in recovery every hole below the highest SACK is presumed lost, as Linux's RACK
        with no reordering seen: RFC 8985 section 6.2, reordering window 0 in recovery), the
        flight without; after an RTO only what was sent since (module docstring)."""
        state = self.state
        board = self.board
        if state is LOSS:
            resent = max(0, min(self._resent_high, self._loss_point) - board.high_ack)
            return resent + max(0, board.high_data - max(self._loss_point, board.high_ack))
        if not self.uses_sack:
            return board.outstanding
        if state is RECOVERY and self.options.rack:
            high_sack = board.high_sack
            if high_sack is not None:
                return board.pipe(lost_below=high_sack)
        return board.pipe()

    def send_window(self, pipe: int | None = None) -> int:
        """Octets the model would send now: cwnd - pipe, and no more than the receive window
        allows (RFC 5681 section 3.1, RFC 6675 section 5 step (C)). ``pipe``: :attr:`pipe`
        when the caller has it already."""
        room = self.cwnd - (self.pipe if pipe is None else pipe)
        if self.rwnd is not None:
            room = min(room, self.board.high_ack + self.rwnd - self.board.high_data)
        return max(0, room)

    def can_send(self, length: int | None = None) -> bool:
        """Whether a segment of ``length`` octets (SMSS by default) fits the window now."""
        return self.send_window() >= (self.smss if length is None else length)

    @property
    def receiver_sacks(self) -> bool:
        """The receiver has sent SACK blocks (else a SACK model's scoreboard holds blocks it
        emulated from duplicate ACKs, which can claim a hole after a partial ACK)."""
        return self._sack_seen

    @property
    def head_marked_lost(self) -> bool:
        """``bookkeeping="ns3"``: the segment at the cumulative ACK is marked lost (a cumulative ACK
        landed on an emulated SACKed segment): ns-3 resends it as soon as the window allows, in any
        state (RFC 6675 NextSeg rule 1), and the next duplicate ACK starts recovery."""
        return self._head_lost_at is not None and self._head_lost_at == self.board.high_ack

    @property
    def thin(self) -> bool:
        """At most ``thin_threshold`` segments in flight (DOMAIN.md section 6)."""
        return self.flight <= self.options.thin_threshold * self.smss

    @property
    def rto_deadline_ns(self) -> int | None:
        """When the retransmission timer expires (None when it is not running)."""
        return self.timer.deadline_ns

    @property
    def srtt_s(self) -> float | None:
        return self.timer.estimator.srtt

    def _linear(self) -> bool:
        return self.options.thin_linear_timeouts and self.thin

    # ------------------------------------------------------------------ events

    def on_send(self, send: Send, *, rescue: bool = False) -> None:
        """The sender put the data segment ``send`` on the wire at ``send.time_ns``.

        A segment that starts beyond HighData (the capture missed a send) is taken to start at
        HighData. ``rescue``: it is the rescue retransmission of RFC 6675 NextSeg() rule 4 (the
        closed loop knows; the open loop never says so).
        """
        now = send.time_ns
        board = self.board
        high_data = board.high_data
        start, end = send.start, send.end
        if start > high_data:
            start = high_data
        if end <= start:
            return
        resent = start < high_data
        board.on_send(start, end, now, rescue=rescue and resent)
        if resent:
            self._timed = None  # Karn's rule (RFC 6298 section 3)
            if self._undo is not None and self._undo_tsval is None:
                self._undo_tsval = send.tsval
            if self.state is LOSS and end > self._resent_high:
                self._resent_high = end
        else:
            if self._timed is None:
                self._timed = (end, now)
            tsval = send.tsval
            if tsval is not None and (not self._tsvals or self._tsvals[-1][0] != tsval):
                self._tsvals.append((tsval, now))
        if self.timer.deadline_ns is None:
            self.timer.on_send(now, self._linear())
        self._on_sent(end - start, resent)
        self.pipe_after_send = pipe = self.pipe
        if pipe > self._flight_max[1]:
            self._flight_max[1] = pipe
        self.last_send_ns = now

    def on_ack(self, ack: Ack) -> AckResult:
        """The sender received ``ack`` at ``ack.time_ns``: update the scoreboard, RTT and timer,
        count duplicate ACKs, end the RTO state, then let the algorithm respond."""
        now = ack.time_ns
        board = self.board
        if ack.sack:
            self._sack_seen = True
        blocks = self._sack_blocks(ack) if self.uses_sack else ()
        self.emulated_now = 0 if self._sack_seen or not blocks else blocks[0][1] - blocks[0][0]
        res = board.on_ack(ack.ack, blocks, now)
        if res.cumulative and self.uses_sack and not self._sack_seen:
            self._forget_emulated(res)
        self.rwnd = ack.win
        if res.cumulative:
            self._rtt_sample(ack, now)
            # ns-3 restarts the timer on the first partial ACK of a recovery only (RFC 6582's
            # Impatient variant: NewAck(ack, m_isFirstPartialAck)); the RFCs on every new ACK
            partial = self.options.bookkeeping == "ns3" and self.state is RECOVERY and board.in_recovery
            if not (partial and self._partial_acked):
                self.timer.on_new_ack(now, board.outstanding > 0, self._linear())
            self._partial_acked = partial
            if board.high_ack >= self._round_end:
                self._flight_max = [self._flight_max[1], 0]
                self._round_end = board.high_data
        if self.uses_sack:
            duplicate = res.duplicate
            self.dup_acks = res.dup_acks
        else:
            duplicate = ack.dup
            self.dup_acks = 0 if res.cumulative else self.dup_acks + int(duplicate)
        if self.state is LOSS:
            if res.cumulative and self._spurious(ack):
                assert self._undo is not None
                self.cwnd, self.ssthresh = max(self.cwnd, self._undo[0]), max(self.ssthresh, self._undo[1])
                self.state = self._open_state()
            elif board.high_ack >= self._loss_point:
                self.state = self._open_state()
        if self.state is not LOSS and self._undo is not None:
            self._undo = self._undo_tsval = None
        self._on_ack(ack, res, duplicate)
        return res

    def _spurious(self, ack: Ack) -> bool:
        """Eifel detection (RFC 3522 section 3.2): this ACK echoes a TSval older than the first
        retransmission's, so the original transmission arrived: the RTO was spurious."""
        return (self.options.undo and self._undo is not None and self._undo_tsval is not None
                and ack.tsecr is not None and ack.tsecr < self._undo_tsval)

    def _sack_blocks(self, ack: Ack) -> tuple[tuple[int, int], ...]:
        """The SACK blocks the scoreboard gets: none for a model without SACK; for a SACK model
        facing a receiver that has never sent one, one emulated SMSS per duplicate ACK (Linux's
        ``tcp_add_reno_sack``: each duplicate ACK stands for one segment above the first hole
        that arrived), the segments after the cumulative ACK's in order."""
        if not self.uses_sack:
            return ()
        if self._sack_seen or not ack.dup:
            return ack.sack
        if self.state is LOSS and self.options.bookkeeping == "ns3":
            return ()  # ns-3's DupAck ignores duplicate ACKs in CA_LOSS
        high_ack = max(self.board.high_ack, ack.ack)
        start = max(high_ack + self.smss, self.board.high_sack or 0)
        end = min(start + self.smss, self.board.high_data)
        return ((start, end),) if end > start else ()

    def _forget_emulated(self, res: AckResult) -> None:
        """An ACK of new data, while SACK is emulated from duplicate ACKs (:meth:`_sack_blocks`):
        the emulated segments the cumulative ACK passed are gone, and the others are laid out
        again above the new first hole (Linux's ``tcp_remove_reno_sacks``: one ACKed segment was
        the hole, each other had caused a duplicate ACK); all are forgotten when the ACK ends
        recovery or comes in the RTO state (``tcp_reset_reno_sack``); with ``bookkeeping="ns3"`` they are
        kept when recovery ends, and a new head that was one of them is marked lost."""
        board = self.board
        if self.state is LOSS or (res.exited_recovery and self.options.bookkeeping == "rfc"):
            board.relay_sacked(board.high_data)
            return
        landed = board.sacked_bytes > 0  # the new head was one of the emulated segments
        board.relay_sacked(board.high_ack + self.smss)
        if landed and self.options.bookkeeping == "ns3":
            self._head_lost_at = board.high_ack

    def on_timeout(self, now: int) -> None:
        """The retransmission timer expired at ``now`` (RFC 5681 section 3.1, RFC 6298 5.5-5.7).

        ssthresh is reduced on the first expiry for the data outstanding (equation 4), not on
        the backed-off ones; cwnd falls to one segment (the loss window); the timer backs off.
        """
        if self.state is not LOSS:
            self._undo, self._undo_tsval = (self.cwnd, self.ssthresh), None
            self.ssthresh = self._ssthresh_on_loss()
        self.timeouts += 1
        self._enter_loss(now)
        self.timer.on_expiry(now, self._linear())

    def _enter_loss(self, now: int) -> None:
        """cwnd = 1 segment and go-back-N from the cumulative ACK (module docstring)."""
        self.cwnd = self.smss
        self.state = LOSS
        self._head_lost_at = None  # ns-3: SetSentListLost marks them all, ResetRenoSack
        self._loss_point = self.board.high_data
        self._resent_high = self.board.high_ack
        self._after_rto = True
        self._ca_credit = 0.0
        self._timed = None
        if self.uses_sack and not self._sack_seen and self.options.bookkeeping == "ns3":
            self.board.relay_sacked(self.board.high_data)  # ResetRenoSack: the emulated ones go
        self.board.on_rto(now, self.options.expunge_sack_on_rto)

    # ------------------------------------------------------------------ for subclasses

    @abstractmethod
    def _on_ack(self, ack: Ack, res: AckResult, duplicate: bool) -> None:
        """Respond to an ACK (the base has already done its bookkeeping)."""

    @abstractmethod
    def enter_recovery(self, now: int) -> bool:
        """Respond to a loss signal at ``now`` (fast retransmit); False when not allowed now.

        Public so that open-loop inference can make the model follow a sender that entered
        recovery on its own evidence."""

    def _on_sent(self, length: int, resent: bool) -> None:  # noqa: B027 - an optional hook
        """A segment of ``length`` octets was sent (PRR counts them)."""

    def _ssthresh_on_loss(self) -> int:
        """ssthresh after a congestion signal: max(FlightSize / 2, 2 SMSS) (RFC 5681 equation 4),
        from the pipe as ns-3, or from cwnd in whole segments as Linux's Reno does
        (``ssthresh_from``)."""
        if self.options.ssthresh_from == "flight":
            return max(self.flight // 2, 2 * self.smss)
        if self.options.ssthresh_from == "pipe":
            pipe = self.pipe
            if not self.uses_sack:  # ns-3 counts each duplicate ACK as a SACKed segment (AddRenoSack)
                pipe = max(0, pipe - self.dup_acks * self.smss)
            elif not self._sack_seen and self.options.bookkeeping == "ns3":
                # ns-3's BytesInFlight over its emulated scoreboard: the head, marked lost, is
                # counted back in as retransmitted or (EnterRecovery) "in flight" for compatibility
                pipe = self.board.outstanding - self.board.sacked_bytes
            return max(pipe // 2, 2 * self.smss)
        return max(self._cwnd_packets() // 2, 2) * self.smss  # tcp_reno_ssthresh: cwnd >> 1 packets

    def _cwnd_packets(self) -> int:
        """cwnd in whole segments, as Linux keeps it (``snd_cwnd`` counts packets)."""
        return max(round(self.cwnd / self.smss), 1)

    def _increase_ca(self, acked: int, now: int) -> None:
        """Congestion avoidance: one SMSS per cwnd of octets ACKed (RFC 5681 section 3.1,
        the byte-counting form; Linux's ``tcp_cong_avoid_ai``), or SMSS * SMSS / cwnd per ACK
        (equation 3, ``ca_growth="per_ack"``)."""
        if self.options.ca_growth == "per_ack":
            self.cwnd += max(1, self.smss * self.smss // self.cwnd)
            return
        self._ca_credit += acked
        if self._ca_credit >= self.cwnd:
            self._ca_credit -= self.cwnd
            self.cwnd += self.smss

    def _loss_signal(self, res: AckResult, duplicate: bool) -> bool:
        """Whether this ACK starts loss recovery: DupThresh duplicate ACKs (RFC 5681 section
        3.2), IsLost under SACK (RFC 6675 section 5), or one duplicate ACK while thin with
        ``thin_dupack`` (paper 001) or when RACK sees SACKed data above a hole."""
        if self.state in (RECOVERY, LOSS) or not duplicate:
            return False
        if self.uses_sack:
            if not self.board.can_enter_recovery:
                return False
            if res.loss_detected or self.head_marked_lost:
                return True
        elif self.dup_acks == self.options.dup_thresh:
            return True
        return self.options.thin_dupack and self.thin and self.dup_acks == 1

    def _grow(self, res: AckResult, now: int) -> None:
        """cwnd growth for an ACK outside recovery: only an ACK that advances the cumulative ACK
        (RFC 5681 section 3.1: "ACKs that acknowledge new data"; Linux's ``tcp_may_raise_cwnd``),
        by the octets it reports delivered (SACKed ones included, as Linux): slow start below
        ssthresh (capped there), congestion avoidance at or above it."""
        acked = res.delivered
        if not res.cumulative or acked <= 0 or (self.options.cwnd_validation and not self._cwnd_limited()):
            return
        o = self.options
        if self.cwnd < self.ssthresh:
            inc = slow_start_increase(o.slow_start, acked, self.smss, limit=o.abc_limit, scale=o.sabc_scale,
                                      after_rto=self._after_rto)
            self.cwnd = min(self.cwnd + inc, max(self.ssthresh, self.cwnd))
        else:
            self._increase_ca(acked, now)
        if self.state is not LOSS:
            self.state = self._open_state()

    def _cwnd_limited(self) -> bool:
        """Linux's ``tcp_is_cwnd_limited`` over the last two rounds (``cwnd_validation``)."""
        used = max(self._flight_max)
        if self.cwnd < self.ssthresh:
            return self.cwnd < 2 * used
        return used >= self.cwnd

    def _open_state(self) -> State:
        return SLOW_START if self.cwnd < self.ssthresh else CONGESTION_AVOIDANCE

    def _rtt_sample(self, ack: Ack, now: int) -> None:
        """An ACK of new data: a timestamp echo of a first transmission (RFC 7323 section 4.3),
        else Karn's timed segment (RFC 6298 section 3)."""
        sample: int | None = None
        if ack.tsecr is not None:
            while self._tsvals and self._tsvals[0][0] < ack.tsecr:
                self._tsvals.popleft()
            if self._tsvals and self._tsvals[0][0] == ack.tsecr:
                sample = now - self._tsvals[0][1]
        if self._timed is not None and ack.ack >= self._timed[0]:
            if sample is None:
                sample = now - self._timed[1]
            self._timed = None
        if sample is not None and sample >= 0:
            rtt = sample / NS
            self.timer.sample(rtt)
            self.min_rtt_s = rtt if self.min_rtt_s is None else min(self.min_rtt_s, rtt)
            self._on_rtt(rtt, now)

    def _on_rtt(self, rtt_s: float, now: int) -> None:  # noqa: B027 - an optional hook
        """A round-trip sample was taken from an ACK at ``now`` (CUBIC's HyStart reads them)."""


M = TypeVar("M", bound=type[SenderModel])
MODELS: dict[str, type[SenderModel]] = {}


def register(cls: M) -> M:
    """Class decorator: make a model available under its ``name``."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    MODELS[cls.name] = cls
    return cls


def model_class(model: str | type[SenderModel]) -> type[SenderModel]:
    """The model registered as ``model``, or ``model`` itself when it is a SenderModel class."""
    if isinstance(model, type) and issubclass(model, SenderModel):
        return model
    try:
        return MODELS[str(model)]
    except KeyError:
        raise ValueError(f"unknown sender model {model!r} (one of {', '.join(sorted(MODELS))})") from None


PROFILES = {"rfc": SenderOptions.rfc, "linux": SenderOptions.linux, "ns3": SenderOptions.ns3}  # --profile


__all__ = ["INFINITE", "MODELS", "PROFILES", "SenderModel", "SenderOptions", "State", "model_class", "register"]
