"""The pipeline: read -> flows -> per-connection state -> report.

:func:`analyze` is what the ``report`` command runs and what a notebook calls. It streams the
capture: memory holds one batch of packets plus the state of the connections seen, not the file.
Keeping the per-packet table (``packets=True``) is the one thing that grows with the file; it is
off by default and meant for notebooks.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from tcpsack_analyze.connection import Connection
from tcpsack_analyze.flows import DEFAULT_REUSE_SILENCE_S, FlowTable
from tcpsack_analyze.loss.summary import combine
from tcpsack_analyze.loss.tracker import LossResult
from tcpsack_analyze.reader import DEFAULT_CHUNK, PacketBatch, ReadStatus, read_capture
from tcpsack_analyze.report.model import CaptureReport, capture_info, connection_report, format_addr

PACKET_COLUMNS = ("index", "time", "conn", "dir", "flags", "seq", "ack", "win", "len", "nsack")


@dataclass
class Analysis:
    """The result of :func:`analyze`: the report, plus tables for notebooks."""

    report: CaptureReport
    _packets: pd.DataFrame | None = None
    loss: dict[tuple[int, str], LossResult] = field(default_factory=dict)  # (conn id, "a2b"/"b2a")

    @property
    def connections(self) -> list:
        return self.report.connections

    def connections_df(self) -> pd.DataFrame:
        """One row per connection and direction, with every numeric field of the report."""
        rows = []
        for c in self.report.connections:
            for d in (c.a2b, c.b2a):
                row = {"conn": c.id, "epoch": c.epoch, "a": f"{c.a_addr}:{c.a_port}", "b": f"{c.b_addr}:{c.b_port}", "state": c.state}
                for k, v in asdict(d).items():
                    if isinstance(v, dict):
                        row.update({f"{k}_{kk}": vv for kk, vv in v.items()})
                    else:
                        row[k] = v
                rows.append(row)
        return pd.DataFrame(rows)

    def packets_df(self) -> pd.DataFrame:
        """One row per TCP packet (needs ``analyze(..., packets=True)``); raw 32-bit seq/ack."""
        if self._packets is None:
            raise ValueError("per-packet table not kept: call analyze(path, packets=True)")
        return self._packets


def analyze(
    path: str,
    filter: str | None = None,  # noqa: A002 - the name users expect
    *,
    packets: bool = False,
    reuse_silence_s: float = DEFAULT_REUSE_SILENCE_S,
    chunk_bytes: int = DEFAULT_CHUNK,
) -> Analysis:
    """Analyse a capture file (``-`` for stdin) and return its report.

    ``filter`` is a BPF expression in tcpdump syntax, applied by libpcap. Raises
    :class:`~tcpsack_analyze.errors.CaptureError` when nothing could be read; when only a prefix
    was readable, the report covers it and ``report.capture.complete`` is False.
    """
    status = ReadStatus(path)
    table = FlowTable(Connection, reuse_silence_s)
    pkt_parts: list[dict[str, np.ndarray]] = []
    tcp_packets = 0
    for batch in read_capture(path, status, filter, chunk_bytes):
        tcp_packets += len(batch)
        conn_of = np.empty(len(batch), dtype=np.int64) if packets else None
        dir_of = np.empty(len(batch), dtype=np.int64) if packets else None
        for conn, rows in table.split(batch):
            conn.consume(batch, rows)  # type: ignore[attr-defined]
            if conn_of is not None and dir_of is not None:
                conn_of[rows] = conn.id  # type: ignore[attr-defined]
                dir_of[rows] = conn._direction_of(batch, rows)  # type: ignore[attr-defined]
        if packets:
            pkt_parts.append(_packet_columns(batch, conn_of, dir_of))  # type: ignore[arg-type]
    # number connections by their first packet, so ids do not depend on how the file was batched
    live = sorted((c for c in table.connections if c.packets), key=lambda c: c.first_index)  # type: ignore[attr-defined]
    renumber = {c.id: i for i, c in enumerate(live)}  # type: ignore[attr-defined]
    for c in live:
        c.id = renumber[c.id]  # type: ignore[attr-defined]
    per_conn = {c.id: tuple(c.loss_results()) for c in live}  # type: ignore[attr-defined]
    loss = {(cid, r.name): r for cid, pair in per_conn.items() for r in pair}
    conns = [connection_report(c, per_conn[c.id]) for c in live]  # type: ignore[attr-defined, arg-type]
    totals = combine(
        list(loss.values()),
        [c.a2b.duplicate_acks + c.b2a.duplicate_acks for c in conns],
        sum(1 for c in conns for d in (c.a2b, c.b2a) if d.data_packets),
    )
    report = CaptureReport(capture=capture_info(status, tcp_packets), connections=conns, loss=totals)
    table_df = None
    if packets:
        table_df = pd.DataFrame({k: np.concatenate([p[k] for p in pkt_parts]) if pkt_parts else [] for k in PACKET_COLUMNS})
        table_df["conn"] = table_df["conn"].map(renumber)
    return Analysis(report, table_df, loss)


def _packet_columns(batch: PacketBatch, conn_of: np.ndarray, dir_of: np.ndarray) -> dict[str, np.ndarray]:
    return {
        "index": batch.index,
        "time": batch.ts_ns / 1e9,
        "conn": conn_of,
        "dir": dir_of,
        "flags": batch.flags,
        "seq": batch.seq,
        "ack": batch.ack,
        "win": batch.win,
        "len": batch.paylen,
        "nsack": batch.opts.nsack,
    }


__all__ = ["analyze", "Analysis", "format_addr"]
