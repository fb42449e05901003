"""The pipeline: read -> flows -> per-connection state -> report.

:func:`analyze` is what the ``report`` command runs and what a notebook calls. It streams the
capture: memory holds one batch of packets plus the state of the connections seen, not the file.
Keeping the per-packet table (``packets=True``) is the one thing that grows with the file; it is
off by default and meant for notebooks.

The loss records of each direction (:class:`~tcpsack_analyze.loss.tracker.LossResult`) are kept in
``Analysis.loss`` and offered as tables: ``retransmissions_df()``, ``episodes_df()``,
``incidents_df()``, ``lost_df()``, ``fills_df()`` and ``bursts_df()``. Each has one row per record
with every dataclass field, the derived properties, and each time twice: ``*_ns`` as recorded
(ns since the epoch) and ``*_s`` as float seconds; delays are added in ms (``rtd_ms``, ...).
"""
from __future__ import annotations

import dataclasses
import heapq
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tcpsack_analyze.events import Dir, EventBatch, StreamFacts
from tcpsack_analyze.flowcore import DEFAULT_ABORT_DELAY_S, DEFAULT_CLOSE_DELAY_S, DEFAULT_REUSE_SILENCE_S, FINISHED_GROUP, CoreFlows
from tcpsack_analyze.loss import records as rec
from tcpsack_analyze.loss.patterns import GilbertElliott, bursts, fit_gilbert_elliott_all
from tcpsack_analyze.loss.records import Fill, LossIncident, LostTransmission, RecoveryEpisode, Retransmission
from tcpsack_analyze.loss.summary import LossPool, LossTotals
from tcpsack_analyze.loss.tracker import LossResult
from tcpsack_analyze.reader import DEFAULT_CHUNK, PacketBatch, ReadStatus
from tcpsack_analyze.report.model import CaptureInfo, CaptureReport, ConnectionReport, capture_info, connection_report, format_addr
from tcpsack_analyze.results import ConnectionResult

if TYPE_CHECKING:  # pandas is imported where a table is built: a report does not need it (0.5-1 s)
    import pandas as pd

PACKET_COLUMNS = ("index", "time", "conn", "dir", "flags", "seq", "ack", "win", "len", "nsack")

# The keys each count of a direction's loss section can have: the CSV/DataFrame gets a column for
# every one (0 when absent) rather than only for those that happened to occur.
LOSS_COUNT_KEYS: dict[str, tuple[str, ...]] = {
    "by_trigger": rec.TRIGGERS,
    "sender_state": ("Recovery", "Loss", "Open", "unknown"),
    "spurious": (rec.SPURIOUS_DSACK, rec.SPURIOUS_EIFEL, rec.SPURIOUS_EARLY_ACK, rec.SPURIOUS_ACKED),
    "fills": ("retransmission", "reordering", rec.AMBIGUOUS),
    "episodes_by_trigger": ("fast", "early", "rto", "tlp", rec.AMBIGUOUS),
    "episodes_ended": ("full_ack", "rto", "undone", "end_of_capture"),
}
# Record fields holding a point in time (ns since the epoch); other ``*_ns`` fields are delays.
_POINT_TIMES = ("time_ns", "covered_ns", "opened_ns", "start_ns", "end_ns", "first_ns", "last_rexmit_ns")
# Derived properties of the records, added as columns (delays in ns, converted to ms like the rest).
_DERIVED: dict[type, tuple[str, ...]] = {
    Retransmission: ("length", "ca_state"),
    RecoveryEpisode: ("duration_ns", "sack_finished_without_rto"),
    LossIncident: ("latency_rexmit_ns", "latency_ack_ns"),
}
BURST_COLUMNS = ("conn", "direction", "first_tx", "first_time_ns", "first_time_s", "first_index", "length")


