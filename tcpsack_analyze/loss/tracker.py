"""Loss forensics of one direction, fed batch by batch by its connection (DOMAIN.md s. 4-7).

The connection hands over, for each batch, one row per packet of the connection with the data
segment of this direction already placed in the sequence space (new, retransmitted, filling a
hole, or past a gap) and the receiver's ACKs already unwrapped, with their duplicate-ACK and
D-SACK marks. Most batches of most connections hold nothing but in-order data and advancing
ACKs: then only numpy runs (first transmissions are kept for later look-ups, and a few scalars
move). From the first packet that needs judgement (a retransmission, a duplicate ACK, a SACK
block, a hole) to the end of the batch, packets go through Python one at a time, so the cost
follows the loss episodes rather than the packet count.

Each retransmission is classified when it is seen, from what the capture showed up to then,
as the sender itself had to decide (DOMAIN.md section 4):

- *ACK-clocked or timer*: an ACK-clocked resend follows an ACK by the capture point's local
  turnaround (about 0 near the sender, about one RTT near the receiver; taken from the
  handshake); a resend that comes later than that by more than half an SRTT was sent by a timer.
- ACK-clocked with duplicate ACKs or SACK blocks above it, outside an episode: *fast*
  retransmit when DupThresh (3) dupACKs or RFC 6675 IsLost say so, else *early*.
- Inside an episode (until snd_una passes the recovery point): *recovery*, unless the head of
  the window (snd_una) is resent and not ACK-clocked (later than the turnaround by more than
  1 ms after the last ACK, and more than 1 ms after the sender's previous packet): *rto*, which
  ends the episode and starts a timeout episode (RFC 6298 section 5; its go-back-N resends are
  that episode's *recovery*). No RTO's worth of silence is asked for: RFC 6582 section 4's
  Impatient variant re-arms the timer at the first partial ACK, so the timer can fire long
  before an RTO after the head's last copy, and the estimate here has no 200 ms / 1 s floor.
- A timer outside an episode: *tlp* when it resends the highest outstanding segment, is not
  the second timer firing on the same data, and no earlier probe is still open, else *rto*. A
  probe stays open until an ACK acknowledges beyond the snd_max it was sent at, or a duplicate
  ACK or D-SACK at that point shows both copies arrived (RFC 8985 sections 7.3-7.4, Linux's
  tlp_high_seq): new data sent meanwhile does not allow a second probe.
- ACK-clocked, outside any episode, with no dupACK or SACK block: *other*, sent in Open for a
  reason the capture does not show. Two exceptions read the sender's state from what follows
  an episode judged spurious (undone): a go-back-N resend below snd_max after an undone timeout
  episode, and a resend of the head below the recovery point after an undone fast recovery
  (NewReno's answer to a partial ACK, RFC 6582 section 3.2 step 5), show a sender that did not
  undo; the episode comes back and the resend is its *recovery*.
- Nothing to go on (no ACK seen, no RTT yet): *ambiguous*.

A resend is later marked spurious (DOMAIN.md section 4) by a D-SACK for its bytes (RFC 2883),
by an ACK covering it that echoes an older TSval (Eifel, RFC 3522), or when the ACK that first
covers it was caused by an earlier resend: that ACK also first covered an earlier-sent resend
below it, while the receiver had never reported these bytes missing (no ACK stopped inside them
and no SACK left them as a hole after they were first sent).

Lost transmissions (DOMAIN.md section 7) are placed relative to the capture point: a
transmission seen here and then resent (not spuriously) was lost *downstream*; bytes first seen
filling a hole, later than reordering explains, had their original lost *upstream*, and the
copy that filled the hole is a resend that may itself be lost downstream. At a mid-path capture
both kinds occur. A resend lost upstream leaves no trace here (its bytes are a hole already, or
were seen before), so an upstream loss is counted once per hole filled.

Records are kept as objects only while something can still change them, then moved into
column tables (:mod:`~tcpsack_analyze.loss.table`), so memory follows what is open, not the
length of the capture: a resend once the ACKs have covered it (or it was judged spurious) and
it is past the D-SACK horizon (a D-SACK is matched only to one of the latest
:data:`DSACK_WINDOW` resends sent within 8 times the largest SRTT seen, at least 200 ms; on the
captures in tests/data every D-SACK came about one SRTT after its resend); an episode once none
of the live resends belongs to it; a resent segment once it is covered, its resends have moved
and its last transmission is past the same horizon, when its incident, lost transmissions and
RTD samples are derived. The horizon comes from the RTT samples taken before the moment it is
asked for, so what moves does not depend on where batches end, except that a resend of bytes
whose last transmission is further back than the horizon (rare) may start a new segment record.
"""
from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from tcpsack_analyze.events import Dir, EventBatch, Placement, StreamFacts
from tcpsack_analyze.loss.records import (
    AMBIGUOUS,
    DOWNSTREAM,
    EARLY,
    FAST,
    OTHER,
    RECOVERY,
    RTO,
    SPURIOUS_ACKED,
    SPURIOUS_DSACK,
    SPURIOUS_EARLY_ACK,
    SPURIOUS_EIFEL,
    TLP,
    UPSTREAM,
    Fill,
    LossIncident,
    LostTransmission,
    RecoveryEpisode,
    Retransmission,
)
from tcpsack_analyze.loss.states import CaState, EpisodeEnd, Event, Trigger, episode_state, transition
from tcpsack_analyze.loss.table import RecordTable
from tcpsack_analyze.rtt import Rfc6298
from tcpsack_analyze.scoreboard import Scoreboard
from tcpsack_analyze.seqspace import wire_add

DUP_THRESH = 3  # RFC 5681 section 3.2, RFC 6675 section 2
THIN_PACKETS = 4  # DOMAIN.md section 6
MIN_TIMER_GAP_NS = 5_000_000  # a timer is told apart from ACK clocking by at least 5 ms
CLOCK_TOLERANCE_NS = 1_000_000  # an ACK-clocked resend leaves within 1 ms of its ACK or of the send before it
DOUBLED = math.sqrt(2)  # a timer interval this much longer than the one before it was backed off (_timer_interval)
TOO_SOON = 0.8  # an ACK within 0.8 x the minimum local RTT of a resend was not caused by it
DSACK_WINDOW = 512  # a D-SACK is matched against the latest this many resends...
DSACK_RTTS = 8  # ...sent at most this many times the largest SRTT seen before it...
DSACK_MIN_HORIZON_NS = 200_000_000  # ...or 200 ms (Linux's minimum RTO), if longer...
DSACK_NO_RTT_HORIZON_NS = 1_000_000_000  # ...or 1 s before any RTT sample
RTO_MAX_NS = 120_000_000_000  # Linux TCP_RTO_MAX; RFC 6298 (2.5) allows a maximum of 60 s or more


