"""Retransmission regions, in the style of loss_details (DOMAIN.md section 5).

One region per loss incident (:class:`~tcpsack_analyze.loss.records.LossIncident`): the packets
of its connection from a few packets before the original transmission to the ACK that finally
covered the segment, each with its record number, time since the connection's first packet,
direction, marks (DUP: a duplicate ACK; RTR: a retransmission of the incident's bytes; rtr: a
retransmission of other bytes), PKT or ACK, relative sequence or ACK number, length and SACK
blocks; then the retransmission count, the two recovery latencies (first transmission to last
retransmission, first transmission to the covering ACK) and each retransmission's trigger with
its evidence and spurious mark.

Two passes over the capture keep memory bounded: :func:`~tcpsack_analyze.analysis.analyze` finds
the incidents, then :func:`collect_regions` reads the capture again through the same flow stage
(:func:`~tcpsack_analyze.analysis.stream_events`, no loss stage) and builds each region from the
events of its connection (both directions' streams merged back into packets, events.py), keeping
only the packets inside the regions, at most ``max_rows`` a region: past that, the rows around
the retransmissions and the covering ACK are kept and the others counted in an elision marker.
The capture is read twice, so stdin cannot be used.

Where the numbers come from:

- The incident's retransmissions are the :class:`Retransmission` records of its direction whose
  bytes overlap the incident's and that were sent after its first transmission (the tracker's
  rule for which segments a resend repairs). Upstream incidents (the original never passed the
  capture point) have none: the packet that filled the hole is their RTR row, and the region
  starts at the packet that opened the hole.
- The covering ACK is the first ACK of the receiver after the first retransmission, at or after
  the time the tracker recorded (``covered_ns``), whose ACK number reaches the end of the bytes.
  Without one (``covered_ns`` None) the region ends ``context`` packets after the last
  retransmission.
- Sequence, ACK and SACK numbers are the events': the report's relative numbers (domain.md
  section 2), in each direction's own space.
- DUP is the duplicate-ACK mark the flow stage put on the ACK event (acks.py), the report's.
"""
from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tcpsack_analyze.events import Dir, EventBatch
from tcpsack_analyze.loss.records import TRIGGERS, UPSTREAM, Fill, LossIncident, Retransmission
from tcpsack_analyze.loss.tracker import LossResult
from tcpsack_analyze.reader import DEFAULT_CHUNK
from tcpsack_analyze.reader.decode import FIN, RST, SYN
from tcpsack_analyze.report.model import ConnectionReport

if TYPE_CHECKING:
    from tcpsack_analyze.analysis import Analysis

CONTEXT = 3  # packets shown before the original transmission
MAX_ROWS = 60  # rows of a region before the rest is elided
AROUND = 3  # once eliding: rows kept before and after each retransmission and the covering ACK (DupThresh dupACKs)
SPURIOUS = "spurious"  # --trigger value: any retransmission of the incident later shown unnecessary
TRIGGER_CHOICES = (*TRIGGERS, SPURIOUS)


# --------------------------------------------------------------------------- the result


@dataclass
class RegionRow:
    """One packet of a region."""

    index: int  # record number in the capture
    t_ms: float  # since the connection's first packet
    dir: str  # "->" from the data sender of the incident, "<-" from its receiver
    kind: str  # "PKT" (payload, SYN or FIN) or "ACK"
    seq: int | None  # relative sequence number of its payload (PKT rows)
    ack: int | None  # relative ACK number (None without the ACK flag)
    len: int  # payload bytes
    sack: list[tuple[int, int]]  # SACK blocks, relative
    flags: str  # SYN/FIN/RST as "S", "F", "R"
    dup: bool  # a duplicate ACK
    rtr: bool  # a retransmission of the incident's bytes (for upstream incidents: the hole fill)
    rexmit: bool  # a retransmission of any bytes (the analysis' records, both directions)
    mark: str | None = None  # "original", "retransmission", "hole_opened", "covering_ack"
    nth: int | None = None  # for "retransmission": 1, 2, ...


@dataclass
class Elided:
    """Packets of the region left out (past ``max_rows``)."""

    elided: int


@dataclass
class Resend:
    """One retransmission of the incident, as the analysis classified it."""

    index: int
    t_ms: float
    nth: int
    trigger: str  # one of TRIGGERS; "fill" for the packet that filled an upstream hole
    evidence: str
    spurious: str | None
    rtd_ms: float | None
    episode: int | None


