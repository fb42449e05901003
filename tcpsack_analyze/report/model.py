"""The report as plain data: what a notebook gets from :func:`tcpsack_analyze.analyze`.

Every field is computed from the capture; where a value cannot be known from it (window
scale without the SYNs, RTT without samples) it is ``None``, never a default passed off as a
measurement. Times are seconds since the epoch (floats) or milliseconds where the name says so.
The JSON form (``report/jsonout.py``) is these dataclasses as dicts; its schema is documented in
``docs/report.md``.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tcpsack_analyze import vantage
from tcpsack_analyze.events import Dir
from tcpsack_analyze.loss.patterns import GilbertElliott
from tcpsack_analyze.loss.summary import LossSummary, LossTotals, summarize
from tcpsack_analyze.reader import ReadStatus
from tcpsack_analyze.results import ConnectionResult
from tcpsack_analyze.stats import Summary

if TYPE_CHECKING:  # the sender models are imported only by `report --sender` and `infer`
    from tcpsack_analyze.models.section import SenderSection

SCHEMA_VERSION = 3  # 2: loss sections (DirectionReport.loss, CaptureReport.loss); 3: DirectionReport.sender


@dataclass(frozen=True)
class DirectionReport:
    """One direction of a connection: what its sender sent and what its receiver's ACKs said."""

    name: str  # Dir.label: "a2b" or "b2a"
    total_packets: int
    ack_packets: int
    pure_acks: int
    sack_packets: int  # ACKs carrying at least one SACK block
    dsack_packets: int
    max_sack_blocks: int
    empty_sack_options: int  # SACK options with no block (malformed)
    unique_bytes: int
    data_packets: int
    data_bytes: int
    rexmit_packets: int  # data packets overlapping bytes already sent (tcptrace's rule)
    rexmit_bytes: int
    syn_rexmits: int
    fin_rexmits: int
    out_of_order_packets: int
    zero_window_probes: int
    zero_window_probe_bytes: int
    pushed_packets: int
    syn_count: int
    fin_count: int
    rst_count: int
    duplicate_acks: int
    triple_duplicate_acks: int
    zero_window_advertisements: int
    window_min: int | None
    window_max: int
    window_mean: float | None
    window_scale: int | None  # shift applied to this side's windows; None = unknown (SYN missing)
    mss: int | None
    sack_permitted: bool
    timestamps: bool
    max_segment: int
    min_segment: int
    mean_segment: float | None
    oversize_segments: int  # larger than the MSS: TSO/GRO/BIG TCP at the capture host
    rtt_ms: Summary  # data/ACK pairs, Karn-filtered
    rtt_ts_ms: Summary  # from TCP timestamps (RFC 7323 RTTM)
    throughput_Bps: float | None
    first_packet: float | None
    last_packet: float | None
    idle_max_ms: float
    snd_una: int | None  # relative to the ISN (or first sequence number seen)
    snd_max: int
    isn_seen: bool
    vantage: str
    loss: LossSummary  # retransmissions, triggers, episodes, delays, loss pattern
    sender: SenderSection | None = None  # the inferred sender model (report --sender; None without)


@dataclass(frozen=True)
class ConnectionReport:
    """One TCP connection (a flow epoch)."""

    id: int
    epoch: int
    a_addr: str
    a_port: int
    b_addr: str
    b_port: int
    ip_version: int
    state: str
    first_packet: float
    last_packet: float
    duration_s: float
    total_packets: int
    vlan_tagged_packets: int
    out_of_order_timestamps: int  # its packets timestamped before a record captured ahead of them (CaptureInfo's, per connection)
    vantage: vantage.Vantage
    a2b: DirectionReport
    b2a: DirectionReport

    @property
    def label(self) -> str:
        return f"{_fmt_ep(self.a_addr, self.a_port)} <-> {_fmt_ep(self.b_addr, self.b_port)}"


@dataclass(frozen=True)
class CaptureInfo:
    """The capture file and how reading it went."""

    path: str
    format: str
    compressed: bool
    records: int
    tcp_packets: int
    non_ip: int
    non_tcp: int
    ip_fragments: int
    truncated_tcp: int
    malformed: int
    filtered_out: int
    unsupported_linktype: dict[int, int]
    complete: bool
    error: str | None
    warnings: list[str] = field(default_factory=list)
    # timestamps (reader/clock.py): records earlier than the one before, absurd ones, clock jumps
    out_of_order_timestamps: int = 0
    largest_backward_step_s: float = 0.0
    absurd_timestamps: int = 0
    clock_jumps: int = 0


@dataclass(frozen=True)
class CaptureReport:
    """Everything ``report`` prints for one capture."""

    capture: CaptureInfo
    connections: list[ConnectionReport]
    loss: LossTotals  # pooled over all connections
    schema_version: int = SCHEMA_VERSION


def _fmt_ep(addr: str, port: int) -> str:
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"


def format_addr(raw: bytes) -> str:
    """An address as the report writes it: IPv4 (kept v4-mapped, ``::ffff:a.b.c.d``) in dotted
    decimal, IPv6 as :mod:`ipaddress` writes it. A v4-mapped address is written directly
    (what ``IPv6Address(raw).ipv4_mapped`` gives, without the two objects per address: a
    report of many short connections writes two addresses per ten packets)."""
    if raw[:12] == _V4_MAPPED:
        return f"{raw[12]}.{raw[13]}.{raw[14]}.{raw[15]}"
    ip = ipaddress.IPv6Address(raw)
    return str(ip.ipv4_mapped) if ip.ipv4_mapped is not None else str(ip)


