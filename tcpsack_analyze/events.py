"""The event boundary: what one direction of a connection did, as a stream of frozen events.

Contract (every stage downstream of the flow stage relies on it, and nothing else):

* A connection has two directions, :class:`Dir` ``A2B`` (the opener's data) and ``B2A``. The
  stream of a direction holds two kinds of events, in capture order:

  - :class:`Ack`: a packet of the *receiver* with the ACK flag, about the sender's data (its
    payload, if any, is a send of the other direction).
  - :class:`Send`: any other packet of the direction's *data sender*, and every one of its
    packets that carries payload, SYN or FIN (``placement`` says where the payload falls;
    ``NONE`` for a segment without payload, e.g. a bare SYN, FIN or RST).

  So every packet of a connection is an event of at least one of its two streams, and a packet
  with both data and the ACK flag is an event of both.

* Sequence numbers are unwrapped to 64 bits (the core's ``src/flow/unwrap.rs``), relative to the
  sender's ISN (the SYN is 0, the first data byte 1), or to the first number seen without a SYN.
  ``start``/``end`` of a send delimit its payload ``[start, end)``; ACK numbers and SACK edges are
  in the same space. Times are ns since the epoch on the capture clock.
* The flow stage (the compiled core's, ``src/flow/``; this module's contract is also
  ``src/events.rs``'s) decides, once, the rules that need the whole connection's history: where a
  send falls in the sequence space (:class:`Placement`), whether an ACK is a duplicate ACK
  (:func:`~tcpsack_analyze.acks.duplicate_ack`), whether its first SACK block is a D-SACK
  (:func:`~tcpsack_analyze.acks.dsack_first_block`), and the advertised window in bytes. Stages
  read these marks and never decide them again.
* Events travel in batches of columns (:class:`EventBatch`, numpy arrays, one row per event) so
  that quiet stretches cost numpy time; :meth:`EventBatch.events` gives per-event views for code
  that steps one event at a time, and :meth:`EventBatch.of` builds a batch from such events, which
  is how tests and notebooks feed hand-made conversations to the stages.
"""
from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

MAX_SACK_BLOCKS = 4  # RFC 2018 section 3: at most 4 blocks fit in the option space

# TCP header flags (RFC 9293 section 3.1)
FIN, SYN, RST, PSH, ACK, URG, ECE, CWR = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80


class Dir(enum.IntEnum):
    """A direction of a connection, named by its data sender: ``A2B`` is the opener's data (the
    sender of the first SYN, else of the first packet seen), ``B2A`` the other side's."""

    A2B = 0
    B2A = 1

    @property
    def label(self) -> str:
        """``"a2b"`` or ``"b2a"``: the name used in reports, tables and on the command line."""
        return "a2b" if self is Dir.A2B else "b2a"

    @property
    def arrow(self) -> str:
        """``"a->b"`` or ``"b->a"``: the column heading of the text report."""
        return "a->b" if self is Dir.A2B else "b->a"

    @property
    def peer(self) -> Dir:
        """The other direction (whose data this direction's receiver sends)."""
        return Dir.B2A if self is Dir.A2B else Dir.A2B

    @classmethod
    def parse(cls, value: str | int | Dir) -> Dir:
        """``"a2b"``/``"b2a"``, ``"a->b"``/``"b->a"`` or 0/1."""
        if isinstance(value, str):
            for d in cls:
                if value in (d.label, d.arrow, d.name):
                    return d
            raise ValueError(f"unknown direction {value!r} (a2b or b2a)")
        return cls(int(value))


class Kind(enum.IntEnum):
    """What an event is."""

    SEND = 0
    ACK = 1


class Placement(enum.IntEnum):
    """Where a send's payload falls in the sequence space, as the flow stage saw it.

    ``REXMIT`` is tcptrace's retransmission: payload overlapping bytes already seen. ``FILL``
    bytes below the highest sent that were never seen (a hole filled: reordering, or a loss
    upstream of the capture point). ``GAP`` new data past a gap. ``PROBE`` a zero-window probe
    (data sent while the receiver's window was 0), which no loss rule reads. ``NONE`` a SYN or
    FIN without payload.
    """

    NONE = -1
    NEW = 0
    REXMIT = 1
    FILL = 2
    GAP = 3
    PROBE = 4


@dataclass(frozen=True, slots=True)
class Send:
    """A segment of the data sender: payload ``[start, end)`` (unwrapped), flags, TSval."""

    time_ns: int
    index: int  # record number in the capture (0-based)
    start: int
    end: int
    flags: int
    tsval: int | None
    placement: Placement

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def resent(self) -> bool:
        """It covers bytes sent before (a retransmission, tcptrace's rule)."""
        return self.placement is Placement.REXMIT


