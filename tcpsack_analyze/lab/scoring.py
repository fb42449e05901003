"""Score loss forensics against a lab run's truth (the acceptance figures of loss forensics).

Pure functions over plain data: a :class:`~tcpsack_analyze.truth.Truth` (``truth.load(dir)``),
our :class:`~tcpsack_analyze.loss.records.Retransmission` and
:class:`~tcpsack_analyze.loss.records.LostTransmission` records, the map from our connection
directions to the truth's flows (:func:`flow_map`), and optionally the data transmissions of
the sender-side capture in send order (:func:`sender_transmissions`). :func:`score` returns one
frozen :class:`Score`:

1. **Retransmission detection.** Each kernel retransmission sent (``err == 0``) is expanded into
   its ``segs`` wire segments (:func:`expand_retransmissions`) and matched one-to-one to our
   records on flow, 32-bit ``seq`` and time (ours ``time_ns`` against the truth's
   ``capture_t``, or ``t`` without one, within ``tol_s``): precision, recall, the unmatched of
   both sides.
2. **Trigger agreement.** For matched pairs, the state our trigger implies
   (``Retransmission.ca_state``: Loss, Recovery, Open, unknown) against the kernel's
   (:func:`expected_state`); the confusion of truth kind x our trigger; TLP recall.
3. **Drop-log match.** The emulator's forward drops of data segments (reason loss or queue)
   matched one-to-one to our lost transmissions (``LostTransmission`` records; those of one
   captured transmission, same ``index``, count once: a resend that covered several original
   segments has a record for each) on flow, seq and time: within ``tol_s`` for transmissions
   seen on the capture, nearest within about two RTTs for records of upstream losses
   (``index`` None, timed when the hole became visible: at once when the lost segment had data
   behind it, up to a round trip later when it ended its flight). With the sender capture,
   drops of copies whose bytes an earlier copy had delivered (go-back-N resends) are counted apart
   (:func:`redundant_drops`): nothing resends them, so a sender-side analysis cannot see them.
4. **Burst lengths.** Runs of consecutively sent data segments of a flow that were all dropped,
   from the sender capture's transmissions marked by the drop log (:func:`drop_bursts`).
5. **Place of each loss.** Each drop is upstream or downstream of the analysed capture
   (:func:`drop_place`: all downstream of a sender-side capture, all upstream of a
   receiver-side one, and at a mid point what the drop log's ``where`` says); matched pairs are
   tallied by (truth place, our ``LostTransmission.where``) and give precision and recall per
   side (:class:`SideScore`).

For a capture taken at the receiver (``vantage="receiver"``), retransmissions the emulator
dropped are left out of the truth and truth times are shifted by the forward delay (with the
emulator's lateness added to the tolerance). At a mid point (``vantage="mid"``) the same holds
for the upstream section: retransmissions dropped upstream are left out, and so are those
whose every earlier copy was dropped upstream (the first copy the mid point sees fills a hole:
a :class:`~tcpsack_analyze.loss.records.Fill`, not a retransmission), and truth times are
shifted by the upstream delay. The drop log stamps a drop downstream of a mid point when the
frame left the mid point; matched against the sender capture it is moved back by the upstream
delay (:func:`drop_time`).

Matching is greedy by time distance (the closest candidate pairs first), per flow and seq.
Precision and recall are 1.0 when their denominator is 0 (nothing to find, nothing claimed).
"""
from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any, TypeVar

import numpy as np

from tcpsack_analyze.events import Dir
from tcpsack_analyze.lab.droplog import DOWNSTREAM, UPSTREAM, Drop
from tcpsack_analyze.loss import patterns
from tcpsack_analyze.loss import records as rec
from tcpsack_analyze.rangeset import RangeSet
from tcpsack_analyze.seqspace import offset_range, signed_diff, wire_add, wire_sub
from tcpsack_analyze.truth import Truth

__all__ = [
    "DEFAULT_TOL_S",
    "STAMP_S",
    "VANTAGES",
    "Score",
    "SideScore",
    "Transmission",
    "RtdPair",
    "TruthSegment",
    "drop_bursts",
    "drops_seen",
    "hidden_drops",
    "drop_place",
    "drop_time",
    "dropped_segments",
    "drops_on_wire",
    "expand_retransmissions",
    "expected_state",
    "flow_map",
    "flow_rtts",
    "forward_data_drops",
    "lost_transmissions",
    "match_drops",
    "match_retransmissions",
    "redundant_drops",
    "rtd_pairs",
    "run_lengths",
    "score",
    "sender_transmissions",
    "transmissions_from_capture",
    "true_rtd",
    "upstream_fills",
]

DEFAULT_TOL_S = 0.003
"""Slack between our time of a segment and the truth's: capture times of the same frame are
equal, the emulator's drop stamp is a few microseconds later, the trace time a few earlier."""