@dataclass
class Region:
    """One loss incident and the packets around it."""

    conn: int
    direction: str  # "a2b" or "b2a": the data sender's direction
    sender: str  # address:port of the data sender
    receiver: str
    start: int  # relative sequence numbers of the incident's bytes [start, end)
    end: int
    seq: int  # 32-bit sequence number of ``start`` on the wire
    where: str  # downstream / upstream of the capture point
    lost: bool  # at least one transmission did not arrive
    first_index: int | None  # the original transmission (None: never seen here)
    first_ms: float  # its time (upstream: when the hole opened), since the connection's first packet
    retransmissions: int
    latency_rexmit_ms: float  # first transmission to last retransmission
    latency_ack_ms: float | None  # first transmission to the covering ACK (None: never covered)
    resends: list[Resend]
    rows: list[RegionRow | Elided] = field(default_factory=list)
    complete: bool = False  # the region reached its end (else the capture ended first)


# --------------------------------------------------------------------------- selection


@dataclass(frozen=True)
class Wanted:
    """An incident chosen for a region, with what the second pass needs to know of it."""

    incident: LossIncident
    resends: list[Retransmission]
    fill: Fill | None  # upstream incidents: the packet that filled the hole
    conn: ConnectionReport
    conn_start_ns: int  # the connection's first packet: row times count from it


def incident_resends(res: LossResult) -> list[list[Retransmission]]:
    """For each incident of ``res`` (in order), its retransmissions in send order."""
    rx = sorted(res.retransmissions, key=lambda r: r.start)
    starts = [r.start for r in rx]
    longest = max((r.end - r.start for r in rx), default=0)
    out = []
    for inc in res.incidents:
        lo = bisect.bisect_right(starts, inc.start - longest)
        hi = bisect.bisect_left(starts, inc.end)
        mine = [r for r in rx[lo:hi] if r.end > inc.start and r.time_ns >= inc.first_ns]
        out.append(sorted(mine, key=lambda r: r.index))
    return out


def select(
    loss: dict[tuple[int, str], LossResult],
    connections: list[ConnectionReport],
    *,
    conn: int | None = None,
    min_rtd_ms: float | None = None,
    trigger: str | None = None,
    conn_start_ns: dict[int, int] | None = None,
) -> list[Wanted]:
    """The incidents to show, in file order of their first transmission.

    ``conn`` keeps one connection; ``min_rtd_ms`` the incidents with a retransmission whose RTD
    (time since the previous transmission of its bytes) is at least that; ``trigger`` those with
    a retransmission of that trigger, or with a spurious one (``"spurious"``). Upstream
    incidents have no retransmission record, so either filter leaves them out.
    ``conn_start_ns`` gives each connection's first packet time (``Analysis.conn_start_ns``);
    without it the report's float seconds are used (exact to about 0.2 us).
    """
    if trigger is not None and trigger not in TRIGGER_CHOICES:
        raise ValueError(f"unknown trigger {trigger!r} (one of {', '.join(TRIGGER_CHOICES)})")
    by_id = {c.id: c for c in connections}
    out: list[Wanted] = []
    for (cid, _name), res in sorted(loss.items()):
        if conn is not None and cid != conn:
            continue
        fills = {f.start: f for f in res.fills if f.cause != "reordering"}
        for inc, resends in zip(res.incidents, incident_resends(res)):
            if min_rtd_ms is not None and not any(r.rtd_ns is not None and r.rtd_ns >= min_rtd_ms * 1e6 for r in resends):
                continue
            if trigger == SPURIOUS and not any(r.spurious for r in resends):
                continue
            if trigger not in (None, SPURIOUS) and not any(r.trigger == trigger for r in resends):
                continue
            fill = fills.get(inc.start) if inc.where == UPSTREAM else None
            c = by_id[cid]
            start = (conn_start_ns or {}).get(cid, round(c.first_packet * 1e9))
            out.append(Wanted(inc, resends, fill, c, start))
    out.sort(key=lambda w: (w.incident.first_ns, w.conn.id, w.incident.start))
    return out


# --------------------------------------------------------------------------- second pass


