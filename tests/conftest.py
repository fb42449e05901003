"""Shared fixtures and capture builders for the reader and bad-input tests.

The builders write pcap and pcapng bytes with :mod:`struct` (so that broken files can be made
on purpose) and packets with scapy. They are plain functions, importable with
``from conftest import ...`` like the other helper modules of this folder, and also offered as
fixtures for tests that prefer those.
"""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
DATA = TESTS / "data"
PUBLIC = DATA / "public"  # unchanged copies of /work/shared/traces/public (see its README.md)

PCAP_MAGIC_USEC = 0xA1B2C3D4
PCAP_MAGIC_NSEC = 0xA1B23C4D
PCAP_HEADER_LEN = 24
PCAP_RECORD_HEADER_LEN = 16

SHB, IDB, OPB, SPB, NRB, ISB, EPB = 0x0A0D0D0A, 1, 2, 3, 4, 5, 6
BYTE_ORDER_MAGIC = 0x1A2B3C4D


# --------------------------------------------------------------------------- hypothesis

#: examples per property test of the reader; raise it for a longer fuzzing run, e.g.
#: ``TCPSACK_FUZZ_EXAMPLES=5000 pytest tests/test_reader.py tests/test_bad_input.py``
FUZZ_EXAMPLES = int(os.environ.get("TCPSACK_FUZZ_EXAMPLES", "60"))


