"""Align the kernel's retransmission events with the sender-side capture.

Each traced retransmission (sequence number from the skb, time converted from CLOCK_MONOTONIC)
is matched to the captured segment with the same flow and sequence number nearest in time
(an skb of several MSS leaves as several wire segments, the first of which starts at its
sequence number). The capture tap runs inside ``dev_queue_xmit`` and the tracepoint right after the
transmit returns, so the two times differ by the conversion error plus a few microseconds of
kernel work: the residuals measure how far trace times can be trusted against the capture.
The capture is read with dpkt, independently of the toolkit's own reader, so the truth stays a
cross-check of it.
"""
from __future__ import annotations

import bisect
import statistics
from collections import defaultdict
from pathlib import Path

import dpkt

__all__ = ["MATCH_WINDOW", "SegmentIndex", "alignment_stats"]

MATCH_WINDOW = 0.005
"""A captured segment further than this (seconds) from the traced one is not the same send."""


class SegmentIndex:
    """Capture times of data segments keyed by (sport, dport, seq)."""

    def __init__(self, pcap: Path) -> None:
        self._times: dict[tuple[int, int, int], list[float]] = defaultdict(list)
        with pcap.open("rb") as f:
            for ts, buf in dpkt.pcap.Reader(f):
                eth = dpkt.ethernet.Ethernet(buf)
                ip = eth.data
                if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                    continue
                tcp = ip.data
                payload = ip.len - ip.hl * 4 - tcp.off * 4
                if payload > 0:
                    self._times[(tcp.sport, tcp.dport, tcp.seq)].append(float(ts))

    def nearest(self, sport: int, dport: int, seq: int, t: float) -> float | None:
        """The capture time of a segment starting at ``seq`` closest to ``t``, within
        :data:`MATCH_WINDOW`."""
        times = self._times.get((sport, dport, seq))
        if not times:
            return None
        i = bisect.bisect_left(times, t)
        candidates = [times[j] for j in (i - 1, i) if 0 <= j < len(times)]
        best = min(candidates, key=lambda c: abs(c - t))
        return best if abs(best - t) <= MATCH_WINDOW else None


def alignment_stats(residuals: list[float], unmatched: int) -> dict[str, object]:
    """Summary of capture-minus-trace residuals (seconds in, microseconds out)."""
    if not residuals:
        return {"matched": 0, "unmatched": unmatched}
    us = sorted(r * 1e6 for r in residuals)
    absolute = sorted(abs(u) for u in us)
    return {
        "matched": len(us),
        "unmatched": unmatched,
        "median_us": round(statistics.median(us), 3),
        "min_us": round(us[0], 3),
        "max_us": round(us[-1], 3),
        "p90_abs_us": round(absolute[int(0.9 * (len(absolute) - 1))], 3),
        "max_abs_us": round(absolute[-1], 3),
    }
