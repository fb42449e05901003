"""Rendering a :class:`CaptureReport` as text (tcptrace-like columns), JSON or CSV.

The JSON document is the report as a dict, as ``dataclasses.asdict`` gives it (``schema_version``
included), with ``connections`` first and one connection per line; its fields are documented in
``docs/report.md``. CSV has one row per connection and direction (the same rows as
``Analysis.connections_df()``: nested fields flattened to ``loss_rtd_ms_median`` and the like).
JSON and CSV are written by :func:`write_json` and :func:`write_csv` from a stream of connection
reports as they come (``analysis.stream_report``), so a report of many connections is never held
whole; ``render_json``/``render_csv`` are the same writers into a string.
The text report gives each connection tcptrace-like a->b / b->a columns, its loss section
(DOMAIN.md sections 4-9) below them, and the loss totals of the capture at the end.
"""
from __future__ import annotations

import csv
import io
import itertools
import json
import math
import operator
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TextIO

from tcpsack_analyze.loss import records as rec
from tcpsack_analyze.loss.patterns import GilbertElliott
from tcpsack_analyze.loss.summary import LossSummary, LossTotals
from tcpsack_analyze.report.model import SCHEMA_VERSION, CaptureInfo, CaptureReport, ConnectionReport, DirectionReport

if TYPE_CHECKING:
    from tcpsack_analyze.models.section import SenderSection
from tcpsack_analyze.stats import Summary

Row = tuple[str, str, str]
SUMMARY_STATS = ("min", "median", "mean", "p90", "p99", "max")  # the order the loss rows give them in


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


def _share(v: float | None) -> str:
    return "NA" if v is None else f"{100 * v:.1f}%"


def _prob(v: float | None) -> str:
    return "NA" if v is None else f"{v:.5f}"


def _counts(d: dict[str, int], keys: tuple[str, ...]) -> str:
    return "/".join(str(d.get(k, 0)) for k in keys)


def _histogram(h: dict[int, int], width: int = 16) -> str:
    """``length:count`` pairs, cut to ``width`` characters (the JSON has them all)."""
    if not h:
        return "-"
    text = ",".join(f"{k}:{v}" for k, v in sorted(h.items()))
    return text if len(text) <= width else text[: width - 3].rsplit(",", 1)[0] + ",.."


def _summary_rows(label: str, sa: Summary, sb: Summary, names: tuple[str, ...]) -> list[Row]:
    out = [(f"{label} samples", str(sa.count), str(sb.count))]
    out += [(f"{label} {name}", _num(getattr(sa, name), "ms"), _num(getattr(sb, name), "ms")) for name in names]
    return out


def _rows(a: DirectionReport, b: DirectionReport) -> list[Row]:
    def pair(label: str, f: Callable[[DirectionReport], Any], unit: str = "") -> Row:
        return (label, _num(f(a), unit), _num(f(b), unit))

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
    rows += _summary_rows("RTT", a.rtt_ms, b.rtt_ms, ("min", "mean", "max", "stddev"))
    rows += _summary_rows("RTT (TS)", a.rtt_ts_ms, b.rtt_ts_ms, ("min", "mean", "max", "stddev"))
    rows.append(pair("vantage", lambda d: d.vantage))
    return rows


def _gilbert(g: GilbertElliott | None, what: str) -> str:
    return "NA" if g is None else f"{getattr(g, what):.4f}"


def _rto_sequence(ms: tuple[float, ...]) -> str:
    """Timer intervals in ms as "424/824/../13056": the first two and the last (the JSON has all)."""
    parts = [f"{x:.0f}" for x in ms]
    return "/".join(parts if len(parts) <= 3 else [*parts[:2], "..", parts[-1]]) or "-"