def fuzz_settings():
    from hypothesis import HealthCheck, settings

    return settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``tests/data``; the public captures are in its ``public`` folder."""
    return DATA


@pytest.fixture(scope="session")
def public(data_dir: Path):
    """``public("name.pcap")``: path of a public capture, skipping the test if it is missing."""

    def get(name: str) -> Path:
        path = data_dir / "public" / name
        if not path.exists():
            pytest.skip(f"{path} is not present")
        return path

    return get


# --------------------------------------------------------------------------- pcap


@dataclass(frozen=True)
class Rec:
    """One capture record: timestamp in ns, captured bytes, length on the wire."""

    ts_ns: int
    data: bytes
    wirelen: int | None = None  # None: the captured length

    @property
    def caplen(self) -> int:
        return len(self.data)

    @property
    def wire(self) -> int:
        return self.caplen if self.wirelen is None else self.wirelen


def pcap_header(linktype: int = 1, snaplen: int = 65535, *, big_endian: bool = False, nsec: bool = False) -> bytes:
    e = ">" if big_endian else "<"
    return struct.pack(e + "IHHiIII", PCAP_MAGIC_NSEC if nsec else PCAP_MAGIC_USEC, 2, 4, 0, 0, snaplen, linktype)


def pcap_record(rec: Rec, *, big_endian: bool = False, nsec: bool = False) -> bytes:
    e = ">" if big_endian else "<"
    sec, rem = divmod(rec.ts_ns, 1_000_000_000)
    frac = rem if nsec else rem // 1000
    return struct.pack(e + "IIII", sec, frac, rec.caplen, rec.wire) + rec.data


def pcap_bytes(
    records: Iterable[Rec | bytes],
    linktype: int = 1,
    snaplen: int = 65535,
    *,
    big_endian: bool = False,
    nsec: bool = False,
) -> bytes:
    """A classic pcap file. Plain ``bytes`` records get timestamps 1 s apart."""
    out = [pcap_header(linktype, snaplen, big_endian=big_endian, nsec=nsec)]
    for i, r in enumerate(records):
        rec = r if isinstance(r, Rec) else Rec((1_600_000_000 + i) * 1_000_000_000, r)
        out.append(pcap_record(rec, big_endian=big_endian, nsec=nsec))
    return b"".join(out)


def pcap_record_offsets(records: Sequence[Rec | bytes]) -> list[int]:
    """File offset of each record header of :func:`pcap_bytes` (and of the end, last)."""
    offs = [PCAP_HEADER_LEN]
    for r in records:
        n = r.caplen if isinstance(r, Rec) else len(r)
        offs.append(offs[-1] + PCAP_RECORD_HEADER_LEN + n)
    return offs


# --------------------------------------------------------------------------- pcapng


def _pad4(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 4)


def ng_block(btype: int, body: bytes, *, e: str = "<", length: int | None = None, trailing: int | None = None) -> bytes:
    """A pcapng block; ``length``/``trailing`` override the two length fields (to corrupt them)."""
    body = _pad4(body)
    n = 12 + len(body)
    return struct.pack(e + "II", btype, n if length is None else length) + body + struct.pack(
        e + "I", (n if length is None else length) if trailing is None else trailing
    )


def ng_option(code: int, value: bytes, e: str = "<") -> bytes:
    return struct.pack(e + "HH", code, len(value)) + _pad4(value)


def ng_shb(e: str = "<") -> bytes:
    return ng_block(SHB, struct.pack(e + "IHHq", BYTE_ORDER_MAGIC, 1, 0, -1), e=e)


def ng_idb(linktype: int, snaplen: int = 0, *, tsresol: int | None = None, tsoffset: int | None = None, e: str = "<") -> bytes:
    opts = b""
    if tsresol is not None:
        opts += ng_option(9, bytes([tsresol]), e)
    if tsoffset is not None:
        opts += ng_option(14, struct.pack(e + "q", tsoffset), e)
    if opts:
        opts += struct.pack(e + "HH", 0, 0)
    return ng_block(IDB, struct.pack(e + "HHI", linktype, 0, snaplen) + opts, e=e)


def ng_epb(iface: int, ts_units: int, data: bytes, wirelen: int | None = None, *, e: str = "<", caplen: int | None = None) -> bytes:
    cl = len(data) if caplen is None else caplen
    fields = struct.pack(e + "IIIII", iface, ts_units >> 32, ts_units & 0xFFFFFFFF, cl, len(data) if wirelen is None else wirelen)
    return ng_block(EPB, fields + data, e=e)


def ng_opb(iface: int, ts_units: int, data: bytes, wirelen: int | None = None, *, e: str = "<") -> bytes:
    fields = struct.pack(e + "HHIIII", iface, 0, ts_units >> 32, ts_units & 0xFFFFFFFF, len(data), len(data) if wirelen is None else wirelen)
    return ng_block(OPB, fields + data, e=e)


def ng_spb(data: bytes, wirelen: int | None = None, *, e: str = "<") -> bytes:
    return ng_block(SPB, struct.pack(e + "I", len(data) if wirelen is None else wirelen) + data, e=e)


# --------------------------------------------------------------------------- packets


def tcp_packet(
    src: str = "10.0.0.1",
    dst: str = "10.0.0.2",
    sport: int = 40000,
    dport: int = 80,
    *,
    seq: int = 1000,
    ack: int = 0,
    flags: str = "A",
    payload: bytes = b"",
    options: list | None = None,
    v6: bool = False,
) -> bytes:
    """Raw bytes of an IPv4 (or IPv6) TCP packet, no link header."""
    from scapy.layers.inet import IP, TCP
    from scapy.layers.inet6 import IPv6

    net = IPv6(src=src if ":" in src else "2001:db8::1", dst=dst if ":" in dst else "2001:db8::2") if v6 else IP(src=src, dst=dst)
    return bytes(net / TCP(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags, options=options or []) / payload)


def ether(ip_packet: bytes, ethertype: int | None = None) -> bytes:
    """An Ethernet II frame around ``ip_packet`` (ethertype from the IP version)."""
    if ethertype is None:
        ethertype = 0x86DD if ip_packet[0] >> 4 == 6 else 0x0800
    return b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01" + struct.pack(">H", ethertype) + ip_packet


# --------------------------------------------------------------------------- records and the CLI


def read_records(path: str | os.PathLike, chunk_bytes: int = 1 << 20) -> tuple[list[dict], Exception | None]:
    """Every record the compiled core's format walker yields (as dicts), and the error that stopped it, if any."""
    from tcpsack_analyze import _core
    from tcpsack_analyze.errors import CaptureError
    from tcpsack_analyze.reader import chunk_records, core_error, open_capture

    out: list[dict] = []
    try:
        core = open_capture(str(path))
        while True:
            try:
                if not core.next_chunk(chunk_bytes):
                    break
            except _core.ReadError as exc:
                raise core_error(str(path), exc) from None
            b = chunk_records(core)
            for i in range(len(b)):
                s = int(b.start[i])
                out.append(
                    {
                        "ts_ns": int(b.ts_ns[i]),
                        "caplen": int(b.caplen[i]),
                        "wirelen": int(b.wirelen[i]),
                        "linktype": int(b.linktype[i]),
                        "offset": int(b.file_offset[i]),
                        "data": bytes(b.buf[s : s + int(b.caplen[i])]),
                    }
                )
    except CaptureError as exc:
        return out, exc
    return out, None


def cli_command() -> list[str]:
    """How to run the ``tcpsack-analyze`` console script in a subprocess."""
    exe = shutil.which("tcpsack-analyze")
    if exe:
        return [exe]
    # not on PATH (e.g. a venv that is not activated): run the click group directly
    return [sys.executable, "-c", "from tcpsack_analyze.cli import main; main()"]


def run_cli(*args: str, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``tcpsack-analyze ARGS`` in a subprocess; a hang fails the test via the timeout."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="200")
    return subprocess.run(
        [*cli_command(), *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=timeout,
        env=env,
        check=False,
    )
