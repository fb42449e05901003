"""What the per-connection stages hand over when a connection is finished: frozen plain data.

A finished connection leaves the compiled core's pipeline as a :class:`ConnectionResult`
(``flowcore.finished``): the connection's
identity and handshake times, the counters of each direction (:class:`DirectionCounts`, the
tcptrace set), and the results of the stages that consumed its events (RTT samples, loss
records). The report (``report/model.py``) is built from these alone; once a connection is
finished, none of its working state is needed.
"""
from __future__ import annotations

from dataclasses import dataclass

from tcpsack_analyze.loss.tracker import LossResult
from tcpsack_analyze.rtt import RttResult


@dataclass(frozen=True, slots=True)
class DirectionCounts:
    """The counters of one direction (what its side sent, data and ACKs), final."""

    packets: int
    ack_packets: int
    pure_acks: int
    sack_packets: int
    dsack_packets: int
    max_sack_blocks: int
    empty_sack_options: int
    unique_bytes: int
    data_packets: int
    data_bytes: int
    pushed: int
    rexmit_packets: int
    rexmit_bytes: int
    syn_rexmits: int
    fin_rexmits: int
    out_of_order: int
    zwnd_probes: int
    zwnd_probe_bytes: int
    syn_count: int
    fin_count: int
    rst_count: int
    dupacks: int
    triple_dupacks: int
    zero_windows: int
    window_min: int | None  # of the windows this side advertised (window_stats)
    window_max: int
    window_mean: float | None
    wscale: int | None  # the scale option of this side's SYN
    mss: int | None
    sack_permitted: bool
    ts_option: bool
    max_seg: int
    min_seg: int
    oversize_segments: int
    first_ns: int | None
    last_ns: int | None
    idle_max_ns: int
    snd_una: int | None
    snd_max: int
    syn_seen: bool


@dataclass(frozen=True, slots=True)
class ConnectionResult:
    """One finished connection: identity, handshake, per-direction counters and stage results."""

    id: int
    epoch: int
    a_addr: bytes  # 16 bytes, IPv4 mapped into IPv6
    a_port: int
    b_addr: bytes
    b_port: int
    ipver: int
    state: str  # "complete", "reset", "open at end of capture", "no SYN seen"
    packets: int
    vlan_tagged: int
    backwards_timestamps: int  # packets timestamped before a record captured ahead of them (reader/clock.py)
    syn_ns: int | None
    synack_ns: int | None
    hs_ack_ns: int | None
    window_scale_in_use: bool | None  # None: unknown (a SYN missing)
    counts: tuple[DirectionCounts, DirectionCounts]  # a2b, b2a
    rtt: tuple[RttResult, RttResult]
    loss: tuple[LossResult, LossResult]

    @property
    def first_ns(self) -> int:
        return min(c.first_ns for c in self.counts if c.first_ns is not None)

    @property
    def last_ns(self) -> int:
        return max(c.last_ns for c in self.counts if c.last_ns is not None)


__all__ = ["ConnectionResult", "DirectionCounts"]