VANTAGES = ("sender", "mid", "receiver")
"""Where the analysed capture was taken: the truth's capture points."""

FlowMap = Mapping[tuple[int, str], int]
"""(our connection id, "a2b"/"b2a") -> truth flow id, for the data direction of each flow."""


@dataclass(frozen=True, slots=True)
class Transmission:
    """One data segment on the sender-side capture: time (s), 32-bit seq, payload, record no."""

    t: float
    seq: int
    len: int
    index: int


@dataclass(frozen=True)
class TruthSegment:
    """One wire segment of a kernel retransmission (``record``: its index in
    ``truth.retransmissions``; ``part`` of ``segs``)."""

    flow: int
    seq: int
    len: int
    t: float  # capture_t when the truth has it, else the trace time
    kind: str
    ca_state: str
    record: int
    part: int = 0
    segs: int = 1


# --------------------------------------------------------------------------- flows


def flow_map(connections: Iterable[Any], truth: Truth) -> dict[tuple[int, str], int]:
    """Map our connections (``Analysis.connections``: ``id``, ``a_port``, ``b_port``) to flows.

    A flow is its sender port to the receiver port; "a2b" when the connection's ``a`` side is
    the sender. Every epoch of a reused 4-tuple maps to the flow.
    """
    by_ports = {(f.sport, f.dport): f.id for f in truth.flows}
    out: dict[tuple[int, str], int] = {}
    for c in connections:
        if (c.a_port, c.b_port) in by_ports:
            out[(c.id, Dir.A2B.label)] = by_ports[(c.a_port, c.b_port)]
        elif (c.b_port, c.a_port) in by_ports:
            out[(c.id, Dir.B2A.label)] = by_ports[(c.b_port, c.a_port)]
    return out


def sender_transmissions(packets: Any, flows: FlowMap) -> dict[int, list[Transmission]]:
    """Flow id -> its data transmissions in capture order, from ``Analysis.packets_df()``."""
    out: dict[int, list[Transmission]] = defaultdict(list)
    data = packets[packets["len"] > 0]
    for t, conn, d, seq, n, index in zip(data["time"], data["conn"], data["dir"], data["seq"], data["len"], data["index"]):
        flow = flows.get((int(conn), Dir(int(d)).label))
        if flow is not None:
            out[flow].append(Transmission(float(t), int(seq), int(n), int(index)))
    for segs in out.values():
        segs.sort(key=lambda w: (w.index, w.t))
    return dict(out)


def transmissions_from_capture(path: str | Path, truth: Truth) -> dict[int, list[Transmission]]:
    """:func:`sender_transmissions` of a (sender-side) capture file, analysed with packets kept."""
    from tcpsack_analyze.analysis import analyze

    analysis = analyze(str(path), packets=True)
    return sender_transmissions(analysis.packets_df(), flow_map(analysis.connections, truth))


def drop_time(d: Drop, vantage: str, truth: Truth) -> tuple[float, float]:
    """When the dropped copy passed the capture at ``vantage``, and the slack to add to a
    tolerance: the drop log's time, except for a drop downstream of a mid point seen from the
    sender: the upstream delay earlier, and up to the emulator's lateness earlier still."""
    if vantage == "sender" and d.where == DOWNSTREAM:
        return d.t - truth.upstream_delay, truth.max_late
    return d.t, 0.0


def drop_place(d: Drop, vantage: str) -> str:
    """Where the drop happened relative to the capture at ``vantage`` (UPSTREAM or DOWNSTREAM)."""
    if vantage == "mid":
        if d.where is None:
            raise ValueError("a mid-point vantage needs a truth whose drops say where they happened")
        return d.where
    return DOWNSTREAM if vantage == "sender" else UPSTREAM


# --------------------------------------------------------------------------- matching


_A = TypeVar("_A")
_B = TypeVar("_B")


def _greedy(
    left: Sequence[_A], right: Sequence[_B], key_a: Callable[[_A], Any], key_b: Callable[[_B], Any],
    time_a: Callable[[_A], float], time_b: Callable[[_B], float], window: Callable[[_A, _B], float],
) -> list[tuple[int, int]]:
    """One-to-one pairs (i, j) with equal keys and |time| difference within ``window``, the
    closest first (ties: earlier left, then earlier right)."""
    by_key: dict[Any, list[int]] = defaultdict(list)
    for j, b in enumerate(right):
        by_key[key_b(b)].append(j)
    candidates = []
    for i, a in enumerate(left):
        for j in by_key.get(key_a(a), ()):
            dt = abs(time_a(a) - time_b(right[j]))
            if dt <= window(a, right[j]):
                candidates.append((dt, i, j))
    candidates.sort()
    used_a: set[int] = set()
    used_b: set[int] = set()
    pairs = []
    for _, i, j in candidates:
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            pairs.append((i, j))
    return sorted(pairs)


