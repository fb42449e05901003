"""Link layers beyond Ethernet: PPP (9, 50, 166, 51), Cisco HDLC (104), SLIP (8), ATM LLC/SNAP
(100), Frame Relay (107), Solaris IPNET (226).

Frames are built byte by byte from the RFCs cited in ``src/decode.rs`` (the compiled core); the real captures in
tests/data/linktypes are from tcpdump's test suite (README there), their expected values read with
tshark 4.0.17. A whole lab capture re-encapsulated in each link type must give the same report as
its Ethernet original, and tcptrace (which reads PPP and Cisco HDLC) must see the same connection,
as it does on the PPP captures ns-3 writes (tests/data/ns3).
"""
from __future__ import annotations

import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Rec, ether, pcap_bytes, run_cli, tcp_packet
from hypothesis import given
from hypothesis import strategies as st
from test_reader import one_packet, packets

from tcpsack_analyze.analysis import analyze
from tcpsack_analyze.reader.linklayer import SUPPORTED

DATA = Path(__file__).parent / "data"
V4 = tcp_packet(seq=11, payload=b"abc")
V6 = tcp_packet(seq=11, payload=b"abc", v6=True)
PPPOE = b"\x11\x00\x00\x01\x00\x00"  # version/type 0x11, code 0 (session data), session 1, length
IPNET = b"\x01\x02" + bytes(22)  # version 1, family 2 (AF_INET), then type, lengths, zones


def _pppoe(ppp: bytes) -> bytes:
    return PPPOE[:4] + struct.pack(">H", len(ppp)) + ppp


# name, link type, link header, IP version: the frame is the header and a TCP/IP packet of that
# version; 0 marks a frame that does not carry IP, whose "header" is the whole frame
FRAMES = [
    ("ppp-hdlc-prefix", 9, b"\xff\x03\x00\x21", 4),
    ("ppp-hdlc-prefix-v6", 9, b"\xff\x03\x00\x57", 6),
    ("ppp-acfc", 9, b"\x00\x21", 4),
    ("ppp-acfc-pfc", 9, b"\x21", 4),
    ("ppp-pfc", 9, b"\xff\x03\x21", 4),
    ("ppp-pfc-v6", 9, b"\x57", 6),
    ("ppp-chdlc", 9, b"\x0f\x00\x08\x00", 4),
    ("ppp-hdlc-50", 50, b"\xff\x03\x00\x21", 4),
    ("ppp-hdlc-50-chdlc-bcast-v6", 50, b"\x8f\x00\x86\xdd", 6),
    ("ppp-pppd-in", 166, b"\x00\x03\x00\x21", 4),
    ("ppp-pppd-out-v6", 166, b"\x01\x03\x00\x57", 6),
    ("ppp-ether-51", 51, PPPOE + b"\x00\x21", 4),
    ("ppp-ether-51-pfc-v6", 51, PPPOE + b"\x57", 6),
    ("chdlc", 104, b"\x0f\x00\x08\x00", 4),
    ("chdlc-v6", 104, b"\x8f\x00\x86\xdd", 6),
    ("slip", 8, b"\x00\x40" + bytes(14), 4),
    ("slip-v6", 8, b"\x01\x40" + bytes(14), 6),
    ("atm-llc-snap", 100, b"\xaa\xaa\x03\x00\x00\x00\x08\x00", 4),
    ("atm-llc-snap-v6", 100, b"\xaa\xaa\x03\x00\x00\x00\x86\xdd", 6),
    ("frelay-nlpid", 107, b"\x18\x41\x03\xcc", 4),
    ("frelay-nlpid-v6", 107, b"\x18\x41\x03\x8e", 6),
    ("frelay-snap", 107, b"\x18\x41\x03\x00\x80\x00\x00\x00\x08\x00", 4),
    ("frelay-cisco", 107, b"\x18\x41\x08\x00", 4),
    ("ipnet", 226, IPNET, 4),
    ("ipnet-v6", 226, b"\x01\x1a" + bytes(22), 6),
    ("ppp-lcp", 9, b"\xff\x03\xc0\x21\x01\x01\x00\x04", 0),
    ("ppp-mpls", 9, b"\xff\x03\x02\x81" + V4, 0),
    ("ppp-pppd-bad-direction", 166, b"\x02\x03\x00\x21" + V4, 0),
    ("chdlc-slarp", 104, b"\x8f\x00\x80\x35" + bytes(20), 0),
    ("slip-vj-compressed", 8, b"\x00\x80" + bytes(14) + V4, 0),
    ("atm-not-llc", 100, b"\xfe\xfe\x03\x00\x00\x00\x08\x00" + V4, 0),
    ("frelay-clnp", 107, b"\x18\x41\x03\x81" + V4, 0),
    ("ipnet-other-family", 226, b"\x01\x07" + bytes(22) + V4, 0),
    ("ppp-header-only", 9, b"\xff\x03\x00", 0),
]


