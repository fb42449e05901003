"""Broken and unusual input files: one clear error line, the right exit code, never a traceback.

The requirement (issue "bad input"): truncated files (mid-record and mid-header), absurd record
lengths, a text file, an empty file, a capture with no TCP, an unknown link type and a pcapng
with a corrupt block each give one clear error line naming the file and the byte offset, and a
non-zero exit code. Where a prefix of the file was readable, the report of that prefix is still
printed, with a warning, and the exit code (3) says the capture was incomplete. Never a
traceback, never a hang.

Exit codes of ``report`` (cli/report.py): 0 complete, 3 incomplete but a prefix was reported,
1 nothing readable, 2 usage error.

Choice for a readable capture that holds no TCP at all (only UDP, say): that is not an error
of the file, so ``report`` prints its (empty) report, "0 TCP connections", warns
"no TCP packets in the capture" and exits 0.

Most cases run in-process with click's CliRunner (fast); the error-line, traceback and hang
checks are also made once through the real console script in a subprocess, with a timeout,
over all the broken files at once (one interpreter start-up instead of one per case).
"""
from __future__ import annotations

import gzip
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import (
    EPB,
    IDB,
    PCAP_HEADER_LEN,
    Rec,
    ether,
    fuzz_settings,
    ng_block,
    ng_epb,
    ng_idb,
    ng_shb,
    ng_spb,
    pcap_bytes,
    read_records,
    run_cli,
    tcp_packet,
)
from hypothesis import given
from hypothesis import strategies as st

from tcpsack_analyze.cli import main
from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader import ReadStatus, read_capture
from tcpsack_analyze.reader.linklayer import SUPPORTED

SAMPLE = "arkime_wireshark_retrans.pcap"  # 108 Ethernet records, one TCP connection


# --------------------------------------------------------------------------- helpers


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