def expand_retransmissions(
    truth: Truth, transmissions: Mapping[int, Sequence[Transmission]] | None = None,
    mss: int | Mapping[int, int] | None = None, tol_s: float = DEFAULT_TOL_S,
) -> list[TruthSegment]:
    """The wire segments of every kernel retransmission that was sent (``err == 0``).

    A record of ``segs`` > 1 left as ``segs`` consecutive segments from ``seq``: as the sender
    capture shows them when ``transmissions`` has exactly ``segs`` segments of the flow tiling
    ``[seq, seq + len)`` within ``tol_s`` of the record's time; else cut at the MSS (``mss``,
    per flow or for all; by default the flow's largest captured segment) when that gives
    ``segs`` pieces, else in ``segs`` equal pieces (the last one shorter).
    """
    out: list[TruthSegment] = []
    for k, r in enumerate(truth.retransmissions):
        if r.err != 0:
            continue
        t = r.capture_t if r.capture_t is not None else r.t
        pieces = _pieces(r.seq, r.len, r.segs, t, (transmissions or {}).get(r.flow, ()), _mss_of(mss, r.flow, transmissions), tol_s)
        for part, (seq, n) in enumerate(pieces):
            out.append(TruthSegment(r.flow, seq, n, t, r.kind, r.ca_state, k, part, r.segs))
    return out


def _mss_of(mss: int | Mapping[int, int] | None, flow: int, transmissions: Mapping[int, Sequence[Transmission]] | None) -> int | None:
    if isinstance(mss, int):
        return mss
    if mss is not None and flow in mss:
        return mss[flow]
    wire = (transmissions or {}).get(flow)
    return max(w.len for w in wire) if wire else None


def _pieces(seq: int, length: int, segs: int, t: float, wire: Sequence[Transmission], mss: int | None, tol_s: float) -> list[tuple[int, int]]:
    if segs <= 1:
        return [(seq, length)]
    seen = sorted(
        (int(wire_sub(w.seq, seq)), w.len) for w in wire
        if abs(w.t - t) <= tol_s and wire_sub(w.seq, seq) < length
    )
    if len(seen) == segs and seen[0][0] == 0 and all(a[0] + a[1] == b[0] for a, b in itertools.pairwise(seen)) \
            and seen[-1][0] + seen[-1][1] == length:
        return [(int(wire_add(seq, off)), n) for off, n in seen]
    size = mss if mss and math.ceil(length / mss) == segs else math.ceil(length / segs)
    return [(int(wire_add(seq, off)), min(size, length - off)) for off in range(0, length, size)]


def _flow_of(flows: FlowMap, r: rec.Retransmission | rec.LostTransmission) -> int | None:
    return flows.get((r.conn, r.direction))


def match_retransmissions(
    segments: Sequence[TruthSegment], ours: Sequence[rec.Retransmission], flows: FlowMap,
    tol_s: float = DEFAULT_TOL_S, shift_s: float = 0.0,
) -> list[tuple[int, int]]:
    """Pairs (truth segment index, our record index): same flow and seq, times within
    ``tol_s`` after adding ``shift_s`` to the truth's (the path delay to a downstream capture)."""
    return _greedy(
        segments, ours, lambda s: (s.flow, s.seq), lambda r: (_flow_of(flows, r), r.seq),
        lambda s: s.t + shift_s, lambda r: r.time_ns / 1e9, lambda _s, _r: tol_s,
    )


def expected_state(kind: str, ca_state: str) -> str:
    """The state our trigger should imply for a kernel retransmission of this ``kind``.

    rto, loss_recovery: Loss; fast, recovery, rack_timer: Recovery; tlp: Open. ``other``
    takes the kernel's ``ca_state``, with Disorder and CWR (no recovery under way) as Open.
    """
    if kind in ("rto", "loss_recovery"):
        return "Loss"
    if kind in ("fast", "recovery", "rack_timer"):
        return "Recovery"
    if kind == "tlp":
        return "Open"
    return "Open" if ca_state in ("Disorder", "CWR") else ca_state


def forward_data_drops(truth: Truth) -> list[Drop]:
    """Drops of data segments on the way to the receiver (reasons loss and queue)."""
    return [d for d in truth.data_drops() if d.direction == "fwd" and d.reason in ("loss", "queue")]


def dropped_segments(segments: Sequence[TruthSegment], drops: Sequence[Drop], truth: Truth, tol_s: float = DEFAULT_TOL_S) -> set[int]:
    """Indexes of the truth segments that the emulator dropped (same flow, seq, time)."""
    sender: dict[tuple[str | None, int | None], int] = {(f.src, f.sport): f.id for f in truth.flows}
    pairs = _greedy(
        segments, drops, lambda s: (s.flow, s.seq), lambda d: (sender.get((d.src, d.sport)), d.seq),
        lambda s: s.t, lambda d: drop_time(d, "sender", truth)[0],
        lambda _s, d: tol_s + drop_time(d, "sender", truth)[1],
    )
    return {i for i, _ in pairs}


