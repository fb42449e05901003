"""Check that a lab run's three witnesses agree: drop log, kernel trace and capture(s).

Each emulated loss of a data segment must be repaired: the sender's kernel must later
retransmit a range covering it, and the capture must show that repair (at the sender: the
original send and a later resend; at the receiver: the bytes arriving after the drop). The
exception is a drop of a copy the receiver did not need: an unnecessary retransmission (such as
the go-back-N resends after an RTO without SACK) of bytes an earlier copy had delivered. Such
*redundant* drops are counted apart; what delivered the earlier copy is read from the receiver
capture when there is one, else from the sender capture less the dropped copies. Each
traced retransmission must be on the sender-side capture, and the kernel's own counter
(TCP_INFO total_retrans) must equal the traced count. A disagreement means the truth cannot be
trusted for that run, so tests run this on every sample trace and on every end-to-end run.

On a path with a mid point, a dropped copy is looked for on every capture it passed: the sender
capture, and the mid capture for drops downstream of it. The drop log stamps a drop where it
happened, so a downstream drop's copy passed the sender about the upstream delay earlier (up to
the emulator's lateness more), and an upstream drop's copy never reached the mid capture.

Captures are read with dpkt, independently of the toolkit's reader.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import dpkt

from tcpsack_analyze.lab.droplog import DOWNSTREAM, Drop
from tcpsack_analyze.rangeset import RangeSet
from tcpsack_analyze.seqspace import offset_range, wire_sub
from tcpsack_analyze.truth import Truth, load

__all__ = ["Agreement", "crosscheck"]

_EPS = 0.001  # seconds of slack between the emulator's receive stamp and the capture's


@dataclass
class Agreement:
    """Counts of what was checked and the list of disagreements (empty when all agree)."""

    data_drops: int = 0
    redundant_drops: int = 0
    repaired_by_kernel: int = 0
    repaired_in_capture: dict[str, int] = field(default_factory=dict)
    retransmissions: int = 0
    retransmissions_in_capture: int = 0
    problems: list[str] = field(default_factory=list)


def _data_segments(pcap: Path) -> dict[tuple[int, int], list[tuple[float, int, int]]]:
    """(sport, dport) -> [(time, seq, len)] for every segment with payload, in capture order."""
    out: dict[tuple[int, int], list[tuple[float, int, int]]] = defaultdict(list)
    with pcap.open("rb") as f:
        for ts, buf in dpkt.pcap.Reader(f):
            ip = dpkt.ethernet.Ethernet(buf).data
            if isinstance(ip, dpkt.ip.IP) and isinstance(ip.data, dpkt.tcp.TCP):
                tcp = ip.data
                payload = ip.len - ip.hl * 4 - tcp.off * 4
                if payload > 0:
                    out[(tcp.sport, tcp.dport)].append((float(ts), tcp.seq, payload))
    return out


def _covered(segments: list[tuple[float, int, int]], after: float, seq: int, length: int) -> bool:
    """Do segments sent after ``after`` cover [seq, seq + length) (32-bit wrap aware)?"""
    cover = RangeSet()
    for t, s, n in segments:
        if t > after:
            part = offset_range(s, n, seq)
            if part is not None:
                cover.add(*part)
    return cover.overlap(0, length) == length


def _passed(drop: Drop, point: str, truth: Truth) -> tuple[float, float] | None:
    """When the dropped copy passed the capture ``point`` (an interval), or None if it never did.

    Sender side: at the drop time, or for a drop downstream of the mid point, the upstream delay
    earlier (up to the emulator's lateness more). Mid point: at the drop time, for downstream
    drops only. The receiver never sees a dropped copy.
    """
    if point == "sender":
        if drop.where != DOWNSTREAM:
            return drop.t - _EPS, drop.t + _EPS
        lag = truth.upstream_delay
        return drop.t - lag - truth.max_late - _EPS, drop.t - lag + _EPS
    if point == "mid" and drop.where == DOWNSTREAM:
        return drop.t - _EPS, drop.t + _EPS
    return None


def crosscheck(run: Path | Truth) -> Agreement:
    """Check a lab output directory (or a loaded truth whose ``path`` points into one)."""
    truth = run if isinstance(run, Truth) else load(run)
    assert truth.path is not None
    folder = truth.path.parent
    result = Agreement()
    flows = {f.id: f for f in truth.flows}
    sent = [r for r in truth.retransmissions if r.err == 0]
    result.retransmissions = len(sent)
    kernel_segments: dict[int, list[tuple[float, int, int]]] = defaultdict(list)
    for r in sent:
        kernel_segments[r.flow].append((r.t, r.seq, r.len))

    captures = {c["point"]: _data_segments(folder / c["file"]) for c in truth.captures}
    for point in captures:
        result.repaired_in_capture[point] = 0

    for flow in truth.flows:
        traced = sum(r.segs for r in sent if r.flow == flow.id)
        if flow.kernel_total_retrans != traced:
            result.problems.append(f"flow {flow.id}: TCP_INFO total_retrans {flow.kernel_total_retrans}, traced segments {traced}")

    dropped_copies: dict[tuple[str, int | None, int | None, int | None], list[tuple[float, float]]] = defaultdict(list)
    for d in truth.data_drops():
        for point in captures:
            window = _passed(d, point, truth)
            if window is not None:
                dropped_copies[(point, d.sport, d.seq, d.len)].append(window)

    def was_dropped(point: str, sport: int, seq: int, length: int, t: float) -> bool:
        return any(lo <= t <= hi for lo, hi in dropped_copies.get((point, sport, seq, length), []))

    def delivered_before(flow_key: tuple[int, int], drop: Drop) -> bool:
        assert drop.seq is not None and drop.len is not None
        if "receiver" in captures:  # copies that had reached the receiver when this one was dropped
            arrived = [w for w in captures["receiver"].get(flow_key, []) if w[0] < drop.t]
        else:  # copies that passed the last capture before the receiver ahead of this one, not dropped after
            point = "mid" if "mid" in captures else "sender"
            window = _passed(drop, point, truth)
            ahead = drop.t if window is None else window[0]  # an upstream drop never reached the mid point
            arrived = [
                w for w in captures[point].get(flow_key, [])
                if w[0] < ahead and not was_dropped(point, flow_key[0], w[1], w[2], w[0])
            ]
        return _covered(arrived, float("-inf"), drop.seq, drop.len)

    for drop in truth.data_drops():
        result.data_drops += 1
        flow = next(f for f in flows.values() if (f.src, f.sport) == (drop.src, drop.sport))
        assert drop.seq is not None and drop.len is not None
        where = f"drop of seq {wire_sub(drop.seq, flow.isn or 0)} len {drop.len} at {drop.t:.6f}"
        for point, segs in captures.items():
            window = _passed(drop, point, truth)
            if window is not None and not any(
                s == drop.seq and n == drop.len and window[0] <= t <= window[1]
                for t, s, n in segs.get((flow.sport, flow.dport), [])
            ):
                result.problems.append(f"flow {flow.id}: {where}: not on the {point} capture")
        if delivered_before((flow.sport, flow.dport), drop):
            result.redundant_drops += 1
            continue
        if _covered(kernel_segments[flow.id], drop.t, drop.seq, drop.len):
            result.repaired_by_kernel += 1
        else:
            result.problems.append(f"flow {flow.id}: {where}: no later kernel retransmission covers it")
        for point, segs in captures.items():
            on_wire = segs.get((flow.sport, flow.dport), [])
            if _covered(on_wire, drop.t + (_EPS if point == "receiver" else 0), drop.seq, drop.len):
                result.repaired_in_capture[point] += 1
            else:
                result.problems.append(f"flow {flow.id}: {where}: no repair on the {point} capture")

    if "sender" in captures:
        for r in sent:
            on_wire = captures["sender"].get((flows[r.flow].sport, flows[r.flow].dport), [])
            if _covered([w for w in on_wire if abs(w[0] - r.t) < _EPS], r.t - _EPS, r.seq, r.len):
                result.retransmissions_in_capture += 1
            else:
                result.problems.append(f"flow {r.flow}: traced retransmission of seq {r.rel_seq} at {r.t:.6f} not captured")
    return result