@dataclass
class Analysis:
    """The result of :func:`analyze`: the report, plus tables for notebooks."""

    report: CaptureReport
    _packets: pd.DataFrame | None = None
    loss: dict[tuple[int, str], LossResult] = field(default_factory=dict)  # (conn id, "a2b"/"b2a")
    conn_start_ns: dict[int, int] = field(default_factory=dict)  # conn id -> its first packet's time (ns)

    @property
    def connections(self) -> list:
        return self.report.connections

    def connections_df(self) -> pd.DataFrame:
        """One row per connection and direction, with every numeric field of the report."""
        import pandas as pd

        return pd.DataFrame([row for c in self.report.connections for row in connection_rows(c)])

    # ------------------------------------------------------------------ loss tables
    def _loss_records(self, kind: type, attr: str) -> pd.DataFrame:
        return _records_df(kind, (rec for key in sorted(self.loss) for rec in getattr(self.loss[key], attr)))

    def retransmissions_df(self) -> pd.DataFrame:
        """One row per retransmission (DOMAIN.md section 4): trigger, evidence, RTD, spurious mark."""
        return self._loss_records(Retransmission, "retransmissions")

    def episodes_df(self) -> pd.DataFrame:
        """One row per recovery episode: its trigger, how it ended, its duration."""
        return self._loss_records(RecoveryEpisode, "episodes")

    def incidents_df(self) -> pd.DataFrame:
        """One row per loss incident (a segment repaired), with its two recovery latencies (s. 5)."""
        return self._loss_records(LossIncident, "incidents")

    def lost_df(self) -> pd.DataFrame:
        """One row per lost transmission, downstream or upstream of the capture point (s. 7)."""
        return self._loss_records(LostTransmission, "lost")

    def fills_df(self) -> pd.DataFrame:
        """One row per hole filled below the highest sequence seen (reordering or upstream loss)."""
        return self._loss_records(Fill, "fills")

    def bursts_df(self) -> pd.DataFrame:
        """One row per loss burst per direction (DOMAIN.md section 7): a maximal run of lost data
        transmissions in send order. ``first_tx`` is the position of its first transmission among
        the direction's data transmissions (the originals lost upstream, never seen here, among
        them: LossResult.lost_flags), ``first_time_*`` its send time (for one lost upstream, when
        its hole showed), ``first_index`` its record number (NA when it was not seen here),
        ``length`` b.
        """
        import pandas as pd

        rows = []
        for (cid, name), res in sorted(self.loss.items()):
            runs = bursts(res.lost_flags)
            first_of_run = np.cumsum(np.concatenate(([0], runs[:-1, 1]))) if len(runs) else np.empty(0, np.int64)
            for (pos, length), k in zip(runs.tolist(), first_of_run.tolist()):
                t = int(res.lost_times[k])
                record = int(res.lost_records[k])
                rows.append((cid, name, pos, t, t / 1e9, None if record < 0 else record, length))
        df = pd.DataFrame(rows, columns=list(BURST_COLUMNS))
        df["first_index"] = df["first_index"].astype("Int64")
        return df

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
    close_delay_s: float = DEFAULT_CLOSE_DELAY_S,
    abort_delay_s: float = DEFAULT_ABORT_DELAY_S,
    chunk_bytes: int = DEFAULT_CHUNK,
) -> Analysis:
    """Analyse a capture file (``-`` for stdin) and return its report.

    ``filter`` is a BPF expression in tcpdump syntax, applied by libpcap. Raises
    :class:`~tcpsack_analyze.errors.CaptureError` when nothing could be read; when only a prefix
    was readable, the report covers it and ``report.capture.complete`` is False. The report of
    every connection is kept (with its loss records, for the ``*_df()`` tables); a report too
    large for that is streamed with :func:`stream_report`, which gives the same reports.
    """
    loss: dict[tuple[int, str], LossResult] = {}
    starts: dict[int, int] = {}

    def keep(res: ConnectionResult) -> None:
        loss.update(((res.id, r.name), r) for r in res.loss)
        starts[res.id] = res.first_ns

    stream = stream_report(path, filter, reuse_silence_s=reuse_silence_s, close_delay_s=close_delay_s, abort_delay_s=abort_delay_s,
                           chunk_bytes=chunk_bytes, on_result=keep, packets=packets)
    conns = list(stream)
    report = CaptureReport(capture=stream.capture, connections=conns, loss=stream.totals)
    table_df = None
    if packets:
        import pandas as pd

        parts = stream.packet_parts
        table_df = pd.DataFrame({k: np.concatenate([p[k] for p in parts]) if parts else [] for k in PACKET_COLUMNS})
    return Analysis(report, table_df, loss, starts)