def upstream_fills(segments: Sequence[TruthSegment], upstream: Sequence[Drop], truth: Truth, tol_s: float = DEFAULT_TOL_S) -> set[int]:
    """Indexes of the truth segments all of whose earlier copies (the original and earlier
    resends of the same flow and seq) were dropped upstream of the mid point, counted: the mid
    point sees such a segment fill a hole, not as a retransmission."""
    sender: dict[tuple[str | None, int | None], int] = {(f.src, f.sport): f.id for f in truth.flows}
    lost_before: dict[tuple[int | None, int | None], list[float]] = defaultdict(list)
    for d in upstream:
        lost_before[(sender.get((d.src, d.sport)), d.seq)].append(d.t)
    earlier: Counter[tuple[int, int]] = Counter()
    out: set[int] = set()
    for i in sorted(range(len(segments)), key=lambda k: segments[k].t):
        s = segments[i]
        copies = 1 + earlier[(s.flow, s.seq)]  # the original and the resends before this one
        if sum(t < s.t - tol_s for t in lost_before.get((s.flow, s.seq), ())) >= copies:
            out.add(i)
        earlier[(s.flow, s.seq)] += 1
    return out


def flow_rtts(truth: Truth) -> dict[int, float]:
    """Flow id -> its RTT in seconds: median smoothed RTT of the probes, else the two delays."""
    srtt: dict[int, list[float]] = defaultdict(list)
    for row in truth.probes:
        if row[6]:
            srtt[int(row[1])].append(row[6] / 1e6)
    sections = (truth.params, truth.params.get("upstream", {}))
    base = sum(sec.get(d, {}).get("delay", 0.0) for sec in sections for d in ("forward", "reverse"))
    return {f.id: median(srtt[f.id]) if srtt.get(f.id) else base for f in truth.flows}


def lost_transmissions(lost: Sequence[rec.LostTransmission]) -> list[tuple[int, ...]]:
    """Our lost records grouped by transmission: the records of one captured transmission
    (same connection, direction and ``index``: a resend covering several original segments
    gives one record each) form one group; a record without ``index`` is a group of its own.
    Each group lists record indexes, lowest ``start`` first; groups in order of first record."""
    groups: dict[Any, list[int]] = {}
    for j, r in enumerate(lost):
        groups.setdefault((r.conn, r.direction, r.index) if r.index is not None else j, []).append(j)
    return [tuple(sorted(g, key=lambda j: lost[j].start)) for g in groups.values()]


def match_drops(
    drops: Sequence[Drop], lost: Sequence[rec.LostTransmission], flows: FlowMap, truth: Truth,
    tol_s: float = DEFAULT_TOL_S, upstream_window_s: float | None = None, vantage: str = "sender",
) -> list[tuple[int, tuple[int, ...]]]:
    """Pairs (drop index, our records of one transmission, :func:`lost_transmissions`): same
    flow and 32-bit seq (of the group's lowest record); time within ``tol_s`` of the
    transmission we saw (the drop's :func:`drop_time` at ``vantage``), or, for records of
    upstream losses (``index`` None), the nearest within ``upstream_window_s`` (default: twice
    the flow's RTT, :func:`flow_rtts`: such a record is timed when the hole became visible, when
    data above it passed the capture, which is a round trip after the loss when the lost
    segment ended its flight and the next data waited for that flight's ACKs). An upstream
    record left without a drop then takes the latest drop of the same bytes before it: the hole
    of a segment lost near the end of a flight shows only when data above it passes, which can
    be after the sender's timeout, seconds after the drop."""
    sender: dict[tuple[str | None, int | None], int] = {(f.src, f.sport): f.id for f in truth.flows}
    rtts = flow_rtts(truth)
    groups = lost_transmissions(lost)
    heads = [lost[g[0]] for g in groups]

    def window(d: Drop, r: rec.LostTransmission) -> float:
        if r.index is not None:
            return tol_s + drop_time(d, vantage, truth)[1]
        if upstream_window_s is not None:
            return upstream_window_s
        return max(2 * rtts.get(sender[(d.src, d.sport)], 0.0), tol_s)

    def key_d(d: Drop) -> tuple[int | None, int | None]:
        return sender.get((d.src, d.sport)), d.seq

    def key_r(r: rec.LostTransmission) -> tuple[int | None, int | None]:
        return _flow_of(flows, r), r.seq

    def at(d: Drop) -> float:
        return drop_time(d, vantage, truth)[0]

    pairs = _greedy(drops, heads, key_d, key_r, at, lambda r: r.time_ns / 1e9, window)
    # a hole that showed late (data above the lost segment passed only after the sender's
    # timeout resent it) is matched by its bytes: to the latest drop of them before it showed
    taken = {i for i, _ in pairs}
    for g in sorted({g for g, r in enumerate(heads) if r.index is None} - {g for _, g in pairs}):
        r = heads[g]
        before = [i for i, d in enumerate(drops) if i not in taken and key_d(d) == key_r(r) and at(d) <= r.time_ns / 1e9 + tol_s]
        if before:
            i = max(before, key=lambda i: at(drops[i]))
            taken.add(i)
            pairs.append((i, g))
    return [(i, groups[g]) for i, g in sorted(pairs)]


