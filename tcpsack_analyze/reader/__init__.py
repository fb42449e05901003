"""Capture reading: file formats, link layers, IP/TCP decoding, BPF filters.

``read_capture`` streams a capture as :class:`PacketBatch` chunks, so memory is bounded by the
chunk size, not the file size. Problems that stop reading are recorded in
:class:`ReadStatus` (with the file offset) after the batches of the readable prefix have been
yielded, so callers can still report that prefix and say the capture was incomplete.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader.bpf import BpfFilter
from tcpsack_analyze.reader.clock import AnalysisClock, TimeCounts
from tcpsack_analyze.reader.decode import DecodeCounts, PacketBatch, decode_batch
from tcpsack_analyze.reader.heap import release_free_pages
from tcpsack_analyze.reader.pcap import is_pcap_magic, iter_pcap
from tcpsack_analyze.reader.pcapng import is_pcapng_magic, iter_pcapng
from tcpsack_analyze.reader.source import ByteSource

__all__ = ["CaptureError", "DecodeCounts", "PacketBatch", "ReadStatus", "TimeCounts", "read_capture"]

DEFAULT_CHUNK = 16 * 1024 * 1024


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


def read_capture(
    path: str, status: ReadStatus, bpf: str | None = None, chunk_bytes: int = DEFAULT_CHUNK
) -> Iterator[PacketBatch]:
    """Yield the TCP packets of ``path`` (``-`` for stdin) in batches, in file order.

    Their ``ts_ns`` are analysis times, not the raw timestamps: non-decreasing and bounded
    (``status.clock``, :mod:`~tcpsack_analyze.reader.clock`), with what was wrong with the raw
    ones counted in ``status.time``.

    Errors that make the file unreadable from the start raise :class:`CaptureError`; errors
    after some records were read end the iteration and are stored in ``status.error``.

    Before decoding the next chunk, the heap's free pages are returned to the system
    (:mod:`~tcpsack_analyze.reader.heap`). A consumer that drops its batch before asking for
    the next one (``del batch`` at the end of the loop body) lets that batch's arrays go too:
    the 1M-packet benchmark report peaks at 193 MB with it and 221 MB without.
    """
    flt = BpfFilter(bpf) if bpf else None
    src = ByteSource(path)
    status.compressed = src.compressed
    try:
        head = src.read(4)
        if src.error is not None and len(head) < 4:
            raise src.error
        if not head:
            raise CaptureError(path, 0, "empty file")
        if is_pcap_magic(head):
            status.format, records = "pcap", iter_pcap(src, head, chunk_bytes)
        elif is_pcapng_magic(head):
            status.format, records = "pcapng", iter_pcapng(src, head, chunk_bytes)
        else:
            raise CaptureError(path, 0, f"not a pcap or pcapng capture (starts with bytes {head.hex()})")
        try:
            for rec in records:
                rec.ts_ns = status.clock.advance(rec.ts_ns)
                batch, counts = decode_batch(rec, flt.matches(rec) if flt else None)
                status.counts.add(counts)
                yield batch
                del batch, rec
                release_free_pages()  # what this chunk and its consumer freed
        except CaptureError as exc:
            if status.counts.records == 0:
                raise
            status.error = exc
    finally:
        src.close()