def invoke(*args: str) -> CliResult:
    """``tcpsack-analyze report ARGS`` in-process; fails on any exception but SystemExit."""
    result = CliRunner().invoke(main, ["report", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(*result.exc_info))  # type: ignore[misc]
        pytest.fail(f"report raised instead of exiting:\n{tb}")
    assert "Traceback" not in result.stderr
    return CliResult(result.exit_code, result.stdout, result.stderr)


def error_lines(stderr: str) -> list[str]:
    """stderr lines that report where reading failed ("... at byte N: ...")."""
    return [ln for ln in stderr.splitlines() if " at byte " in ln]


def assert_one_error(res: CliResult, path: Path | str, offset: int, *words: str) -> str:
    lines = error_lines(res.stderr)
    assert len(lines) == 1, res.stderr
    line = lines[0]
    assert f"{path} at byte {offset}:" in line, line
    for w in words:
        assert w in line, line
    return line


def records_line(stdout: str) -> tuple[int, int]:
    """(records, TCP connections) from the summary line of the text report."""
    m = re.search(r"(\d+) records, \d+ TCP packets, (\d+) TCP connections", stdout)
    assert m, stdout
    return int(m.group(1)), int(m.group(2))


@pytest.fixture(scope="module")
def sample(public) -> bytes:
    return public(SAMPLE).read_bytes()


@pytest.fixture(scope="module")
def offsets(public) -> list[int]:
    """File offset of each record header of the sample, then the file size."""
    recs, err = read_records(public(SAMPLE))
    assert err is None and len(recs) == 108
    offs = [r["offset"] for r in recs]
    assert offs[0] == PCAP_HEADER_LEN
    return [*offs, public(SAMPLE).stat().st_size]


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def tcp_frames(n: int = 3) -> list[bytes]:
    return [ether(tcp_packet(seq=1000 + 100 * i, payload=b"x" * 100)) for i in range(n)]


# --------------------------------------------------------------------------- truncation


def test_truncated_mid_record_reports_prefix(tmp_path, sample, offsets):
    k = 40
    path = write(tmp_path, "cut_record.pcap", sample[: offsets[k] + 16 + 10])  # 10 bytes into record k's data
    res = invoke(str(path))
    assert res.code == 3
    assert_one_error(res, path, offsets[k], "truncated", "record data")
    assert "warning" in res.stderr
    assert records_line(res.stdout) == (k, 1)
    assert "TCP connection 0:" in res.stdout  # the report of the prefix itself


def test_truncated_mid_record_header_reports_prefix(tmp_path, sample, offsets):
    k = 7
    path = write(tmp_path, "cut_header.pcap", sample[: offsets[k] + 9])
    res = invoke(str(path))
    assert res.code == 3
    assert_one_error(res, path, offsets[k], "record header")
    assert records_line(res.stdout) == (k, 1)


def test_truncated_at_record_boundary_is_complete(tmp_path, sample, offsets):
    """A cut exactly between records cannot be told from a shorter capture: complete, exit 0."""
    path = write(tmp_path, "boundary.pcap", sample[: offsets[20]])
    res = invoke(str(path))
    assert res.code == 0, res.stderr
    assert error_lines(res.stderr) == []
    assert records_line(res.stdout) == (20, 1)


@pytest.mark.parametrize("cut", [4, 10, 23])
def test_pcap_file_header_cut(tmp_path, sample, cut):
    path = write(tmp_path, "short_header.pcap", sample[:cut])
    res = invoke(str(path))
    assert res.code == 1
    assert_one_error(res, path, cut, "truncated pcap file header")
    assert res.stdout == ""


def test_first_record_header_cut(tmp_path, sample):
    """Only the file header is whole: nothing to report, exit 1, error at byte 24."""
    path = write(tmp_path, "first_record_cut.pcap", sample[: PCAP_HEADER_LEN + 5])
    res = invoke(str(path))
    assert res.code == 1
    assert_one_error(res, path, PCAP_HEADER_LEN, "record header")


def test_header_only_pcap_is_an_empty_capture(tmp_path, sample):
    path = write(tmp_path, "header_only.pcap", sample[:PCAP_HEADER_LEN])
    res = invoke(str(path))
    assert res.code == 0
    assert records_line(res.stdout) == (0, 0)
    assert "no TCP packets" in res.stderr


def test_gzip_truncated_mid_stream(tmp_path, sample):
    gz = gzip.compress(sample, mtime=0)
    cut = gz[: len(gz) * 2 // 3]
    # what a decompressor can still get out of the cut stream, and the whole records in it
    readable = zlib.decompressobj(31).decompress(cut)
    assert 0 < len(readable) < len(sample)
    whole, pos = 0, PCAP_HEADER_LEN
    while pos + 16 <= len(readable):
        caplen = struct.unpack_from("<I", readable, pos + 8)[0]
        if pos + 16 + caplen > len(readable):
            break
        whole, pos = whole + 1, pos + 16 + caplen
    path = write(tmp_path, "cut.pcap.gz", cut)
    res = invoke(str(path))
    assert res.code == 3
    assert_one_error(res, path, len(readable), "gzip")
    assert records_line(res.stdout) == (whole, 1)
    assert "(gzip)" in res.stdout.splitlines()[0]


def test_gzip_zero_padding_is_read_past_and_trailing_garbage_is_an_error(tmp_path, sample):
    """As gzip(1) and Python's gzip module: zero bytes after a member (padding to a block size)
    end the stream cleanly; other bytes after it must be another member, else the capture is
    incomplete at the end of what was decompressed (regression: the core first took the padding
    for a broken member)."""
    gz = gzip.compress(sample, mtime=0)
    padded = write(tmp_path, "padded.pcap.gz", gz + b"\0" * 512 + gzip.compress(b"", mtime=0) + b"\0" * 3)
    res = invoke(str(padded))
    assert res.code == 0 and not error_lines(res.stderr)
    garbage = write(tmp_path, "garbage.pcap.gz", gz + b"garbage!")
    res = invoke(str(garbage))
    assert res.code == 3
    assert_one_error(res, garbage, len(sample), "gzip")


def test_gzip_corrupt_stream(tmp_path, sample):
    gz = bytearray(gzip.compress(sample, mtime=0))
    for i in range(len(gz) // 2, len(gz) // 2 + 40):
        gz[i] ^= 0x5A
    path = write(tmp_path, "corrupt.pcap.gz", bytes(gz))
    res = invoke(str(path))
    assert res.code in (1, 3)
    line = error_lines(res.stderr)
    assert len(line) == 1 and str(path) in line[0] and "gzip" in line[0]


# --------------------------------------------------------------------------- absurd lengths


def test_absurd_record_length(tmp_path, sample, offsets):
    data = bytearray(sample)
    struct.pack_into("<I", data, offsets[2] + 8, 2**31)  # caplen of record 2: 2 GB
    path = write(tmp_path, "absurd.pcap", bytes(data))
    res = invoke(str(path))
    assert res.code == 3
    assert_one_error(res, path, offsets[2], "2147483648")
    assert records_line(res.stdout) == (2, 1)


def test_absurd_record_length_with_absurd_snaplen(tmp_path, sample, offsets):
    """The header's snap length is no licence for a 4 GB record: still an error at that record."""
    data = bytearray(sample)
    struct.pack_into("<I", data, 16, 0xFFFFFFFF)  # snaplen
    struct.pack_into("<I", data, offsets[5] + 8, 0xFFFFFFF0)
    path = write(tmp_path, "absurd_snaplen.pcap", bytes(data))
    res = invoke(str(path))
    assert res.code == 3
    assert_one_error(res, path, offsets[5])
    assert records_line(res.stdout) == (5, 1)


def test_pcapng_absurd_block_length(tmp_path):
    frames = tcp_frames(2)
    head = ng_shb() + ng_idb(1) + ng_epb(0, 1, frames[0])
    bad = struct.pack("<II", EPB, 2**31) + b"\0" * 64
    path = write(tmp_path, "absurd_block.pcapng", head + bad)
    res = invoke(str(path))
    assert res.code == 3
    assert_one_error(res, path, len(head), "corrupt pcapng block")
    assert records_line(res.stdout) == (1, 1)


# --------------------------------------------------------------------------- not a capture at all


def test_text_file(tmp_path):
    path = write(tmp_path, "notes.txt", b"This is a text file, not a capture.\n" * 10)
    res = invoke(str(path))
    assert res.code == 1
    assert_one_error(res, path, 0, "not a pcap or pcapng")
    assert res.stdout == ""


def test_empty_file(tmp_path):
    path = write(tmp_path, "empty.pcap", b"")
    res = invoke(str(path))
    assert res.code == 1
    assert_one_error(res, path, 0, "empty")


def test_missing_file(tmp_path):
    path = tmp_path / "does_not_exist.pcap"
    res = invoke(str(path))
    assert res.code == 1
    assert len(res.stderr.strip().splitlines()) == 1
    assert str(path) in res.stderr and "cannot open" in res.stderr


def test_directory_instead_of_file(tmp_path):
    res = invoke(str(tmp_path))
    assert res.code == 1
    assert str(tmp_path) in res.stderr


# --------------------------------------------------------------------------- no TCP, link types


def test_capture_without_tcp(tmp_path):
    """Decision: a readable capture with no TCP is not an error: exit 0, with a warning."""
    from scapy.layers.inet import IP, UDP

    udp = [ether(bytes(IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=53, dport=5353) / (b"q" * i))) for i in range(5)]
    path = write(tmp_path, "udp_only.pcap", pcap_bytes(udp))
    res = invoke(str(path))
    assert res.code == 0
    assert records_line(res.stdout) == (5, 0)
    assert "0 TCP connections" in res.stdout
    assert "no TCP packets" in res.stderr and str(path) in res.stderr
    assert error_lines(res.stderr) == []


def test_pcap_unknown_link_type(tmp_path, sample):
    """One link type for the whole file and it is unknown: nothing is readable, error at byte 20."""
    data = bytearray(sample)
    struct.pack_into("<I", data, 20, 147)  # LINKTYPE_USER0
    path = write(tmp_path, "user0.pcap", bytes(data))
    res = invoke(str(path))
    assert res.code == 1
    assert_one_error(res, path, 20, "link type 147")
    assert res.stdout == ""


def test_pcap_unknown_link_type_big_endian(tmp_path):
    path = write(tmp_path, "user0_be.pcap", pcap_bytes(tcp_frames(2), linktype=147, big_endian=True))
    res = invoke(str(path))
    assert res.code == 1
    assert_one_error(res, path, 20, "link type 147")


def test_pcapng_unknown_link_type_interface_is_skipped(tmp_path):
    """pcapng: packets of an interface with an unknown link type are skipped, the rest reported,
    with a warning; the capture is incomplete (exit 3)."""
    frames = tcp_frames(3)
    data = ng_shb() + ng_idb(1) + ng_idb(147)
    for i, f in enumerate(frames):
        data += ng_epb(0, i, f) + ng_epb(1, i, b"\x01\x02\x03\x04" * 5)
    path = write(tmp_path, "mixed_user0.pcapng", data)
    res = invoke(str(path))
    assert res.code == 3
    assert records_line(res.stdout) == (6, 1)
    assert "3 records of unsupported link type 147 were skipped" in res.stderr
    assert str(path) in res.stderr


# --------------------------------------------------------------------------- corrupt pcapng


def _ng_prefix() -> bytes:
    frames = tcp_frames(2)
    return ng_shb() + ng_idb(1) + ng_epb(0, 1, frames[0]) + ng_epb(0, 2, frames[1])


_FRAME = tcp_frames(1)[0]  # 154 bytes: its EPB has 2 bytes of padding before the trailing length


@pytest.mark.parametrize(
    "bad_block, words",
    [
        pytest.param(ng_epb(0, 3, _FRAME)[:-4] + struct.pack("<I", 4), ("trailing length",), id="bad_trailing_length"),
        pytest.param(struct.pack("<II", 0x0BAD, 30) + b"\0" * 40, ("corrupt pcapng block",), id="length_not_multiple_of_4"),
        pytest.param(ng_epb(5, 3, _FRAME), ("interface 5",), id="undefined_interface"),
        pytest.param(ng_block(EPB, b"\0" * 4), ("corrupt pcapng block",), id="epb_shorter_than_its_fields"),
        pytest.param(ng_epb(0, 3, _FRAME, caplen=200), ("overruns",), id="epb_caplen_overruns_block"),
        # caplen reaching into the trailing length field (was accepted: off by 4 in pcapng.py)
        pytest.param(ng_epb(0, 3, _FRAME, caplen=len(_FRAME) + 4), ("overruns",), id="epb_caplen_into_trailer"),
        pytest.param(ng_block(IDB, b""), ("corrupt pcapng block",), id="idb_shorter_than_its_fields"),
        pytest.param(struct.pack("<III", 3, 12, 12), ("corrupt pcapng block",), id="spb_shorter_than_its_fields"),
    ],
)
def test_pcapng_corrupt_block(tmp_path, request, bad_block, words):
    prefix = _ng_prefix()
    tail = ng_epb(0, 9, _FRAME)  # a good block after the bad one is not reached
    path = write(tmp_path, f"{request.node.callspec.id}.pcapng", prefix + bad_block + tail)
    res = invoke(str(path))
    assert res.code == 3
    assert_one_error(res, path, len(prefix), *words)
    assert records_line(res.stdout) == (2, 1)


def test_pcapng_truncated_mid_block(tmp_path):
    prefix = _ng_prefix()
    path = write(tmp_path, "cut.pcapng", prefix + ng_epb(0, 3, tcp_frames(1)[0])[:30])
    res = invoke(str(path))
    assert res.code == 3
    assert_one_error(res, path, len(prefix), "truncated")
    assert records_line(res.stdout) == (2, 1)


def test_pcapng_bad_byte_order_magic(tmp_path):
    shb = bytearray(ng_shb())
    struct.pack_into("<I", shb, 8, 0xDEADBEEF)
    path = write(tmp_path, "bad_bom.pcapng", bytes(shb) + ng_idb(1) + ng_epb(0, 1, tcp_frames(1)[0]))
    res = invoke(str(path))
    assert res.code == 1
    assert_one_error(res, path, 8, "byte-order magic")


def test_pcapng_packet_before_any_interface(tmp_path):
    path = write(tmp_path, "no_idb.pcapng", ng_shb() + ng_epb(0, 1, tcp_frames(1)[0]))
    res = invoke(str(path))
    assert res.code == 1
    assert_one_error(res, path, 28, "interface 0")


def test_pcapng_spb_before_any_interface(tmp_path):
    path = write(tmp_path, "spb_no_idb.pcapng", ng_shb() + ng_spb(tcp_frames(1)[0]))
    res = invoke(str(path))
    assert res.code == 1
    assert_one_error(res, path, 28, "interface")


# --------------------------------------------------------------------------- several captures


def test_good_and_bad_captures_in_one_run(tmp_path, public, sample):
    good = public(SAMPLE)
    text = write(tmp_path, "text.pcap", b"hello")
    res = invoke(str(good), str(text), str(good))
    assert res.code == 1  # the worst status wins
    assert res.stdout.count("108 records") == 2  # both good ones reported, the bad one between
    assert_one_error(res, text, 0)


# --------------------------------------------------------------------------- garbage contents


@fuzz_settings()
@given(
    linktype=st.sampled_from(sorted(SUPPORTED)),
    frames=st.lists(st.binary(max_size=120), min_size=1, max_size=8),
    prefix=st.sampled_from(
        [
            b"",
            b"\x45",
            b"\x60",
            b"\x46\x00\x00\x00\x00\x00\x00\x00\x40\x06",
            b"\x08\x00",
            # IPv6 header announcing a destination-options header (for the raw link types)
            b"\x60\0\0\0\0\0\x3c\x40" + b"\0" * 32,
        ]
    ),
    wire_extra=st.integers(0, 70000),
)
def test_garbage_packet_contents_never_raise(tmp_path_factory, linktype, frames, prefix, wire_extra):
    """Whatever bytes the records hold, reading gives counts, never an exception."""
    recs = [Rec(i * 1000, prefix + f, len(prefix + f) + wire_extra) for i, f in enumerate(frames)]
    path = tmp_path_factory.mktemp("garbage") / "g.pcap"
    path.write_bytes(pcap_bytes(recs, linktype=linktype))
    status = ReadStatus(str(path))
    n = sum(len(b) for b in read_capture(str(path), status))
    assert status.error is None
    assert status.counts.records == len(frames)
    assert 0 <= n <= len(frames)


block_type = st.sampled_from([IDB, 2, 3, 4, 5, EPB, 0x0A0D0D0A, 0x0BAD])


@fuzz_settings()
@given(
    blocks=st.lists(
        st.tuples(block_type, st.integers(0, 300), st.binary(max_size=96), st.booleans()),
        min_size=1,
        max_size=6,
    )
)
def test_garbage_pcapng_blocks_give_capture_errors_only(tmp_path_factory, blocks):
    """Blocks of any type with any length fields and bodies: records or a CaptureError, nothing
    else (short EPB/IDB/SPB blocks used to raise struct.error)."""
    data = ng_shb() + ng_idb(1)
    for btype, length, body, honest in blocks:
        if honest:  # well-formed lengths, garbage body
            data += ng_block(btype, body)
        else:
            data += struct.pack("<II", btype, length) + body + struct.pack("<I", length)
    path = tmp_path_factory.mktemp("ngjunk") / "j.pcapng"
    path.write_bytes(data)
    status = ReadStatus(str(path))
    try:
        for _ in read_capture(str(path), status, chunk_bytes=64):
            pass
    except CaptureError:
        pass
    assert status.error is None or isinstance(status.error, CaptureError)


@fuzz_settings()
@given(tail=st.binary(max_size=300), chunk=st.integers(16, 400))
def test_garbage_after_a_pcap_header_gives_capture_errors_only(tmp_path_factory, tail, chunk):
    path = tmp_path_factory.mktemp("pcapjunk") / "j.pcap"
    path.write_bytes(pcap_bytes([]) + tail)
    status = ReadStatus(str(path))
    try:
        for _ in read_capture(str(path), status, chunk_bytes=chunk):
            pass
    except CaptureError:
        pass


def test_ipv6_extension_header_longer_than_the_capture(tmp_path):
    """Regression: an extension header whose length runs past the captured bytes (and past the
    reader's buffer) used to raise IndexError in decode.py; it is a truncated packet."""
    from scapy.layers.inet6 import IPv6

    pkt = bytes(IPv6(nh=60, src="::1", dst="::2"))[:40] + bytes([6, 255]) + b"\0" * 6
    path = write(tmp_path, "v6ext.pcap", pcap_bytes([Rec(0, pkt, 3000)], linktype=101))
    status = ReadStatus(str(path))
    assert sum(len(b) for b in read_capture(str(path), status)) == 0
    assert status.counts.truncated_tcp == 1


def test_ipv4_header_cut_before_its_fragment_field_is_truncated_not_a_fragment(tmp_path):
    """Regression (the Python reader): an IPv4 header cut inside its fragment field was judged on
    the bytes that followed it in the reader's buffer (the next record's header), and counted as
    a fragment as well as truncated. Bytes past the capture are not the packet's."""
    ip = tcp_packet()
    path = write(tmp_path, "cut_ip.pcap", pcap_bytes([Rec(0, ip[:7], len(ip)), Rec(5_000_000_000, b"\xff" * 40)], linktype=101))
    status = ReadStatus(str(path))
    assert sum(len(b) for b in read_capture(str(path), status)) == 0
    assert (status.counts.truncated_tcp, status.counts.ip_fragments, status.counts.non_ip) == (1, 0, 1)


def test_pcapng_interface_option_cut_by_its_block(tmp_path):
    """Regression (the Python reader raised IndexError): an Interface Description Block whose
    last option header (if_tsresol, length 4) has no value bytes left in the block. The cut
    option is ignored: the interface keeps the default microsecond resolution."""
    idb = ng_block(IDB, struct.pack("<HHI", 1, 0, 0) + struct.pack("<HH", 9, 4))
    path = write(tmp_path, "cut_option.pcapng", ng_shb() + idb + ng_epb(0, 1_500_000, ether(tcp_packet())))
    status = ReadStatus(str(path))
    assert [t for b in read_capture(str(path), status) for t in b.ts_ns.tolist()] == [1_500_000_000]
    assert status.complete


def test_read_capture_raises_capture_error_only(tmp_path):
    with pytest.raises(CaptureError) as info:
        list(read_capture(str(write(tmp_path, "x.pcap", b"garbage!")), ReadStatus("x")))
    assert info.value.offset == 0


# --------------------------------------------------------------------------- the real command


def test_console_script_on_every_broken_file(tmp_path, sample, offsets):
    """Through the installed ``tcpsack-analyze`` script, in one subprocess with a timeout:
    each broken file gives exactly one error line with its name and offset, and no traceback."""
    cases: dict[str, tuple[bytes, int | None]] = {
        "c01_cut_record.pcap": (sample[: offsets[30] + 20], offsets[30]),
        "c02_cut_record_header.pcap": (sample[: offsets[3] + 3], offsets[3]),
        "c03_cut_file_header.pcap": (sample[:13], 13),
        "c04_absurd.pcap": (sample[: offsets[1] + 8] + struct.pack("<I", 2**31) + sample[offsets[1] + 12 :], offsets[1]),
        "c05_text.txt": (b"GET / HTTP/1.1\r\nHost: example.org\r\n\r\n", 0),
        "c06_empty.pcap": (b"", 0),
        "c07_user0.pcap": (sample[:20] + struct.pack("<I", 147) + sample[24:], 20),
        "c08_gzip_cut.pcap.gz": (gzip.compress(sample, mtime=0)[:900], None),
        "c09_bad_trailer.pcapng": (_ng_prefix() + ng_epb(0, 3, tcp_frames(1)[0])[:-4] + b"\0\0\0\0", len(_ng_prefix())),
        "c10_no_interface.pcapng": (_ng_prefix() + ng_epb(3, 3, tcp_frames(1)[0]), len(_ng_prefix())),
    }
    paths = {}
    for name, (data, _) in cases.items():
        paths[name] = write(tmp_path, name, data)
    proc = run_cli("report", *map(str, paths.values()), "-", stdin=b"", timeout=120)
    err = proc.stderr.decode()
    assert "Traceback" not in err, err
    assert proc.returncode == 3, err  # the worst of 1 (unreadable) and 3 (prefix reported)
    lines = error_lines(err)
    for name, (_, off) in cases.items():
        mine = [ln for ln in lines if f"{paths[name]} at byte " in ln]
        assert len(mine) == 1, (name, err)
        if off is not None:
            assert f"{paths[name]} at byte {off}:" in mine[0]
    assert any(ln.startswith("error: -") and "empty" in ln for ln in lines), err  # empty stdin: no hang
    assert len(lines) == len(cases) + 1
    out = proc.stdout.decode()
    assert "c01_cut_record.pcap: pcap, 30 records" in out


def test_console_script_exit_codes(tmp_path, sample, offsets):
    """The exit code of the real script for: unreadable (1) and prefix reported (3)."""
    text = write(tmp_path, "text.pcap", b"not a capture\n")
    proc = run_cli("report", str(text))
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr.decode().strip() == f"error: {text} at byte 0: not a pcap or pcapng capture (starts with bytes 6e6f7420)"

    cut = write(tmp_path, "cut.pcap", sample[: offsets[50] + 30])
    proc = run_cli("report", "--format", "json", str(cut))
    assert proc.returncode == 3
    import json

    rep = json.loads(proc.stdout)
    assert rep["capture"]["complete"] is False
    assert rep["capture"]["records"] == 50
    assert f"at byte {offsets[50]}" in rep["capture"]["error"]
    assert len(rep["connections"]) == 1
    assert "Traceback" not in proc.stderr.decode()

