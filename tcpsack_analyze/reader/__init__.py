"""Capture reading: file formats, link layers, IP/TCP decoding, BPF filters.

The reading and decoding are done by the compiled core (``tcpsack_analyze._core``, the Rust
crate in ``src/``: pcap and pcapng framing, gzip, stdin, link layers, IPv4/IPv6, TCP and its
options, the analysis clock of :mod:`~tcpsack_analyze.reader.clock`, and BPF filters, which it
has libpcap compile and run: :mod:`~tcpsack_analyze.reader.bpf`); this module turns its columns
into :class:`PacketBatch` chunks.

``read_capture`` streams a capture as :class:`PacketBatch` chunks, so memory is bounded by the
chunk size, not the file size. Problems that stop reading are recorded in
:class:`ReadStatus` (with the file offset) after the batches of the readable prefix have been
yielded, so callers can still report that prefix and say the capture was incomplete.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from tcpsack_analyze import _core
from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader.bpf import BpfFilter
from tcpsack_analyze.reader.clock import AnalysisClock, TimeCounts
from tcpsack_analyze.reader.decode import DecodeCounts, PacketBatch
from tcpsack_analyze.reader.heap import release_free_pages
from tcpsack_analyze.reader.options import TcpOptions
from tcpsack_analyze.reader.records import RecordBatch

__all__ = ["CaptureError", "DecodeCounts", "PacketBatch", "ReadStatus", "TimeCounts", "read_capture"]

# Bytes of capture read and decoded at a time. A chunk's packet columns (about 250 bytes a packet)
# and its events are most of a report's peak memory: 16 MB chunks (about 230k packets) peaked at
# 129 MB on the 1M bulk capture and 173 MB on 10M; 2 MB chunks at 68 and 96 MB, in the same or
# less time (0.91 -> 0.82 s, 6.8 -> 5.9 s; benchmarks/README.md). Smaller ones cost time where
# many connections are live (each chunk steps every connection it touches): 1 MB made the
# 2,000-connection capture 1.9 -> 2.3 s.
DEFAULT_CHUNK = 2 * 1024 * 1024


@dataclass
class ReadStatus:
    """How reading went: counts of what was skipped and the error that stopped it, if any."""

    path: str
    format: str = ""
    compressed: bool = False
    counts: DecodeCounts = field(default_factory=DecodeCounts)
    error: CaptureError | None = None
    clock: AnalysisClock = field(default_factory=AnalysisClock)  # the analysis times (reader/clock.py)

    @property
    def time(self) -> TimeCounts:
        """Timestamps that went backwards, absurd ones and clock jumps, over every record read."""
        return self.clock.counts

    @property
    def complete(self) -> bool:
        """True when every record was read and every link type was understood."""
        return self.error is None and not self.counts.unsupported_linktype

    def warnings(self) -> list[str]:
        """One-line warnings about the capture, for reports."""
        out = []
        c = self.counts
        if self.error is not None:
            out.append(f"incomplete capture: {self.error} (the report covers the {c.records} records before it)")
        for lt, n in sorted(c.unsupported_linktype.items()):
            out.append(f"{self.path}: {n} records of unsupported link type {lt} were skipped")
        if c.truncated_tcp:
            out.append(f"{c.truncated_tcp} packets cut inside their IP/TCP header by the snap length were not analysed")
        if c.malformed:
            out.append(f"{c.malformed} packets with impossible TCP/IP header lengths were not analysed")
        if c.ip_fragments:
            out.append(f"{c.ip_fragments} IP fragments were counted but not analysed")
        out.extend(self.time.warnings())
        return out


def open_capture(path: str) -> _core.Reader:
    """The compiled core's reader of ``path`` (``-``: stdin), its file header read; raises :class:`CaptureError`."""
    try:
        return _core.Reader(path)
    except _core.ReadError as exc:
        raise core_error(path, exc) from None


def core_error(path: str, exc: _core.ReadError) -> CaptureError:
    """The core's ReadError (offset or None, message) as the :class:`CaptureError` of ``path``."""
    offset, message = exc.args
    return CaptureError(path, offset, message)


def chunk_records(core: _core.Reader) -> RecordBatch:
    """The records of the core's current chunk, with a copy of the chunk's bytes (for tests and benchmarks)."""
    buf, start, caplen, wirelen, linktype, file_offset = core.records()
    return RecordBatch(buf=buf, start=start, caplen=caplen, wirelen=wirelen, ts_ns=core.timestamps(), linktype=linktype,
                       file_offset=file_offset, first_index=core.first_index)


def read_capture(
    path: str, status: ReadStatus, bpf: str | None = None, chunk_bytes: int = DEFAULT_CHUNK
) -> Iterator[PacketBatch]:
    """Yield the TCP packets of ``path`` (``-`` for stdin) in batches, in file order.

    Their ``ts_ns`` are analysis times, not the raw timestamps: non-decreasing and bounded
    (``status.clock``, :mod:`~tcpsack_analyze.reader.clock`), with what was wrong with the raw
    ones counted in ``status.time``. A batch holds the TCP packets of the records of one chunk
    of about ``chunk_bytes`` bytes of the capture.

    Errors that make the file unreadable from the start raise :class:`CaptureError`; errors
    after some records were read end the iteration and are stored in ``status.error``.

    Before decoding the next chunk, the heap's free pages are returned to the system
    (:mod:`~tcpsack_analyze.reader.heap`). A consumer that drops its batch before asking for
    the next one (``del batch`` at the end of the loop body) lets that batch's arrays go too.
    """
    flt = BpfFilter(bpf) if bpf else None
    core = open_capture(path)
    status.compressed = core.compressed
    status.format = core.format
    while True:
        try:
            if not core.next_chunk(chunk_bytes):
                return
        except _core.ReadError as exc:
            err = core_error(path, exc)
            if status.counts.records == 0:
                raise err from None
            status.error = err
            return
        times = status.clock.advance(core.timestamps())
        try:
            cols, counts = core.decode(flt.core if flt else None)
        except _core.BpfError as exc:  # the expression does not compile for a link type met here
            assert flt is not None
            raise flt.error(exc) from None
        status.counts.add(_counts(counts))
        batch = _batch(cols, times, core.first_index)
        yield batch
        del batch, cols
        release_free_pages()  # what this chunk and its consumer freed


def _counts(c: dict) -> DecodeCounts:
    return DecodeCounts(
        records=c["records"], unsupported_linktype=dict(c["unsupported_linktype"]), non_ip=c["non_ip"], non_tcp=c["non_tcp"],
        ip_fragments=c["ip_fragments"], truncated_tcp=c["truncated_tcp"], malformed=c["malformed"], filtered_out=c["filtered_out"],
    )


def _batch(cols: dict[str, np.ndarray], times: np.ndarray, first_index: int) -> PacketBatch:
    """The :class:`PacketBatch` of the core's columns; ``times``: the analysis times of every record of the chunk."""
    row = cols["row"]
    opts = TcpOptions(**{name: cols[name] for name in (
        "mss", "wscale", "sack_permitted", "tsval", "tsecr", "nsack", "sack", "sack_empty", "truncated", "malformed")})
    return PacketBatch(
        index=row + first_index, ts_ns=times[row], ipver=cols["ipver"], src=cols["src"], dst=cols["dst"], sport=cols["sport"],
        dport=cols["dport"], seq=cols["seq"], ack=cols["ack"], flags=cols["flags"], win=cols["win"], hdrlen=cols["hdrlen"],
        paylen=cols["paylen"], vlan=cols["vlan"], opts=opts,
    )