class ReportStream:
    """The reports of a capture's connections as they are finished, in id order (an iterator of
    :class:`~tcpsack_analyze.report.model.ConnectionReport`); once it is exhausted, ``capture``
    and ``totals`` give the rest of the :class:`CaptureReport`.

    Memory holds the live connections' working state, the finished connections' frozen results
    waiting for an older one still live (ids number connections by their first packet, so the
    report of connection 7 waits while connection 3 is open), and what the loss totals pool
    (:class:`~tcpsack_analyze.loss.summary.LossPool`: counts, the RTD and ACK-latency samples) and
    one count per connection.

    The Gilbert-Elliott fits of a connection's loss sequences
    (:func:`~tcpsack_analyze.loss.patterns.fit_gilbert_elliott_all`) are made as its group of
    finished connections comes out, one call for the group: each fit depends on its own sequence
    only, so the reports stream whether or not the capture has losses.
    """

    def __init__(self, pipe: _Pipeline, on_result: Callable[[ConnectionResult], None] | None, packets: bool) -> None:
        self._pipe = pipe
        self._on_result = on_result
        self._packets = packets
        self.packet_parts: list[dict[str, np.ndarray]] = []  # the per-packet table, with ``packets``
        self._pool = LossPool()  # what the capture's loss totals pool
        self._dupacks = array("q")
        self._data_directions = 0
        self._capture: CaptureInfo | None = None
        self._totals: LossTotals | None = None
        self._it = self._reports()

    def __iter__(self) -> Iterator[ConnectionReport]:
        return self._it

    def __next__(self) -> ConnectionReport:
        return next(self._it)

    @property
    def capture(self) -> CaptureInfo:
        if self._capture is None:
            raise RuntimeError("the capture's totals are known once every connection was reported")
        return self._capture

    @property
    def totals(self) -> LossTotals:
        if self._totals is None:
            raise RuntimeError("the capture's totals are known once every connection was reported")
        return self._totals

    def _reports(self) -> Iterator[ConnectionReport]:
        for group in self._pipe.finished_in_order(self._packets, self.packet_parts):
            fits = fit_gilbert_elliott_all([r.lost_flags for res in group for r in res.loss])
            fits.reverse()
            group.reverse()
            while group:
                yield self._report(group.pop(), (fits.pop(), fits.pop()))
            del group
        pipe = self._pipe
        self._totals = self._pool.totals(self._dupacks.tolist(), self._data_directions)
        self._capture = capture_info(pipe.status, pipe.tcp_packets)

    def _report(self, res: ConnectionResult, fits: tuple[GilbertElliott | None, GilbertElliott | None]) -> ConnectionReport:
        """One connection's report; what the loss totals pool is kept."""
        if self._on_result is not None:
            self._on_result(res)
        report = connection_report(res, fits)
        for r in res.loss:
            self._pool.add(r)
        self._dupacks.append(report.a2b.duplicate_acks + report.b2a.duplicate_acks)
        self._data_directions += sum(1 for d in (report.a2b, report.b2a) if d.data_packets)
        return report


def stream_report(
    path: str,
    filter: str | None = None,  # noqa: A002 - the name users expect
    *,
    reuse_silence_s: float = DEFAULT_REUSE_SILENCE_S,
    close_delay_s: float = DEFAULT_CLOSE_DELAY_S,
    abort_delay_s: float = DEFAULT_ABORT_DELAY_S,
    chunk_bytes: int = DEFAULT_CHUNK,
    on_result: Callable[[ConnectionResult], None] | None = None,
    packets: bool = False,
) -> ReportStream:
    """The report of ``path`` connection by connection, as they are finished (:class:`ReportStream`):
    what ``report`` writes for a capture of many connections without holding them all.
    ``on_result`` sees each connection's frozen result before its report is made."""
    pipe = _Pipeline(path, ReadStatus(path), filter, chunk_bytes, reuse_silence_s, (close_delay_s, abort_delay_s))
    return ReportStream(pipe, on_result, packets)


