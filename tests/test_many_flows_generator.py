"""The many-flows generator of ``benchmarks/`` (issue 16): web and SYN-scan captures that both
tcptrace and our report read as the connections the generator says it wrote."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

GENERATOR = Path(__file__).resolve().parent.parent / "benchmarks" / "gen_many_flows.py"


def _generate(path: Path, *args: str) -> None:
    subprocess.run([sys.executable, str(GENERATOR), "-o", str(path), *args], check=True, capture_output=True)


def test_web_connections_are_ten_packet_complete_connections(tmp_path: Path):
    path = tmp_path / "web.pcap"
    _generate(path, "--shape", "web", "--connections", "50")
    doc = json.loads(run_cli("report", "--format", "json", str(path)).stdout)
    assert doc["capture"]["tcp_packets"] == 500 and doc["capture"]["out_of_order_timestamps"] == 0
    conns = doc["connections"]
    assert len(conns) == 50
    assert {(c["state"], c["total_packets"]) for c in conns} == {("complete", 10)}
    assert {(c["a2b"]["unique_bytes"], c["b2a"]["unique_bytes"], c["a2b"]["rexmit_packets"], c["b2a"]["rexmit_packets"]) for c in conns} == {(300, 2896, 0, 0)}


@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace is not installed")
def test_web_capture_as_tcptrace_reads_it(tmp_path: Path):
    path = tmp_path / "web.pcap"
    _generate(path, "--shape", "web", "--connections", "30")
    out = subprocess.run(["tcptrace", "-n", "-l", str(path)], capture_output=True, text=True, check=True).stdout
    assert "30 TCP connections traced" in out
    assert out.count("complete conn: yes") == 30


def test_scan_probes_are_one_or_two_packet_connections(tmp_path: Path):
    path = tmp_path / "scan.pcap"
    _generate(path, "--shape", "scan", "--connections", "200", "--answered", "0.5")
    doc = json.loads(run_cli("report", "--format", "json", str(path)).stdout)
    conns = doc["connections"]
    assert len(conns) == 200
    assert {c["total_packets"] for c in conns} == {1, 2}
    assert doc["capture"]["tcp_packets"] == sum(c["total_packets"] for c in conns)
    answered = sum(1 for c in conns if c["total_packets"] == 2)
    assert 60 < answered < 140
    assert {c["a_addr"] for c in conns} == {"198.51.100.7"}
