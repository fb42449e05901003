"""pcapng files: sections of either byte order, several interfaces with their own link types and
timestamp resolutions, Enhanced/Simple/obsolete Packet Blocks; other blocks are skipped.

Format: https://datatracker.ietf.org/doc/draft-ietf-opsawg-pcapng/ . Blocks are walked in
Python (each carries its own header fields), then records are batched like classic pcap.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader.fields import padded
from tcpsack_analyze.reader.records import RecordBatch
from tcpsack_analyze.reader.source import ByteSource

SHB = 0x0A0D0D0A
IDB = 0x00000001
OPB = 0x00000002
SPB = 0x00000003
EPB = 0x00000006
BYTE_ORDER_MAGIC = 0x1A2B3C4D
# smallest valid length of each block type: header, fixed fields and trailing length
MIN_BLOCK = {SHB: 28, IDB: 20, EPB: 32, OPB: 32, SPB: 16}
MAX_BLOCK = 64 * 1024 * 1024  # no sane block is larger; beyond this the length field is corrupt


@dataclass
class _Interface:
    linktype: int
    snaplen: int
    units_per_sec: int  # timestamp units per second (if_tsresol)
    offset_s: int  # if_tsoffset, seconds


def is_pcapng_magic(head: bytes) -> bool:
    return len(head) >= 4 and struct.unpack("<I", head[:4])[0] == SHB


def _parse_idb(body: bytes, e: str) -> _Interface:
    linktype, _res, snaplen = struct.unpack_from(e + "HHI", body, 0)
    units = 1_000_000
    offset_s = 0
    pos = 8
    while pos + 4 <= len(body):
        code, length = struct.unpack_from(e + "HH", body, pos)
        if code == 0:
            break
        value = body[pos + 4 : pos + 4 + length]
        if code == 9 and length >= 1:  # if_tsresol
            v = value[0]
            units = 2 ** (v & 0x7F) if v & 0x80 else 10**v
        elif code == 14 and length >= 8:  # if_tsoffset
            offset_s = struct.unpack(e + "q", value[:8])[0]
        pos += 4 + ((length + 3) & ~3)
    return _Interface(linktype, snaplen, units, offset_s)


def _to_ns(units: int, iface: _Interface) -> int:
    per = iface.units_per_sec
    if per == 1_000_000_000:
        ns = units
    elif 1_000_000_000 % per == 0:
        ns = units * (1_000_000_000 // per)
    else:
        ns = units * 1_000_000_000 // per
    ns += iface.offset_s * 1_000_000_000
    # nonsense timestamps (some files hold values near 2**64 units) are clamped to int64
    return min(max(ns, -(2**63)), 2**63 - 1)


def iter_pcapng(src: ByteSource, head: bytes, chunk_bytes: int) -> Iterator[RecordBatch]:
    """Yield batches of packet records; raise :class:`CaptureError` at the first corrupt block."""
    leftover = head
    base = 0
    index = 0
    e = "<"
    ifaces: list[_Interface] = []
    seen_shb = False
    while True:
        data = src.read(chunk_bytes)
        eof = len(data) < chunk_bytes
        chunk = leftover + data if leftover else data
        n = len(chunk)
        starts: list[int] = []
        caplens: list[int] = []
        wirelens: list[int] = []
        stamps: list[int] = []
        links: list[int] = []
        offsets: list[int] = []
        pos = 0
        error: CaptureError | None = None
        while pos + 12 <= n:
            btype = struct.unpack_from(e + "I", chunk, pos)[0]
            if btype == SHB or not seen_shb:
                if btype != SHB and struct.unpack_from("<I", chunk, pos)[0] != SHB:
                    error = CaptureError(src.path, base + pos, "pcapng file does not start with a Section Header Block")
                    break
                bom = struct.unpack_from("<I", chunk, pos + 8)[0]
                if bom == BYTE_ORDER_MAGIC:
                    e = "<"
                elif struct.unpack_from(">I", chunk, pos + 8)[0] == BYTE_ORDER_MAGIC:
                    e = ">"
                else:
                    error = CaptureError(src.path, base + pos + 8, "bad byte-order magic in pcapng Section Header Block")
                    break
                seen_shb = True
                ifaces = []  # interface ids are per section
            blen = struct.unpack_from(e + "I", chunk, pos + 4)[0]
            if blen < MIN_BLOCK.get(btype, 12) or blen % 4 or blen > MAX_BLOCK:
                error = CaptureError(src.path, base + pos, f"corrupt pcapng block (type 0x{btype:08x}, length {blen})")
                break
            if pos + blen > n:
                break
            if struct.unpack_from(e + "I", chunk, pos + blen - 4)[0] != blen:
                error = CaptureError(
                    src.path, base + pos, f"corrupt pcapng block (type 0x{btype:08x}): trailing length does not match"
                )
                break
            body = pos + 8
            if btype == IDB:
                ifaces.append(_parse_idb(chunk[body : pos + blen - 4], e))
            elif btype in (EPB, OPB):
                if btype == EPB:
                    if_id, hi, lo, cl, wl = struct.unpack_from(e + "IIIII", chunk, body)
                else:
                    if_id, _drops, hi, lo, cl, wl = struct.unpack_from(e + "HHIIII", chunk, body)
                if if_id >= len(ifaces):
                    error = CaptureError(src.path, base + pos, f"packet block names interface {if_id}, which was never described")
                    break
                if 32 + cl > blen:
                    error = CaptureError(src.path, base + pos, f"packet block captured length {cl} overruns its block")
                    break
                iface = ifaces[if_id]
                starts.append(body + 20)
                caplens.append(cl)
                wirelens.append(wl)
                stamps.append(_to_ns((hi << 32) | lo, iface))
                links.append(iface.linktype)
                offsets.append(base + pos)
            elif btype == SPB:
                if not ifaces:
                    error = CaptureError(src.path, base + pos, "simple packet block before any interface description")
                    break
                wl = struct.unpack_from(e + "I", chunk, body)[0]
                cl = min(wl, blen - 16, ifaces[0].snaplen or wl)
                starts.append(body + 4)
                caplens.append(cl)
                wirelens.append(wl)
                stamps.append(0)  # SPBs carry no timestamp
                links.append(ifaces[0].linktype)
                offsets.append(base + pos)
            pos += blen
        if starts:
            count = len(starts)
            yield RecordBatch(
                buf=padded(chunk),
                start=np.asarray(starts, dtype=np.int64),
                caplen=np.asarray(caplens, dtype=np.int64),
                wirelen=np.asarray(wirelens, dtype=np.int64),
                ts_ns=np.asarray(stamps, dtype=np.int64),
                linktype=np.asarray(links, dtype=np.int32),
                file_offset=np.asarray(offsets, dtype=np.int64),
                first_index=index,
            )
            index += count
        if error is not None:
            raise error
        leftover = chunk[pos:]
        base += pos
        if eof:
            src.end_of_records(leftover, base, "pcapng block")
            return
