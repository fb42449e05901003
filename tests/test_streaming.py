"""Streaming must not change results: the report is the same whatever the batch size.

State carried between batches (sequence unwrapping, holes, pending RTT samples, duplicate-ACK
runs, epochs) is exercised by cutting real captures into batches of a few records.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpsack_analyze.analysis import analyze

DATA = Path(__file__).parent / "data" / "public"
CASES = [
    "zeek_http_206_example_a.pcap",  # SACK recovery
    "arkime_wireshark_retrans.pcap",  # no SACK, many retransmissions
    "suricata_bug7657_port_reuse.pcap",  # epochs
    "ndpi_sites_22ifaces.pcapng",  # pcapng, many interfaces
]


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=3, deadline=None)
@given(chunk=st.integers(min_value=2_000, max_value=60_000))
def test_report_does_not_depend_on_batch_size(name: str, chunk: int) -> None:
    whole = asdict(analyze(str(DATA / name)).report)
    cut = asdict(analyze(str(DATA / name), chunk_bytes=chunk).report)
    assert cut == whole
