"""Capture reader: file formats, link layers, IP/TCP decoding, options and filters.

Real captures (tests/data/public, unchanged copies of /work/shared/traces/public) are checked
against values read with tshark 4.0.17; odd cases are built with scapy and struct (conftest).
"""
from __future__ import annotations

import gzip
import json
import struct
import tempfile
from pathlib import Path

import pytest
from conftest import (
    IDB,
    ISB,
    NRB,
    Rec,
    ether,
    fuzz_settings,
    ng_block,
    ng_epb,
    ng_idb,
    ng_opb,
    ng_shb,
    ng_spb,
    pcap_bytes,
    pcap_record_offsets,
    read_records,
    run_cli,
    tcp_packet,
)
from hypothesis import given
from hypothesis import strategies as st

from tcpsack_analyze.analysis import analyze
from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader import ReadStatus, read_capture
from tcpsack_analyze.reader.bpf import BpfFilter, FilterError
from tcpsack_analyze.report.render import RENDERERS

MIXED = "pcapplusplus_pcapng_example_mixed_linktypes.pcapng"
FAST = fuzz_settings()


def packets(path, bpf=None):
    """All decoded TCP packets of a capture as one list of per-packet dicts, and the status."""
    status = ReadStatus(str(path))
    out = []
    for b in read_capture(str(path), status, bpf):
        for i in range(len(b)):
            out.append(
                {
                    "index": int(b.index[i]),
                    "ipver": int(b.ipver[i]),
                    "sport": int(b.sport[i]),
                    "dport": int(b.dport[i]),
                    "seq": int(b.seq[i]),
                    "ack": int(b.ack[i]),
                    "flags": int(b.flags[i]),
                    "paylen": int(b.paylen[i]),
                    "hdrlen": int(b.hdrlen[i]),
                    "vlan": bool(b.vlan[i]),
                    "src": bytes(b.src[i]),
                    "nsack": int(b.opts.nsack[i]),
                    "sack_empty": bool(b.opts.sack_empty[i]),
                    "opt_truncated": bool(b.opts.truncated[i]),
                    "mss": int(b.opts.mss[i]),
                }
            )
    return out, status


def one_packet(tmp_path, frame: bytes, linktype: int = 1, wirelen: int | None = None):
    path = tmp_path / "one.pcap"
    path.write_bytes(pcap_bytes([Rec(0, frame, wirelen)], linktype=linktype))
    return packets(path)


# =========================================================================== pcap


# (file, records, first (ts_ns, caplen, wirelen), last (ts_ns, caplen, wirelen), sum of ts_ns), from tshark
TSHARK_PCAP = [
    ("pcapplusplus_nanosecs_big_endian.pcap", 10, (1766361926167647291, 74, 74), (1766361926168451894, 66, 66), 17663619261680489124),
    ("zeek_http_get_to_ssh_server_nsec.pcap", 9, (1770126425732560000, 74, 74), (1770126426041811000, 60, 60), 15931137832995717000),
    ("tcpdump_tcp_handshake_nano_sll.pcap", 3, (1418145369924505488, 76, 76), (1418145370052115157, 68, 68), 4254436110028647907),
    ("arkime_wireshark_retrans.pcap", 108, (1259023909119790000, 74, 74), (1259023939991813000, 66, 66), 135974583539005560000),
]


@pytest.mark.parametrize("name, n, first, last, total", TSHARK_PCAP, ids=[t[0] for t in TSHARK_PCAP])
def test_pcap_real_files_match_tshark(public, name, n, first, last, total):
    recs, err = read_records(public(name))
    assert err is None
    assert len(recs) == n
    key = lambda r: (r["ts_ns"], r["caplen"], r["wirelen"])  # noqa: E731
    assert key(recs[0]) == first and key(recs[-1]) == last
    assert sum(r["ts_ns"] for r in recs) == total