# --------------------------------------------------------------------------- bursts


def run_lengths(marks: Iterable[bool]) -> dict[int, int]:
    """Histogram (length -> count) of the runs of consecutive True values (the bursts of
    :func:`tcpsack_analyze.loss.patterns.bursts`)."""
    lengths = patterns.bursts(np.fromiter(marks, dtype=bool))[:, 1]
    return dict(sorted(Counter(int(n) for n in lengths).items()))


def drops_on_wire(
    drops: Sequence[Drop], transmissions: Mapping[int, Sequence[Transmission]], truth: Truth,
    tol_s: float = DEFAULT_TOL_S,
) -> dict[int, dict[int, int]]:
    """Flow id -> {transmission index: drop index}: each drop matched to the flow's (sender-side)
    transmission of the same seq and length nearest in time (within ``tol_s``, :func:`drop_time`)."""
    sender: dict[tuple[str | None, int | None], int] = {(f.src, f.sport): f.id for f in truth.flows}
    at_sender = [drop_time(d, "sender", truth) for d in drops]
    out: dict[int, dict[int, int]] = {}
    for flow, wire in transmissions.items():
        mine = [i for i, d in enumerate(drops) if sender.get((d.src, d.sport)) == flow]
        pairs = _greedy(
            mine, wire, lambda i: (drops[i].seq, drops[i].len), lambda w: (w.seq, w.len),
            lambda i: at_sender[i][0], lambda w: w.t, lambda i, _w: tol_s + at_sender[i][1],
        )
        out[flow] = {j: mine[k] for k, j in pairs}
    return out


def drop_bursts(
    drops: Sequence[Drop], transmissions: Mapping[int, Sequence[Transmission]], truth: Truth,
    tol_s: float = DEFAULT_TOL_S, vantage: str | None = None,
) -> tuple[dict[int, int], int]:
    """Burst-length histogram of the drop log over all flows, and the drops not found.

    Runs of consecutive transmissions of a flow that were all dropped (:func:`drops_on_wire`)
    are bursts: over every transmission (``vantage`` None: the drop log's own runs), or over
    those a capture at ``vantage`` can know of (:func:`drops_seen`: a drop that leaves no trace
    there is left out of the sequence). Returns (histogram, number of drops with no
    transmission on the capture).
    """
    hist: Counter[int] = Counter()
    seen = drops_seen(drops, transmissions, truth, tol_s, vantage) if vantage is not None else {
        flow: (dropped, set()) for flow, dropped in drops_on_wire(drops, transmissions, truth, tol_s).items()
    }
    for flow, wire in transmissions.items():
        dropped, hidden = seen[flow]
        hist.update(run_lengths(j in dropped for j in range(len(wire)) if j not in hidden))
    return dict(sorted(hist.items())), len(drops) - sum(len(dropped) for dropped, _ in seen.values())


def drops_seen(
    drops: Sequence[Drop], transmissions: Mapping[int, Sequence[Transmission]], truth: Truth,
    tol_s: float = DEFAULT_TOL_S, vantage: str = "sender",
) -> dict[int, tuple[dict[int, int], set[int]]]:
    """Flow id -> ({transmission index: drop index} (:func:`drops_on_wire`), the indexes of
    those transmissions whose drop the ``vantage`` cannot see: the drops upstream of it that
    leave no hole there (:func:`hidden_drops`), and at every vantage the drops of copies whose
    bytes the receiver already had (:func:`redundant_drops`: nothing resends them, and no hole
    is left))."""
    out = {}
    redundant = redundant_drops(drops, transmissions, truth, tol_s)
    for flow, dropped in drops_on_wire(drops, transmissions, truth, tol_s).items():
        upstream = {j for j, i in dropped.items() if drop_place(drops[i], vantage) == UPSTREAM}
        out[flow] = (dropped, hidden_drops(transmissions[flow], upstream) | {j for j, i in dropped.items() if i in redundant})
    return out


