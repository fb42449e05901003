"""Structure-aware mutations of pcap and pcapng captures, for the fuzz harness (``fuzz/run.py``).

A capture is cut into its file header and its records (pcap) or blocks (pcapng) so that a
mutation can hit what a reader and the analysis rely on: record order, record timestamps,
record lengths, block lengths and types, interface options (timestamp resolution and offset),
and the gzip layer. Each mutation is a plain tuple ``(name, *arguments)`` whose arguments are
integers (drawn by hypothesis in ``run.py``), so a plan of mutations is data: printed with a
finding, it says exactly how the input was made from its seed, and :func:`apply` replays it.

Arguments that pick a position (a record, a byte, a bit) are taken modulo what the capture has,
so any integer is a valid argument and the strategies stay simple.
"""
from __future__ import annotations

import gzip
import random
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass

PCAP_MAGICS = {0xA1B2C3D4: False, 0xA1B23C4D: True}  # magic -> nanosecond timestamps
SHB, IDB, EPB = 0x0A0D0D0A, 0x00000001, 0x00000006
YEAR_S = 365 * 24 * 3600

Mutation = tuple[int | str, ...]


@dataclass
class Capture:
    """A capture cut into pieces: ``head`` (pcap file header, empty for pcapng) and ``items``
    (pcap records with their 16-byte headers, or whole pcapng blocks). ``tail`` keeps any bytes
    after the last whole piece, so that joining the pieces gives the input back."""

    kind: str  # "pcap", "pcapng" or "raw" (neither: mutated as bytes only)
    endian: str  # "<" or ">"
    nsec: bool  # pcap: nanosecond timestamps
    head: bytes
    items: list[bytes]
    tail: bytes

    def join(self) -> bytes:
        return self.head + b"".join(self.items) + self.tail


def split(data: bytes) -> Capture:
    """Cut ``data`` into records or blocks, as far as it parses (the rest goes to ``tail``)."""
    if len(data) >= 24:
        for endian in "<>":
            magic = struct.unpack(endian + "I", data[:4])[0]
            if magic in PCAP_MAGICS:
                return _split_pcap(data, endian, PCAP_MAGICS[magic])
        if struct.unpack("<I", data[:4])[0] == SHB and len(data) >= 12:
            endian = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
            return _split_pcapng(data, endian)
    return Capture("raw", "<", False, b"", [], data)


def _split_pcap(data: bytes, endian: str, nsec: bool) -> Capture:
    items, pos = [], 24
    while pos + 16 <= len(data):
        caplen = struct.unpack_from(endian + "I", data, pos + 8)[0]
        end = pos + 16 + caplen
        if end > len(data):
            break
        items.append(data[pos:end])
        pos = end
    return Capture("pcap", endian, nsec, data[:24], items, data[pos:])


def _split_pcapng(data: bytes, endian: str) -> Capture:
    items, pos = [], 0
    while pos + 12 <= len(data):
        length = struct.unpack_from(endian + "I", data, pos + 4)[0]
        if length < 12 or length % 4 or pos + length > len(data):
            break
        items.append(data[pos : pos + length])
        pos += length
    return Capture("pcapng", endian, False, b"", items, data[pos:])


# --- the mutations: each takes the capture (pieces) or the bytes, and integer arguments -----


def _packets(cap: Capture) -> list[int]:
    """Indexes of the items that carry a timestamp: every pcap record, the pcapng EPBs."""
    if cap.kind == "pcap":
        return list(range(len(cap.items)))
    if cap.kind == "pcapng":
        return [i for i, b in enumerate(cap.items) if struct.unpack_from(cap.endian + "I", b, 0)[0] == EPB]
    return []


def _get_ts(cap: Capture, item: bytes) -> int:
    """The record's timestamp in the file's units (pcap: seconds * 1e6 or 1e9 + fraction)."""
    if cap.kind == "pcap":
        sec, frac = struct.unpack_from(cap.endian + "II", item, 0)
        return sec * (10**9 if cap.nsec else 10**6) + frac
    hi, lo = struct.unpack_from(cap.endian + "II", item, 12)
    return hi << 32 | lo


