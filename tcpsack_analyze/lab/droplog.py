"""The emulator's drop log: one record per frame the link emulator discarded.

The emulator appends one JSON object per line as it drops (so a crash loses nothing already
dropped); the runner copies the records into ``truth.json`` (``drops``). Times are on the
capture clock (CLOCK_REALTIME seconds, the clock of pcap timestamps): the kernel's receive
timestamp of the frame at the emulator, taken a few microseconds after a sender-side capture
saw the same frame (or, for a drop ``downstream`` of a mid capture point, after the mid capture
saw it).

A run with a mid capture point (``lab run --capture mid``, or an upstream section) has two
sections of path in each direction: sender -> mid point (``upstream``) and mid point ->
receiver (``downstream``), and each record says in which one the frame was dropped (``where``).
Runs without a mid point leave ``where`` out (None), as every run did before mid points existed.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from tcpsack_analyze.lab.wire import Segment, flags_text

__all__ = ["DOWNSTREAM", "REASONS", "UPSTREAM", "Drop", "read_drops", "write_drop"]

REASONS = ("loss", "queue")
"""``loss``: the direction's loss model (TCP data segments only); ``queue``: the bottleneck's
drop-tail queue was full (any frame)."""

UPSTREAM = "upstream"
"""``where`` of a drop between the sender and the mid capture point (the capture never saw it)."""
DOWNSTREAM = "downstream"
"""``where`` of a drop between the mid capture point and the receiver (the capture saw it)."""


@dataclass(frozen=True, slots=True)
class Drop:
    """One dropped frame. TCP fields are None for a frame that is not IPv4/TCP; ``where`` is
    :data:`UPSTREAM` or :data:`DOWNSTREAM` of the mid capture point, None without one."""

    t: float
    direction: str
    reason: str
    frame_len: int
    src: str | None = None
    dst: str | None = None
    sport: int | None = None
    dport: int | None = None
    seq: int | None = None
    ack: int | None = None
    len: int | None = None
    flags: str | None = None
    where: str | None = None

    @classmethod
    def of(cls, t: float, direction: str, reason: str, frame_len: int, seg: Segment | None,
           where: str | None = None) -> Drop:
        """The record for a frame of ``frame_len`` bytes decoded (or not) as ``seg``, dropped
        ``where`` (None on a path without a mid point)."""
        if reason not in REASONS:
            raise ValueError(f"drop reason must be one of {REASONS}, not {reason!r}")
        if where not in (None, UPSTREAM, DOWNSTREAM):
            raise ValueError(f"drop place must be {UPSTREAM!r}, {DOWNSTREAM!r} or None, not {where!r}")
        if seg is None:
            return cls(t, direction, reason, frame_len, where=where)
        return cls(
            t, direction, reason, frame_len, seg.src, seg.dst, seg.sport, seg.dport,
            seg.seq, seg.ack, seg.payload_len, flags_text(seg.flags), where,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this record (the ``drops`` entries of ``truth.json``); ``where``
        only when the path has a mid point, so runs without one read as they always did."""
        out = asdict(self)
        if self.where is None:
            del out["where"]
        return out

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> Drop:
        """Inverse of :meth:`to_dict`; unknown keys are an error, missing TCP fields None."""
        return cls(**obj)


def write_drop(stream: IO[str], drop: Drop) -> None:
    """Append one record as a JSON line and flush, so the log survives a killed emulator."""
    stream.write(json.dumps(drop.to_dict(), separators=(",", ":")) + "\n")
    stream.flush()


def read_drops(path: Path) -> list[Drop]:
    """All records of a JSON-lines drop log, in the order they were written."""
    with path.open() as f:
        return [Drop.from_dict(json.loads(line)) for line in f if line.strip()]