def hidden_drops(wire: Sequence[Transmission], upstream: set[int]) -> set[int]:
    """Of the transmissions ``upstream`` (indexes into one flow's ``wire``, dropped before the
    capture point), those that leave no trace there: the capture sees a drop only as a hole,
    bytes missing below data that passed. So a dropped resend is hidden (its bytes are a hole
    already, or passed before), and so is a dropped original when no transmission that passed
    carried bytes above it before its bytes passed again (the end of a flight: the sender's
    timeout resends it in order, and the capture sees it as if it had only been late)."""
    hidden = set()
    for j in sorted(upstream):
        d = wire[j]
        if _overlaps_before(wire, j, range(j)):
            hidden.add(j)
            continue
        filled = next((k for k in range(j + 1, len(wire)) if k not in upstream and _overlaps_before(wire, j, (k,))), len(wire))
        if not any(k not in upstream and signed_diff(wire_add(wire[k].seq, wire[k].len), d.seq) > d.len for k in range(j + 1, filled)):
            hidden.add(j)
    return hidden


def _overlaps_before(wire: Sequence[Transmission], j: int, others: Iterable[int]) -> bool:
    """One of the transmissions ``others`` carries bytes of transmission ``j``."""
    d = wire[j]
    parts = (offset_range(wire[k].seq, wire[k].len, d.seq) for k in others)
    return any(part is not None and part[0] < d.len and part[1] > 0 for part in parts)


def redundant_drops(
    drops: Sequence[Drop], transmissions: Mapping[int, Sequence[Transmission]], truth: Truth,
    tol_s: float = DEFAULT_TOL_S,
) -> set[int]:
    """Indexes of the drops of copies the receiver did not need: earlier transmissions of the
    flow that were not dropped had carried all their bytes (such as go-back-N resends after an
    RTO without SACK). A sender-side analysis cannot see these as lost: nothing resends them."""
    out: set[int] = set()
    for flow, dropped in drops_on_wire(drops, transmissions, truth, tol_s).items():
        wire = transmissions[flow]
        for j, i in dropped.items():
            d = wire[j]
            delivered = RangeSet()
            for k in range(j):
                if k not in dropped:
                    part = offset_range(wire[k].seq, wire[k].len, d.seq)
                    if part is not None:
                        delivered.add(*part)
            if delivered.overlap(0, d.len) == d.len:
                out.add(i)
    return out


# --------------------------------------------------------------------------- RTD


STAMP_S = 1e-5
"""A capture's copy of a traced retransmission is stamped up to a few microseconds from the
truth's time of it (microsecond pcap stamps; the trace fires just after the tap): an earlier
copy closer than this is the retransmission itself."""


def true_rtd(segment: TruthSegment, wire: Sequence[Transmission]) -> float | None:
    """Seconds from the previous transmission of ``segment``'s first byte to ``segment``: its
    retransmission delay (DOMAIN.md section 5), each resend timed from the previous copy of its
    own first bytes even when it merges bytes sent more recently (the thesis, seed 001).

    ``wire`` is the flow's data segments on the sender capture (:func:`sender_transmissions`):
    the truth says which packet is a resend and when, the capture when its bytes went out
    before. None when no earlier copy was captured.
    """
    earlier = [w.t for w in wire if w.t < segment.t - STAMP_S and wire_sub(segment.seq, w.seq) < w.len]
    return segment.t - max(earlier) if earlier else None


@dataclass(frozen=True)
class RtdPair:
    """One kernel retransmission matched to our record, with both RTDs in seconds."""

    segment: TruthSegment
    ours: rec.Retransmission
    truth_s: float | None  # :func:`true_rtd`
    ours_s: float | None  # our ``rtd_ns``; None when we saw no earlier copy


def rtd_pairs(
    truth: Truth, retransmissions: Sequence[rec.Retransmission], flows: FlowMap,
    transmissions: Mapping[int, Sequence[Transmission]], tol_s: float = DEFAULT_TOL_S,
) -> list[RtdPair]:
    """The truth's retransmissions that we found (:func:`match_retransmissions`, on the sender
    capture ``transmissions``), each with its true RTD and ours."""
    segments = expand_retransmissions(truth, transmissions, tol_s=tol_s)
    out = []
    for i, j in match_retransmissions(segments, retransmissions, flows, tol_s):
        seg, ours = segments[i], retransmissions[j]
        out.append(RtdPair(seg, ours, true_rtd(seg, transmissions.get(seg.flow, ())), None if ours.rtd_ns is None else ours.rtd_ns / 1e9))
    return out


# --------------------------------------------------------------------------- score


def _ratio(num: int, den: int) -> float:
    return num / den if den else 1.0


@dataclass(frozen=True)
class SideScore:
    """The drops on one side of the capture point against our lost transmissions placed there
    (``matched``: pairs that agree on the side)."""

    truth: int
    ours: int
    matched: int
    precision: float
    recall: float