class _Pkt:
    """One packet of the connection as a region shows it, merged from the two event streams:
    the send part (its own direction's stream) and the ACK part (the other direction's), with
    numbers relative to each sequence space's origin (events.py)."""

    __slots__ = ("ack", "dup", "flags", "index", "paylen", "sack", "seq", "side", "ts")

    def __init__(self, index: int, ts: int, side: int, flags: int, seq: int | None, paylen: int,
                 ack: int | None, sack: list[tuple[int, int]], dup: bool) -> None:
        self.index = index
        self.ts = ts
        self.side = side
        self.flags = flags
        self.seq = seq  # relative, in the space of ``side``; None without a send part
        self.paylen = paylen
        self.ack = ack  # relative, in the other side's space; None without the ACK flag
        self.sack = sack
        self.dup = dup  # the report's duplicate ACK (acks.py), as the flow stage marked it


class _Packets:
    """The packets of one connection in one batch, as columns in capture order."""

    def __init__(self, events: tuple[EventBatch, EventBatch]) -> None:
        sends = [events[s].take(events[s].is_send) for s in (0, 1)]
        acks = [events[1 - s].take(events[1 - s].is_ack) for s in (0, 1)]  # the ACKs side s sent
        parts = [(sends[0], 0), (acks[0], 0), (sends[1], 1), (acks[1], 1)]
        self.index, first = np.unique(np.concatenate([e.index for e, _ in parts]), return_index=True)
        n = self.index.size
        self.side = np.concatenate([np.full(len(e), s, np.int64) for e, s in parts])[first]
        self.ts = np.concatenate([e.time_ns for e, _ in parts])[first]
        self.flags = np.concatenate([e.flags for e, _ in parts])[first]
        self.paylen = np.zeros(n, np.int64)
        self._send = np.full(n, -1, np.int64)  # row of each packet's send part, -1 without one
        self._ack = np.full(n, -1, np.int64)
        self._parts = (sends, acks)
        for s in (0, 1):
            pos = np.searchsorted(self.index, sends[s].index)
            self._send[pos] = np.arange(pos.size) + s * (1 << 40)
            self.paylen[pos] = sends[s].end - sends[s].start
            pos = np.searchsorted(self.index, acks[s].index)
            self._ack[pos] = np.arange(pos.size) + s * (1 << 40)

    def __len__(self) -> int:
        return int(self.index.size)

    def packet(self, i: int) -> _Pkt:
        flags, seq, ack, sack, dup = int(self.flags[i]), None, None, [], False
        if self._send[i] >= 0:
            s, k = divmod(int(self._send[i]), 1 << 40)
            e = self._parts[0][s]
            seq = int(e.start[k]) - (1 if flags & SYN else 0)
        if self._ack[i] >= 0:
            s, k = divmod(int(self._ack[i]), 1 << 40)
            e = self._parts[1][s]
            ack = int(e.ack[k])
            sack = [(int(lo), int(hi)) for lo, hi in e.sack[k, : int(e.nsack[k])].tolist()]
            dup = bool(e.dup[k])
        return _Pkt(int(self.index[i]), int(self.ts[i]), int(self.side[i]), flags, seq, int(self.paylen[i]), ack, sack, dup)


class _Collector:
    """The rows of one region: all of them up to ``max_rows``, then only those around key rows.

    Packets come in with their mark; a row is built only for the packets kept, so a long region
    costs a few comparisons a packet once it is eliding.
    """

    def __init__(self, max_rows: int, build: Callable[[_Pkt, str | None, int | None], RegionRow]) -> None:
        self.max_rows = max_rows
        self.build = build
        self.rows: list[RegionRow | Elided] = []
        self.ring: deque[tuple[_Pkt, str | None, int | None]] = deque(maxlen=AROUND)
        self.skipped = 0
        self.after = 0
        self.eliding = False

    def add(self, p: _Pkt, mark: str | None = None, nth: int | None = None) -> None:
        if not self.eliding and len(self.rows) < self.max_rows:
            self.rows.append(self.build(p, mark, nth))
            return
        self.eliding = True
        if mark is not None or self.after:
            if mark is not None:
                self._flush()
                self.after = AROUND
            else:
                self.after -= 1
            self.rows.append(self.build(p, mark, nth))
            return
        if len(self.ring) == self.ring.maxlen:
            self.ring.popleft()
            self.skipped += 1
        self.ring.append((p, mark, nth))

    def _flush(self) -> None:
        if self.skipped:
            self.rows.append(Elided(self.skipped))
            self.skipped = 0
        self.rows.extend(self.build(*q) for q in self.ring)
        self.ring.clear()

    def finish(self) -> list[RegionRow | Elided]:
        self._flush()
        return self.rows


