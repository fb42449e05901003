"""The synthetic capture generator of ``benchmarks/``: its file format, and its ground truth
checked against tcptrace's long output.

tcptrace 6.6.7 compares SACK edges with the cumulative ACK as plain unsigned numbers
(trace.c, "case 1, first block under cumack"), so a SACK block whose right edge has wrapped
past 2**32 while the ACK has not is counted as a D-SACK. Our generator sends no D-SACK; the
D-SACK count is therefore compared only on connections whose sequence numbers do not wrap.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import dpkt
import pytest
from tcptrace_output import parse_long

GENERATOR = Path(__file__).resolve().parent.parent / "benchmarks" / "gen_synthetic.py"
COMPARED = ("total_packets", "actual_data_pkts", "actual_data_bytes", "unique_bytes_sent",
            "rexmt_data_pkts", "rexmt_data_bytes", "sack_pkts_sent", "max_sack_blks_ack",
            "syn_pkts_sent", "fin_pkts_sent")


def _generate(path: Path, packets: int = 20_000, connections: int = 20) -> dict[str, Any]:
    """Run the generator's command line; return the ground truth it wrote."""
    subprocess.run([sys.executable, str(GENERATOR), "-o", str(path), "--packets", str(packets),
                    "--connections", str(connections), "--seed", "1", "--loss", "0.01"],
                   check=True, capture_output=True)
    return json.loads(Path(f"{path}.truth.json").read_text())


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A small synthetic capture (20 connections, about 20k packets) and its truth."""
    path = tmp_path_factory.mktemp("synthetic") / "small.pcap"
    return path, _generate(path)


def test_format_and_wrap(capture: tuple[Path, dict[str, Any]]) -> None:
    """Headers-only records, SYN options, payload counts and a real sequence wrap."""
    path, truth = capture
    with open(path, "rb") as f:
        reader = dpkt.pcap.Reader(f)
        assert (reader.snaplen, reader.datalink()) == (96, dpkt.pcap.DLT_EN10MB)
        count, data_pkts, last_ts = 0, 0, 0.0
        syn_seq: dict[int, int] = {}
        fin_seq: dict[int, int] = {}
        for ts, buf in reader:
            ip = dpkt.ethernet.Ethernet(buf).data
            tcp = ip.data
            assert len(buf) == min(96, 14 + ip.len) and ts >= last_ts
            payload = ip.len - 20 - 4 * tcp.off
            data_pkts += payload > 0
            if tcp.flags & dpkt.tcp.TH_SYN:
                assert payload == 0
                options = dict(dpkt.tcp.parse_opts(tcp.opts))
                assert int.from_bytes(options[dpkt.tcp.TCP_OPT_MSS], "big") == 1448
                assert dpkt.tcp.TCP_OPT_SACKOK in options and dpkt.tcp.TCP_OPT_TIMESTAMP in options
                assert options[dpkt.tcp.TCP_OPT_WSCALE] == b"\x07"
                if not tcp.flags & dpkt.tcp.TH_ACK:
                    syn_seq[tcp.sport] = tcp.seq
            elif tcp.flags & dpkt.tcp.TH_FIN and tcp.sport in syn_seq:
                fin_seq[tcp.sport] = tcp.seq
            count += 1
            last_ts = ts
    assert count == truth["packets"] and abs(count - 20_000) < 100
    conns = truth["connections"]
    assert data_pkts == sum(c["a2b"]["actual_data_pkts"] for c in conns)
    by_port = {c["a_port"]: c for c in conns}
    wrapped = 0
    for port, isn in syn_seq.items():
        conn = by_port[port]
        assert isn == conn["isn_a"]
        assert (fin_seq[port] - isn) % 2**32 == conn["a2b"]["unique_bytes_sent"] + 1
        wrapped += fin_seq[port] < isn
        assert (fin_seq[port] < isn) == conn["wraps"]
    assert wrapped >= 3
    assert sum(c["a2b"]["rto_retransmits"] for c in conns) > 0
    assert all(c["b2a"]["sack_pkts_sent"] > 0 for c in conns)


def test_deterministic(capture: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """The same arguments give the same bytes."""
    path, _ = capture
    again = tmp_path / "again.pcap"
    _generate(again)
    assert again.read_bytes() == path.read_bytes()


@pytest.mark.peers
@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace is not installed")
def test_truth_matches_tcptrace(capture: tuple[Path, dict[str, Any]]) -> None:
    """Per connection and direction, tcptrace -l counts what the sidecar says."""
    path, truth = capture
    out = subprocess.run(["tcptrace", "-n", "-l", str(path)],
                         check=True, capture_output=True, text=True).stdout
    traced = {(c["a_addr"], c["a_port"], c["b_addr"], c["b_port"]): c for c in parse_long(out)}
    assert len(traced) == len(truth["connections"])
    for conn in truth["connections"]:
        seen = traced[(conn["a_addr"], conn["a_port"], conn["b_addr"], conn["b_port"])]
        assert seen["complete_conn"] == "yes"
        keys = COMPARED if conn["wraps"] else COMPARED + ("dsack_pkts_sent",)
        for direction in ("a2b", "b2a"):
            got = {k: seen[direction][k] for k in keys}
            want = {k: conn[direction][k] for k in keys}
            assert got == want, f"connection {conn['index']} {direction}"
