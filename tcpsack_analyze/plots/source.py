"""What a figure draws from: one capture's analysis and the events of the directions it shows.

:func:`load` runs :func:`~tcpsack_analyze.analysis.analyze` on a capture, chooses the
directions that carry data (all of them, or those of one connection and/or one direction), and
collects their event streams (:mod:`~tcpsack_analyze.events`) in one more pass over the capture,
for all chosen directions at once. The plots read nothing else: every mark they draw is an
event, a loss record or a figure of the report.

Bad choices raise :class:`PlotError` with a one-line message: a connection the capture does not
have, or a choice that leaves no direction with data.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tcpsack_analyze.analysis import Analysis, analyze, stream_events
from tcpsack_analyze.events import Dir, EventBatch
from tcpsack_analyze.loss.tracker import LossResult
from tcpsack_analyze.reader import DEFAULT_CHUNK
from tcpsack_analyze.report.model import ConnectionReport, DirectionReport

__all__ = ["CaptureData", "DirectionData", "PlotError", "capture_name", "load"]


class PlotError(ValueError):
    """A figure cannot be drawn as asked; the message is one line meant for the user."""


@dataclass(frozen=True)
class DirectionData:
    """One direction of one connection: its report, loss records and (when loaded) events.

    Times on every figure are seconds since the connection's first packet (``start_ns``);
    sequence numbers are relative to the direction's ISN, as in the events and loss records.
    """

    capture: str
    conn: ConnectionReport
    direction: Dir
    report: DirectionReport
    loss: LossResult
    start_ns: int
    events: EventBatch | None = None

    @property
    def mss(self) -> int:
        """The sender's segment size: the receiver's MSS option, else the largest payload
        seen (as the loss summary uses it); 1 for a direction without either."""
        peer = self.conn.b2a if self.direction is Dir.A2B else self.conn.a2b
        return peer.mss or self.report.max_segment or 1

    @property
    def name(self) -> str:
        """The capture, connection and direction, as figure titles name them."""
        return f"{capture_name(self.capture)}, connection {self.conn.id} ({self.conn.label}), {self.direction.label}"

    def seconds(self, ns: np.ndarray | int) -> np.ndarray:
        """Capture times (ns since the epoch) as seconds since the connection's first packet."""
        return (np.asarray(ns, dtype=np.int64) - self.start_ns) / 1e9

    def require_events(self) -> EventBatch:
        if self.events is None:
            raise ValueError(f"{self.name}: events were not loaded (load(..., events=True))")
        return self.events


@dataclass(frozen=True)
class CaptureData:
    """A capture's analysis and the directions chosen for a figure, in connection order."""

    path: str
    analysis: Analysis
    directions: list[DirectionData] = field(default_factory=list)

    def busiest(self) -> DirectionData:
        """The chosen direction with the most data packets (a single-direction figure's default)."""
        return max(self.directions, key=lambda d: (d.report.data_packets, -d.conn.id))


def load(path: str, conn: int | None = None, direction: str | Dir | None = None, *, events: bool = True,
         until_s: float | None = None) -> CaptureData:
    """Analyse ``path`` and keep the directions with data of connection ``conn`` (all when None)
    and ``direction`` (both when None); with ``events`` also read their event streams, up to
    ``until_s`` seconds after the chosen connections' first packets when given (the second pass
    then stops there; the analysis always reads the whole capture).

    Raises :class:`PlotError` for an unknown connection or when no chosen direction has data,
    :class:`~tcpsack_analyze.errors.CaptureError` when the capture cannot be read.
    """
    want = None if direction is None else Dir.parse(direction)
    analysis = analyze(path)
    ids = [c.id for c in analysis.report.connections]
    if conn is not None and conn not in ids:
        have = f"connections 0-{max(ids)}" if ids else "no TCP connections"
        raise PlotError(f"{path}: no connection {conn} (the capture has {have})")
    chosen = [
        (c, d) for c in analysis.report.connections for d in Dir
        if (conn is None or c.id == conn) and (want is None or d is want) and _report(c, d).data_packets
    ]
    if not chosen:
        which = "any connection" if conn is None else f"connection {conn}"
        raise PlotError(f"{path}: no data sent in {'either direction' if want is None else want.label} of {which}")
    until_ns = None if until_s is None else max(analysis.conn_start_ns[c.id] for c, _ in chosen) + round(until_s * 1e9)
    streams = events_of_directions(path, [(c.id, d) for c, d in chosen], until_ns) if events else {}
    return CaptureData(path, analysis, [
        DirectionData(path, c, d, _report(c, d), analysis.loss[(c.id, d.label)], analysis.conn_start_ns[c.id], streams.get((c.id, d)))
        for c, d in chosen
    ])


def events_of_directions(path: str, keys: Iterable[tuple[int, Dir]], until_ns: int | None = None) -> dict[tuple[int, Dir], EventBatch]:
    """The event streams of several (connection id, direction) pairs, in one pass over ``path``
    (:func:`~tcpsack_analyze.analysis.stream_events`); with ``until_ns``, the pass stops after the
    first batch of packets that lies wholly past that time (the streams then end somewhere after
    it, and hold everything before it).

    :func:`tcpsack_analyze.events_of` gives one direction per pass; a figure of several
    connections would read the capture once per connection with it.
    """
    parts: dict[tuple[int, Dir], list[EventBatch]] = {k: [] for k in keys}
    for cid, pair in stream_events(path, until_ns=until_ns, chunk_bytes=DEFAULT_CHUNK):
        for d in Dir:
            if (cid, d) in parts:
                parts[(cid, d)].append(pair[d])
    return {k: EventBatch.concat(v) for k, v in parts.items()}


def capture_name(path: str) -> str:
    """A capture as figures name it: its file name with its folder (lab captures are all
    called sender.pcap; the folder says which run)."""
    p = Path(path)
    return f"{p.parent.name}/{p.name}" if p.parent.name else p.name


def _report(c: ConnectionReport, d: Dir) -> DirectionReport:
    return c.a2b if d is Dir.A2B else c.b2a