@dataclass(frozen=True)
class Score:
    """How loss forensics compares with a lab run's truth (see the module text)."""

    # 1. retransmissions (truth: wire segments of the kernel's sent retransmissions)
    retrans_truth: int
    retrans_ours: int
    retrans_matched: int
    retrans_precision: float
    retrans_recall: float
    failed_skipped: int  # kernel records with err != 0, not on the wire
    retrans_dropped: int  # at the receiver: truth segments left out, the emulator dropped them
    unmatched_truth: tuple[TruthSegment, ...]
    unmatched_ours: tuple[rec.Retransmission, ...]
    # 2. triggers, over matched pairs
    trigger_agreement: float  # share of pairs whose implied state equals expected_state()
    trigger_confusion: dict[tuple[str, str], int]  # (truth kind, our trigger) -> n
    state_confusion: dict[tuple[str, str], int]  # (expected, our ca_state) -> n
    tlp_truth: int  # truth tlp wire segments
    tlp_recall: float  # of those, matched to our trigger "tlp"
    tlp_precision: float  # our "tlp" records matched to a truth tlp
    # 3. drop log (forward data drops, loss and queue) vs our LostTransmission records
    drops_truth: int
    drops_ours: int  # our lost transmissions (records of one captured transmission count once)
    drops_matched: int
    drop_precision: float
    drop_recall: float
    unmatched_drops: tuple[Drop, ...]
    unmatched_lost: tuple[rec.LostTransmission, ...]
    # with sender-side transmissions (else None / 0):
    drops_redundant: int | None = None  # drops of copies whose bytes had been delivered before
    drop_recall_needed: float | None = None  # recall over the other drops
    bursts: dict[int, int] | None = None  # 4. burst lengths of the drop log
    bursts_seen: dict[int, int] | None = None  # the same over the drops the vantage can see (drops_seen)
    drops_not_on_capture: int = 0
    drops_hidden: int | None = None  # drops upstream of the capture point that leave no hole there (hidden_drops)
    # 5. place of each loss relative to the capture point (drop_place vs LostTransmission.where)
    upstream: SideScore | None = None
    downstream: SideScore | None = None
    place_confusion: dict[tuple[str, str], int] | None = None  # (truth place, our where) -> matched pairs
    retrans_fills: int = 0  # at a mid point: truth segments left out, first seen there filling a hole

    def summary(self) -> str:
        """One line with the headline figures."""
        hist = "n/a" if self.bursts is None else " ".join(f"{k}:{v}" for k, v in self.bursts.items()) or "none"
        needed = "" if self.drop_recall_needed is None else \
            f", R {self.drop_recall_needed:.3f} of the {self.drops_truth - (self.drops_redundant or 0)} not redundant"
        return (
            f"retransmissions P {self.retrans_precision:.3f} R {self.retrans_recall:.3f} "
            f"({self.retrans_matched} of {self.retrans_truth} truth, {self.retrans_ours} ours); "
            f"trigger agreement {self.trigger_agreement:.3f}, TLP recall {self.tlp_recall:.3f} of {self.tlp_truth}; "
            f"drops P {self.drop_precision:.3f} R {self.drop_recall:.3f} "
            f"({self.drops_matched} of {self.drops_truth} truth, {self.drops_ours} ours{needed}); bursts {hist}"
            + "".join(
                f"; {name} P {side.precision:.3f} R {side.recall:.3f} ({side.matched} of {side.truth} truth, {side.ours} ours)"
                for name, side in (("upstream", self.upstream), ("downstream", self.downstream)) if side is not None and side.truth + side.ours
            )
        )