def _loss_rows(a: DirectionReport, b: DirectionReport) -> list[Row]:
    """The loss section of both directions (DOMAIN.md sections 4-9), one figure a row."""
    la, lb = a.loss, b.loss

    def pair(label: str, f: Callable[[LossSummary], Any]) -> Row:
        return (label, f(la), f(lb))

    def num(label: str, f: Callable[[LossSummary], Any], unit: str = "") -> Row:
        return (label, _num(f(la), unit), _num(f(lb), unit))

    def ge(label: str, what: str) -> Row:
        return pair(label, lambda s: _gilbert(s.pattern.gilbert_elliott or s.pattern.gilbert, what))

    rows = [
        num("retransmissions", lambda s: s.retransmissions),
        pair("rexmt fast/early", lambda s: _counts(s.by_trigger, (rec.FAST, rec.EARLY))),
        pair("rexmt recov/rto/tlp", lambda s: _counts(s.by_trigger, (rec.RECOVERY, rec.RTO, rec.TLP))),
        pair("rexmt other/ambig.", lambda s: _counts(s.by_trigger, (rec.OTHER, rec.AMBIGUOUS))),
        pair("state Recov/Loss/Open", lambda s: _counts(s.sender_state, ("Recovery", "Loss", "Open"))),
        pair("state unknown", lambda s: _counts(s.sender_state, ("unknown",))),
        pair("spurious dsack/eifel", lambda s: _counts(s.spurious, (rec.SPURIOUS_DSACK, rec.SPURIOUS_EIFEL))),
        pair("spurious early/acked", lambda s: _counts(s.spurious, (rec.SPURIOUS_EARLY_ACK, rec.SPURIOUS_ACKED))),
        num("max rec.RTO backoff", lambda s: s.max_rto_backoff),
        pair("RTO sequence ms", lambda s: _rto_sequence(s.rto_sequence_ms)),
        pair("RTO growth", lambda s: (s.rto_backoff or "-").replace("linear_then_exponential", "lin.>exp.")),
        num("network duplicates", lambda s: s.network_duplicates),
        num("reorderings", lambda s: s.reorderings),
        pair("fills rexmt/reord/?", lambda s: _counts(s.fills, ("retransmission", "reordering", rec.AMBIGUOUS))),
        num("recovery episodes", lambda s: s.episodes),
        pair("episodes fast/early", lambda s: _counts(s.episodes_by_trigger, (rec.FAST, rec.EARLY))),
        pair("episodes rto/tlp/?", lambda s: _counts(s.episodes_by_trigger, (rec.RTO, rec.TLP, rec.AMBIGUOUS))),
        pair("ended full/rto/undone", lambda s: _counts(s.episodes_ended, ("full_ack", "rto", "undone"))),
        pair("ended at capture end", lambda s: _counts(s.episodes_ended, ("end_of_capture",))),
        num("SACK-only recoveries", lambda s: s.episodes_sack_without_rto),
        num("episode median", lambda s: s.episode_duration_ms.median, "ms"),
        num("episode max", lambda s: s.episode_duration_ms.max, "ms"),
    ]
    rows += _summary_rows("RTD", la.rtd_ms, lb.rtd_ms, SUMMARY_STATS)
    rows += _summary_rows("rec.RTO RTD", la.rto_rtd_ms, lb.rto_rtd_ms, ("median", "max"))
    rows += _summary_rows("rexmt latency", la.latency_rexmit_ms, lb.latency_rexmit_ms, SUMMARY_STATS)
    rows += _summary_rows("ACK latency", la.latency_ack_ms, lb.latency_ack_ms, SUMMARY_STATS)
    rows += [
        num("loss incidents", lambda s: s.incidents),
        num("lost transmissions", lambda s: s.lost_transmissions),
        pair("lost down/upstream", lambda s: f"{s.lost_downstream}/{s.lost_upstream}"),
        pair("thin time share", lambda s: _share(s.thin_time_share)),
        pair("thin loss share", lambda s: _share(s.thin_loss_share)),
        pair("losses from", lambda s: s.pattern_from or "-"),
        num("data transmissions", lambda s: s.pattern.segments),
        pair("loss rate P", lambda s: _prob(s.pattern.P)),
        num("loss events", lambda s: s.pattern.loss_events),
        pair("event rate P'", lambda s: _prob(s.pattern.P_prime)),
        pair("events grouped by", lambda s: s.pattern.events_by),
        num("bursts", lambda s: s.pattern.bursts),
        pair("burst mean/max", lambda s: f"{_num(s.pattern.burst_mean)}/{_num(s.pattern.burst_max)}"),
        pair("burst len:count", lambda s: _histogram(s.pattern.burst_histogram)),
        pair("losses/event:count", lambda s: _histogram(s.pattern.losses_per_event_histogram)),
        pair("isolated share", lambda s: _share(s.pattern.isolated_share)),
        pair("GE fit", lambda s: "NA" if (g := s.pattern.gilbert_elliott or s.pattern.gilbert) is None else g.method),
        ge("GE p good->bad", "p"),
        ge("GE r bad->good", "r"),
        ge("GE loss good", "loss_good"),
        ge("GE loss bad", "loss_bad"),
        num("delayed ACKs", lambda s: s.delayed_acks),
        num("event RTT (SRTT)", lambda s: s.events_rtt_ms, "ms"),
        num("Mathis model", lambda s: s.mathis_Bps, "Bps"),
        pair("achieved of Mathis", lambda s: "NA" if s.mathis_achieved_pct is None else f"{s.mathis_achieved_pct:.1f}%"),
    ]
    return rows