class _Pipeline:
    """Reads a capture through the core's flow table, flow stage, RTT sampler and loss tracker
    (:class:`~tcpsack_analyze.flowcore.CoreFlows`), chunk by chunk; no connection's events cross
    into Python."""

    def __init__(self, path: str, status: ReadStatus, bpf: str | None, chunk_bytes: int, reuse_silence_s: float,
                 delays_s: tuple[float, float] = (DEFAULT_CLOSE_DELAY_S, DEFAULT_ABORT_DELAY_S)) -> None:
        self.status = status
        # (close, abort) delays: src/flow/table.rs
        self.flows = CoreFlows(path, status, bpf, chunk_bytes, reuse_silence_s, delays_s, events=False)

    @property
    def tcp_packets(self) -> int:
        return self.flows.tcp_packets

    def finished_in_order(self, packets: bool, parts: list[dict[str, np.ndarray]]) -> Iterator[list[ConnectionResult]]:
        """The frozen results of the connections, in id order, in groups as they become ready (a
        result waits while a connection with a lower id is live). With ``packets`` the
        per-packet columns of each batch are added to ``parts``."""
        waiting: list[tuple[int, ConnectionResult]] = []  # a heap by id
        next_id = 0
        for chunk in self.flows.chunks():
            if packets and chunk.batch is not None:
                parts.append(_packet_columns(chunk.batch, chunk.row_conn, chunk.row_dir.astype(np.int64)))
            group = []
            for f in chunk.finished:
                heapq.heappush(waiting, (f.id, f))
                while waiting and waiting[0][0] == next_id:
                    group.append(heapq.heappop(waiting)[1])
                    next_id += 1
                if len(group) >= FINISHED_GROUP:  # on before the rest are made
                    yield group
                    group = []
            del chunk
            if group:
                yield group
        assert not waiting, "every connection is finished at the end of the capture"


def stream_events(
    path: str, filter: str | None = None, *, reuse_silence_s: float = DEFAULT_REUSE_SILENCE_S,  # noqa: A002
    close_delay_s: float = DEFAULT_CLOSE_DELAY_S, abort_delay_s: float = DEFAULT_ABORT_DELAY_S, chunk_bytes: int = DEFAULT_CHUNK,
    facts: dict[int, tuple[StreamFacts, StreamFacts]] | None = None, until_ns: int | None = None,
) -> Iterator[tuple[int, tuple[EventBatch, EventBatch]]]:
    """The events of every connection, batch by batch: (connection id, (a2b events, b2a
    events)) for each connection a batch touched, in the order the flow table met them. Only
    the flow stage runs (no RTT or loss stage): memory stays that of the flow state. ``facts``,
    when given, is filled with each connection's :class:`~tcpsack_analyze.events.StreamFacts`
    of both directions as of its latest batch (MSS, origin, handshake turnarounds). With
    ``until_ns`` the pass stops after the first batch whose packets are all later than that
    (the streams then hold everything before it)."""
    flows = CoreFlows(path, ReadStatus(path), filter, chunk_bytes, reuse_silence_s, (close_delay_s, abort_delay_s), stages=False)
    for chunk in flows.chunks():
        if chunk.batch is None:  # the end: the connections still live are not needed here
            return
        beyond = until_ns is not None and len(chunk.batch) > 0 and int(chunk.batch.ts_ns.min()) > until_ns
        touched = chunk.touched
        del chunk
        for t in touched:  # each connection's events are let go before the next's are made
            if facts is not None:
                facts[t.id] = t.facts
            yield t.id, t.events
            del t
        if beyond:
            return