@pytest.mark.parametrize("name, linktype, header, ipver", FRAMES, ids=[f[0] for f in FRAMES])
def test_link_headers(tmp_path, name, linktype, header, ipver):
    pk, status = one_packet(tmp_path, header + {4: V4, 6: V6, 0: b""}[ipver], linktype)
    assert status.complete and status.counts.non_ip == (ipver == 0)
    assert [(p["ipver"], p["sport"], p["dport"], p["seq"], p["paylen"]) for p in pk] == [(ipver, 40000, 80, 11, 3)] * (ipver != 0)


def test_pppoe_with_a_compressed_protocol_field(tmp_path):
    """RFC 2516 does not forbid Protocol-Field-Compression inside a PPPoE session."""
    frame = ether(_pppoe(b"\x21" + V4), ethertype=0x8864)
    pk, _ = one_packet(tmp_path, frame, 1)
    assert len(pk) == 1 and (pk[0]["ipver"], pk[0]["paylen"]) == (4, 3)


# =========================================================================== real captures


def test_ppp_real_file():
    """tcpdump's bgp_vpn_attrset.pcap: PPP with the 0xFF03 prefix; tshark: one TCP segment
    12.4.4.4:2051 -> 12.1.1.1:179, seq 3293077573, 121 bytes."""
    pk, status = packets(DATA / "linktypes" / "tcpdump_ppp_bgp.pcap")
    assert status.complete and len(pk) == 1
    assert (pk[0]["ipver"], pk[0]["sport"], pk[0]["dport"], pk[0]["seq"], pk[0]["paylen"]) == (4, 2051, 179, 3293077573, 121)


def test_ppp_real_file_with_mpls():
    """tcpdump's lspping-fec-ldp.pcap: 13 PPP frames, 5 IPv4/UDP, 8 MPLS (tshark finds 3 TCP
    segments inside the MPLS ones; we, like tcptrace, do not read MPLS)."""
    pk, status = packets(DATA / "linktypes" / "tcpdump_ppp_mpls.pcap")
    assert pk == [] and status.complete
    assert (status.counts.records, status.counts.non_tcp, status.counts.non_ip) == (13, 5, 8)


def test_cisco_hdlc_real_file():
    """tcpdump's HDLC.pcap: 38 Cisco HDLC frames; tshark: 10 IPv4/ICMP, 24 SLARP, 4 CDP."""
    pk, status = packets(DATA / "linktypes" / "tcpdump_chdlc_icmp.pcap")
    assert pk == [] and status.complete
    assert (status.counts.records, status.counts.non_tcp, status.counts.non_ip) == (38, 10, 28)


def test_ipnet_real_file():
    """tcpdump's e1000g.pcap (Solaris IPNET): 20 IPv4/ICMP frames, per tshark."""
    pk, status = packets(DATA / "linktypes" / "tcpdump_ipnet_icmp.pcap")
    assert pk == [] and status.complete
    assert (status.counts.records, status.counts.non_tcp, status.counts.non_ip) == (20, 20, 0)


# =========================================================================== whole captures re-encapsulated

LAB = DATA / "lab" / "nosack_random8" / "sender.pcap"
REENCAPSULATIONS: list[tuple[str, int, Callable[[bytes], bytes]]] = [
    ("ppp", 9, lambda ip: b"\xff\x03\x00\x21" + ip),
    ("ppp-hdlc", 50, lambda ip: b"\xff\x03\x21" + ip),
    ("chdlc", 104, lambda ip: b"\x0f\x00\x08\x00" + ip),
    ("frelay", 107, lambda ip: b"\x18\x41\x03\xcc" + ip),
    ("ppp-ether", 51, lambda ip: _pppoe(b"\x00\x21" + ip)),
]


def _reencapsulate(src: Path, dst: Path, linktype: int, frame_of: Callable[[bytes], bytes]) -> None:
    """Write ``src`` (an Ethernet pcap, little-endian, µs) with each frame's IPv4 packet put in
    ``frame_of(packet)``; wire lengths change by the same amount. Frames that are not IPv4 (ARP)
    are left out."""
    data = src.read_bytes()
    assert data[:4] == b"\xd4\xc3\xb2\xa1" and struct.unpack("<I", data[20:24])[0] == 1
    out, pos = [data[:20] + struct.pack("<I", linktype)], 24
    while pos < len(data):
        sec, usec, cap, wire = struct.unpack("<IIII", data[pos : pos + 16])
        if data[pos + 16 + 12 : pos + 16 + 14] == b"\x08\x00":
            frame = frame_of(data[pos + 16 + 14 : pos + 16 + cap])
            out.append(struct.pack("<IIII", sec, usec, len(frame), wire - cap + len(frame)) + frame)
        pos += 16 + cap
    dst.write_bytes(b"".join(out))