def _columns(rows: list[Row]) -> str:
    return "".join(f"     {label + ':':<22}{va:>12}      {label + ':':<22}{vb:>12}\n" for label, va, vb in rows)


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
    w(_columns(_rows(c.a2b, c.b2a)))
    w(f"   {'a->b loss:':<34}{'b->a loss:'}\n")
    w(_columns(_loss_rows(c.a2b, c.b2a)))
    if c.a2b.sender is not None or c.b2a.sender is not None:
        w(f"   {'a->b sender:':<34}{'b->a sender:'}\n")
        w(_columns(_sender_rows(c.a2b, c.b2a)))
    return out.getvalue()


def _sender_rows(a: DirectionReport, b: DirectionReport) -> list[Row]:
    """The sender section (report --sender): best model, cwnd, limiting factor, falling edges."""
    def pair(label: str, f: Callable[[SenderSection], Any]) -> Row:
        return (label, *(("-" if d.sender is None else f(d.sender)) for d in (a, b)))  # type: ignore[return-value]

    def seg(key: str) -> Callable[[SenderSection], str]:
        return lambda s: "NA" if s.cwnd_segments is None else f"{s.cwnd_segments[key]:.1f} seg"

    def limit(key: str) -> Callable[[SenderSection], str]:
        return lambda s: _share(None if s.limiting is None else s.limiting.get(key, 0.0))

    return [
        pair("best model", lambda s: s.best or ("no fit" if s.status == "ok" else "none")),
        pair("confidence", lambda s: f"{s.confidence:.2f}"),
        pair("conformance", lambda s: _share(s.conformance)),
        pair("cwnd min", seg("min")),
        pair("cwnd median", seg("median")),
        pair("cwnd max", seg("max")),
        pair("limited by cwnd", limit("cwnd")),
        pair("limited by rwnd", limit("receive window")),
        pair("limited by app", limit("application")),
        pair("falling edges", lambda s: _num(s.falling_edges)),
    ]


def _summary_line(s: Summary, unit: str = "ms", of: str = "samples") -> str:
    if s.count == 0:
        return f"no {of}"
    return f"{s.count} {of}; " + ", ".join(f"{name} {_num(getattr(s, name))}" for name in SUMMARY_STATS) + f" {unit}".rstrip()


def totals_text(t: LossTotals) -> str:
    """The capture's loss totals: samples pooled over its connections (DOMAIN.md section 5)."""
    triggers = ", ".join(f"{k} {t.by_trigger.get(k, 0)}" for k in (rec.FAST, rec.EARLY, rec.RECOVERY, rec.RTO, rec.TLP, rec.OTHER, rec.AMBIGUOUS))
    lines = [
        ("directions with data", str(t.directions_with_data)),
        ("with retransmissions", str(t.directions_with_retransmissions)),
        ("retransmissions", f"{t.retransmissions} ({triggers})"),
        ("RTD", _summary_line(t.rtd_ms)),
        ("ACK latency", _summary_line(t.latency_ack_ms)),
        ("dupACKs per conn", _summary_line(t.dupacks_per_connection, "", "connections")),
        ("conns without dupACKs", str(t.connections_without_dupacks)),
        ("thin loss share", _share(t.thin_loss_share)),
    ]
    return "loss totals (all connections, samples pooled):\n" + "".join(f"\t{k + ':':<24}{v}\n" for k, v in lines)


def render_text(report: CaptureReport) -> str:
    cap = report.capture
    head = [
        (f"{cap.path}: {cap.format}{' (gzip)' if cap.compressed else ''}, {cap.records} records, {cap.tcp_packets} TCP packets, "
         f"{len(report.connections)} TCP connections"),
    ]
    skipped = [f"{n} {what}" for n, what in ((cap.non_ip, "non-IP"), (cap.non_tcp, "non-TCP"), (cap.ip_fragments, "IP fragments"),
                                               (cap.truncated_tcp, "truncated"), (cap.malformed, "malformed"), (cap.filtered_out, "filtered out")) if n]
    if skipped:
        head.append("not analysed: " + ", ".join(skipped))
    parts = ["\n".join(head) + "\n"]
    parts += [connection_text(c) for c in report.connections]
    parts.append(totals_text(report.loss))
    return "================================\n".join(parts)


