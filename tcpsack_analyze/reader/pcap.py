"""Classic libpcap files: both byte orders, microsecond and nanosecond timestamps.

Format: https://datatracker.ietf.org/doc/draft-ietf-opsawg-pcap/ . The record headers are
walked with a tight Python loop (only the captured length is needed to find the next record);
every other header field is then gathered for the whole chunk at once with numpy.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np

from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader.fields import padded, u32
from tcpsack_analyze.reader.linklayer import SUPPORTED
from tcpsack_analyze.reader.records import RecordBatch
from tcpsack_analyze.reader.source import ByteSource

MAGIC_USEC = 0xA1B2C3D4
MAGIC_NSEC = 0xA1B23C4D
MAX_SNAPLEN = 262144  # libpcap's MAXIMUM_SNAPLEN: larger records are corrupt, as libpcap says


def is_pcap_magic(head: bytes) -> bool:
    if len(head) < 4:
        return False
    return {struct.unpack("<I", head[:4])[0], struct.unpack(">I", head[:4])[0]} & {MAGIC_USEC, MAGIC_NSEC} != set()


def iter_pcap(src: ByteSource, head: bytes, chunk_bytes: int) -> Iterator[RecordBatch]:
    """Yield batches of records; raise :class:`CaptureError` where the file stops making sense.

    Batches for the readable prefix are yielded before the error is raised, so a caller can
    report what was read.
    """
    hdr = head + src.read(24 - len(head))
    if src.error is not None:
        raise src.error
    if len(hdr) < 24:
        raise CaptureError(src.path, len(hdr), "truncated pcap file header")
    endian = "<" if struct.unpack("<I", hdr[:4])[0] in (MAGIC_USEC, MAGIC_NSEC) else ">"
    magic, _vmaj, _vmin, _zone, _sigfigs, snaplen, network = struct.unpack(endian + "IHHiIII", hdr)
    nsec = magic == MAGIC_NSEC
    linktype = network & 0xFFFF
    if linktype not in SUPPORTED:
        # one link type for the whole file: none of its records could be decoded
        raise CaptureError(src.path, 20, f"unsupported link type {linktype} in the pcap file header")
    limit = max(snaplen, MAX_SNAPLEN)
    big = endian == ">"
    caplen_at = struct.Struct(endian + "I").unpack_from

    leftover = b""
    base = 24  # stream offset of leftover[0]
    index = 0
    while True:
        data = src.read(chunk_bytes)
        eof = len(data) < chunk_bytes
        chunk = leftover + data if leftover else data
        n = len(chunk)
        starts: list[int] = []
        push = starts.append
        pos = 0
        error: CaptureError | None = None
        while pos + 16 <= n:
            cl = caplen_at(chunk, pos + 8)[0]
            if cl > limit:
                error = CaptureError(
                    src.path, base + pos, f"record length {cl} exceeds the maximum of {limit} bytes: corrupt record header"
                )
                break
            nxt = pos + 16 + cl
            if nxt > n:
                break
            push(pos)
            pos = nxt
        if starts:
            buf = padded(chunk)
            hdr_pos = np.asarray(starts, dtype=np.int64)
            sec = u32(buf, hdr_pos, big)
            frac = u32(buf, hdr_pos + 4, big)
            caplen = u32(buf, hdr_pos + 8, big)
            wirelen = u32(buf, hdr_pos + 12, big)
            count = len(starts)
            yield RecordBatch(
                buf=buf,
                start=hdr_pos + 16,
                caplen=caplen,
                wirelen=wirelen,
                ts_ns=sec * 1_000_000_000 + (frac if nsec else frac * 1000),
                linktype=np.full(count, linktype, dtype=np.int32),
                file_offset=hdr_pos + base,
                first_index=index,
            )
            index += count
        if error is not None:
            raise error
        leftover = chunk[pos:]
        base += pos
        if eof:
            src.end_of_records(leftover, base, "record header" if len(leftover) < 16 else "record data")
            return