@pytest.mark.parametrize("name, linktype, frame_of", REENCAPSULATIONS, ids=[r[0] for r in REENCAPSULATIONS])
def test_whole_capture_in_another_link_type_reports_the_same(tmp_path, name, linktype, frame_of):
    dst = tmp_path / f"{name}.pcap"
    _reencapsulate(LAB, dst, linktype, frame_of)
    ours, original = analyze(str(dst)).report, analyze(str(LAB)).report
    assert ours.capture.complete and ours.capture.warnings == [] and ours.capture.tcp_packets == original.capture.tcp_packets > 500
    assert ours.connections == original.connections


@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace not installed")
@pytest.mark.parametrize("name, linktype, frame_of", REENCAPSULATIONS[:3:2], ids=[r[0] for r in REENCAPSULATIONS[:3:2]])
def test_tcptrace_reads_the_same_connection(tmp_path, name, linktype, frame_of):
    """tcptrace's long output for the PPP / Cisco HDLC copy equals its output for the original
    (but the file name): the copy holds the same TCP packets, which we read too."""
    dst = tmp_path / "copy.pcap"
    _reencapsulate(LAB, dst, linktype, frame_of)

    def tcptrace(path: Path) -> list[str]:
        out = subprocess.run(["tcptrace", "-l", "-n", str(path)], capture_output=True, text=True, check=True).stdout
        return [ln for ln in out.splitlines() if str(path) not in ln and "wallclock" not in ln]

    assert tcptrace(dst) == tcptrace(LAB)
    assert analyze(str(dst)).report.connections == analyze(str(LAB)).report.connections


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_decodes_the_copies_alike(tmp_path):
    """tshark decodes every TCP segment of each copy, as we do: the link headers built above are
    what tshark expects of each link type."""
    for name, linktype, frame_of in REENCAPSULATIONS:
        dst = tmp_path / f"{name}.pcap"
        _reencapsulate(LAB, dst, linktype, frame_of)
        out = subprocess.run(["tshark", "-r", str(dst), "-Y", "tcp", "-T", "fields", "-e", "tcp.seq_raw"],
                             capture_output=True, text=True, check=True).stdout
        assert len(out.split()) == analyze(str(dst)).report.capture.tcp_packets, name


@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace not installed")
@pytest.mark.parametrize("run", ["newreno_sack_rate_50", "cubic_nosack_rate_50"])
def test_ns3_point_to_point_captures_read_as_tcptrace_reads_them(run):
    """ns-3's point-to-point device writes PPP (link type 9) without the 0xFF03 prefix: a real
    PPP capture of a whole transfer. tcptrace's counts of it equal ours."""
    from tcptrace_output import parse_long

    path = DATA / "ns3" / run / "sender.pcap"
    theirs = parse_long(subprocess.run(["tcptrace", "-l", "-n", str(path)], capture_output=True, text=True, check=True).stdout)
    ours = analyze(str(path)).report
    assert len(theirs) == len(ours.connections) == 1 and ours.capture.complete
    for d in ("a2b", "b2a"):
        mine = getattr(ours.connections[0], d)
        assert (theirs[0][d]["total_packets"], theirs[0][d]["unique_bytes_sent"], theirs[0][d]["rexmt_data_pkts"]) == (
            mine.total_packets, mine.unique_bytes, mine.rexmit_packets), d


# =========================================================================== errors and robustness


def test_unsupported_link_type_is_one_line(tmp_path):
    path = tmp_path / "wifi.pcap"
    path.write_bytes(pcap_bytes([Rec(0, b"\x08\x00" + bytes(30))], linktype=105))
    res = run_cli("report", str(path))
    assert res.returncode != 0
    err = res.stderr.decode()
    assert err.strip().count("\n") == 0 and "unsupported link type 105" in err


@given(linktype=st.sampled_from(sorted(SUPPORTED - {1})), frame=st.binary(max_size=40))
def test_short_or_random_frames_never_raise(tmp_path_factory, linktype, frame):
    """Any bytes under any new link type decode to at most one packet, and never raise."""
    path = tmp_path_factory.mktemp("ll") / "x.pcap"
    path.write_bytes(pcap_bytes([Rec(0, frame)], linktype=linktype))
    pk, status = packets(path)
    assert len(pk) <= 1 and status.counts.records == 1