class _Open:
    """A region being collected."""

    def __init__(self, w: Wanted, sender_side: int, context: int, max_rows: int, rexmit_indices: set[int]) -> None:
        inc = w.incident
        self.w = w
        self.sender_side = sender_side
        self.context = context
        self.conn_start_ns = w.conn_start_ns
        self.resend_nth = {index: i + 1 for i, index in enumerate(_resend_indices(w))}
        self.last_resend = max(self.resend_nth, default=None)
        self.first_resend = min(self.resend_nth, default=None)
        self.rexmit_indices = rexmit_indices
        # where it starts: the original transmission, else (upstream) the packet that opened the hole
        self.start_index = inc.first_index
        if self.start_index is None and inc.where != UPSTREAM:
            self.start_index = self.first_resend
        self.collector = _Collector(max_rows, self.row)
        self.covered = inc.covered_ns is None  # nothing to wait for when never covered
        self.tail = None if inc.covered_ns is not None else context  # rows after the last resend
        self.done = False

    def starts_at(self, p: _Pkt) -> bool:
        if self.start_index is not None:
            return p.index >= self.start_index
        return p.side == self.sender_side and p.paylen > 0 and p.ts >= self.w.incident.first_ns

    def row(self, p: _Pkt, mark: str | None = None, nth: int | None = None) -> RegionRow:
        data = p.paylen > 0 or bool(p.flags & (SYN | FIN))
        flags = "".join(c for bit, c in ((SYN, "S"), (FIN, "F"), (RST, "R")) if p.flags & bit)
        return RegionRow(
            index=p.index,
            t_ms=(p.ts - self.conn_start_ns) / 1e6,
            dir="->" if p.side == self.sender_side else "<-",
            kind="PKT" if data else "ACK",
            seq=p.seq if data else None,
            ack=p.ack,
            len=p.paylen,
            sack=p.sack,
            flags=flags,
            dup=p.dup,
            rtr=p.index in self.resend_nth,
            rexmit=p.index in self.rexmit_indices,
            mark=mark,
            nth=nth,
        )

    def add(self, p: _Pkt, started_here: bool) -> None:
        inc = self.w.incident
        nth = self.resend_nth.get(p.index)
        if nth is not None:
            self.collector.add(p, "retransmission", nth)
        elif p.index == inc.first_index:
            self.collector.add(p, "original")
        elif started_here and inc.first_index is None and inc.where == UPSTREAM:
            self.collector.add(p, "hole_opened")
        elif (
            not self.covered
            and p.side != self.sender_side
            and p.ack is not None
            and (self.first_resend is None or p.index > self.first_resend)
            and inc.covered_ns is not None
            and p.ts >= inc.covered_ns
            and p.ack >= inc.end
        ):
            self.covered = True
            self.collector.add(p, "covering_ack")
        else:
            self.collector.add(p)
        resent = self.last_resend is None or p.index >= self.last_resend
        if self.tail is not None and resent:
            if p.index != self.last_resend:
                self.tail -= 1
            if self.tail <= 0:
                self.done = True
        elif resent and (self.covered or (inc.covered_ns is not None and p.ts > inc.covered_ns)):
            self.done = True  # (the second case only if the covering ACK was not recognised: stop anyway)


