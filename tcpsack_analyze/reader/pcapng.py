"""pcapng files: sections of either byte order, several interfaces with their own link types and
timestamp resolutions, Enhanced/Simple/obsolete Packet Blocks; other blocks are skipped.

Format: https://datatracker.ietf.org/doc/draft-ietf-opsawg-pcapng/ . Packet blocks (and blocks
to skip) are walked by a small sequential kernel (``walk.py``: interpreted for small captures,
compiled with numba for large ones) that stops at every Section Header and Interface
Description Block and at anything corrupt, which are handled (and reported) block by block in
Python; the fields of the packet blocks are then gathered with numpy, a section at a time.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader.fields import be16, gather, le16
from tcpsack_analyze.reader.records import RecordBatch
from tcpsack_analyze.reader.source import ByteSource
from tcpsack_analyze.reader.walk import HOST_BIG_ENDIAN, Kernel, Mode

SHB = 0x0A0D0D0A
IDB = 0x00000001
OPB = 0x00000002
SPB = 0x00000003
EPB = 0x00000006
BYTE_ORDER_MAGIC = 0x1A2B3C4D
# smallest valid length of each block type: header, fixed fields and trailing length
MIN_PACKET_BLOCK = 32  # EPB and obsolete PB
MIN_SPB = 16
MIN_BLOCK = {SHB: 28, IDB: 20, EPB: MIN_PACKET_BLOCK, OPB: MIN_PACKET_BLOCK, SPB: MIN_SPB}
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


SAFE = 2**61  # bound on the terms of the vectorised timestamp conversion (no int64 overflow)


def _to_ns_array(units: np.ndarray, iface: _Interface) -> np.ndarray:
    """:func:`_to_ns` of every value of ``units`` (uint64): in int64 where no term can overflow,
    with :func:`_to_ns` itself for the other (nonsense) values."""
    per = iface.units_per_sec
    off = iface.offset_s * 1_000_000_000
    if per <= SAFE // 1_000_000_000 and abs(off) < SAFE:  # then r * 1e9 below, and off, are < SAFE
        q, r = np.divmod(units, np.uint64(per))  # units = q * per + r: ns = q * 1e9 + r * 1e9 // per
        safe = q < SAFE // 1_000_000_000
        ns = q.astype(np.int64) * 1_000_000_000 + r.astype(np.int64) * 1_000_000_000 // per + off
    else:
        safe = np.zeros(units.shape[0], dtype=bool)
        ns = np.zeros(units.shape[0], dtype=np.int64)
    for i in np.nonzero(~safe)[0]:
        ns[i] = _to_ns(int(units[i]), iface)
    return ns


def _pcapng_walk(w32, pos, n, big, swap, n_ifaces, out):
    """Walk the blocks of one section in bytes ``[pos, n)`` of the buffer read through ``w32``
    (see ``walk.py``), storing the offset of each packet block (EPB, SPB, obsolete PB) in
    ``out``; other blocks are stepped over. ``big``: the section is big-endian; ``swap``: its
    byte order is not the host's.

    Returns (blocks stored, offset where the walk stopped). It stops at the end of the data, when
    ``out`` is full and before any block it does not take: a Section Header Block or Interface
    Description Block (they change the walk's state) or a block that is incomplete or corrupt.
    The caller's per-block code (``_one_block``) handles those, and reports the corrupt ones.
    """

    def bswap(x):
        return ((x >> 24) & 0xFF) | ((x >> 8) & 0xFF00) | ((x & 0xFF00) << 8) | ((x & 0xFF) << 24)

    k = 0
    cap = len(out)
    while pos + 12 <= n and k < cap:
        btype = w32[pos & 3][pos >> 2]
        i = pos + 4
        blen = w32[i & 3][i >> 2]
        if swap:
            btype = bswap(btype)
            blen = bswap(blen)
        if btype == SHB or btype == IDB:
            break
        packet = btype == EPB or btype == OPB
        if blen < (MIN_PACKET_BLOCK if packet else MIN_SPB if btype == SPB else 12) or blen % 4 != 0 or blen > MAX_BLOCK:
            break
        if pos + blen > n:
            break
        i = pos + blen - 4
        trailer = w32[i & 3][i >> 2]
        if (bswap(trailer) if swap else trailer) != blen:
            break
        if packet:
            i = pos + 8
            if_id = w32[i & 3][i >> 2]
            i = pos + 20
            cl = w32[i & 3][i >> 2]
            if swap:
                if_id = bswap(if_id)
                cl = bswap(cl)
            if btype == OPB:  # a 16-bit interface id, then 16 bits of drop count
                if_id = if_id >> 16 if big else if_id & 0xFFFF
            if if_id >= n_ifaces or 32 + cl > blen:
                break
            out[k] = pos
            k += 1
        elif btype == SPB:
            if n_ifaces == 0:
                break
            out[k] = pos
            k += 1
        pos += blen
    return k, pos


# break-even: ~1.3 us per record interpreted, against ~0.7 s to import numba and load the kernel
pcapng_walk = Kernel(_pcapng_walk, compile_after=500_000)


@dataclass
class _Section:
    """The state of the walk: byte order and interfaces of the current section."""

    e: str = "<"
    ifaces: list[_Interface] = field(default_factory=list)
    seen_shb: bool = False


def _one_block(src: ByteSource, buf: np.ndarray, pos: int, n: int, base: int, sec: _Section) -> tuple[int, _Section] | None:
    """Handle the block at ``pos`` that :func:`_pcapng_walk` stopped at: return the offset of the
    next block and the section state after this block (a new one after a Section Header Block),
    None when the block is not wholly in ``buf[:n]``, or raise the block's error.

    Only Section Header and Interface Description Blocks, and corrupt blocks, come here.
    """
    chunk = buf.data[:n]
    btype = struct.unpack_from(sec.e + "I", chunk, pos)[0]
    if btype == SHB or not sec.seen_shb:
        if btype != SHB and struct.unpack_from("<I", chunk, pos)[0] != SHB:
            raise CaptureError(src.path, base + pos, "pcapng file does not start with a Section Header Block")
        bom = struct.unpack_from("<I", chunk, pos + 8)[0]
        if bom == BYTE_ORDER_MAGIC:
            e = "<"
        elif struct.unpack_from(">I", chunk, pos + 8)[0] == BYTE_ORDER_MAGIC:
            e = ">"
        else:
            raise CaptureError(src.path, base + pos + 8, "bad byte-order magic in pcapng Section Header Block")
        sec = _Section(e, [], True)  # interface ids are per section
    e = sec.e
    blen = struct.unpack_from(e + "I", chunk, pos + 4)[0]
    if blen < MIN_BLOCK.get(btype, 12) or blen % 4 or blen > MAX_BLOCK:
        raise CaptureError(src.path, base + pos, f"corrupt pcapng block (type 0x{btype:08x}, length {blen})")
    if pos + blen > n:
        return None
    if struct.unpack_from(e + "I", chunk, pos + blen - 4)[0] != blen:
        raise CaptureError(src.path, base + pos, f"corrupt pcapng block (type 0x{btype:08x}): trailing length does not match")
    body = pos + 8
    if btype == IDB:
        sec.ifaces.append(_parse_idb(bytes(chunk[body : pos + blen - 4]), e))
    elif btype in (EPB, OPB):
        if btype == EPB:
            if_id, _hi, _lo, cl, _wl = struct.unpack_from(e + "IIIII", chunk, body)
        else:
            if_id, _drops, _hi, _lo, cl, _wl = struct.unpack_from(e + "HHIIII", chunk, body)
        if if_id >= len(sec.ifaces):
            raise CaptureError(src.path, base + pos, f"packet block names interface {if_id}, which was never described")
        if 32 + cl > blen:
            raise CaptureError(src.path, base + pos, f"packet block captured length {cl} overruns its block")
        raise AssertionError(f"pcapng walker stopped at a valid packet block at offset {base + pos}")
    elif btype == SPB:
        if not sec.ifaces:
            raise CaptureError(src.path, base + pos, "simple packet block before any interface description")
        raise AssertionError(f"pcapng walker stopped at a valid simple packet block at offset {base + pos}")
    elif btype != SHB:
        raise AssertionError(f"pcapng walker stopped at a valid block of type 0x{btype:08x} at offset {base + pos}")
    return pos + blen, sec


def _records(buf: np.ndarray, blocks: np.ndarray, sec: _Section) -> tuple[np.ndarray, ...]:
    """(start, caplen, wirelen, ts_ns, linktype) of the packet blocks at offsets ``blocks``, all
    of one section (their checks were made by the walk)."""
    big = sec.e == ">"
    u32 = gather(buf, blocks, np.dtype([(f, sec.e + "u4") for f in ("type", "len", "f0", "f1", "f2", "f3", "f4")]))
    btype = u32["type"]
    spb = btype == SPB
    n_ifaces = len(sec.ifaces)
    if_id = np.where(btype == EPB, u32["f0"], be16(buf, blocks + 8) if big else le16(buf, blocks + 8)).astype(np.int64)
    if_id[spb] = 0
    linktypes = np.array([i.linktype for i in sec.ifaces] or [0], dtype=np.int32)
    start = blocks + 28
    caplen = u32["f3"].astype(np.int64)
    wirelen = u32["f4"].astype(np.int64)
    ts_ns = np.zeros(blocks.shape[0], dtype=np.int64)
    units = (u32["f1"].astype(np.uint64) << np.uint64(32)) | u32["f2"].astype(np.uint64)
    for i in range(n_ifaces):
        rows = np.nonzero((if_id == i) & ~spb)[0]
        if rows.size:
            ts_ns[rows] = _to_ns_array(units[rows], sec.ifaces[i])
    if spb.any():  # SPB: the wire length, then the packet; the captured length is implied
        rows = np.nonzero(spb)[0]
        start[rows] = blocks[rows] + 12
        wl = u32["f0"][rows].astype(np.int64)
        cl = np.minimum(wl, u32["len"][rows].astype(np.int64) - 16)
        snap = sec.ifaces[0].snaplen
        caplen[rows] = np.minimum(cl, snap) if snap else cl
        wirelen[rows] = wl
    return start, caplen, wirelen, ts_ns, linktypes[if_id]


def iter_pcapng(src: ByteSource, head: bytes, chunk_bytes: int) -> Iterator[RecordBatch]:
    """Yield batches of packet records; raise :class:`CaptureError` at the first corrupt block."""
    carry = np.frombuffer(head, dtype=np.uint8)
    base = 0  # stream offset of the current chunk's first byte
    index = 0
    sec = _Section()
    mode = Mode(pcapng_walk, src.size)
    while True:
        buf, n, eof = src.chunk(carry, chunk_bytes)
        blocks = np.empty(n // 12, dtype=np.int64)  # packet block offsets: at most one per 12 bytes
        # the records of each section: (first, end) into blocks, and the section's state
        runs: list[tuple[int, int, _Section]] = []
        count = pos = 0
        error: CaptureError | None = None
        while True:
            if sec.seen_shb:
                room = mode.room(blocks, count)
                first = count
                big = sec.e == ">"
                k, pos = pcapng_walk(mode.compiled, buf, pos, n, big, big != HOST_BIG_ENDIAN, len(sec.ifaces), room)
                count += k
                if k and runs and runs[-1][2] is sec and runs[-1][1] == first:
                    runs[-1] = (runs[-1][0], count, sec)
                elif k:
                    runs.append((first, count, sec))
                if k and k == len(room):
                    mode.update(index + count, base + pos)
                    continue
            if pos + 12 > n:
                break
            try:
                step = _one_block(src, buf, pos, n, base, sec)
            except CaptureError as exc:
                error = exc
                break
            if step is None:
                break
            pos, sec = step
        mode.update(index + count, base + pos)
        if count:
            parts = [_records(buf, blocks[a:b], s) for a, b, s in runs]
            start, caplen, wirelen, ts_ns, linktype = (np.concatenate(col) for col in zip(*parts))
            yield RecordBatch(
                buf=buf,
                start=start,
                caplen=caplen,
                wirelen=wirelen,
                ts_ns=ts_ns,
                linktype=linktype,
                file_offset=blocks[:count] + base,
                first_index=index,
            )
            index += count
        if error is not None:
            raise error
        carry = buf[pos:n]
        base += pos
        if eof:
            src.end_of_records(carry, base, "pcapng block")
            return