def _set_ts(cap: Capture, item: bytes, ts: int) -> bytes:
    """``item`` with its timestamp set to ``ts`` (file units), wrapped into the field's range."""
    if cap.kind == "pcap":
        per = 10**9 if cap.nsec else 10**6
        sec, frac = divmod(ts % (per << 32), per)
        return struct.pack(cap.endian + "II", sec, frac) + item[8:]
    ts %= 1 << 64
    return item[:12] + struct.pack(cap.endian + "II", ts >> 32, ts & 0xFFFFFFFF) + item[20:]


def _units_per_s(cap: Capture) -> int:
    """Timestamp units per second (pcapng: as :func:`as_pcapng` wrote it, or the default µs;
    a changed if_tsresol changes what the records' units mean, which is a mutation too)."""
    return 10**9 if cap.nsec else 10**6


def ts_shift(cap: Capture, which: int, seconds: int, span: int) -> None:
    """Move ``span`` records from record ``which`` on by ``seconds`` (negative: back in time)."""
    idx = _packets(cap)
    if not idx:
        return
    first = which % len(idx)
    for i in idx[first : first + max(1, span)]:
        cap.items[i] = _set_ts(cap, cap.items[i], _get_ts(cap, cap.items[i]) + seconds * _units_per_s(cap))


def ts_set(cap: Capture, which: int, value: int) -> None:
    """Set one record's raw timestamp field to ``value`` (far future, 0, 2**32-1, 2**64-1...)."""
    idx = _packets(cap)
    if idx:
        i = idx[which % len(idx)]
        cap.items[i] = _set_ts(cap, cap.items[i], value)


def ts_jump(cap: Capture, which: int, years: int) -> None:
    """Every record from ``which`` on jumps ``years`` years (a clock step; negative: backwards)."""
    idx = _packets(cap)
    if idx:
        ts_shift(cap, which, years * YEAR_S, len(idx))