@pytest.mark.parametrize("big_endian", [False, True])
@pytest.mark.parametrize("nsec", [False, True])
def test_pcap_byte_orders_and_resolutions(tmp_path, big_endian, nsec):
    recs = [Rec(1_700_000_000_123_456_789 + i * 1_000_001, tcp_packet(seq=i), 1000 + i) for i in range(5)]
    path = tmp_path / "x.pcap"
    path.write_bytes(pcap_bytes(recs, big_endian=big_endian, nsec=nsec))
    got, err = read_records(path)
    assert err is None
    for r, g in zip(recs, got, strict=True):
        assert g["ts_ns"] == (r.ts_ns if nsec else r.ts_ns // 1000 * 1000)
        assert (g["caplen"], g["wirelen"], g["data"]) == (r.caplen, r.wire, r.data)


def test_pcap_linktype_fcs_bits_are_ignored(tmp_path):
    """The upper bits of the link-type field carry FCS information (pcap spec), not the type."""
    path = tmp_path / "fcs.pcap"
    path.write_bytes(pcap_bytes([ether(tcp_packet())], linktype=1 | 0x1000_0000))
    pk, status = packets(path)
    assert len(pk) == 1 and status.complete


# =========================================================================== pcapng


def test_pcapng_mixed_linktypes_real_file(public):
    """Two IDBs (EN10MB at ns, LINUX_SLL at us, snaplen 0), an ISB: all 159 records, with their
    link types; libpcap (and so tcptrace) stops at the second IDB and sees only 59."""
    recs, err = read_records(public(MIXED))
    assert err is None
    assert len(recs) == 159
    assert [r["linktype"] for r in recs] == [1] * 59 + [113] * 100
    assert recs[0]["ts_ns"] == 1422527998578402281  # tshark
    assert sum(r["ts_ns"] for r in recs[:59]) == 85401156612873690265  # tshark, interface 0
    # interface 1's timestamps are near 2**64 us: clamped to the int64 maximum, not wrapped
    assert {r["ts_ns"] for r in recs[59:]} == {2**63 - 1}
    assert sum(r["caplen"] < r["wirelen"] for r in recs) == 39
    pk, status = packets(public(MIXED))
    assert status.complete and status.format == "pcapng"
    assert len(pk) == 159


def test_pcapng_with_pcap_extension(public):
    _, status = packets(public("ndpi_rtsp_sll_dupframes.pcap"))
    assert status.format == "pcapng" and status.counts.records == 568 and status.complete


def _frames(n, v6=False):
    return [tcp_packet(seq=100 * i, v6=v6, payload=b"p" * i) for i in range(n)]


def test_pcapng_interfaces_resolutions_and_block_kinds(tmp_path):
    ip = _frames(4)
    e = ether(ip[0])
    data = (
        ng_shb()
        + ng_idb(1)  # 0: Ethernet, default us
        + ng_idb(101, tsresol=9)  # 1: raw IP, ns
        + ng_idb(113, tsresol=0x80 | 10)  # 2: SLL, 2**-10 s
        + ng_idb(1, tsresol=3, tsoffset=1_000_000)  # 3: Ethernet, ms, offset 1e6 s
        + ng_block(NRB, b"\0" * 4)  # name resolution: skipped
        + ng_epb(0, 1_500_000, e)
        + ng_block(0x0BAD, b"unknown block type")  # skipped
        + ng_epb(1, 2_000_000_123, ip[1])
        + ng_block(0x40000BAD, b"\0" * 12)  # custom block: skipped
        + ng_epb(2, 3 * 1024 + 512, b"\0\0\0\0" + b"\0" * 10 + b"\x08\x00" + ip[2])  # SLL
        + ng_opb(3, 4_000, ether(ip[3]))  # obsolete packet block
        + ng_block(ISB, struct.pack("<IIII", 0, 0, 0, 0))  # statistics: skipped
        + ng_block(0x0000000A, b"\0" * 8)  # decryption secrets: skipped
    )
    path = tmp_path / "ifaces.pcapng"
    path.write_bytes(data)
    recs, err = read_records(path)
    assert err is None
    assert [r["linktype"] for r in recs] == [1, 101, 113, 1]
    assert [r["ts_ns"] for r in recs] == [
        1_500_000_000,
        2_000_000_123,
        3_500_000_000,
        (1_000_000 + 4) * 1_000_000_000,
    ]
    pk, status = packets(path)
    assert status.complete and [p["seq"] for p in pk] == [0, 100, 200, 300]


def test_pcapng_big_endian_sections_reset_interfaces(tmp_path):
    ip = _frames(3)
    data = (
        ng_shb(">") + ng_idb(101, e=">") + ng_epb(0, 7, ip[0], e=">")
        + ng_shb("<") + ng_idb(1) + ng_idb(101) + ng_epb(1, 8, ip[1]) + ng_epb(0, 9, ether(ip[2]))
    )
    path = tmp_path / "sections.pcapng"
    path.write_bytes(data)
    recs, err = read_records(path)
    assert err is None
    assert [(r["linktype"], r["ts_ns"]) for r in recs] == [(101, 7000), (101, 8000), (1, 9000)]
    # interface ids are per section: id 1 of the first section does not exist
    path.write_bytes(ng_shb(">") + ng_idb(101, e=">") + ng_shb() + ng_epb(0, 1, ip[0]))
    recs, err = read_records(path)
    assert recs == [] and isinstance(err, CaptureError) and "interface 0" in str(err)


def test_pcapng_simple_packet_blocks(tmp_path):
    """SPBs: no timestamp (0), interface 0, captured length min(original length, block, snaplen)."""
    ip = _frames(3)
    data = ng_shb() + ng_idb(101, snaplen=60) + ng_spb(ip[0]) + ng_spb(ip[1] + b"x" * 40, wirelen=1500) + ng_spb(ip[2][:30], wirelen=30)
    path = tmp_path / "spb.pcapng"
    path.write_bytes(data)
    recs, err = read_records(path)
    assert err is None
    assert [(r["ts_ns"], r["caplen"], r["wirelen"], r["linktype"]) for r in recs] == [
        (0, 40, 40, 101),
        (0, 60, 1500, 101),
        (0, 30, 30, 101),
    ]
    assert recs[1]["data"] == (ip[1] + b"x" * 40)[:60]
    pk, status = packets(path)
    assert len(pk) == 2 and pk[1]["paylen"] == 1  # the third is cut inside its TCP header
    assert status.counts.truncated_tcp == 1


def test_pcapng_idb_without_end_of_options(tmp_path):
    opts = struct.pack("<HH", 9, 1) + b"\x09\0\0\0"  # if_tsresol ns, no opt_endofopt
    data = ng_shb() + ng_block(IDB, struct.pack("<HHI", 101, 0, 0) + opts) + ng_epb(0, 42, _frames(1)[0])
    path = tmp_path / "noend.pcapng"
    path.write_bytes(data)
    recs, err = read_records(path)
    assert err is None and recs[0]["ts_ns"] == 42


# =========================================================================== sources: gzip, stdin


def test_gzip_input_same_report(tmp_path, public):
    src = public("zeek_pppoe_over_qinq.pcap")
    gz = tmp_path / "q.pcap.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    plain, zipped = analyze(str(src)).report, analyze(str(gz), chunk_bytes=4096).report
    assert zipped.capture.compressed and not plain.capture.compressed
    assert zipped.capture.complete
    assert zipped.connections == plain.connections


def _json_report(path, **kw) -> dict:
    return json.loads(RENDERERS["json"](analyze(str(path), **kw).report))


def test_stdin_input(public):
    """``-`` reads standard input (a pcapng here, piped through the real console script)."""
    path = public(MIXED)
    proc = run_cli("report", "--format", "json", "-", stdin=path.read_bytes())
    assert proc.returncode == 0, proc.stderr.decode()
    got = json.loads(proc.stdout)
    want = _json_report(path)
    assert got["capture"].pop("path") == "-"
    want["capture"].pop("path")
    assert got == want


def test_stdin_gzip_input(public):
    path = public("tcpdump_tcp_handshake_nano_sll.pcap")
    proc = run_cli("report", "--format", "json", "-", stdin=gzip.compress(path.read_bytes()))
    assert proc.returncode == 0, proc.stderr.decode()
    got = json.loads(proc.stdout)
    assert got["capture"]["compressed"] is True and got["capture"]["records"] == 3
    assert got["connections"] == _json_report(path)["connections"]


# =========================================================================== link layers


def test_pppoe_over_qinq_real_file(public):
    """802.1ad + 802.1Q + PPPoE session + IPv4 (tcptrace decodes nothing of it)."""
    rep = analyze(str(public("zeek_pppoe_over_qinq.pcap"))).report
    assert rep.capture.records == rep.capture.tcp_packets == 86
    assert len(rep.connections) == 1
    c = rep.connections[0]
    assert {(c.a_addr, c.a_port), (c.b_addr, c.b_port)} == {("1.1.1.1", 20394), ("2.2.2.2", 443)}
    assert c.vlan_tagged_packets == 86
    assert c.a2b.sack_packets + c.b2a.sack_packets == 21  # tshark: 21 packets with SACK blocks


def test_vlan_collisions_real_file(public):
    pk, status = packets(public("zeek_vlan_collisions.pcap"))
    assert len(pk) == 42 and status.complete
    assert sum(p["vlan"] for p in pk) == 28  # VLAN 42 and QinQ 10/20 copies


def test_sll2_real_file(public):
    pk, status = packets(public("filesamples_simple_http_sll2.pcap"))
    assert status.complete and len(pk) == 24
    assert {p["dport"] for p in pk} | {p["sport"] for p in pk} >= {8000, 37614, 37616}


def test_raw_ip_real_file(public):
    pk, status = packets(public("suricata_tcp_empty_sack_rawip.pcap"))
    assert status.complete and len(pk) == 42


def _l2_cases():
    from scapy.layers.l2 import CookedLinux, CookedLinuxV2, Dot1AD, Dot1Q, Ether
    from scapy.layers.ppp import PPP, PPPoE

    v4 = tcp_packet(seq=11, payload=b"abc")
    v6 = tcp_packet(seq=11, payload=b"abc", v6=True)
    from scapy.layers.inet import IP
    from scapy.layers.inet6 import IPv6

    ip4, ip6 = IP(v4), IPv6(v6)
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    return [
        ("ethernet", 1, bytes(eth / ip4), 4, False),
        ("ethernet-v6", 1, bytes(eth / ip6), 6, False),
        ("dot1q", 1, bytes(eth / Dot1Q(vlan=5) / ip4), 4, True),
        ("qinq", 1, bytes(eth / Dot1AD(vlan=10) / Dot1Q(vlan=20) / ip4), 4, True),
        ("tag-9100", 1, bytes(eth)[:12] + b"\x91\x00\x00\x07\x08\x00" + v4, 4, True),
        ("three-tags", 1, bytes(eth / Dot1AD(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / ip6), 6, True),
        ("pppoe", 1, bytes(eth / PPPoE(sessionid=1) / PPP(proto=0x0021) / ip4), 4, False),
        ("pppoe-v6-qinq", 1, bytes(eth / Dot1AD(vlan=1) / Dot1Q(vlan=2) / PPPoE(sessionid=1) / PPP(proto=0x0057) / ip6), 6, True),
        ("raw-101-v4", 101, v4, 4, False),
        ("raw-101-v6", 101, v6, 6, False),
        ("raw-12", 12, v4, 4, False),
        ("raw-14", 14, v6, 6, False),
        ("ipv4-228", 228, v4, 4, False),
        ("ipv6-229", 229, v6, 6, False),
        ("sll", 113, bytes(CookedLinux(pkttype=0, lladdrtype=1, lladdrlen=6, proto=0x0800) / ip4), 4, False),
        ("sll-v6", 113, bytes(CookedLinux(proto=0x86DD) / ip6), 6, False),
        ("sll2", 276, bytes(CookedLinuxV2(proto=0x0800) / ip4), 4, False),
        ("sll2-v6", 276, bytes(CookedLinuxV2(proto=0x86DD) / ip6), 6, False),
        ("null-le", 0, struct.pack("<I", 2) + v4, 4, False),
        ("null-be", 0, struct.pack(">I", 2) + v4, 4, False),
        ("null-v6-linux", 0, struct.pack("<I", 10) + v6, 6, False),
        ("null-v6-bsd", 0, struct.pack("<I", 24) + v6, 6, False),
        ("null-v6-freebsd", 0, struct.pack("<I", 28) + v6, 6, False),
        ("null-v6-macos", 0, struct.pack("<I", 30) + v6, 6, False),
        ("loop-v4", 108, struct.pack(">I", 2) + v4, 4, False),
        ("loop-v6", 108, struct.pack(">I", 24) + v6, 6, False),
    ]


@pytest.mark.parametrize("name, linktype, frame, ipver, vlan", _l2_cases(), ids=[c[0] for c in _l2_cases()])
def test_link_layers(tmp_path, name, linktype, frame, ipver, vlan):
    pk, status = one_packet(tmp_path, frame, linktype)
    assert status.complete
    assert len(pk) == 1, status.counts
    p = pk[0]
    assert (p["ipver"], p["sport"], p["dport"], p["seq"], p["paylen"], p["vlan"]) == (ipver, 40000, 80, 11, 3, vlan)


def test_non_ip_frames_counted(tmp_path):
    from scapy.layers.l2 import ARP, Ether

    path = tmp_path / "arp.pcap"
    path.write_bytes(pcap_bytes([bytes(Ether() / ARP()), ether(tcp_packet()), b"\x02" * 10]))
    pk, status = packets(path)
    assert len(pk) == 1 and status.counts.non_ip == 2


# =========================================================================== IP and TCP decoding


def test_ipv4_options(tmp_path):
    from scapy.layers.inet import IP, TCP, IPOption_RR

    ip = bytes(IP(src="1.2.3.4", dst="5.6.7.8", options=[IPOption_RR(routers=["9.9.9.9", "8.8.8.8"])]) / TCP(sport=1, dport=2, seq=77) / b"hello")
    assert ip[0] & 0x0F > 5
    pk, _ = one_packet(tmp_path, ip, 101)
    assert [(p["sport"], p["dport"], p["seq"], p["paylen"]) for p in pk] == [(1, 2, 77, 5)]
    assert pk[0]["src"][-4:] == bytes([1, 2, 3, 4])


def test_ipv6_extension_headers(tmp_path):
    from scapy.layers.inet import TCP
    from scapy.layers.inet6 import IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting
    from scapy.layers.ipsec import AH

    chain = IPv6(src="2001:db8::1", dst="2001:db8::2") / IPv6ExtHdrHopByHop() / IPv6ExtHdrRouting() / IPv6ExtHdrDestOpt()
    for top in (chain, chain / AH(nh=6, payloadlen=4, spi=1, seq=1, icv=b"\0" * 12)):
        frame = bytes(top / TCP(sport=5, dport=6, seq=99) / (b"z" * 7))
        pk, status = one_packet(tmp_path, frame, 101)
        assert [(p["sport"], p["dport"], p["seq"], p["paylen"], p["ipver"]) for p in pk] == [(5, 6, 99, 7, 6)], status.counts


def test_ip_fragments_counted_not_analysed(tmp_path):
    from scapy.layers.inet import IP, TCP
    from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment

    tcp = TCP(sport=1, dport=2) / (b"d" * 40)
    frames = [
        bytes(IP(flags="MF", frag=0, proto=6) / tcp),  # first fragment
        bytes(IP(frag=10, proto=6) / tcp),  # later fragment
        bytes(IPv6() / IPv6ExtHdrFragment(m=1, offset=0) / tcp),
        bytes(IPv6() / IPv6ExtHdrFragment(m=0, offset=5, nh=6) / (b"\0" * 40)),
        bytes(IPv6() / IPv6ExtHdrFragment(m=0, offset=0) / tcp),  # atomic fragment (RFC 6946): whole
        bytes(IP(flags="DF") / tcp),  # DF is not a fragment
    ]
    path = tmp_path / "frag.pcap"
    path.write_bytes(pcap_bytes(frames, linktype=101))
    pk, status = packets(path)
    assert status.counts.ip_fragments == 4
    assert len(pk) == 2 and all(p["paylen"] == 40 for p in pk)
    assert any("4 IP fragments" in w for w in status.warnings())


def test_snap_length_cuts(tmp_path):
    """Cut inside the IP or TCP header: counted as truncated, not analysed; cut inside the TCP
    options: analysed, with the options flagged truncated; cut after the headers: analysed with
    the payload length from the IP header (headers-only captures are the normal case)."""
    ip = tcp_packet(payload=b"x" * 1000, options=[("MSS", 1460), ("SAckOK", b""), ("NOP", None), ("NOP", None), ("NOP", None), ("NOP", None), ("NOP", None), ("NOP", None)])
    full = ether(ip)
    hdr = 14 + 20 + 32
    cuts = (14 + 10, 14 + 20 + 10, 14 + 20 + 22, 14 + 20 + 26, hdr, len(full))
    recs = [Rec(0, full[:cut], len(full)) for cut in cuts]
    path = tmp_path / "snap.pcap"
    path.write_bytes(pcap_bytes(recs, snaplen=hdr))
    pk, status = packets(path)
    assert status.counts.truncated_tcp == 2
    assert [p["paylen"] for p in pk] == [1000] * 4
    # MSS cut in the middle: flagged, never guessed; MSS captured whole: read
    assert [(p["mss"], p["opt_truncated"]) for p in pk][:2] == [(-1, True), (1460, False)]
    assert [p["mss"] for p in pk][2:] == [1460, 1460]
    assert any("2 packets cut inside their IP/TCP header" in w for w in status.warnings())


def test_headers_only_real_file(public):
    rep = analyze(str(public("zeek_tcp_retransmit_fast009_trunc.pcap"))).report
    assert rep.capture.truncated_tcp == 0 and rep.capture.tcp_packets == 39
    assert sum(c.a2b.data_bytes + c.b2a.data_bytes for c in rep.connections) > 0


def test_empty_sack_option_real_file(public):
    """Frame 24 has a SACK option of length 2 with no blocks (tshark: Malformed)."""
    pk, _ = packets(public("suricata_tcp_empty_sack_rawip.pcap"))
    p = next(p for p in pk if p["index"] == 23)
    assert p["sack_empty"] and p["nsack"] == 0
    assert sum(p["sack_empty"] for p in pk) == 1
    rep = analyze(str(public("suricata_tcp_empty_sack_rawip.pcap"))).report
    assert sum(d.empty_sack_options for c in rep.connections for d in (c.a2b, c.b2a)) == 1


def test_sack_blocks_in_syn_real_file(public):
    pk, _ = packets(public("zeek_tcp_option_sack_in_syn.pcap"))
    assert sorted(p["nsack"] for p in pk) == [1, 2, 3, 4]


def test_bigtcp_ipv4(public):
    """BIG TCP over IPv4: total length 0, the segment length comes from the wire length."""
    pk, _ = packets(public("tcpdump_bigtcp_ipv4.pcap"))
    assert len(pk) == 1 and pk[0]["paylen"] == 80000
    rep = analyze(str(public("tcpdump_bigtcp_ipv4.pcap"))).report
    assert rep.connections[0].a2b.data_bytes + rep.connections[0].b2a.data_bytes == 80000


def test_bigtcp_ipv6(public):
    """BIG TCP over IPv6: payload length 0 and no jumbo option; length from the wire length."""
    recs, _ = read_records(public("tcpdump_bigtcp_ipv6.pcap"))
    assert recs[0]["wirelen"] == 80054  # tshark frame.len
    pk, _ = packets(public("tcpdump_bigtcp_ipv6.pcap"))
    assert len(pk) == 1 and pk[0]["ipver"] == 6
    assert pk[0]["paylen"] == 80054 - 14 - 40 - pk[0]["hdrlen"] == 79968


# =========================================================================== filters


def test_filter_keeps_only_matching_connections(public):
    """The mixed file has two link types: the expression is compiled for each."""
    full = analyze(str(public(MIXED))).report
    rep = analyze(str(public(MIXED)), "tcp port 6000").report
    assert len(full.connections) == 15
    assert len(rep.connections) == 11
    assert all(6000 in (c.a_port, c.b_port) for c in rep.connections)
    assert rep.capture.filtered_out + rep.capture.tcp_packets == 159
    v6 = analyze(str(public(MIXED)), "ip6").report
    assert [(c.a_port, c.b_port) for c in v6.connections] in ([(80, 50243)], [(50243, 80)])


def test_filter_on_raw_ip_captures(public):
    """Regression: LINKTYPE_RAW (101) is not a DLT value, and libpcap's compiler was handed it
    as one ("unknown data link type 101"): every --filter failed on raw-IP captures. The core
    compiles it for DLT_RAW, as tcpdump reads such files."""
    name = "suricata_tcp_empty_sack_rawip.pcap"
    full = analyze(str(public(name))).report
    same = analyze(str(public(name)), "tcp").report
    none = analyze(str(public(name)), "udp").report
    assert same.capture.tcp_packets == full.capture.tcp_packets == 42
    assert (none.capture.tcp_packets, none.capture.filtered_out) == (0, 42)


def test_filter_error_in_process():
    with pytest.raises(FilterError, match="syntax error"):
        BpfFilter("tcp port").program(1)


def test_invalid_filter_rejected_before_reading(tmp_path):
    """A syntax error is reported even when the capture has no record (programs are compiled per
    link type on the first record of each) or cannot be read at all: usage error, exit 2."""
    from click.testing import CliRunner

    from tcpsack_analyze.cli import main

    empty = tmp_path / "no_records.pcap"
    empty.write_bytes(pcap_bytes([]))
    with pytest.raises(FilterError):
        analyze(str(empty), "tcp and and")
    for path in (empty, tmp_path / "missing.pcap"):
        res = CliRunner().invoke(main, ["report", "--filter", "tcp and and", str(path)])
        assert res.exit_code == 2 and "syntax error" in res.stderr, res.stderr
    # valid only for some link types: accepted, and applied where it compiles
    assert analyze(str(empty), "ether host 02:00:00:00:00:01").report.capture.complete


def test_invalid_filter_is_a_usage_error(public):
    proc = run_cli("report", "--filter", "tcp and and port 80", str(public("zeek_tcp_option_sack_in_syn.pcap")))
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "syntax error" in err and "Traceback" not in err  # libpcap's own message
    assert proc.stdout == b""


# =========================================================================== option parser


def _opt_bytes(kind, value):
    if kind == "nop":
        return b"\x01"
    if kind == "mss":
        return struct.pack(">BBH", 2, 4, value)
    if kind == "ws":
        return struct.pack(">BBB", 3, 3, value)
    if kind == "sackok":
        return b"\x04\x02"
    if kind == "ts":
        return struct.pack(">BBII", 8, 10, *value)
    if kind == "sack":
        return struct.pack(">BB", 5, 2 + 8 * len(value)) + b"".join(struct.pack(">II", *b) for b in value)
    raise AssertionError(kind)


u32s = st.integers(0, 2**32 - 1)
valid_option = st.one_of(
    st.tuples(st.just("mss"), st.integers(0, 0xFFFF)),
    st.tuples(st.just("ws"), st.integers(0, 255)),
    st.tuples(st.just("sackok"), st.none()),
    st.tuples(st.just("ts"), st.tuples(u32s, u32s)),
    st.tuples(st.just("sack"), st.lists(st.tuples(u32s, u32s), min_size=1, max_size=4)),
)


OPTION_FIELDS = ("mss", "wscale", "sack_permitted", "tsval", "tsecr", "nsack", "sack", "sack_empty", "truncated", "malformed")


def _tcp_with_options(area: bytes) -> bytes:
    """A raw IPv4 TCP packet whose option area is ``area`` (a multiple of 4 bytes, at most 40)."""
    tcp = struct.pack(">HHIIBBHHH", 1000, 80, 1, 0, (5 + len(area) // 4) << 4, 0x10, 100, 0, 0) + area
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0, b"\x0a\0\0\x01", b"\x0a\0\0\x02")
    return ip + tcp


def _parse_many(areas: list[tuple[bytes, int]], after: bytes = b"") -> list[dict]:
    """The options the reader decodes from raw-IP packets with these option areas, each captured
    up to its given number of option bytes, in one capture; ``after``: a record after them, whose
    bytes follow the last packet's captured bytes in the reader's chunk."""
    recs = [Rec(i, _tcp_with_options(area)[: 40 + captured], 40 + len(area)) for i, (area, captured) in enumerate(areas)]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "opts.pcap"
        path.write_bytes(pcap_bytes([*recs, Rec(len(recs), after)], linktype=101))
        status = ReadStatus(str(path))
        out = []
        for b in read_capture(str(path), status):
            out += [{k: getattr(b.opts, k)[i].tolist() for k in OPTION_FIELDS} for i in range(len(b)) if b.index[i] < len(areas)]
    assert len(out) == len(areas)  # every packet decoded (the record after them may be anything)
    return out


def _parse_one(area: bytes, captured: int, after: bytes = b"") -> dict:
    """The options decoded from one packet with option area ``area``, ``captured`` bytes of it captured."""
    return _parse_many([(area, captured)], after)[0]


def _whole_words(area: bytes) -> bytes:
    """``area`` cut to a whole number of 32-bit words: a TCP option area (RFC 9293 section 3.1)."""
    return area[: len(area) // 4 * 4]


@FAST
@given(
    opts=st.lists(valid_option, max_size=5, unique_by=lambda o: o[0]),
    nops=st.lists(st.integers(0, 5), min_size=6, max_size=6),
    eol=st.booleans(),
    junk=st.binary(max_size=40),
)
def test_option_parser_reads_back_valid_options(opts, nops, eol, junk):
    core, kept = b"", []
    for n, o in zip(nops, opts, strict=False):
        piece = b"\x01" * n + _opt_bytes(*o)
        if len(core) + len(piece) <= 40:  # what does not fit in 40 bytes is left out
            core += piece
            kept.append(o)
    area = core + (b"\x00" + junk if eol else b"")  # after End of Option List: not options
    area = area[:40]
    area += b"\x00" * (-len(area) % 4)
    got = _parse_one(area, len(area), after=b"\x05\x0a" * 10)
    want = dict(kept)
    assert got["mss"] == want.get("mss", -1)
    assert got["wscale"] == want.get("ws", -1)
    assert got["sack_permitted"] == ("sackok" in want)
    assert (got["tsval"], got["tsecr"]) == (want["ts"] if "ts" in want else (-1, -1))
    blocks = want.get("sack", [])
    assert got["nsack"] == len(blocks)
    assert [tuple(b) for b in got["sack"][: len(blocks)]] == [tuple(b) for b in blocks]
    assert not (got["malformed"] or got["truncated"] or got["sack_empty"])


@FAST
@given(
    area=st.binary(max_size=40),
    cut=st.integers(0, 40),
    after1=st.binary(min_size=48, max_size=48),
    after2=st.binary(min_size=48, max_size=48),
)
def test_option_parser_garbage_never_raises_nor_reads_past_the_capture(area, cut, after1, after2):
    """Random bytes: no exception, and the result depends only on the captured option bytes
    (what follows in the chunk is the next record: changing it changes nothing)."""
    area = _whole_words(area)
    captured = min(cut, len(area))
    a = _parse_one(area, captured, after1)
    b = _parse_one(area[:captured] + after2[: len(area) - captured], captured, after2)
    assert a == b
    assert 0 <= a["nsack"] <= 4
    if captured == len(area):
        assert not a["truncated"]


@FAST
@given(areas=st.lists(st.binary(max_size=40), min_size=1, max_size=12))
def test_option_parser_batch_equals_one_at_a_time(areas):
    """In a batch, each packet's options are what it gets alone."""
    areas = [_whole_words(a) for a in areas]
    batch = _parse_many([(a, len(a)) for a in areas])
    assert batch == [_parse_one(a, len(a)) for a in areas]


# =========================================================================== walkers: property tests


record = st.builds(
    lambda sec, frac, data, extra: Rec(sec * 1_000_000_000 + frac, data, len(data) + extra),
    st.integers(0, 2**32 - 1),
    st.integers(0, 999_999_999),
    st.binary(max_size=200),
    st.integers(0, 70000),
)


@FAST
@given(
    recs=st.lists(record, max_size=25),
    big_endian=st.booleans(),
    nsec=st.booleans(),
    chunk=st.one_of(st.integers(1, 64), st.integers(64, 5000)),
)
def test_pcap_walker_reads_back_what_was_written(tmp_path_factory, recs, big_endian, nsec, chunk):
    path = tmp_path_factory.mktemp("walk") / "w.pcap"
    path.write_bytes(pcap_bytes(recs, big_endian=big_endian, nsec=nsec))
    got, err = read_records(path, chunk_bytes=chunk)
    assert err is None
    assert len(got) == len(recs)
    offs = pcap_record_offsets(recs)
    for r, g, off in zip(recs, got, offs[:-1], strict=True):
        ts = r.ts_ns if nsec else r.ts_ns // 1000 * 1000
        assert (g["ts_ns"], g["caplen"], g["wirelen"], g["data"], g["offset"]) == (ts, r.caplen, r.wire, r.data, off)


def _expected_after_cut(cut: int, boundaries: list[int], record_ends: list[int], header_len: int):
    """(records read, error offset or None) for a capture cut to ``cut`` bytes."""
    if cut == 0 or cut < 4:
        return 0, 0
    if cut < header_len:
        return 0, None  # offset depends on the format: checked by the caller
    if cut in boundaries:
        return sum(e <= cut for e in record_ends), None
    start = max(b for b in boundaries if b < cut)
    return sum(e <= cut for e in record_ends), start


def _read_cut(path):
    status = ReadStatus(str(path))
    try:
        for _ in read_capture(str(path), status, chunk_bytes=64):
            pass
    except CaptureError as exc:
        assert status.counts.records == 0
        return 0, exc
    return status.counts.records, status.error


def test_every_truncation_point_of_a_pcap(tmp_path):
    recs = [Rec(i, ether(tcp_packet(seq=i, payload=b"q" * n))) for i, n in enumerate((0, 3, 17))] + [Rec(9, b""), Rec(10, b"\x01" * 5)]
    data = pcap_bytes(recs)
    offs = pcap_record_offsets(recs)
    path = tmp_path / "cut.pcap"
    for cut in range(len(data) + 1):
        path.write_bytes(data[:cut])
        n, err = _read_cut(path)
        want_n, want_off = _expected_after_cut(cut, offs, offs[1:], 24)
        assert n == want_n, cut
        if 4 <= cut < 24:
            assert err is not None and err.offset == cut, cut
        elif want_off is None and cut >= 24:
            assert err is None, (cut, err)
        else:
            assert err is not None and err.offset == want_off, (cut, err)


def test_every_truncation_point_of_a_pcapng(tmp_path):
    f = [ether(tcp_packet(seq=i, payload=b"q" * i)) for i in range(3)]
    blocks = [ng_shb(), ng_idb(1), ng_epb(0, 1, f[0]), ng_block(0x0BAD, b"xyz"), ng_spb(f[1]), ng_epb(0, 3, f[2])]
    packet_block = [False, False, True, False, True, True]
    data = b"".join(blocks)
    starts = [0]
    for b in blocks:
        starts.append(starts[-1] + len(b))
    record_ends = [starts[i + 1] for i in range(len(blocks)) if packet_block[i]]
    path = tmp_path / "cut.pcapng"
    for cut in range(len(data) + 1):
        path.write_bytes(data[:cut])
        n, err = _read_cut(path)
        want_n, want_off = _expected_after_cut(cut, starts, record_ends, 4)
        assert n == want_n, cut
        if want_off is None and cut >= 4:
            assert err is None, (cut, err)
        else:
            assert err is not None and err.offset == want_off, (cut, err)


ng_record = st.tuples(
    st.sampled_from(["epb0", "epb1", "opb1", "spb", "unknown"]),
    st.integers(0, 2**64 - 1),
    st.binary(max_size=120),
    st.integers(0, 5000),
)


@FAST
@given(items=st.lists(ng_record, max_size=20), big_endian=st.booleans(), chunk=st.integers(12, 3000))
def test_pcapng_walker_reads_back_what_was_written(tmp_path_factory, items, big_endian, chunk):
    e = ">" if big_endian else "<"
    data = ng_shb(e) + ng_idb(1, snaplen=0, e=e) + ng_idb(101, snaplen=0, tsresol=9, e=e)
    want = []
    for kind, ts, payload, extra in items:
        wl = len(payload) + extra
        if kind == "unknown":
            data += ng_block(0x0BAD, payload, e=e)
            continue
        if kind == "spb":
            data += ng_spb(payload, wirelen=len(payload), e=e)
            want.append((0, len(payload), len(payload), 1, payload))
            continue
        iface = int(kind[-1])
        make = ng_epb if kind.startswith("epb") else ng_opb
        data += make(iface, ts, payload, wirelen=wl, e=e)
        ns = ts * 1000 if iface == 0 else ts
        ns = min(ns, 2**63 - 1)
        want.append((ns, len(payload), wl, 1 if iface == 0 else 101, payload))
    path = tmp_path_factory.mktemp("ng") / "w.pcapng"
    path.write_bytes(data)
    got, err = read_records(path, chunk_bytes=chunk)
    assert err is None
    assert [(g["ts_ns"], g["caplen"], g["wirelen"], g["linktype"], g["data"]) for g in got] == want


# =========================================================================== corrupt blocks, timestamps


def _pcapng_soup(draw_blocks, e):
    """pcapng blocks from (kind, iface, length, payload, corrupt byte) tuples, some corrupted."""
    out = b""
    for kind, iface, extra, payload, flip in draw_blocks:
        if kind == "epb":
            block = ng_epb(iface, 7, payload, caplen=len(payload) + extra, e=e)
        elif kind == "opb":
            block = ng_opb(iface, 7, payload, e=e)
        elif kind == "spb":
            block = ng_spb(payload, wirelen=len(payload) + extra, e=e)
        elif kind == "idb":
            block = ng_idb(1, e=e)
        elif kind == "shb":
            block = ng_shb(e)
        else:
            block = ng_block(0x0BAD, payload, e=e)
        if flip is not None:
            b = bytearray(block)
            b[flip[0] % len(b)] = flip[1]
            block = bytes(b)
        out += block
    return out


soup_block = st.tuples(
    st.sampled_from(["epb", "opb", "spb", "idb", "shb", "other"]),
    st.integers(0, 3),
    st.sampled_from([0, 0, 0, 1, 4, 200]),
    st.binary(max_size=40),
    st.one_of(st.none(), st.none(), st.tuples(st.integers(0, 200), st.integers(0, 255))),
)


@FAST
@given(blocks=st.lists(soup_block, max_size=12), big=st.booleans(), chunk=st.integers(12, 400))
def test_pcapng_with_corrupt_blocks_reads_alike_in_any_chunk_size(tmp_path_factory, blocks, big, chunk):
    """Well-formed and corrupt blocks: the same records and error read in small chunks as in
    one; CaptureErrors only, at the offset of a block."""
    e = ">" if big else "<"
    path = tmp_path_factory.mktemp("soup") / "s.pcapng"
    path.write_bytes(ng_shb(e) + ng_idb(1, e=e) + _pcapng_soup(blocks, e))
    want, want_err = read_records(path, chunk_bytes=1 << 20)
    got, err = read_records(path, chunk_bytes=chunk)
    assert got == want
    assert (type(err), str(err)) == (type(want_err), str(want_err))
    assert err is None or isinstance(err, CaptureError)


@FAST
@given(
    units=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=20),
    tsresol=st.integers(0, 255),
    offset=st.integers(-(2**63), 2**63 - 1) | st.integers(-(10**10), 10**10),
)
def test_pcapng_timestamps_of_any_resolution_and_offset(tmp_path_factory, units, tsresol, offset):
    """if_tsresol (a power of 10, or of 2 with the top bit set) and if_tsoffset (seconds), in
    exact integer arithmetic; values beyond int64 nanoseconds are clamped."""
    per = 2 ** (tsresol & 0x7F) if tsresol & 0x80 else 10**tsresol
    path = tmp_path_factory.mktemp("tsresol") / "t.pcapng"
    path.write_bytes(ng_shb() + ng_idb(1, tsresol=tsresol, tsoffset=offset) + b"".join(ng_epb(0, u, b"x") for u in units))
    got, err = read_records(path)
    assert err is None
    want = [min(max(u * 10**9 // per + offset * 10**9, -(2**63)), 2**63 - 1) for u in units]
    assert [g["ts_ns"] for g in got] == want