@dataclass(frozen=True, slots=True)
class Ack:
    """An ACK of the receiver: cumulative ACK, SACK blocks, marks, window (bytes), TSecr."""

    time_ns: int
    index: int
    ack: int
    sack: tuple[tuple[int, int], ...]
    dsack: bool  # the first SACK block reports a duplicate (RFC 2883)
    dup: bool  # a duplicate ACK (DOMAIN.md section 3)
    win: int  # advertised receive window in bytes (scaled when window scaling is in use)
    tsecr: int | None
    flags: int


Event = Send | Ack


@dataclass(frozen=True, slots=True)
class StreamFacts:
    """What the flow stage knows of a direction besides its events, as of the end of a batch."""

    mss: int  # the receiver's MSS option, else the largest payload seen so far (0: none yet)
    seq_anchor: int  # the raw 32-bit sequence number of relative 0
    turnaround_ns: int | None  # capture point -> data sender -> capture point (handshake)
    receiver_turnaround_ns: int | None  # capture point -> receiver -> capture point (handshake)

# column -> dtype: small types where the values are small, so that a batch's events cost about
# 70 bytes a row (SACK blocks apart, kept only for the ACKs that carry them)
_DTYPES: dict[str, type] = {
    "kind": np.int8, "time_ns": np.int64, "index": np.int64, "flags": np.int16, "start": np.int64, "end": np.int64,
    "placement": np.int8, "tsval": np.int64, "ack": np.int64, "win": np.int64, "tsecr": np.int64, "nsack": np.int8,
    "dup": np.bool_, "dsack": np.bool_, "sack_row": np.int32,
}
_ROW_COLUMNS = tuple(_DTYPES)
_NOT_APPLICABLE = {"nsack": 0, "flags": 0, "dup": False, "dsack": False}  # others: -1