@dataclass
class Timing:
    """What the capture tells of this direction's round trip, as known when a batch begins."""

    min_local_ns: int | None = None  # smallest data/ACK RTT at the capture point
    srtt_max_ns: float | None = None  # largest srtt_ns so far (the D-SACK horizon's scale)
    turnaround_ns: int | None = None  # capture point -> sender -> capture point (handshake)

    _estimator: Rfc6298 = field(default_factory=Rfc6298)  # of the data/ACK pairs at the capture point
    _queue_t: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    _queue_v: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))

    @property
    def srtt_ns(self) -> float | None:
        """RFC 6298 smoothed RTT of the data/ACK pairs at the capture point."""
        return self._estimator.srtt

    @property
    def rttvar_ns(self) -> float | None:
        return self._estimator.rttvar

    @property
    def srtt_full_ns(self) -> float | None:
        """The sender's RTT: the local data/ACK RTT plus the sender-side turnaround."""
        if self.srtt_ns is None:
            return None
        return self.srtt_ns + (self.turnaround_ns or 0)

    @property
    def rto_ns(self) -> int | None:
        """RFC 6298 section 2 RTO, without the 1 s floor (Linux uses 200 ms), at most RTO_MAX_NS: an estimate."""
        if self.srtt_ns is None or self.rttvar_ns is None:
            return None
        return min(RTO_MAX_NS, int(self.srtt_ns + max(1_000_000.0, 4 * self.rttvar_ns) + (self.turnaround_ns or 0)))

    def seed(self, sample_ns: int | None) -> None:
        """Start from the handshake's sample at this capture point (RFC 6298 section 2.2)."""
        if sample_ns is not None and sample_ns > 0 and self.srtt_ns is None and self._queue_t.size == 0:
            self._update(np.asarray([sample_ns], np.int64))

    def add(self, times: np.ndarray, samples: np.ndarray) -> None:
        """Queue RTT samples taken at ``times``; :meth:`catch_up` applies them in time order."""
        self._queue_t = np.concatenate([self._queue_t, times])
        self._queue_v = np.concatenate([self._queue_v, samples])

    def catch_up(self, t: int | None = None) -> None:
        """Apply the queued samples taken before ``t`` (all of them when ``t`` is None)."""
        if self._queue_t.size == 0:
            return
        k = self._queue_t.size if t is None else int(np.searchsorted(self._queue_t, t, side="left"))
        if k:
            self._update(self._queue_v[:k])
            self._queue_t = self._queue_t[k:]
            self._queue_v = self._queue_v[k:]

    def _update(self, samples: np.ndarray) -> None:
        """RFC 6298 section 2.2/2.3 over new samples, every one of them in order: the result then
        does not depend on how the samples were grouped (batches, resends in between)."""
        m = int(samples.min())
        self.min_local_ns = m if self.min_local_ns is None else min(self.min_local_ns, m)
        top = self._estimator.update_all(samples.tolist())
        if self.srtt_max_ns is None or top > self.srtt_max_ns:
            self.srtt_max_ns = top


class _Tx(NamedTuple):
    """One transmission of a segment as seen here."""

    ns: int
    record: int | None  # record number in the capture
    tsval: int
    pos: int  # position among the direction's data transmissions (-1 unknown)
    rexmit: Retransmission | None  # its resend record; None for the first copy seen


@dataclass(slots=True)
class _Seg:
    """The transmissions of one original segment (or of bytes first seen filling a hole).

    Kept for every segment ever resent, so it is compact: the first copy seen as one tuple, the
    resends as their records (which hold time, record number and TSval) and their positions.
    """

    start: int
    end: int
    first: tuple[int, int | None, int, int] | None  # (ns, record, TSval, position); None: not seen
    rexmits: list[Retransmission] = field(default_factory=list)  # its resends, in order
    rexmit_pos: list[int] = field(default_factory=list)  # position of each resend (as ``first``)
    upstream: bool = False  # first seen filling a hole: the original never passed here
    opened_ns: int | None = None  # upstream: when the hole became visible
    opened_pos: int = -1  # upstream: position of the transmission that showed the hole
    covered_ns: int | None = None
    reported_missing: bool = False  # an ACK stopped inside it or SACK left it a hole
    sacked: bool = False  # a SACK block covered it after it was first sent (the receiver had a copy)

    @property
    def count(self) -> int:
        """Transmissions seen."""
        return len(self.rexmits) + (self.first is not None)

    @property
    def last(self) -> tuple[int, int] | None:
        """(send time, TSval) of the latest transmission seen."""
        if self.rexmits:
            r = self.rexmits[-1]
            return r.time_ns, r.tsval
        return None if self.first is None else (self.first[0], self.first[2])

    def transmissions(self) -> list[_Tx]:
        """Every transmission seen, in order."""
        out = [] if self.first is None else [_Tx(*self.first, None)]
        out.extend(_Tx(r.time_ns, r.index, r.tsval, p, r) for r, p in zip(self.rexmits, self.rexmit_pos))
        return out


@dataclass
class LossResult:
    """Everything the tracker found in one direction.

    The records are held in column tables (``*_table``); the list attributes rebuild them as
    objects on each access, which is what notebooks and tests want. Code that only counts or
    sums reads the columns (``table.column(name)``, ``table.ints(name)``).
    """

    name: str  # Dir.label: "a2b" or "b2a"
    retransmission_table: RecordTable[Retransmission]  # in the order sent
    fill_table: RecordTable[Fill]  # in the order seen
    episode_table: RecordTable[RecoveryEpisode]  # by id
    incident_table: RecordTable[LossIncident]  # by start
    lost_table: RecordTable[LostTransmission]  # by start, then transmission
    transmissions: int  # data segment transmissions seen (originals and resends)
    lost_flags: np.ndarray  # per data transmission of the sender in send order (those lost upstream included): did it not arrive
    lost_times: np.ndarray  # send time of each transmission flagged in lost_flags, in send order
    lost_records: np.ndarray  # record number of each, -1 for an original lost upstream (not seen)
    thin_ns: int  # time with 1..THIN_PACKETS packets in flight
    busy_ns: int  # time with any packet in flight
    network_duplicates: int
    reorderings: int
    srtt_full_ns: float | None  # the sender's smoothed RTT at the end (Timing.srtt_full_ns)
    rtd_samples_ns: np.ndarray  # per original segment, between its consecutive transmissions
    rto_rtd_samples_ns: np.ndarray  # the same, ending in a timeout resend

    @property
    def tables(self) -> tuple[RecordTable, ...]:
        return (self.retransmission_table, self.fill_table, self.episode_table, self.incident_table, self.lost_table)

    retransmissions = property(lambda self: self.retransmission_table.records(), doc="list[Retransmission], rebuilt")
    fills = property(lambda self: self.fill_table.records(), doc="list[Fill], rebuilt")
    episodes = property(lambda self: self.episode_table.records(), doc="list[RecoveryEpisode], rebuilt")
    incidents = property(lambda self: self.incident_table.records(), doc="list[LossIncident], rebuilt")
    lost = property(lambda self: self.lost_table.records(), doc="list[LostTransmission], rebuilt")


