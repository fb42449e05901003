"""Classic libpcap files: both byte orders, microsecond and nanosecond timestamps.

Format: https://datatracker.ietf.org/doc/draft-ietf-opsawg-pcap/ . The record headers are
walked by a small sequential kernel (``walk.py``: interpreted for small captures, compiled with
numba for large ones), which needs only the captured length to find the next record; every
other header field is then gathered for the whole chunk at once with numpy.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np

from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader.fields import gather, u32
from tcpsack_analyze.reader.linklayer import SUPPORTED
from tcpsack_analyze.reader.records import RecordBatch
from tcpsack_analyze.reader.source import ByteSource
from tcpsack_analyze.reader.walk import HOST_BIG_ENDIAN, Mode, pcap_walk

MAGIC_USEC = 0xA1B2C3D4
MAGIC_NSEC = 0xA1B23C4D
MAX_SNAPLEN = 262144  # libpcap's MAXIMUM_SNAPLEN: larger records are corrupt, as libpcap says
# the record header, by byte order (big endian: True)
RECORD_HEADER = {
    big: np.dtype([(name, (">" if big else "<") + "u4") for name in ("sec", "frac", "caplen", "wirelen")])
    for big in (False, True)
}


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
    swap = big != HOST_BIG_ENDIAN

    carry = np.empty(0, dtype=np.uint8)  # the unfinished record at the end of the last chunk
    base = 24  # stream offset of the current chunk's first byte
    index = 0
    mode = Mode(pcap_walk, src.size)
    while True:
        buf, n, eof = src.chunk(carry, chunk_bytes)
        hdr_pos = np.empty(n // 16, dtype=np.int64)  # record header offsets: at most one per 16 bytes
        count = pos = 0
        while True:
            room = mode.room(hdr_pos, count)
            k, pos, too_long = pcap_walk(mode.compiled, buf, pos, n, swap, limit, room)
            count += k
            if too_long or k < len(room) or count == len(hdr_pos):
                break
            mode.update(index + count, base + pos)
        mode.update(index + count, base + pos)
        if count:
            hdr_pos = hdr_pos[:count]
            rh = gather(buf, hdr_pos, RECORD_HEADER[big])
            sec = rh["sec"].astype(np.int64)
            frac = rh["frac"].astype(np.int64)
            yield RecordBatch(
                buf=buf,
                start=hdr_pos + 16,
                caplen=rh["caplen"].astype(np.int64),
                wirelen=rh["wirelen"].astype(np.int64),
                ts_ns=sec * 1_000_000_000 + (frac if nsec else frac * 1000),
                linktype=np.full(count, linktype, dtype=np.int32),
                file_offset=hdr_pos + base,
                first_index=index,
            )
            index += count
        if too_long:
            cl = int(u32(buf, np.array([pos + 8]), big)[0])
            raise CaptureError(src.path, base + pos, f"record length {cl} exceeds the maximum of {limit} bytes: corrupt record header")
        carry = buf[pos:n]
        base += pos
        if eof:
            src.end_of_records(carry, base, "record header" if len(carry) < 16 else "record data")
            return