@dataclass(frozen=True)
class EventBatch:
    """Events of one direction as columns, one row per event, in capture order.

    A column that does not apply to a row's kind holds -1 (``start``, ``end``, ``placement``
    (``NONE``) and ``tsval`` of an ACK; ``ack``, ``win``, ``tsecr`` of a send) or False/0.
    ``tsval``/``tsecr`` are -1 without the timestamp option. The SACK blocks of the ACKs that
    carry some are rows of ``sack`` (shape (m, 4, 2)); ``sack_row`` says which (-1 for none) and
    ``nsack`` how many of its blocks are meaningful; :meth:`blocks` reads them.
    """

    kind: np.ndarray
    time_ns: np.ndarray
    index: np.ndarray
    flags: np.ndarray
    start: np.ndarray
    end: np.ndarray
    placement: np.ndarray
    tsval: np.ndarray
    ack: np.ndarray
    win: np.ndarray
    tsecr: np.ndarray
    nsack: np.ndarray
    dup: np.ndarray
    dsack: np.ndarray
    sack_row: np.ndarray
    sack: np.ndarray

    def __len__(self) -> int:
        return int(self.kind.shape[0])

    @property
    def is_send(self) -> np.ndarray:
        return np.asarray(self.kind == Kind.SEND)

    @property
    def is_ack(self) -> np.ndarray:
        return np.asarray(self.kind == Kind.ACK)

    @property
    def is_data(self) -> np.ndarray:
        """Sends whose payload the loss rules read: placed, not a probe, not a bare SYN/FIN."""
        return np.asarray((self.kind == Kind.SEND) & (self.placement >= Placement.NEW) & (self.placement != Placement.PROBE))

    def blocks(self, i: int) -> list[tuple[int, int]]:
        """The SACK blocks of the ``i``-th event (an ACK), in the option's order."""
        k = int(self.sack_row[i])
        if k < 0:
            return []
        return list(map(tuple, self.sack[k, : int(self.nsack[i])].tolist()))

    def event(self, i: int) -> Event:
        """The ``i``-th event as a frozen per-event view."""
        if self.kind[i] == Kind.SEND:
            tsval = int(self.tsval[i])
            return Send(int(self.time_ns[i]), int(self.index[i]), int(self.start[i]), int(self.end[i]), int(self.flags[i]),
                        None if tsval < 0 else tsval, Placement(int(self.placement[i])))
        tsecr = int(self.tsecr[i])
        return Ack(
            int(self.time_ns[i]), int(self.index[i]), int(self.ack[i]), tuple(self.blocks(i)),
            bool(self.dsack[i]), bool(self.dup[i]), int(self.win[i]), None if tsecr < 0 else tsecr, int(self.flags[i]),
        )

    def events(self) -> Iterator[Event]:
        """Every event, in order, as per-event views."""
        for i in range(len(self)):
            yield self.event(i)

    __iter__ = events

    def take(self, rows: np.ndarray | slice) -> EventBatch:
        """The events ``rows`` (indices, a boolean mask or a slice), as a batch."""
        cols = {c: getattr(self, c)[rows] for c in _ROW_COLUMNS}
        return _with_sack(cols, self.sack)

    @classmethod
    def empty(cls) -> EventBatch:
        return cls.allocate(0)

    @classmethod
    def allocate(cls, n: int, sack_rows: int = 0) -> EventBatch:
        """A batch of ``n`` rows with every column at its 'does not apply' value, and room for
        ``sack_rows`` rows of SACK blocks."""
        cols: dict[str, np.ndarray] = {c: np.full(n, _NOT_APPLICABLE.get(c, -1), dtype=t) for c, t in _DTYPES.items()}
        return cls(**cols, sack=np.zeros((sack_rows, MAX_SACK_BLOCKS, 2), np.int64))

    @classmethod
    def concat(cls, batches: Sequence[EventBatch]) -> EventBatch:
        """One batch of the events of ``batches``, in the order given."""
        if not batches:
            return cls.empty()
        if len(batches) == 1:
            return batches[0]
        cols = {c: np.concatenate([getattr(b, c) for b in batches]) for c in _ROW_COLUMNS}
        offsets = np.cumsum([0] + [b.sack.shape[0] for b in batches[:-1]])
        cols["sack_row"] = np.concatenate([np.where(b.sack_row >= 0, b.sack_row + off, -1) for b, off in zip(batches, offsets)]).astype(np.int32)
        return cls(**cols, sack=np.concatenate([b.sack for b in batches]))

    @classmethod
    def of(cls, events: Iterable[Event]) -> EventBatch:
        """A batch built from per-event views (hand-made conversations in tests and notebooks)."""
        evs = list(events)
        with_sack = [i for i, e in enumerate(evs) if isinstance(e, Ack) and e.sack]
        out = cls.allocate(len(evs), len(with_sack))
        for k, i in enumerate(with_sack):
            out.sack_row[i] = k
        for i, e in enumerate(evs):
            out.time_ns[i] = e.time_ns
            out.index[i] = e.index
            out.flags[i] = e.flags
            if isinstance(e, Send):
                out.kind[i] = Kind.SEND
                out.start[i], out.end[i] = e.start, e.end
                out.placement[i] = e.placement
                out.tsval[i] = -1 if e.tsval is None else e.tsval
            else:
                if len(e.sack) > MAX_SACK_BLOCKS:
                    raise ValueError(f"at most {MAX_SACK_BLOCKS} SACK blocks fit in a TCP header (RFC 2018)")
                out.kind[i] = Kind.ACK
                out.ack[i] = e.ack
                out.win[i] = e.win
                out.tsecr[i] = -1 if e.tsecr is None else e.tsecr
                out.nsack[i] = len(e.sack)
                for k, (lo, hi) in enumerate(e.sack):
                    out.sack[out.sack_row[i], k] = (lo, hi)
                out.dup[i] = e.dup
                out.dsack[i] = e.dsack
        return out

    def to_frame(self) -> object:
        """The batch as a pandas DataFrame (one row per event; SACK blocks as a list per row)."""
        import pandas as pd

        cols: dict[str, object] = {c: getattr(self, c) for c in _ROW_COLUMNS if c != "sack_row"}
        cols["sack"] = [self.blocks(i) for i in range(len(self))]
        df = pd.DataFrame(cols)
        df["kind"] = df["kind"].map({Kind.SEND: "send", Kind.ACK: "ack"})
        df["placement"] = [Placement(p).name.lower() if k == "send" else None for k, p in zip(df["kind"], df["placement"])]
        return df


def _with_sack(cols: dict[str, np.ndarray], sack: np.ndarray) -> EventBatch:
    """A batch of the row columns ``cols`` whose ``sack_row`` point into ``sack``: only the
    SACK rows they use are kept, renumbered."""
    used = cols["sack_row"] >= 0
    rows = cols["sack_row"][used]
    renumbered = np.full(cols["sack_row"].shape, -1, np.int32)
    renumbered[used] = np.arange(rows.size, dtype=np.int32)
    cols["sack_row"] = renumbered
    return EventBatch(**cols, sack=sack[rows])


def events_from_rows(cols: dict[str, np.ndarray], sack: np.ndarray) -> EventBatch:
    """A batch from row columns (any integer dtypes; cast here) and, for each row, its SACK
    blocks in ``sack`` (shape (n, 4, 2); read only where ``nsack > 0``): the flow stage's way in."""
    typed: dict[str, np.ndarray] = {c: np.asarray(cols[c], dtype=t) for c, t in _DTYPES.items() if c != "sack_row"}
    has = typed["nsack"] > 0
    sack_row = np.full(has.shape, -1, np.int32)
    sack_row[has] = np.arange(int(has.sum()), dtype=np.int32)
    return EventBatch(**typed, sack_row=sack_row, sack=np.ascontiguousarray(sack[has]))


__all__ = ["Ack", "Dir", "Event", "EventBatch", "Kind", "Placement", "Send", "StreamFacts", "events_from_rows"]