_NOTHING = np.empty(0, np.int64)  # the empty columns every tracker starts with (replaced, never written to)
_NOTHING.flags.writeable = False


class LossTracker:
    """Loss forensics of the data one side sends (``d``), seen with the other side's ACKs."""

    # slotted: a capture of many short connections holds two trackers per live connection
    __slots__ = (
        "_episode_table", "_fill_table", "_flight_last", "_incident_table", "_last_blocks", "_lost_ns", "_lost_pos", "_lost_rec", "_lost_table",
        "_o_dropped", "_o_end", "_o_index", "_o_pos", "_o_start", "_o_total", "_o_ts", "_o_tsval", "_open", "_pending", "_prune_mark", "_rtd",
        "_rto_doublings", "_rto_prev", "_rto_rtd", "_rto_run", "_rx_table", "_sack_seen", "_tlp_end", "_undone", "_up_ns", "_up_pos", "_up_start",
        "board", "busy_ns", "d", "dup_run", "episode", "episodes", "holes", "last_ack_ns", "last_advance_ns", "last_send_ns", "mss", "name",
        "network_duplicates", "recent", "reorderings", "segs", "seq_anchor", "snd_max", "snd_una", "thin_ns", "thin_packets", "timing", "tx_count"
    )

    def __init__(self, d: int, thin_packets: int = THIN_PACKETS) -> None:
        self.d = d
        self.name = Dir(d).label
        self.thin_packets = thin_packets
        self.timing = Timing()
        self.mss = 0
        self.seq_anchor = 0  # raw sequence number of relative 0
        # first transmissions not yet acknowledged (sorted by start: new data goes out in order)
        self._o_start = self._o_end = self._o_ts = self._o_index = self._o_tsval = self._o_pos = _NOTHING
        self._prune_mark: int | None = None
        self._o_dropped = 0  # entries pruned from the front
        self._o_total = 0  # first transmissions ever stored
        # what the sender knows
        self.snd_una: int | None = None
        self.snd_max = 0  # highest payload byte + 1
        self.dup_run = 0
        self.last_ack_ns: int | None = None
        self.last_advance_ns: int | None = None  # the last ACK that acknowledged new data
        self.last_send_ns: int | None = None
        # the receiver's cumulative ACK and SACK blocks, kept as the sender keeps them (RFC 6675
        # section 3 Update()); only its SACK bookkeeping and IsLost are read here (no sends are
        # entered: the sender's recovery is what this tracker infers, not what it assumes)
        self.board = Scoreboard(1, DUP_THRESH)
        self._last_blocks: list[list[int]] = []  # SACK blocks of the previous ACK
        self.holes: dict[int, tuple[int, int, int, int]] = {}  # gap start -> (end, opened ns, TSval above, position above)
        # findings: objects while they can change, then rows of the tables (module docstring)
        self.segs: dict[int, _Seg] = {}
        self.recent: list[Retransmission] = []  # resends not yet moved to the table, in order
        self.episodes: list[RecoveryEpisode] = []  # episodes not yet moved, by id
        self.episode: RecoveryEpisode | None = None
        self._rx_table = RecordTable(Retransmission)
        self._fill_table = RecordTable(Fill)
        self._episode_table = RecordTable(RecoveryEpisode)
        self._incident_table = RecordTable(LossIncident)
        self._lost_table = RecordTable(LostTransmission)
        self._rtd = array("q")  # RTD samples of the settled segments (DOMAIN.md 5)
        self._rto_rtd = array("q")
        self._lost_pos = array("q")  # positions among the data transmissions of lost ones
        self._lost_ns = array("q")  # and their send times
        self._lost_rec = array("q")  # and their record numbers
        # the unseen originals lost upstream: position of the transmission that showed their hole,
        # the time it did, and their first byte (finish() places them in the loss sequence)
        self._up_pos = array("q")
        self._up_ns = array("q")
        self._up_start = array("q")
        self._pending: list[tuple[Retransmission, list[_Seg]]] = []  # resends not yet covered
        self._open: list[_Seg] = []  # resent segments not yet covered by an ACK
        self._sack_seen = False  # the receiver has sent SACK blocks (RFC 2018)
        self._rto_run = 0  # timer resends of the head without progress
        self._rto_prev: tuple[int, int] | None = None  # (time, timer interval) of the run's last one
        self._rto_doublings = 0  # how often the run's timer intervals doubled (rto_backoff)
        # snd_max when the last tail-loss probe went out; None: a probe may go. One probe until
        # an ACK beyond it (RFC 8985 sections 7.3-7.4, Linux tlp_high_seq)
        self._tlp_end: int | None = None
        self._undone: RecoveryEpisode | None = None  # the last episode, if it ended undone
        self.network_duplicates = 0
        self.reorderings = 0
        self.tx_count = 0  # send times are kept only for the transmissions later resent (_Seg)
        self.thin_ns = 0
        self.busy_ns = 0
        self._flight_last: tuple[int, int] | None = None  # (time, packets in flight) after the last row

    # ------------------------------------------------------------------ feed
    def feed(self, v: EventBatch, *, now: int, facts: StreamFacts, rtt: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Account one batch of the direction's events.

        ``now`` is the time of the connection's last packet in the batch (time with packets in
        flight is counted up to it; records older than the D-SACK horizon before it move to the
        tables); ``facts`` what the flow stage knows of the direction; ``rtt`` the batch's
        data/ACK RTT samples (ACK times, samples) from :class:`~tcpsack_analyze.rtt.RttSampler`.
        """
        self.mss = facts.mss
        self.seq_anchor = facts.seq_anchor
        self.timing.turnaround_ns = facts.turnaround_ns
        self.timing.seed(facts.receiver_turnaround_ns)  # capture point -> receiver -> back
        if rtt is not None:
            self.timing.add(*rtt)
        data = v.is_data
        acks = v.is_ack & (v.ack >= 0)  # an ACK below the space's origin acknowledges nothing seen
        if not (data.any() or acks.any()):
            return
        first_tx = data & ((v.placement == Placement.NEW) | (v.placement == Placement.GAP))
        pos_of_row = np.full(len(v), -1, np.int64)
        tx_rows = np.nonzero(data)[0]
        pos_of_row[tx_rows] = self.tx_count + np.arange(tx_rows.size)
        self.tx_count += int(tx_rows.size)
        self._store_first(v, first_tx, pos_of_row)
        flight = self._account_flight(v, first_tx, acks, now)
        loud = (data & (v.placement != Placement.NEW)) | (acks & (v.dup | (v.nsack > 0)))
        self._walk(v, np.flatnonzero(loud), data, acks, pos_of_row, flight)
        self.timing.catch_up()
        self._prune()
        self._settle(now)

    def _store_first(self, v: EventBatch, first_tx: np.ndarray, pos_of_row: np.ndarray) -> None:
        if not first_tx.any():
            return
        self._o_pos = np.concatenate([self._o_pos, pos_of_row[first_tx]])
        self._o_start = np.concatenate([self._o_start, v.start[first_tx]])
        self._o_end = np.concatenate([self._o_end, v.end[first_tx]])
        self._o_ts = np.concatenate([self._o_ts, v.time_ns[first_tx]])
        self._o_index = np.concatenate([self._o_index, v.index[first_tx]])
        self._o_tsval = np.concatenate([self._o_tsval, v.tsval[first_tx]])
        self._o_total += int(first_tx.sum())

    def _prune(self) -> None:
        """Forget first transmissions acknowledged before this batch (their resends are rare)."""
        if self.snd_una is None or self._o_end.size == 0:
            return
        keep_from = 0 if self._prune_mark is None else int(np.searchsorted(self._o_end, self._prune_mark, side="right"))
        if keep_from == self._o_end.size:  # every one acknowledged (a short connection's usual end)
            self._o_start = self._o_end = self._o_ts = self._o_index = self._o_tsval = self._o_pos = _NOTHING
            self._o_dropped += keep_from
        elif keep_from:  # copies, so that the pruned entries are freed now, not at the next batch
            self._o_pos = self._o_pos[keep_from:].copy()
            self._o_start = self._o_start[keep_from:].copy()
            self._o_end = self._o_end[keep_from:].copy()
            self._o_ts = self._o_ts[keep_from:].copy()
            self._o_index = self._o_index[keep_from:].copy()
            self._o_tsval = self._o_tsval[keep_from:].copy()
            self._o_dropped += keep_from
        self._prune_mark = self.snd_una

    def _account_flight(self, v: EventBatch, first_tx: np.ndarray, acks: np.ndarray, now: int) -> np.ndarray:
        """Time with packets in flight, and with at most ``thin_packets`` of them (DOMAIN.md 6).

        Packets in flight after each row: first transmissions sent so far minus those whose
        end the cumulative ACK has passed (resends are not counted again).
        """
        n = len(v)
        una0 = self.snd_una if self.snd_una is not None else -1
        una = np.maximum.accumulate(np.where(acks, v.ack, una0))
        sent = self._o_total - int(first_tx.sum()) + np.cumsum(first_tx)
        acked = self._o_dropped + np.searchsorted(self._o_end, una, side="right")
        flight = np.maximum(sent - acked, 0)
        t = np.append(v.time_ns, now)  # up to the connection's last packet of the batch
        prev_t = np.empty(n + 1, np.int64)
        prev_f = np.empty(n + 1, np.int64)
        if self._flight_last is None:
            prev_t[0], prev_f[0] = t[0], 0
        else:
            prev_t[0], prev_f[0] = self._flight_last
        prev_t[1:] = t[:-1]
        prev_f[1:] = flight
        dt = t - prev_t
        self.busy_ns += int(dt[prev_f > 0].sum())
        self.thin_ns += int(dt[(prev_f > 0) & (prev_f <= self.thin_packets)].sum())
        self._flight_last = (now, int(flight[-1]))
        return flight

    @property
    def _busy(self) -> bool:
        """Something is open that a quiet row could change: an episode, uncovered resends."""
        return self.episode is not None or bool(self._pending) or bool(self._open)

    def _walk(self, v: EventBatch, loud: np.ndarray, data: np.ndarray, acks: np.ndarray, pos_of_row: np.ndarray, flight: np.ndarray) -> None:
        """Quiet stretches in numpy; loud rows, and every row while something is open, in Python."""
        n = len(v)
        i = 0
        cols: tuple[list, ...] | None = None
        while i < n:
            if not self._busy:
                j = int(loud[np.searchsorted(loud, i)]) if loud.size and loud[-1] >= i else n
                if j > i:
                    self._quiet(v, i, j, data, acks)
                    i = j
                    continue
            if cols is None:
                cols = (
                    v.time_ns.tolist(), v.index.tolist(), v.tsval.tolist(), v.tsecr.tolist(), v.start.tolist(), v.end.tolist(),
                    v.placement.tolist(), v.ack.tolist(), v.dup.tolist(), v.dsack.tolist(), v.nsack.tolist(), data.tolist(),
                    acks.tolist(), pos_of_row.tolist(), flight.tolist(), v.sack_row.tolist(),
                )
            i = self._loud(v, i, cols)

    def _quiet(self, v: EventBatch, lo: int, hi: int, data: np.ndarray, acks: np.ndarray) -> None:
        """Rows ``[lo, hi)`` with nothing to judge: move the scalars."""
        dm = data[lo:hi]
        am = acks[lo:hi]
        if dm.any():
            self.snd_max = max(self.snd_max, int(v.end[lo:hi][dm].max()))
            self.last_send_ns = int(v.time_ns[lo:hi][dm][-1])
        if am.any():
            t_last = int(v.time_ns[lo:hi][am][-1])
            a = int(v.ack[lo:hi][am].max())
            if self.snd_una is None or a > self.snd_una:
                self._advance(a, t_last, -1)
            self.last_ack_ns = t_last

    def _loud(self, v: EventBatch, i: int, cols: tuple[list, ...]) -> int:
        """Rows from ``i`` one by one until nothing is open any more; returns the next row."""
        ts, idx, tsval, tsecr, start, end, code, ack, dup, dsack, nsack, is_data, is_ack, pos, inflight, sack_row = cols
        sacks = v.sack
        n = len(ts)
        while i < n:
            if is_data[i]:
                c = code[i]
                t = ts[i]
                if c == Placement.REXMIT:
                    self.timing.catch_up(t)
                    self._on_rexmit(start[i], end[i], t, idx[i], tsval[i], pos[i], inflight[i])
                elif c == Placement.FILL:
                    self.timing.catch_up(t)
                    self._on_fill(start[i], end[i], t, idx[i], tsval[i], pos[i])
                else:
                    if c == Placement.GAP and start[i] > self.snd_max:
                        self.holes[self.snd_max] = (start[i], t, tsval[i], pos[i])
                if end[i] > self.snd_max:
                    self.snd_max = end[i]
                self.last_send_ns = t
            elif is_ack[i]:
                blocks = sacks[sack_row[i], : nsack[i]].tolist() if nsack[i] else []
                self._on_ack(ack[i], ts[i], dup[i], dsack[i], blocks, tsecr[i])
            i += 1
            if not self._busy:
                break
        return i

    def _advance(self, a: int, t: int, tsecr: int) -> None:
        self.snd_una = a
        self.last_advance_ns = t
        self.dup_run = 0
        self._rto_run = 0
        if self._tlp_end is not None and a > self._tlp_end:
            self._tlp_end = None
        if self.board.sacked_bytes:  # else the next SACK block brings the board up to snd_una
            self.board.update(a, ())
        if self._pending:
            covered = [p for p in self._pending if p[0].end <= a]
            if covered:
                self._pending = [p for p in self._pending if p[0].end > a]
                self._covered(covered, t, tsecr)
        if self._open:
            for sg in self._open:
                if sg.end <= a:
                    sg.covered_ns = t
            self._open = [sg for sg in self._open if sg.end > a]
        if self.episode is not None and a >= self.episode.recovery_point:
            self._end_episode(Event.FULL_ACK, t)

    def _end_episode(self, what: Trigger | Event, t: int | None) -> None:
        """The open episode ends as :data:`~tcpsack_analyze.loss.states.TRANSITIONS` says."""
        ep = self.episode
        assert ep is not None
        _, ended = transition(episode_state(ep.trigger), what)
        assert ended is not None
        ep.end_ns, ep.ended = t, ended
        self.episode = None
        self._undone = ep if ended is EpisodeEnd.UNDONE else None

    def _covered(self, covered: list[tuple[Retransmission, list[_Seg]]], t: int, tsecr: int) -> None:
        """Resends whose end the ACK at ``t`` covered for the first time (in send order)."""
        for j, (r, segs) in enumerate(covered):
            r.covered_ns = t
            if r.spurious is not None:
                continue
            if tsecr >= 0 and r.tsval >= 0 and tsecr < r.tsval:
                self._spurious(r, SPURIOUS_EIFEL)
                continue
            missing = any(sg.reported_missing for sg in segs)
            # with SACK in use, a receiver that had these bytes said so: without such a block the
            # ACK may be a delayed one for two resends that both were needed
            had = not self._sack_seen or any(sg.sacked for sg in segs)
            if self._too_soon(r, t) or (had and not missing and any(p.end <= r.start and p.index < r.index for p, _ in covered[:j])):
                self._spurious(r, SPURIOUS_EARLY_ACK)

    def _too_soon(self, r: Retransmission, t: int) -> bool:
        """An ACK (cumulative or SACK) of ``r``'s bytes at ``t`` came back sooner than the
        resend's own ACK could: an earlier copy caused it (DOMAIN.md section 4, ``spurious``)."""
        return self.timing.min_local_ns is not None and t - r.time_ns < TOO_SOON * self.timing.min_local_ns

    def _sacked_too_soon(self, t: int) -> None:
        """Resends whose bytes a SACK block at ``t`` reported held for the first time, sooner
        than their own ACK could come back: the SACK was for an earlier copy, the resend was not
        needed (a tail-loss probe sent just before the original's SACK arrived)."""
        for r, segs in self._pending:
            if r.spurious is None and all(sg.sacked for sg in segs) and self._too_soon(r, t):
                self._spurious(r, SPURIOUS_EARLY_ACK, t)

    def _spurious(self, r: Retransmission, why: str, t: int | None = None) -> None:
        """Mark a resend unnecessary, shown at ``t`` (default: when it was covered); an open
        episode that it began is undone (RFC 3522 s. 2)."""
        r.spurious = why
        if r.episode is None:
            return
        ep = self.episodes[r.episode - len(self._episode_table)]
        ep.spurious += 1
        if ep is self.episode and ep.start_index == r.index:
            self._end_episode(Event.UNDONE, r.covered_ns if t is None else t)

    def _on_ack(self, a: int, t: int, dup: bool, dsack: bool, blocks: list[list[int]], tsecr: int) -> None:
        una = self.snd_una
        if una is None or a > una:
            self._advance(a, t, tsecr)
        elif dup:
            self.dup_run += 1
        if (dup or dsack) and self._tlp_end is not None and a >= self._tlp_end:
            self._tlp_end = None  # a duplicate at the probe's end: the probe and its original both arrived
        una = self.snd_una
        assert una is not None
        # an ACK stopping inside a resent segment reports it missing
        for sg in self._open:
            if sg.start <= a < sg.end:
                sg.reported_missing = True
        if blocks:
            self._sack_seen = True
            if self.episode is not None:
                self.episode.sack_in_use = True
            first = 0
            if dsack:
                self._on_dsack(blocks[0][0], blocks[0][1], t)
                first = 1
            # receivers repeat most blocks: only those not in the previous ACK can add anything
            new = [(lo, hi) for lo, hi in blocks[first:] if hi > una and [lo, hi] not in self._last_blocks]
            if new:
                self.board.update(una, new)
            self._last_blocks = blocks
            # holes below the highest SACK are reported missing; what the blocks cover, held
            top = self.board.high_sack
            if top is not None:
                newly = False
                for sg in self._open:
                    whole = self.board.sacked_within(sg.start, sg.end) >= sg.end - sg.start
                    newly |= whole and not sg.sacked
                    sg.sacked |= whole
                    if not sg.reported_missing and una <= sg.start < top and not whole:
                        sg.reported_missing = True
                if newly and self._pending:
                    self._sacked_too_soon(t)
        self.last_ack_ns = t

    def _on_dsack(self, lo: int, hi: int, t: int) -> None:
        """A D-SACK: the latest resend of these bytes arrived twice (RFC 2883 section 4)."""
        self.timing.catch_up(t)
        horizon = t - self._dsack_horizon()
        cands = [r for r in reversed(self.recent[-DSACK_WINDOW:]) if r.start < hi and lo < r.end and horizon <= r.time_ns <= t]
        if not cands:
            return
        if cands[0].spurious is None:
            self._spurious(cands[0], SPURIOUS_DSACK)
        elif cands[0].spurious == SPURIOUS_EARLY_ACK:  # the receiver's own word outranks timing
            cands[0].spurious = SPURIOUS_DSACK

    # ------------------------------------------------------------ segments
    def _segs_of(self, s: int, e: int) -> list[_Seg]:
        """The segments a resend of ``[s, e)`` covers, created from the first transmissions."""
        out = []
        i = max(int(np.searchsorted(self._o_start, s, side="right")) - 1, 0)
        while i < self._o_start.size and self._o_start[i] < e:
            a, b = int(self._o_start[i]), int(self._o_end[i])
            if b > s:
                seg = self.segs.get(a)
                if seg is None:
                    seg = _Seg(a, b, (int(self._o_ts[i]), int(self._o_index[i]), int(self._o_tsval[i]), int(self._o_pos[i])))
                    self.segs[a] = seg
                out.append(seg)
            i += 1
        if not out:  # first seen filling a hole, or first sent before the capture or the store
            out = [sg for sg in self.segs.values() if sg.start <= s < sg.end][:1]
            if not out:
                seg = _Seg(s, e, None)
                self.segs[s] = seg
                out = [seg]
        return out

    def _on_fill(self, s: int, e: int, t: int, index: int, tsval: int, pos: int) -> None:
        """Bytes below snd_max seen for the first time: reordering or a loss upstream."""
        key = max((k for k in self.holes if k <= s), default=None)
        opened_ns, above_tsval, opened_pos = t, -1, pos
        if key is not None:
            hole_end, opened_ns, above_tsval, opened_pos = self.holes[key]
            if e >= hole_end and s <= key:
                del self.holes[key]
            elif s <= key:
                self.holes[e] = (hole_end, opened_ns, above_tsval, opened_pos)
                del self.holes[key]
            elif e >= hole_end:
                self.holes[key] = (s, opened_ns, above_tsval, opened_pos)
        late = t - opened_ns
        srtt = self.timing.srtt_full_ns
        if tsval >= 0 and above_tsval >= 0 and tsval != above_tsval:
            cause = "retransmission" if tsval > above_tsval else "reordering"
            why = f"TSval {tsval} {'after' if tsval > above_tsval else 'before'} {above_tsval} of the data above the hole"
        elif srtt is not None:
            cause = "retransmission" if late > srtt / 2 else "reordering"
            why = f"filled {late / 1e6:.1f} ms after the hole opened (SRTT {srtt / 1e6:.1f} ms)"
        else:
            cause, why = AMBIGUOUS, "no timestamps and no RTT estimate"
        self._fill_table.append(Fill(-1, self.name, index, t, self._seq32(s), s, e, opened_ns, cause, why))
        if cause == "reordering":
            self.reorderings += 1
            return
        seg = _Seg(s, e, (t, index, tsval, pos), upstream=True, opened_ns=opened_ns, opened_pos=opened_pos)
        self.segs[s] = seg
        self._open.append(seg)

    def _seq32(self, rel: int) -> int:
        return int(wire_add(self.seq_anchor, rel))

    def _on_rexmit(self, s: int, e: int, t: int, index: int, tsval: int, pos: int, flight: int) -> None:
        segs = self._segs_of(s, e)
        lasts = [x for x in (sg.last for sg in segs) if x is not None]
        prev_ns = max((x[0] for x in lasts), default=None)
        prev_tsval = max((x[1] for x in lasts), default=-1)
        # a network duplicate: the same bytes with the same TSval, moments apart
        if tsval >= 0 and tsval == prev_tsval and prev_ns is not None and t - prev_ns < max(1_000_000, (self.timing.min_local_ns or 0) // 2):
            self.network_duplicates += 1
            return
        nth = max(sg.count for sg in segs)
        una = self.snd_una if self.snd_una is not None else 0
        since_ack = None if self.last_ack_ns is None else t - self.last_ack_ns
        last = max((x for x in (self.last_ack_ns, self.last_send_ns, prev_ns) if x is not None), default=t)
        silence = t - last
        sacked_bytes = self.board.sacked_within(s, self.board.high_sack or s)
        for sg in segs:  # SACKed before this resend: the receiver had a copy
            sg.sacked |= self.board.sacked_within(sg.start, sg.end) >= sg.end - sg.start
        self.board.smss = self.mss or max(e - s, 1)
        sacked_segs = math.ceil(sacked_bytes / self.board.smss)
        is_lost = self.board.is_lost(s)
        highest = e >= self.snd_max
        head = s <= una
        # DOMAIN.md section 5: each byte range's RTD is from its own previous transmission; a
        # resend that merges queued messages is timed from the previous copy of its first byte
        # (segs[0] holds it), not from a later copy of its tail (a probe, say)
        first_last = segs[0].last if segs[0].start <= s < segs[0].end else None
        rtd_from = first_last[0] if first_last is not None else prev_ns
        rtd = None if rtd_from is None else t - rtd_from
        trigger, evidence = self._classify(segs, rtd, since_ack, sacked_segs, is_lost, highest, head, flight, silence)
        ep = self.episode
        interval = None
        if trigger == RTO:
            self._rto_run += 1
            interval = self._timer_interval(t, rtd, silence)
        elif trigger == TLP:
            self._tlp_end = self.snd_max
        backoff = trigger == RTO and ep is not None and ep.trigger == RTO and self._rto_run > 1
        resume = ep is None and trigger == RECOVERY  # _classify: the sender did not undo an undone episode
        resumed = Event.RESUME if self._undone is not None and self._undone.trigger == RTO else Event.RESUME_RECOVERY
        what: Trigger | Event = Event.BACKOFF if backoff else resumed if resume else Trigger(trigger)
        state, ended = transition(episode_state(None if ep is None else ep.trigger), what)
        if resume:
            ep, self._undone = self._undone, None
            assert ep is not None
            ep.end_ns, ep.ended = None, EpisodeEnd.END_OF_CAPTURE  # open again, as when it began
            self.episode = ep
        if backoff:
            assert ep is not None
            ep.recovery_point = self.snd_max  # the same timeout episode goes on
        if ended is not None:
            self._end_episode(Trigger(trigger), t)
            ep = None
        if ep is None and state is not CaState.OPEN:
            ep = RecoveryEpisode(-1, self.name, len(self._episode_table) + len(self.episodes), trigger, t, index, self.snd_max)
            self.episodes.append(ep)
            self.episode = ep
        r = Retransmission(
            conn=-1,
            direction=self.name,
            index=index,
            time_ns=t,
            seq=self._seq32(s),
            start=s,
            end=e,
            nth=nth,
            trigger=trigger,
            episode=None if ep is None else ep.id,
            rtd_ns=rtd,
            dupacks=self.dup_run,
            sacked_segments=sacked_segs,
            silence_ns=silence,
            since_ack_ns=since_ack,
            flight_segments=flight,
            backoff=self._rto_doublings if trigger == RTO else 0,
            rto_run=self._rto_run if trigger == RTO else 0,
            rto_interval_ns=interval,
            rto_estimate_ns=self.timing.rto_ns,
            srtt_ns=None if self.timing.srtt_full_ns is None else int(self.timing.srtt_full_ns),
            highest=highest,
            thin=flight <= self.thin_packets,
            tsval=tsval,
            episode_trigger=None if ep is None else ep.trigger,
            evidence=evidence,
        )
        if e <= una:
            r.spurious = SPURIOUS_ACKED
        if ep is not None:
            ep.retransmissions += 1
            ep.holes += sum(1 for sg in segs if not any(x.episode == ep.id for x in sg.rexmits))
            if trigger == RTO:
                ep.rtos += 1
        for sg in segs:
            if not sg.rexmits and not sg.upstream:
                self._open.append(sg)
            sg.rexmits.append(r)
            sg.rexmit_pos.append(pos)
        self.recent.append(r)
        if r.spurious is None:
            self._pending.append((r, segs))

    def _timer_interval(self, t: int, rtd: int | None, silence: int) -> int:
        """The retransmission timer's interval behind the timer resend at ``t`` (the
        ``_rto_run``-th of its run), and the run's backoff so far in ``_rto_doublings``.

        The first of a run: the timer ran from the later of the last ACK of new data (RFC 6298
        section 5.3 restarts it there) and the previous copy of the resent bytes (5.1 starts it
        with the send; Linux also re-arms it relative to the head's send after a probe), so the
        interval is the shorter of the two times, or the direction's silence when neither is
        known. A later one: the time since the previous timer resend (5.5-5.6 restart the timer
        with it). An interval that grew over the one before by more than sqrt(2) (nearer to 2x than
        to 1x) is one doubling (RFC 6298 5.5: each expiry backs the timer off once; a larger step,
        as when a timer resend is missing from the capture, still counts once); a flat step is
        not, as with Linux's thin-stream linear timeouts (paper 001 section 4.1.2). The doublings
        are ``backoff``, as Linux's ``icsk_backoff`` counts them; at RFC 6298 2.5's upper bound
        the intervals stop growing, and so does the count.
        """
        if self._rto_run == 1 or self._rto_prev is None:
            since = [x for x in (rtd, None if self.last_advance_ns is None else t - self.last_advance_ns) if x is not None]
            interval = min(since) if since else silence
            self._rto_doublings = 0
        else:
            prev_t, prev_interval = self._rto_prev
            interval = t - prev_t
            if interval > DOUBLED * prev_interval:
                self._rto_doublings += 1
        self._rto_prev = (t, interval)
        return interval

    def _classify(
        self, segs: list[_Seg], rtd: int | None, since_ack: int | None, sacked_segs: int, is_lost: bool, highest: bool, head: bool, flight: int,
        silence: int = 0,
    ) -> tuple[str, str]:
        """The trigger of a resend, with its evidence (module docstring)."""
        tm = self.timing
        srtt = tm.srtt_full_ns
        if since_ack is None or srtt is None:
            return AMBIGUOUS, "no ACK or no RTT sample yet: cannot tell a timer from ACK clocking"
        lag = since_ack - (tm.turnaround_ns or 0)
        timer = lag > max(srtt / 2, MIN_TIMER_GAP_NS)
        clock = f"{since_ack / 1e6:.1f} ms after the last ACK (turnaround {(tm.turnaround_ns or 0) / 1e6:.1f} ms, SRTT {srtt / 1e6:.1f} ms)"
        dup = f"{self.dup_run} dupACKs, {sacked_segs} segments SACKed above"
        if self.episode is not None:
            again = any(r.episode == self.episode.id for sg in segs for r in sg.rexmits)
            if timer and head and (again or self.episode.trigger == RTO or lag > (tm.rto_ns or 0)):
                return RTO, f"timer: head resent {clock}"
            # a resend of the head inside an episode that no ACK clocked out (it left neither at an
            # ACK's turnaround nor right behind the sender's previous packet) is the timer's: the
            # dupACKs of a stalled recovery do not restart it (RFC 6298 section 5), and RFC 6582
            # section 4's Impatient variant re-armed it at the first partial ACK, so it may fire
            # well before an RTO after the head's last copy
            if head and lag > CLOCK_TOLERANCE_NS and silence > CLOCK_TOLERANCE_NS:
                return RTO, f"timer: head resent inside the episode, not ACK-clocked: {clock}, {silence / 1e6:.1f} ms after the previous send"
            # dupACKs do not restart the retransmission timer (RFC 6298 section 5): a head resent
            # again long after its last resend, not right after an ACK, is the timer's
            if head and again and rtd is not None and rtd > max(2 * srtt, tm.rto_ns or 0) and lag > MIN_TIMER_GAP_NS:
                return RTO, f"timer: head resent again {rtd / 1e6:.1f} ms after its last resend, {clock}"
            return RECOVERY, f"in episode {self.episode.id} ({self.episode.trigger}); {dup}"
        if not timer and (self.dup_run or sacked_segs):
            if self.dup_run >= DUP_THRESH or is_lost:
                return FAST, f"{dup}; {clock}"
            return EARLY, f"{dup} (< {DUP_THRESH}); {clock}"
        undone = self._undone
        if not timer and undone is not None and any(x is undone for x in self.episodes):
            if undone.trigger == RTO and not highest:
                # ACK-clocked, no dupACKs, below snd_max, right after a timeout episode judged
                # spurious: go-back-N (RFC 6298 section 5) of a sender that did not undo the timeout
                return RECOVERY, f"go-back-N after timeout episode {undone.id}, which the sender did not undo; {dup}; {clock}"
            if undone.trigger != RTO and head and self.snd_una is not None and self.snd_una < undone.recovery_point:
                # ACK-clocked resend of the head below the recovery point of a fast recovery
                # judged spurious: NewReno's answer to a partial ACK (RFC 6582 section 3.2
                # step 5) from a sender that did not undo the recovery (no Eifel response)
                return RECOVERY, f"partial ACK: head resent below the recovery point of episode {undone.id}, which the sender did not undo; {dup}; {clock}"
        if timer and lag < srtt and (rtd is None or rtd < 2 * srtt):
            # sooner than any RTO (> SRTT, RFC 6298 s. 2) after an ACK, and about an RTT after the
            # segment was last sent: RACK's reordering timer (RFC 8985 s. 6.2) or a probe
            if self.dup_run or sacked_segs:
                return EARLY, f"timer sooner than an RTO, {dup} (RACK reordering timer); {clock}"
            if highest:
                return TLP, f"timer: highest segment resent {clock}"
        if timer:
            if highest and self._tlp_end is None and self._rto_run == 0 and (not head or flight <= 1):
                return TLP, f"timer: highest segment resent {clock}"
            return RTO, f"timer: {'head' if head else 'segment'} resent {clock}"
        # no episode, no dupACK or SACK block, no timer: the sender was in Open and resent for a
        # reason the capture does not show (loss marks kept from an earlier timeout, as ns-3's
        # scoreboard keeps them, resent as soon as the window allows)
        return OTHER, f"ACK-clocked in Open: {dup}, outside any episode; {clock}"

    # -------------------------------------------------------------- settle
    def _dsack_horizon(self) -> int:
        """How long after a resend a D-SACK can still name it (module docstring), ns.

        From the RTT samples taken before the moment asked about (the caller catches up), so it
        does not depend on where batches end."""
        tm = self.timing
        if tm.srtt_max_ns is None:
            return DSACK_NO_RTT_HORIZON_NS
        return max(DSACK_MIN_HORIZON_NS, int(DSACK_RTTS * (tm.srtt_max_ns + (tm.turnaround_ns or 0))))

    def _settle(self, now: int | None = None) -> None:
        """Move what can no longer change from objects into the tables (module docstring).

        ``now``: the time of the batch's last row; None at the end of the capture (all moves).
        """
        recent = self.recent
        final = now is None
        old = None if now is None else now - self._dsack_horizon()
        k = len(recent) if final else 0
        if old is not None and recent:
            beyond = len(recent) - DSACK_WINDOW  # these are out of the D-SACK window anyway
            while k < len(recent) and (recent[k].covered_ns is not None or recent[k].spurious is not None) and (
                k < beyond or recent[k].time_ns < old
            ):
                k += 1
        moved = k
        for r in recent[:k]:
            self._rx_table.append(r)
        del recent[:k]
        # episode ids only grow, so the first live resend with an episode has the oldest live one
        first_live = next((r.episode for r in recent if r.episode is not None), None)
        if self.episode is not None and (first_live is None or self.episode.id < first_live):
            first_live = self.episode.id
        k = 0
        while k < len(self.episodes) and (final or first_live is None or self.episodes[k].id < first_live):
            self._episode_table.append(self.episodes[k])
            k += 1
        del self.episodes[:k]
        if not (final or moved or not recent):
            return  # a resent segment waits for its resends to move
        oldest = recent[0].index if recent else None
        una = self.snd_una if self.snd_una is not None else 0
        # a segment also waits out the horizon after its last transmission, so that a late resend
        # of its bytes (of acknowledged bytes, say) still finds it, whatever the batches
        done = [
            seg for seg in self.segs.values()
            if old is None or (
                (seg.covered_ns is not None or (not seg.rexmits and not seg.upstream and seg.end <= una))
                and (oldest is None or not seg.rexmits or seg.rexmits[-1].index < oldest)
                and ((last := seg.last) is None or last[0] < old)
            )
        ]
        if final:
            done.sort(key=lambda x: x.start)
        for seg in done:
            self._close(seg)
            del self.segs[seg.start]

    def _close(self, seg: _Seg) -> None:
        """Derive a settled segment's incident, lost transmissions and RTD samples (DOMAIN.md 5, 7)."""
        tx = seg.transmissions()
        for before, now in zip(tx, tx[1:]):  # DOMAIN.md 5: consecutive transmissions of one segment
            if now.rexmit is not None:
                self._rtd.append(now.ns - before.ns)
                if now.rexmit.trigger == RTO:
                    self._rto_rtd.append(now.ns - before.ns)
        if not seg.rexmits and not seg.upstream:
            return
        # transmission i did not arrive when resend i+1 was needed (not spurious)
        lost_tx = [-1] if seg.upstream else []  # upstream: the unseen original
        for i in range(len(tx) - 1):
            nxt = tx[i + 1].rexmit
            if nxt is not None and nxt.spurious is None:
                lost_tx.append(i)
        first_ns = seg.opened_ns if seg.opened_ns is not None else tx[0].ns
        seq = self._seq32(seg.start)
        for i in lost_tx:
            if i < 0:
                self._lost_table.append(LostTransmission(-1, self.name, None, first_ns, seq, seg.start, seg.end, True, UPSTREAM))
                if seg.opened_pos >= 0:
                    self._up_pos.append(seg.opened_pos)
                    self._up_ns.append(first_ns)
                    self._up_start.append(seg.start)
                continue
            # the first copy seen here is the original unless it filled a hole (upstream: a resend)
            original = i == 0 and not seg.upstream
            self._lost_table.append(LostTransmission(-1, self.name, tx[i].record, tx[i].ns, seq, seg.start, seg.end, original, DOWNSTREAM))
            if tx[i].pos >= 0:
                self._lost_pos.append(tx[i].pos)
                self._lost_ns.append(tx[i].ns)
                record = tx[i].record
                self._lost_rec.append(-1 if record is None else record)
        self._incident_table.append(
            LossIncident(
                conn=-1,
                direction=self.name,
                start=seg.start,
                end=seg.end,
                seq=seq,
                first_index=None if seg.upstream else tx[0].record,
                first_ns=first_ns,
                retransmissions=len(seg.rexmits) + (1 if seg.upstream else 0),
                last_rexmit_ns=tx[-1].ns,
                covered_ns=seg.covered_ns,
                where=UPSTREAM if seg.upstream else DOWNSTREAM,
                lost=bool(lost_tx),
                lost_transmissions=len(lost_tx),
                triggers=[r.trigger for r in seg.rexmits],
                thin=any(r.thin for r in seg.rexmits),
            )
        )

    def _loss_sequence(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The sender's data transmissions in send order as lost flags, with the send time and
        record number (-1: not seen here) of each lost one (DOMAIN.md section 7).

        Transmissions seen here are lost when a needed resend followed them (downstream); a
        resend of several segments is one transmission, counted once. An original lost upstream
        never passed here: it is placed just before the transmission that showed its hole (the
        sender sent it before that one), holes of one transmission in the order of their bytes,
        and timed when the hole showed. So a receiver-side capture's holes give the loss pattern
        (P, bursts, Gilbert-Elliott) over every transmission the sender made, lost or not.
        """
        if not self._lost_pos and not self._up_pos:  # nothing lost (most directions of most captures)
            return np.zeros(self.tx_count, dtype=bool), _NOTHING, _NOTHING
        pos, first = np.unique(np.frombuffer(self._lost_pos, np.int64), return_index=True)
        up_pos = np.frombuffer(self._up_pos, np.int64)
        order = np.lexsort((np.frombuffer(self._up_start, np.int64), up_pos))
        up_pos = up_pos[order]
        # a seen transmission moves up by the unseen ones before it; the k-th unseen one by k
        at = np.concatenate((pos + np.searchsorted(up_pos, pos, side="right"), up_pos + np.arange(up_pos.size)))
        times = np.concatenate((np.frombuffer(self._lost_ns, np.int64)[first], np.frombuffer(self._up_ns, np.int64)[order]))
        records = np.concatenate((np.frombuffer(self._lost_rec, np.int64)[first], np.full(up_pos.size, -1, np.int64)))
        flags = np.zeros(self.tx_count + up_pos.size, dtype=bool)
        flags[at] = True
        by_position = np.argsort(at, kind="stable")
        return flags, times[by_position], records[by_position]

    # -------------------------------------------------------------- finish
    def finish(self) -> LossResult:
        """Close what is open, settle every record and return the tables (DOMAIN.md s. 5, 7)."""
        self.timing.catch_up()
        if self.episode is not None:
            self._end_episode(Event.END, self.episode.end_ns)
        self._settle()
        incidents, lost = self._incident_table, self._lost_table
        # incidents and lost transmissions by start; segments settled in the order they closed
        incidents.reorder(np.argsort(incidents.ints("start")[0], kind="stable"))
        lost.reorder(np.argsort(lost.ints("start")[0], kind="stable"))
        flags, times, records = self._loss_sequence()
        return LossResult(
            self.name,
            self._rx_table, self._fill_table, self._episode_table, incidents, lost, self.tx_count, flags, times, records,
            self.thin_ns, self.busy_ns, self.network_duplicates, self.reorderings, self.timing.srtt_full_ns,
            np.array(self._rtd, np.int64) if self._rtd else _NOTHING, np.array(self._rto_rtd, np.int64) if self._rto_rtd else _NOTHING,
        )