def render_json(report: CaptureReport) -> str:
    out = io.StringIO()
    write_json(iter(report.connections), lambda: (report.capture, report.loss), out)
    return out.getvalue()


def render_csv(report: CaptureReport) -> str:
    out = io.StringIO()
    write_csv(iter(report.connections), out)
    return out.getvalue()


# ------------------------------------------------------------------ streaming (issue 16)
# A capture of many connections is written as its connections are finished: the writers take an
# iterator of connection reports (``analysis.ReportStream``, or a report's list) and write each at
# once, so the output is never held whole. ``render_json``/``render_csv`` are these writers into a
# string, so a streamed report is the same text as one rendered from a whole CaptureReport.

def write_json(connections: Iterator[ConnectionReport], rest: Callable[[], tuple[CaptureInfo, LossTotals]], out: TextIO) -> None:
    """The JSON document of ``report --format json``: the :class:`CaptureReport` as a dict
    (``dataclasses.asdict``), with ``connections`` first, one connection per line, written as
    each comes; ``capture``, ``loss`` and ``schema_version`` follow, from ``rest()`` once the
    connections are exhausted. Nothing is written before the first connection (or the end) is
    known, so a capture that cannot be read writes nothing. Compact lines, not an indented
    tree: json's C encoder writes them (indenting takes its pure-Python path, half the time of
    a report of many short connections) and a line is a connection for ``grep`` and ``jq``."""
    first = next(connections, None)
    out.write('{"connections": [')
    if first is not None:
        sep = "\n"
        for conn in itertools.chain((first,), connections):
            out.write(sep + json.dumps(conn, default=_plain))
            sep = ",\n"
        out.write("\n")
    capture, totals = rest()
    tail = {"capture": capture, "loss": totals, "schema_version": SCHEMA_VERSION}
    out.write("],\n" + json.dumps(tail, default=_plain)[1:] + "\n")


def _plain(value: Any) -> Any:
    """The ``default`` of :func:`json.dumps`: a dataclass as a dict of its fields in order (what
    ``dataclasses.asdict`` gives, without its deep copies: the report's leaves are immutable);
    json's C encoder does the rest, and calls this again for the dataclasses inside; anything
    else as its ``str``, as before. Called about 22 times per connection, so each class's
    fields are read by one ``attrgetter`` made once (:func:`_fields_of`), not a getattr each."""
    cls = type(value)
    of = _FIELDS[cls] if cls in _FIELDS else _FIELDS.setdefault(cls, _fields_of(cls))
    if of is None:
        return str(value)
    names, get = of
    return dict(zip(names, get(value)))


def _fields_of(cls: type) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]] | None:
    """A dataclass's field names in order and a function of an instance giving their values
    (None for anything else)."""
    fields = getattr(cls, "__dataclass_fields__", None)
    if fields is None:
        return None
    names = tuple(fields)
    if len(names) == 1:
        return names, lambda v: (getattr(v, names[0]),)
    return names, operator.attrgetter(*names)


_FIELDS: dict[type, tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]] | None] = {}  # _fields_of by class


def write_csv(connections: Iterator[ConnectionReport], out: TextIO) -> None:
    """One row per connection and direction (the columns of ``Analysis.connections_df()``),
    written as the connections come; the header is the first row's columns (every row has the
    same: ``analysis._flatten`` gives every count key and every fit field a column). Values are
    written as Python gives them (an integer stays ``5`` in a column with empty cells)."""
    from tcpsack_analyze.analysis import connection_rows

    writer: csv.DictWriter | None = None
    for conn in connections:
        for row in connection_rows(conn):
            if writer is None:
                writer = csv.DictWriter(out, fieldnames=list(row), quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
                writer.writeheader()
            writer.writerow(row)
    if writer is None:
        out.write("\n")


RENDERERS = {"text": render_text, "json": render_json, "csv": render_csv}
STREAMED = {"json", "csv"}  # formats ``report`` writes as the connections are finished