def score(
    truth: Truth,
    retransmissions: Sequence[rec.Retransmission],
    lost: Sequence[rec.LostTransmission],
    flows: FlowMap,
    transmissions: Mapping[int, Sequence[Transmission]] | None = None,
    *,
    vantage: str = "sender",
    tol_s: float = DEFAULT_TOL_S,
    shift_s: float | None = None,
    upstream_window_s: float | None = None,
    mss: int | Mapping[int, int] | None = None,
) -> Score:
    """Score our records of one capture against ``truth``.

    ``flows`` is :func:`flow_map` of the analysed capture; ``transmissions`` the sender-side
    capture's data segments (:func:`sender_transmissions`), used to split multi-segment
    retransmissions as sent and for the burst histogram. ``vantage`` is where the analysed
    capture was taken (:data:`VANTAGES`): at the ``"receiver"``, retransmissions the emulator
    dropped cannot be seen and are left out of the truth (``retrans_dropped``), truth times are
    shifted by ``shift_s``, by default the one-way delay to the capture (0 at the sender), and
    the tolerance grows by how late the emulator released frames (``emulator.timing.max_late_s``);
    with a rate limit, queueing adds more delay: pass a ``tol_s`` that covers the queue. At the
    ``"mid"`` point the same applies to the upstream section, and retransmissions first seen
    there filling a hole are left out too (``retrans_fills``, :func:`upstream_fills`).
    """
    if vantage not in VANTAGES:
        raise ValueError(f"vantage must be one of {VANTAGES}, not {vantage!r}")
    drops = forward_data_drops(truth)
    segments = expand_retransmissions(truth, transmissions, mss, tol_s)
    dropped: set[int] = set()
    fills: set[int] = set()
    retrans_tol = tol_s
    if vantage != "sender":
        before = [d for d in drops if drop_place(d, vantage) == UPSTREAM]
        dropped = dropped_segments(segments, before, truth, tol_s)
        if vantage == "mid":
            fills = upstream_fills(segments, before, truth, tol_s) - dropped
        segments = [seg for i, seg in enumerate(segments) if i not in dropped | fills]
        if shift_s is None:  # the one-way delay to the capture point
            shift_s = truth.upstream_delay
            if vantage == "receiver":
                shift_s += float(truth.params.get("forward", {}).get("delay", 0.0))
        retrans_tol += truth.max_late
    pairs = match_retransmissions(segments, retransmissions, flows, retrans_tol, shift_s or 0.0)
    hit_truth = {i for i, _ in pairs}
    hit_ours = {j for _, j in pairs}

    trigger_confusion: Counter[tuple[str, str]] = Counter()
    state_confusion: Counter[tuple[str, str]] = Counter()
    agree = tlp_hits = 0
    for i, j in pairs:
        s, r = segments[i], retransmissions[j]
        expected = expected_state(s.kind, s.ca_state)
        trigger_confusion[(s.kind, r.trigger)] += 1
        state_confusion[(expected, r.ca_state)] += 1
        agree += expected == r.ca_state
        tlp_hits += s.kind == "tlp" and r.trigger == rec.TLP
    tlp_truth = sum(s.kind == "tlp" for s in segments)
    tlp_ours = sum(r.trigger == rec.TLP for r in retransmissions)

    drop_pairs = match_drops(drops, lost, flows, truth, tol_s, upstream_window_s, vantage)
    hit_drops = {i for i, _ in drop_pairs}
    hit_lost = {j for _, group in drop_pairs for j in group}
    groups = lost_transmissions(lost)
    ours_lost = len(groups)

    hist: dict[int, int] | None = None
    not_on_capture = 0
    redundant: set[int] | None = None
    hidden: int | None = None
    hist_seen: dict[int, int] | None = None
    if transmissions is not None:
        hist, not_on_capture = drop_bursts(drops, transmissions, truth, tol_s)
        hist_seen, _ = drop_bursts(drops, transmissions, truth, tol_s, vantage)
        redundant = redundant_drops(drops, transmissions, truth, tol_s)
        hidden = sum(len(h) for _, h in drops_seen(drops, transmissions, truth, tol_s, vantage).values())

    places = [drop_place(d, vantage) for d in drops]
    place_confusion = Counter((places[i], lost[group[0]].where) for i, group in drop_pairs)

    def side(place: str) -> SideScore:
        truth_n = places.count(place)
        ours_n = sum(lost[g[0]].where == place for g in groups)
        matched = place_confusion[(place, place)]
        return SideScore(truth_n, ours_n, matched, _ratio(matched, ours_n), _ratio(matched, truth_n))

    return Score(
        retrans_truth=len(segments),
        retrans_ours=len(retransmissions),
        retrans_matched=len(pairs),
        retrans_precision=_ratio(len(pairs), len(retransmissions)),
        retrans_recall=_ratio(len(pairs), len(segments)),
        failed_skipped=sum(r.err != 0 for r in truth.retransmissions),
        retrans_dropped=len(dropped),
        unmatched_truth=tuple(s for i, s in enumerate(segments) if i not in hit_truth),
        unmatched_ours=tuple(r for j, r in enumerate(retransmissions) if j not in hit_ours),
        trigger_agreement=_ratio(agree, len(pairs)),
        trigger_confusion=dict(sorted(trigger_confusion.items())),
        state_confusion=dict(sorted(state_confusion.items())),
        tlp_truth=tlp_truth,
        tlp_recall=_ratio(tlp_hits, tlp_truth),
        tlp_precision=_ratio(tlp_hits, tlp_ours),
        drops_truth=len(drops),
        drops_ours=ours_lost,
        drops_matched=len(drop_pairs),
        drop_precision=_ratio(len(drop_pairs), ours_lost),
        drop_recall=_ratio(len(drop_pairs), len(drops)),
        unmatched_drops=tuple(d for i, d in enumerate(drops) if i not in hit_drops),
        unmatched_lost=tuple(r for j, r in enumerate(lost) if j not in hit_lost),
        drops_redundant=None if redundant is None else len(redundant),
        drop_recall_needed=None if redundant is None else _ratio(len(hit_drops - redundant), len(drops) - len(redundant)),
        bursts=hist,
        bursts_seen=hist_seen,
        drops_not_on_capture=not_on_capture,
        drops_hidden=hidden,
        upstream=side(UPSTREAM),
        downstream=side(DOWNSTREAM),
        place_confusion=dict(sorted(place_confusion.items())),
        retrans_fills=len(fills),
    )