class _ConnRegions:
    """The regions of one connection: those not yet begun, those being collected, and the last
    ``context`` packets (the rows shown before a region's first packet)."""

    def __init__(self, regions: list[_Open], context: int) -> None:
        ordered = sorted(regions, key=lambda r: (r.start_index or 0, r.w.incident.first_ns))
        self.pending = deque(r for r in ordered if r.start_index is not None)  # by first record
        self.pending_up = deque(r for r in ordered if r.start_index is None)  # upstream, by time
        self.active: list[_Open] = []
        self.ring: deque[_Pkt] = deque(maxlen=context)
        self.context = context

    def consume(self, pk: _Packets) -> None:
        """The connection's packets of one batch: quickly past those no region needs."""
        i, n = 0, len(pk)
        while i < n and (self.active or self.pending or self.pending_up):
            if self.active:
                self._one(pk.packet(i))
                i += 1
                continue
            j = i + self._next_start(pk, i)
            k = max(i, j - self.context)
            if k > i:
                self.ring.clear()
            for q in range(k, min(j + 1, n)):  # the context rows, and the row a region starts at
                self._one(pk.packet(q))
            i = min(j + 1, n)

    def _one(self, p: _Pkt) -> None:
        """A packet in or next to a region: regions that begin here, rows."""
        begun = []
        for queue in (self.pending, self.pending_up):
            while queue and queue[0].starts_at(p):
                reg = queue.popleft()
                for q in self.ring:
                    reg.collector.add(q)
                self.active.append(reg)
                begun.append(reg)
        for reg in self.active:
            reg.add(p, reg in begun)
        if any(reg.done for reg in self.active):
            self.active = [reg for reg in self.active if not reg.done]
        if self.ring.maxlen:
            self.ring.append(p)

    def _next_start(self, pk: _Packets, i: int) -> int:
        """Offset from ``i`` of the first packet where a pending region begins (or the end)."""
        at = len(pk) - i
        if self.pending:
            first = self.pending[0].start_index
            assert first is not None  # (upstream regions wait in pending_up)
            at = min(at, int(np.searchsorted(pk.index[i:], first, side="left")))
        if self.pending_up:
            reg = self.pending_up[0]
            hit = (pk.side[i:] == reg.sender_side) & (pk.paylen[i:] > 0) & (pk.ts[i:] >= reg.w.incident.first_ns)
            if hit.any():
                at = min(at, int(np.argmax(hit)))
        return at


def find_regions(
    path: str,
    analysis: Analysis | None = None,
    *,
    conn: int | None = None,
    min_rtd_ms: float | None = None,
    trigger: str | None = None,
    context: int = CONTEXT,
    max_rows: int = MAX_ROWS,
) -> list[Region]:
    """The regions of the incidents of ``path`` that pass the filters (see :func:`select`).

    ``analysis`` is the result of ``analyze(path)`` when the caller has it already (the first
    pass); the capture is then read once more, for the packets of the regions.
    """
    if analysis is None:
        from tcpsack_analyze.analysis import analyze

        analysis = analyze(path)
    wanted = select(analysis.loss, analysis.report.connections, conn=conn, min_rtd_ms=min_rtd_ms, trigger=trigger,
                    conn_start_ns=analysis.conn_start_ns)
    return collect_regions(path, wanted, analysis.loss, context=context, max_rows=max_rows)


def collect_regions(
    path: str,
    wanted: list[Wanted],
    loss: dict[tuple[int, str], LossResult],
    *,
    context: int = CONTEXT,
    max_rows: int = MAX_ROWS,
    chunk_bytes: int = DEFAULT_CHUNK,
) -> list[Region]:
    """Read ``path`` again through the flow stage and build the region of each incident in
    ``wanted`` from the events of its connection (second pass; no loss stage runs)."""
    from tcpsack_analyze.analysis import stream_events

    rexmits: dict[int, set[int]] = {}
    for (cid, _name), res in loss.items():
        rexmits.setdefault(cid, set()).update(r.index for r in res.retransmissions)
    regions = [
        _Open(w, int(Dir.parse(w.incident.direction)), context, max_rows, rexmits.get(w.conn.id, set()))
        for w in wanted
    ]
    by_conn: dict[int, list[_Open]] = {}
    for reg in regions:
        by_conn.setdefault(reg.w.conn.id, []).append(reg)
    conns = {cid: _ConnRegions(regs, context) for cid, regs in by_conn.items()}
    if conns:
        for conn_id, events in stream_events(path, chunk_bytes=chunk_bytes):
            if conn_id in conns:
                conns[conn_id].consume(_Packets(events))
    return [_finish(reg) for reg in regions]


def _finish(reg: _Open) -> Region:
    w = reg.w
    inc = w.incident
    c = w.conn
    start_ns = reg.conn_start_ns
    sender, receiver = (c.a_addr, c.a_port), (c.b_addr, c.b_port)
    if Dir.parse(inc.direction) is Dir.B2A:
        sender, receiver = receiver, sender
    resends = []
    if w.fill is not None:
        f = w.fill
        resends.append(Resend(f.index, (f.time_ns - start_ns) / 1e6, 1, "fill", f.evidence, None, None, None))
    for r in w.resends:
        rtd = None if r.rtd_ns is None else r.rtd_ns / 1e6
        resends.append(Resend(r.index, (r.time_ns - start_ns) / 1e6, len(resends) + 1, r.trigger, r.evidence, r.spurious, rtd, r.episode))
    lat_ack = inc.latency_ack_ns
    return Region(
        conn=c.id,
        direction=inc.direction,
        sender=_label(*sender),
        receiver=_label(*receiver),
        start=inc.start,
        end=inc.end,
        seq=inc.seq,
        where=inc.where,
        lost=inc.lost,
        first_index=inc.first_index,
        first_ms=(inc.first_ns - start_ns) / 1e6,
        retransmissions=inc.retransmissions,
        latency_rexmit_ms=inc.latency_rexmit_ns / 1e6,
        latency_ack_ms=None if lat_ack is None else lat_ack / 1e6,
        resends=resends,
        rows=reg.collector.finish(),
        complete=reg.done,
    )