def ts_backwards(cap: Capture, which: int, micros: int) -> None:
    """One record goes ``micros`` µs back in time (a NIC timestamp quirk; the rest stays)."""
    idx = _packets(cap)
    if idx:
        i = idx[which % len(idx)]
        cap.items[i] = _set_ts(cap, cap.items[i], _get_ts(cap, cap.items[i]) - micros * _units_per_s(cap) // 10**6)


def ts_wobble(cap: Capture, start: int, size: int, micros: int, seed: int) -> None:
    """Jitter ``size`` consecutive records by up to ``micros`` µs either way (merged interfaces)."""
    idx = _packets(cap)
    if idx:
        rng = random.Random(seed)
        first = start % len(idx)
        per = _units_per_s(cap) * max(1, micros) // 10**6
        for i in idx[first : first + max(1, size % 2048)]:
            cap.items[i] = _set_ts(cap, cap.items[i], _get_ts(cap, cap.items[i]) + rng.randint(-per, per))


def swap_records(cap: Capture, a: int, b: int) -> None:
    """Exchange two records (or blocks): time goes backwards at one of them."""
    if len(cap.items) >= 2:
        i, j = a % len(cap.items), b % len(cap.items)
        cap.items[i], cap.items[j] = cap.items[j], cap.items[i]


def shuffle_window(cap: Capture, start: int, size: int, seed: int) -> None:
    """Shuffle ``size`` consecutive packet records (a merge of interfaces gone wrong)."""
    idx = _packets(cap)
    if len(idx) >= 2:
        first = start % len(idx)
        window = idx[first : first + max(2, size % 64)]
        chosen = [cap.items[i] for i in window]
        random.Random(seed).shuffle(chosen)
        for i, item in zip(window, chosen):
            cap.items[i] = item


def drop_records(cap: Capture, start: int, count: int) -> None:
    """Remove ``count`` records (or blocks) from ``start`` on."""
    if cap.items:
        first = start % len(cap.items)
        del cap.items[first : first + max(1, count % 32)]


def duplicate_record(cap: Capture, which: int) -> None:
    """Repeat one record (or block) right after itself."""
    if cap.items:
        i = which % len(cap.items)
        cap.items.insert(i, cap.items[i])


def record_length(cap: Capture, which: int, value: int) -> None:
    """Overwrite a record's captured length (pcap) or a block's total length (pcapng)."""
    if cap.items:
        i = which % len(cap.items)
        at = 8 if cap.kind == "pcap" else 4
        item = cap.items[i]
        if len(item) >= at + 4:
            cap.items[i] = item[:at] + struct.pack(cap.endian + "I", value & 0xFFFFFFFF) + item[at + 4 :]


def block_type(cap: Capture, which: int, value: int) -> None:
    """pcapng: change a block's type (an EPB becomes an IDB, an unknown block...)."""
    if cap.kind == "pcapng" and cap.items:
        i = which % len(cap.items)
        cap.items[i] = struct.pack(cap.endian + "I", value & 0xFFFFFFFF) + cap.items[i][4:]


def epb_interface(cap: Capture, which: int, value: int) -> None:
    """pcapng: point an EPB at another (maybe missing) interface."""
    idx = _packets(cap)
    if cap.kind == "pcapng" and idx:
        i = idx[which % len(idx)]
        cap.items[i] = cap.items[i][:8] + struct.pack(cap.endian + "I", value & 0xFFFFFFFF) + cap.items[i][12:]


def idb_timestamps(cap: Capture, tsresol: int, tsoffset: int) -> None:
    """pcapng: give the first interface an if_tsresol and an if_tsoffset (seconds, maybe
    negative: before 1970), appended to its options."""
    if cap.kind != "pcapng":
        return
    for i, b in enumerate(cap.items):
        if struct.unpack_from(cap.endian + "I", b, 0)[0] == IDB and len(b) >= 20:
            e = cap.endian
            body = b[8:16]  # link type, reserved, snap length; the old options are dropped
            opts = struct.pack(e + "HHB3x", 9, 1, tsresol & 0xFF)
            opts += struct.pack(e + "HHq", 14, 8, max(-(2**63), min(2**63 - 1, tsoffset)))
            opts += struct.pack(e + "HH", 0, 0)
            length = 12 + len(body) + len(opts)
            cap.items[i] = struct.pack(e + "II", IDB, length) + body + opts + struct.pack(e + "I", length)
            return


def pcap_header(cap: Capture, field: int, value: int) -> None:
    """pcap: overwrite one file header field (0 magic, 1 version, 2 snap length, 3 link type)."""
    if cap.kind != "pcap":
        return
    at = (0, 4, 16, 20)[field % 4]
    size = 2 if at == 4 else 4
    fmt = cap.endian + ("H" if size == 2 else "I")
    cap.head = cap.head[:at] + struct.pack(fmt, value % (1 << (8 * size))) + cap.head[at + size :]


def as_pcapng(cap: Capture, tsresol: int) -> None:
    """Rewrite a pcap capture as pcapng (one interface, if_tsresol 6 or 9, one EPB per record),
    so that the pcapng reader and its 64-bit timestamps see every seed. Runs before the others."""
    if cap.kind != "pcap":
        return
    e = cap.endian
    nsec = tsresol % 2 == 1
    per = 10**9 if nsec else 10**6
    linktype, snaplen = struct.unpack_from(e + "I", cap.head, 20)[0] & 0xFFFF, struct.unpack_from(e + "I", cap.head, 16)[0]
    shb = struct.pack(e + "IIIHHqI", SHB, 28, 0x1A2B3C4D, 1, 0, -1, 28)
    opts = struct.pack(e + "HHB3xHH", 9, 1, 9 if nsec else 6, 0, 0)
    idb = struct.pack(e + "IIHHI", IDB, 20 + len(opts), linktype, 0, snaplen) + opts + struct.pack(e + "I", 20 + len(opts))
    blocks = [shb, idb]
    for item in cap.items:
        sec, frac, caplen, wirelen = struct.unpack_from(e + "IIII", item, 0)
        ts = sec * per + (frac if cap.nsec == nsec else frac * 1000 if nsec else frac // 1000)
        data = item[16:]
        length = 32 + (len(data) + 3) // 4 * 4
        pad = b"\0" * ((4 - len(data) % 4) % 4)
        blocks.append(struct.pack(e + "IIIIIII", EPB, length, 0, ts >> 32, ts & 0xFFFFFFFF, caplen, wirelen) + data + pad
                      + struct.pack(e + "I", length))
    cap.kind, cap.nsec, cap.head, cap.items = "pcapng", nsec, b"", blocks


CAPTURE_MUTATIONS: dict[str, Callable[..., None]] = {
    f.__name__: f
    for f in (
        ts_shift, ts_set, ts_jump, ts_backwards, ts_wobble, swap_records, shuffle_window, drop_records,
        duplicate_record, record_length, block_type, epb_interface, idb_timestamps, pcap_header,
    )
}


def truncate(data: bytes, at: int) -> bytes:
    """Cut the file at byte ``at`` (modulo its length)."""
    return data[: at % (len(data) + 1)]


def bit_flip(data: bytes, at: int, bit: int) -> bytes:
    """Flip one bit."""
    if not data:
        return data
    i = at % len(data)
    return data[:i] + bytes([data[i] ^ (1 << (bit % 8))]) + data[i + 1 :]


def byte_set(data: bytes, at: int, value: int) -> bytes:
    """Set four bytes to ``value`` (little-endian; 0, 0xff.., 0x7f.., 0x80.. are the useful ones)."""
    if len(data) < 4:
        return data
    i = at % (len(data) - 3)
    return data[:i] + (value % (1 << 32)).to_bytes(4, "little") + data[i + 4 :]


def gzip_damage(data: bytes, at: int, how: int) -> bytes:
    """Compress, then damage the gzip stream: 0 cut it, 1 flip a byte, 2 a second member, 3 none."""
    packed = gzip.compress(data, compresslevel=1, mtime=0)
    how %= 4
    if how == 0:
        return packed[: 10 + at % max(1, len(packed) - 10)]
    if how == 1:
        i = 10 + at % max(1, len(packed) - 10)
        return packed[:i] + bytes([packed[i] ^ 0xFF]) + packed[i + 1 :] if i < len(packed) else packed
    if how == 2:
        return packed + gzip.compress(data[: at % (len(data) + 1)], mtime=0)
    return packed


BYTE_MUTATIONS: dict[str, Callable[..., bytes]] = {f.__name__: f for f in (truncate, bit_flip, byte_set)}
FINAL_MUTATIONS: dict[str, Callable[..., bytes]] = {"gzip_damage": gzip_damage}


def apply(seed: bytes, plan: list[Mutation]) -> bytes:
    """The input made from ``seed`` by the mutations of ``plan``, in order.

    Capture mutations run on the pieces first; byte mutations on the joined bytes after them;
    a gzip mutation, if any, wraps the result last (so its damage is not undone by a re-split).
    """
    cap = split(seed)
    for name, *args in plan:
        if name == "as_pcapng":
            as_pcapng(cap, int(args[0]))
    for name, *args in plan:
        if name in CAPTURE_MUTATIONS:
            CAPTURE_MUTATIONS[str(name)](cap, *args)
    data = cap.join()
    for name, *args in plan:
        if name in BYTE_MUTATIONS:
            data = BYTE_MUTATIONS[str(name)](data, *args)
    for name, *args in plan:
        if name in FINAL_MUTATIONS:
            data = FINAL_MUTATIONS[str(name)](data, *args)
    return data


def crc(data: bytes) -> str:
    """A short name for an input (its CRC-32), for file names."""
    return f"{zlib.crc32(data):08x}"
