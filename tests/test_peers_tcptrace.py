"""Agreement with tcptrace 6.6.7 on every public capture (runs when tcptrace is installed).

For each capture the totals over all connections and directions of five counts are compared:
packets, unique bytes, retransmitted packets, SACK packets and D-SACK packets. They must be
equal, except where listed in ``DIFFERENCES`` with the reason; there both our value and
tcptrace's are pinned, so a change on either side shows up.

One systematic difference is folded in rather than listed: tcptrace counts a retransmitted SYN
or FIN (without data) as a retransmitted data packet of one byte; we count those apart
(``syn_rexmits``, ``fin_rexmits``) and add them here for the comparison.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tcpsack_analyze.analysis import analyze
from tcptrace_output import parse_long

DATA = Path(__file__).parent / "data" / "public"
FIELDS = {
    "total_packets": "total_packets",
    "unique_bytes": "unique_bytes_sent",
    "rexmit_packets": "rexmt_data_pkts",
    "sack_packets": "sack_pkts_sent",
    "dsack_packets": "dsack_pkts_sent",
}

# file -> (reason, {field: (ours, tcptrace)})
DIFFERENCES: dict[str, tuple[str, dict[str, tuple[int, int]]]] = {
    "filesamples_simple_http_sll2.pcap": (
        "tcptrace cannot read LINKTYPE_LINUX_SLL2 and traces nothing",
        {"total_packets": (24, 0), "unique_bytes": (1833, 0)},
    ),
    "suricata_decode_sll2_ifb_gro.pcap": (
        "tcptrace cannot read LINKTYPE_LINUX_SLL2 and traces nothing",
        {"total_packets": (159, 0), "unique_bytes": (2598957, 0)},
    ),
    "pcapplusplus_pcapng_example_mixed_linktypes.pcapng": (
        "libpcap (so tcptrace) stops at the second interface's link type; we read all 159 records",
        {"total_packets": (159, 59), "unique_bytes": (46679, 4317)},
    ),
    "zeek_pppoe_over_qinq.pcap": (
        "tcptrace decodes neither 802.1ad QinQ nor PPPoE and traces nothing",
        {"total_packets": (86, 0), "unique_bytes": (16336, 0), "rexmit_packets": (31, 0), "sack_packets": (21, 0), "dsack_packets": (12, 0)},
    ),
    "suricata_tcp_empty_sack_rawip.pcap": (
        "D-SACK rule: frame 29 (ACK 3326, block 2692-3954) starts below its ACK, a D-SACK for "
        "RFC 2883 section 4 and Linux's tcp_check_dsack (our rule, tcpsack_analyze/acks.py); "
        "tcptrace wants the block's right edge at or below the ACK",
        {"dsack_packets": (2, 1)},
    ),
    "zeek_vlan_collisions.pcap": (
        "tcptrace drops the QinQ copy of the connection (28 of 42 frames); the third copy is then "
        "seen as 9 more retransmissions by us",
        {"total_packets": (42, 28), "rexmit_packets": (18, 9)},
    ),
    "tcpdump_bigtcp_ipv4.pcap": (
        "BIG TCP: IPv4 total length is 0; we take the length from the wire length, tcptrace drops the packet",
        {"total_packets": (1, 0), "unique_bytes": (80000, 0)},
    ),
    "tcpdump_bigtcp_ipv6.pcap": (
        "BIG TCP: IPv6 payload length 0 without a jumbo option; tcptrace takes it literally (0 bytes)",
        {"unique_bytes": (79968, 0)},
    ),
    "suricata_bug7657_port_reuse.pcap": (
        "24 SYN attempts with different ISNs: we open a connection per attempt (as tshark), tcptrace "
        "pairs them into 12 and counts each second SYN's sequence number as 1 unique byte",
        {"unique_bytes": (1626, 1638)},
    ),
    "suricata_tcp_fastopen_syn_data.pcap": (
        "TCP Fast Open: tcptrace splits the retransmitted data-bearing SYNs into 5 connections and "
        "counts their payload as unique in each; we keep one connection where they are retransmissions",
        {"unique_bytes": (6907, 7942), "rexmit_packets": (18, 13)},
    ),
    "suricata_tls_subjectaltname.pcap": (
        "tcptrace starts a new connection at a SYN retransmitted about 3 s later with the same ISN "
        "(77 connections; we and tshark have 68), so those SYN retransmissions and the data after "
        "them are counted in different connections",
        {"unique_bytes": (1353603, 1356500), "rexmit_packets": (26, 18)},
    ),
    "ndpi_heuristic_tcp_ack_payload.pcap": (
        "ACKs carry 2 bytes of payload after the FIN; tcptrace counts the FIN's sequence number as "
        "sent data, so a later byte at that number is not unique for it (one byte per connection side)",
        {"unique_bytes": (85912, 85905)},
    ),
}

CAPTURES = sorted(p.name for p in DATA.iterdir() if p.suffix in (".pcap", ".pcapng"))


def _ours(path: Path) -> dict[str, int]:
    conns = analyze(str(path)).connections
    out = {}
    for field in FIELDS:
        total = 0
        for c in conns:
            for d in (c.a2b, c.b2a):
                total += getattr(d, field)
                if field == "rexmit_packets":
                    total += d.syn_rexmits + d.fin_rexmits
        out[field] = total
    return out


def _tcptrace(path: Path) -> dict[str, int]:
    text = subprocess.run(["tcptrace", "-l", "-r", "-n", str(path)], capture_output=True, text=True, check=False, timeout=60).stdout
    conns = parse_long(text)
    return {f: sum(c[d][tf] for c in conns for d in ("a2b", "b2a")) for f, tf in FIELDS.items()}


def test_every_public_capture_is_covered() -> None:
    assert len(CAPTURES) == 35
    assert set(DIFFERENCES) <= set(CAPTURES)


@pytest.mark.peers
@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace is not installed")
@pytest.mark.parametrize("name", CAPTURES)
def test_counts_agree_with_tcptrace(name: str) -> None:
    ours = _ours(DATA / name)
    theirs = _tcptrace(DATA / name)
    reason, expected = DIFFERENCES.get(name, ("", {}))
    for field in FIELDS:
        if field in expected:
            assert (ours[field], theirs[field]) == expected[field], f"{field}: known difference changed ({reason})"
        else:
            assert ours[field] == theirs[field], f"{field}: ours {ours[field]} != tcptrace {theirs[field]}"