def _resend_indices(w: Wanted) -> list[int]:
    """Record numbers of the incident's retransmissions in send order (the hole fill first)."""
    return ([w.fill.index] if w.fill is not None else []) + [r.index for r in w.resends]


def _label(addr: str, port: int) -> str:
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"


# --------------------------------------------------------------------------- output


def region_dicts(regions: Iterable[Region]) -> list[dict]:
    """The regions as plain dicts (the JSON output)."""
    return [asdict(r) for r in regions]


def _row_text(r: RegionRow) -> str:
    mark = "RTR" if r.rtr else "rtr" if r.rexmit else "DUP" if r.dup else ""
    if r.kind == "PKT":
        what = f"PKT seq {_n(r.seq):>10} len {r.len:>5}"
        if r.dir == "<-" and r.ack is not None:
            what += f" ack {_n(r.ack)}"
    else:
        what = f"ACK ack {_n(r.ack):>10}"
    if r.flags:
        what += f" [{r.flags}]"
    if r.sack:
        what += " SACK " + " ".join(f"{lo}-{hi}" for lo, hi in r.sack)
    note = {
        "original": "  <-- Transmitted",
        "retransmission": f"  <-- {r.nth}. Retransmission",
        "hole_opened": "  <-- hole opened (original not seen here)",
        "covering_ack": "  <-- covering ACK",
    }.get(r.mark or "", "")
    return f"{r.index:>8} {r.t_ms:>12.3f} {r.dir} {mark:<3} {what}{note}"


def _n(v: int | None) -> str:
    return "?" if v is None else str(v)


def region_text(reg: Region) -> str:
    """One region, readable (loss_details' layout with a direction column and SACK blocks)."""
    first = reg.resends[0].index if reg.resends else reg.first_index
    unseen = reg.first_index is None or reg.first_index == first
    lost = reg.where if reg.lost else "nowhere (all resends spurious)"
    out = [
        f"Connection {reg.conn} ({reg.sender} -> {reg.receiver}), {reg.direction} bytes {reg.start}-{reg.end} "
        f"(seq {reg.seq}, {reg.end - reg.start} bytes), lost {lost}",
        f"Retransmission region for packet {first}{' (original transmission not seen here)' if unseen else ''}",
        f"{'index':>8} {'t ms':>12} dir mark",
    ]
    for row in reg.rows:
        if isinstance(row, Elided):
            out.append(f"{'':>8} {'':>12} ... {row.elided} packets not shown ...")
        else:
            out.append(_row_text(row))
    if not reg.complete:
        out.append(f"{'':>8} {'':>12} ... the capture ends here")
    out.append(f"  Retransmission count: {reg.retransmissions}")
    out.append(f"  Time between first trans and last retrans: {reg.latency_rexmit_ms:.3f} ms")
    ack = "never seen" if reg.latency_ack_ms is None else f"{reg.latency_ack_ms:.3f} ms"
    out.append(f"  Time between first trans and final ACK: {ack}")
    for r in reg.resends:
        rtd = "" if r.rtd_ms is None else f", RTD {r.rtd_ms:.3f} ms"
        spur = f"; SPURIOUS ({r.spurious})" if r.spurious else ""
        out.append(f"  {r.nth}. packet {r.index} at {r.t_ms:.3f} ms: {r.trigger}{rtd}{spur}: {r.evidence}")
    return "\n".join(out) + "\n"


LEGEND = "marks: DUP duplicate ACK, RTR retransmission of these bytes, rtr retransmission of other bytes; -> data sender to receiver, <- back"


def render_text(regions: list[Region]) -> str:
    if not regions:
        return ""
    return LEGEND + "\n\n" + "\n".join(region_text(r) for r in regions)
