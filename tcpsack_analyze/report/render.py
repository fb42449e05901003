"""Rendering a :class:`CaptureReport` as text (tcptrace-like columns), JSON or CSV.

The JSON document is ``dataclasses.asdict`` of the report plus ``schema_version``; its fields are
documented in ``docs/report.md``. CSV has one row per connection and direction (the same rows as
``Analysis.connections_df()``).
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict
from datetime import datetime, timezone

from tcpsack_analyze.report.model import CaptureReport, ConnectionReport, DirectionReport
from tcpsack_analyze.stats import Summary


def _ts(t: float | None) -> str:
    if t is None:
        return "-"
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC") if 0 <= t < 253402300800 else f"{t:.6f}"


def _num(v: object, unit: str = "") -> str:
    if v is None:
        return "NA"
    if isinstance(v, bool):
        return "Y" if v else "N"
    if isinstance(v, float):
        if math.isnan(v):
            return "NA"
        return f"{v:.1f}{(' ' + unit) if unit else ''}"
    return f"{v}{(' ' + unit) if unit else ''}"


def _rows(a: DirectionReport, b: DirectionReport) -> list[tuple[str, str, str]]:
    def pair(label: str, f, unit: str = "") -> tuple[str, str, str]:  # type: ignore[no-untyped-def]
        return (label, _num(f(a), unit), _num(f(b), unit))

    def rtt(label: str, getter) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
        sa: Summary = getter(a)
        sb: Summary = getter(b)
        out = [(f"{label} samples", str(sa.count), str(sb.count))]
        for name in ("min", "mean", "max", "stddev"):
            out.append((f"{label} {name}", _num(getattr(sa, name), "ms"), _num(getattr(sb, name), "ms")))
        return out

    rows = [
        pair("total packets", lambda d: d.total_packets),
        pair("ack pkts sent", lambda d: d.ack_packets),
        pair("pure acks sent", lambda d: d.pure_acks),
        pair("sack pkts sent", lambda d: d.sack_packets),
        pair("dsack pkts sent", lambda d: d.dsack_packets),
        pair("max sack blks/ack", lambda d: d.max_sack_blocks),
        pair("unique bytes sent", lambda d: d.unique_bytes),
        pair("actual data pkts", lambda d: d.data_packets),
        pair("actual data bytes", lambda d: d.data_bytes),
        pair("rexmt data pkts", lambda d: d.rexmit_packets),
        pair("rexmt data bytes", lambda d: d.rexmit_bytes),
        pair("rexmt SYN/FIN pkts", lambda d: f"{d.syn_rexmits}/{d.fin_rexmits}"),
        pair("zwnd probe pkts", lambda d: d.zero_window_probes),
        pair("outoforder pkts", lambda d: d.out_of_order_packets),
        pair("pushed data pkts", lambda d: d.pushed_packets),
        pair("SYN/FIN/RST pkts", lambda d: f"{d.syn_count}/{d.fin_count}/{d.rst_count}"),
        pair("duplicate acks", lambda d: d.duplicate_acks),
        pair("triple dupacks", lambda d: d.triple_duplicate_acks),
        pair("mss requested", lambda d: d.mss, "bytes"),
        pair("sack permitted", lambda d: d.sack_permitted),
        pair("timestamps", lambda d: d.timestamps),
        pair("window scale", lambda d: "unknown" if d.window_scale is None else d.window_scale),
        pair("max segm size", lambda d: d.max_segment, "bytes"),
        pair("min segm size", lambda d: d.min_segment, "bytes"),
        pair("avg segm size", lambda d: d.mean_segment, "bytes"),
        pair("segs > MSS (TSO/GRO)", lambda d: d.oversize_segments),
        pair("max win adv", lambda d: d.window_max, "bytes"),
        pair("min win adv", lambda d: d.window_min, "bytes"),
        pair("avg win adv", lambda d: d.window_mean, "bytes"),
        pair("zero win adv", lambda d: d.zero_window_advertisements, "times"),
        pair("idletime max", lambda d: d.idle_max_ms, "ms"),
        pair("throughput", lambda d: d.throughput_Bps, "Bps"),
    ]
    rows += rtt("RTT", lambda d: d.rtt_ms)
    rows += rtt("RTT (TS)", lambda d: d.rtt_ts_ms)
    rows.append(pair("vantage", lambda d: d.vantage))
    return rows


def connection_text(c: ConnectionReport) -> str:
    out = io.StringIO()
    w = out.write
    w(f"TCP connection {c.id}{f' (epoch {c.epoch})' if c.epoch else ''}:\n")
    w(f"\thost a:        {c.a_addr}:{c.a_port}\n\thost b:        {c.b_addr}:{c.b_port}\n")
    w(f"\tstate:         {c.state}\n")
    w(f"\tfirst packet:  {_ts(c.first_packet)}\n\tlast packet:   {_ts(c.last_packet)}\n")
    w(f"\telapsed time:  {c.duration_s:.6f} s\n\ttotal packets: {c.total_packets}\n")
    w(f"\tvantage:       {c.vantage.position} ({c.vantage.method}: {c.vantage.evidence})\n")
    w(f"   {'a->b:':<34}{'b->a:'}\n")
    for label, va, vb in _rows(c.a2b, c.b2a):
        w(f"     {label + ':':<22}{va:>12}      {label + ':':<22}{vb:>12}\n")
    return out.getvalue()


def render_text(report: CaptureReport) -> str:
    cap = report.capture
    head = [
        f"{cap.path}: {cap.format}{' (gzip)' if cap.compressed else ''}, {cap.records} records, {cap.tcp_packets} TCP packets, "
        f"{len(report.connections)} TCP connections",
    ]
    skipped = [f"{n} {what}" for n, what in ((cap.non_ip, "non-IP"), (cap.non_tcp, "non-TCP"), (cap.ip_fragments, "IP fragments"),
                                               (cap.truncated_tcp, "truncated"), (cap.malformed, "malformed"), (cap.filtered_out, "filtered out")) if n]
    if skipped:
        head.append("not analysed: " + ", ".join(skipped))
    parts = ["\n".join(head) + "\n"]
    parts += [connection_text(c) for c in report.connections]
    return "================================\n".join(parts)


def render_json(report: CaptureReport) -> str:
    return json.dumps(asdict(report), indent=1, default=str)


def render_csv(report: CaptureReport) -> str:
    from tcpsack_analyze.analysis import Analysis

    df = Analysis(report).connections_df()
    buf = io.StringIO()
    df.to_csv(buf, index=False, quoting=csv.QUOTE_MINIMAL)
    return buf.getvalue()


RENDERERS = {"text": render_text, "json": render_json, "csv": render_csv}