_V4_MAPPED = bytes(10) + b"\xff\xff"  # ::ffff:0:0/96 (RFC 4291 section 2.5.5.2)


def _secs(ns: int | None) -> float | None:
    return None if ns is None else ns / 1e9


def direction_report(res: ConnectionResult, d: int, duration_s: float, view: vantage.Vantage, fit: GilbertElliott | None) -> DirectionReport:
    """One direction's section; ``fit`` is its Gilbert-Elliott fit (see :func:`connection_report`)."""
    st, peer = res.counts[d], res.counts[1 - d]
    throughput = st.unique_bytes / duration_s if duration_s > 0 else None
    scale_used = res.window_scale_in_use
    return DirectionReport(
        name=Dir(d).label,
        total_packets=st.packets,
        ack_packets=st.ack_packets,
        pure_acks=st.pure_acks,
        sack_packets=st.sack_packets,
        dsack_packets=st.dsack_packets,
        max_sack_blocks=st.max_sack_blocks,
        empty_sack_options=st.empty_sack_options,
        unique_bytes=st.unique_bytes,
        data_packets=st.data_packets,
        data_bytes=st.data_bytes,
        rexmit_packets=st.rexmit_packets,
        rexmit_bytes=st.rexmit_bytes,
        syn_rexmits=st.syn_rexmits,
        fin_rexmits=st.fin_rexmits,
        out_of_order_packets=st.out_of_order,
        zero_window_probes=st.zwnd_probes,
        zero_window_probe_bytes=st.zwnd_probe_bytes,
        pushed_packets=st.pushed,
        syn_count=st.syn_count,
        fin_count=st.fin_count,
        rst_count=st.rst_count,
        duplicate_acks=st.dupacks,
        triple_duplicate_acks=st.triple_dupacks,
        zero_window_advertisements=st.zero_windows,
        window_min=st.window_min,
        window_max=st.window_max,
        window_mean=st.window_mean,
        window_scale=None if scale_used is None else ((st.wscale or 0) if scale_used else 0),
        mss=st.mss,
        sack_permitted=st.sack_permitted,
        timestamps=st.ts_option,
        max_segment=st.max_seg,
        min_segment=st.min_seg,
        mean_segment=st.data_bytes / st.data_packets if st.data_packets else None,
        oversize_segments=st.oversize_segments,
        rtt_ms=Summary.of(res.rtt[d].samples.array(), 1e-6),
        rtt_ts_ms=Summary.of(res.rtt[d].ts_samples.array(), 1e-6),
        throughput_Bps=throughput,
        first_packet=_secs(st.first_ns),
        last_packet=_secs(st.last_ns),
        idle_max_ms=st.idle_max_ns / 1e6,
        snd_una=st.snd_una,
        snd_max=st.snd_max,
        isn_seen=st.syn_seen,
        vantage=view.for_direction(d),
        loss=summarize(
            res.loss[d], throughput_Bps=throughput, mss=peer.mss or st.max_seg or None, data_packets=st.data_packets,
            peer_acks=peer.ack_packets, gilbert_elliott=fit,
        ),
    )


def connection_report(res: ConnectionResult, fits: tuple[GilbertElliott | None, GilbertElliott | None]) -> ConnectionReport:
    """One connection's section. ``fits`` are the Gilbert-Elliott fits of its two directions'
    loss sequences, made by the caller
    (:func:`~tcpsack_analyze.loss.patterns.fit_gilbert_elliott_all`, one call for a group of
    connections)."""
    first, last = res.first_ns, res.last_ns
    duration = (last - first) / 1e9
    min_ab, min_ba = res.rtt[0].samples.min(), res.rtt[1].samples.min()
    view = vantage.infer(
        res.syn_ns,
        res.synack_ns,
        res.hs_ack_ns,
        None if min_ab is None else min_ab / 1e6,
        None if min_ba is None else min_ba / 1e6,
    )
    return ConnectionReport(
        id=res.id,
        epoch=res.epoch,
        a_addr=format_addr(res.a_addr),
        a_port=res.a_port,
        b_addr=format_addr(res.b_addr),
        b_port=res.b_port,
        ip_version=res.ipver,
        state=res.state,
        first_packet=first / 1e9,
        last_packet=last / 1e9,
        duration_s=duration,
        total_packets=res.packets,
        vlan_tagged_packets=res.vlan_tagged,
        out_of_order_timestamps=res.backwards_timestamps,
        vantage=view,
        a2b=direction_report(res, 0, duration, view, fits[0]),
        b2a=direction_report(res, 1, duration, view, fits[1]),
    )


def capture_info(status: ReadStatus, tcp_packets: int) -> CaptureInfo:
    c = status.counts
    return CaptureInfo(
        path=status.path,
        format=status.format,
        compressed=status.compressed,
        records=c.records,
        tcp_packets=tcp_packets,
        non_ip=c.non_ip,
        non_tcp=c.non_tcp,
        ip_fragments=c.ip_fragments,
        truncated_tcp=c.truncated_tcp,
        malformed=c.malformed,
        filtered_out=c.filtered_out,
        unsupported_linktype=dict(c.unsupported_linktype),
        complete=status.complete,
        error=str(status.error) if status.error else None,
        warnings=status.warnings(),
        out_of_order_timestamps=status.time.backwards,
        largest_backward_step_s=status.time.largest_backward_ns / 1e9,
        absurd_timestamps=status.time.absurd,
        clock_jumps=status.time.jumps,
    )