def events_of(
    path: str,
    conn: int = 0,
    direction: str | int | Dir = Dir.A2B,
    filter: str | None = None,  # noqa: A002 - the name users expect
    *,
    reuse_silence_s: float = DEFAULT_REUSE_SILENCE_S,
    close_delay_s: float = DEFAULT_CLOSE_DELAY_S,
    abort_delay_s: float = DEFAULT_ABORT_DELAY_S,
    chunk_bytes: int = DEFAULT_CHUNK,
) -> EventBatch:
    """The events of one direction of one connection of a capture (events.py), as one batch.

    ``conn`` is the connection id of the report; ``direction`` ``"a2b"``/``"b2a"`` (or a
    :class:`~tcpsack_analyze.events.Dir`). Raises :class:`~tcpsack_analyze.errors.CaptureError`
    when nothing could be read and :class:`KeyError` when the capture has no such connection.
    """
    want = Dir.parse(direction)
    flows = CoreFlows(path, ReadStatus(path), filter, chunk_bytes, reuse_silence_s, (close_delay_s, abort_delay_s), stages=False)
    flows.core.set_events_for([conn])  # the others' events stay in the core
    parts = [t.events[want] for chunk in flows.chunks() for t in chunk.touched]
    seen = flows.core.connections
    if not 0 <= conn < seen:
        raise KeyError(f"{path}: no connection {conn} (the capture has {seen})")
    return EventBatch.concat(parts)


def connection_rows(c: ConnectionReport) -> list[dict[str, object]]:
    """The two rows (a2b, b2a) of one connection in ``connections_df()`` and ``report --format csv``."""
    rows = []
    for d in (c.a2b, c.b2a):
        row: dict[str, object] = {"conn": c.id, "epoch": c.epoch, "a": f"{c.a_addr}:{c.a_port}", "b": f"{c.b_addr}:{c.b_port}", "state": c.state}
        _flatten("", d, row)
        rows.append(row)
    return rows


def _flatten(name: str, value: object, row: dict[str, object]) -> None:
    """Nested report fields as flat columns: ``loss_rtd_ms_median``, ``loss_by_trigger_fast``,
    ``loss_pattern_gilbert_elliott_p``. Histograms become one ``"length:count ..."`` string; the
    counts of the loss section get a column for every possible key (0 when absent). A nested
    report object (a dataclass) is read field by field, as the dict ``dataclasses.asdict`` would
    make of it, without its deep copies; ``name`` "" flattens the fields of ``value`` itself."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if not name and isinstance(value, dict):
        for k, v in value.items():
            _flatten(k, v, row)
        return
    if isinstance(value, dict):
        if name.endswith("_histogram"):
            row[name] = " ".join(f"{k}:{v}" for k, v in sorted(value.items()))
            return
        keys = LOSS_COUNT_KEYS.get(name.removeprefix("loss_"), ()) if name.startswith("loss_") else ()
        for k in keys:
            row[f"{name}_{k}"] = value.get(k, 0)
        for k, v in value.items():
            if k not in keys:
                _flatten(f"{name}_{k}", v, row)
    elif value is None and name.endswith(("_gilbert", "_gilbert_elliott")):
        for f in dataclasses.fields(GilbertElliott):
            row[f"{name}_{f.name}"] = None
    else:
        row[name] = value


def _records_df(kind: type, records: Iterable[object]) -> pd.DataFrame:
    """A table of loss records of one kind: their fields, derived properties, times in s and ms."""
    import pandas as pd

    names = [f.name for f in dataclasses.fields(kind)] + list(_DERIVED.get(kind, ()))
    rows = [{n: getattr(rec, n) for n in names} for rec in records]
    df = pd.DataFrame(rows, columns=names)
    for n in names:
        if not n.endswith("_ns"):
            continue
        base = n.removesuffix("_ns")
        values = df[n].astype("Float64")
        if n in _POINT_TIMES:
            df[f"{base}_s"] = values / 1e9
        else:
            df[f"{base}_ms"] = values / 1e6
        df[n] = df[n].astype("Int64")
    for n in ("episode", "first_index", "index"):
        if n in df.columns and kind in (Retransmission, LossIncident, LostTransmission):
            df[n] = df[n].astype("Int64")
    return df


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


__all__ = ["analyze", "events_of", "stream_events", "stream_report", "Analysis", "ReportStream", "format_addr"]
