"""Loss forensics of one direction, fed batch by batch by its connection (DOMAIN.md s. 4-7).

The tracker is the compiled core's (``src/loss/tracker.rs``, whose module documentation states
the rules in full); this module feeds it a direction's :class:`~tcpsack_analyze.events.EventBatch`
as columns and hands its records back as :class:`LossResult` column tables. In short:

- each retransmission is classified when it is seen, from what the capture showed up to then
  (DOMAIN.md section 4): *fast* or *early* (ACK-clocked after dupACKs or SACK blocks, by
  DupThresh and RFC 6675 IsLost), *recovery* inside an episode, *rto* and *tlp* (timers, told
  from ACK clocking by the capture point's turnaround and the SRTT), *other* (ACK-clocked in
  Open), *ambiguous* (no ACK or no RTT yet); episodes run until snd_una passes the recovery
  point (states: ``loss/states.py``);
- a resend is later marked spurious by a D-SACK (RFC 2883), an Eifel timestamp echo (RFC 3522),
  or an ACK caused by an earlier copy;
- lost transmissions are placed *downstream* (seen here, then resent) or *upstream* (a hole
  filled later than reordering explains) of the capture point (DOMAIN.md section 7), and give
  the loss sequence over every transmission the sender made;
- records move from objects into column tables once nothing can change them (the D-SACK
  horizon: 8 times the largest SRTT seen, at least 200 ms), so memory follows what is open.

The receiver's SACK state lives in the core's RFC 6675 scoreboard (the one behind
:class:`~tcpsack_analyze.scoreboard.Scoreboard`) and the RTT in its RFC 6298 estimator (the one
behind :class:`~tcpsack_analyze.rtt.Rfc6298`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tcpsack_analyze import _core
from tcpsack_analyze.events import Dir, EventBatch, StreamFacts
from tcpsack_analyze.loss.records import Fill, LossIncident, LostTransmission, RecoveryEpisode, Retransmission
from tcpsack_analyze.loss.states import EpisodeEnd, Spurious, Trigger
from tcpsack_analyze.loss.table import RecordTable

THIN_PACKETS: int = _core.THIN_PACKETS  # DOMAIN.md section 6: at most this many packets in flight is a thin stream
# the D-SACK horizon as (SRTTs, minimum ns); None: the core's (8 SRTTs, 200 ms). Tests shorten it
# to see records move out of the tracker within a short capture.
HORIZON: tuple[int, int] | None = None

# what the codes of the core's enum columns stand for (src/loss/records.rs, Vocab): the str
# enums of loss/states.py, as the records have always held them
_VOCABULARY: dict[str, list[Any]] = {
    "trigger": list(Trigger),
    "spurious": list(Spurious),
    "episode_end": list(EpisodeEnd),
    "where": ["downstream", "upstream"],
    "cause": ["retransmission", "reordering", Trigger.AMBIGUOUS],
}


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


def _table(kind: type, name: str, columns: dict[str, Any] | None, conn: int) -> RecordTable:
    """A record table from the core's columns (``py_loss.rs`` ``table_dict``; None for a table
    without records, the common case), its records of connection ``conn`` and direction ``name``."""
    if columns is None:
        return RecordTable(kind)
    values: dict[str, Any] = {}
    size = 0
    for field, col in columns.items():
        if isinstance(col, tuple):
            vocab = _VOCABULARY[col[0]]
            codes = col[1].tolist()
            if len(col) == 3:  # a list of codes per record
                ends = col[2].tolist()
                values[field] = [[vocab[c] for c in codes[lo:hi]] for lo, hi in zip([0, *ends[:-1]], ends)]
            else:
                values[field] = [None if c < 0 else vocab[c] for c in codes]
        else:
            values[field] = col
        size = len(values[field])
    values["conn"] = np.full(size, conn, np.int32)
    values["direction"] = [name] * size
    return RecordTable.from_columns(kind, size, values)


class LossTracker:
    """Loss forensics of the data one side sends (``d``), seen with the other side's ACKs."""

    __slots__ = ("_core", "d", "name")

    def __init__(self, d: int, thin_packets: int = THIN_PACKETS) -> None:
        self.d = d
        self.name = Dir(d).label
        rtts, min_ns = HORIZON if HORIZON is not None else (None, None)
        self._core = _core.LossTracker(d, thin_packets, rtts, min_ns)

    def feed(self, v: EventBatch, *, now: int, facts: StreamFacts, rtt: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Account one batch of the direction's events.

        ``now`` is the time of the connection's last packet in the batch (time with packets in
        flight is counted up to it; records older than the D-SACK horizon before it move to the
        tables); ``facts`` what the flow stage knows of the direction; ``rtt`` the batch's
        data/ACK RTT samples (ACK times, samples) from :class:`~tcpsack_analyze.rtt.RttSampler`.
        """
        rtt_t, rtt_v = rtt if rtt is not None else (_NOTHING, _NOTHING)
        self._core.feed(
            _col(v.kind, np.int8), _col(v.time_ns, np.int64), _col(v.index, np.int64), _col(v.start, np.int64), _col(v.end, np.int64),
            _col(v.placement, np.int8), _col(v.tsval, np.int64), _col(v.ack, np.int64), _col(v.tsecr, np.int64), _col(v.nsack, np.int8),
            _col(v.dup, np.bool_), _col(v.dsack, np.bool_), _col(v.sack_row, np.int32), _col(v.sack, np.int64).reshape(-1),
            int(now), int(facts.mss), int(facts.seq_anchor), facts.turnaround_ns, facts.receiver_turnaround_ns,
            _col(rtt_t, np.int64), _col(rtt_v, np.int64),
        )

    def live_records(self) -> tuple[int, int, int]:
        """Records still held as objects in the core, which can still change: (resends, resent
        segments, episodes); the others are in the column tables (module docstring)."""
        resends, segments, episodes = self._core.live_records()
        return int(resends), int(segments), int(episodes)

    def held_bytes(self) -> int:
        """Bytes the core holds for this direction that grow with its outstanding data (first
        transmissions kept for look-ups, RTT samples not yet applied)."""
        return int(self._core.held_bytes())

    def moved_retransmissions(self) -> int:
        """Resends moved into their column table so far."""
        return int(self._core.moved_retransmissions())

    def finish(self) -> LossResult:
        """Close what is open, settle every record and return the tables (DOMAIN.md s. 5, 7)."""
        return result_of(self.name, self._core.finish())


def result_of(name: str, r: dict[str, Any], conn: int = -1) -> LossResult:
    """The :class:`LossResult` of direction ``name`` from the core's dict of a finished tracker
    (``py_loss.rs`` ``result_dict``: this module's trackers, and those the core's flow pipeline
    runs for every connection of a capture, ``flowcore.py``); its records are of connection
    ``conn`` (-1: a tracker fed by hand, of no connection)."""
    return LossResult(
        name,
        _table(Retransmission, name, r["retransmissions"], conn), _table(Fill, name, r["fills"], conn),
        _table(RecoveryEpisode, name, r["episodes"], conn), _table(LossIncident, name, r["incidents"], conn),
        _table(LostTransmission, name, r["lost"], conn), r["transmissions"],
        r["lost_flags"], _shared(r["lost_times"]), _shared(r["lost_records"]),
        r["thin_ns"], r["busy_ns"], r["network_duplicates"], r["reorderings"], r["srtt_full_ns"],
        _shared(r["rtd_samples_ns"]), _shared(r["rto_rtd_samples_ns"]),
    )


_NOTHING = np.empty(0, np.int64)  # the empty column most results share (read-only, never written to)
_NOTHING.flags.writeable = False


def _shared(a: np.ndarray) -> np.ndarray:
    """An empty result column as the one shared empty array (a capture holds many)."""
    return a if a.size else _NOTHING


def _col(a: np.ndarray, dtype: type) -> np.ndarray:
    """A column in the dtype and layout the core reads (no copy when it is already so)."""
    return np.ascontiguousarray(a, dtype=dtype)


__all__ = ["HORIZON", "THIN_PACKETS", "LossResult", "LossTracker", "result_of"]
