"""Where each direction's relative sequence numbers start (domain.md section 2), pinned.

The flow stage decides the origin once, and the report, the loss records and ``details`` all use
it. Before the event boundary, ``details`` had its own rule and the report another: a stray
segment or a RST (whose sequence number may be 0, RFC 9293 section 3.10.7.1) seen before a
SYN-ACK became the report's origin, so e.g. suricata_tls_subjectaltname reported
snd_una = -1385057168 for a direction whose 7132 bytes were all acknowledged; and without a SYN
the origin depended on whether the other side's first ACK and this side's first segment fell in
the same batch.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from tcpbuild import Conversation

from tcpsack_analyze.analysis import analyze, events_of
from tcpsack_analyze.loss.regions import find_regions, region_dicts
from tcpsack_analyze.report.render import render_json

PUBLIC = Path(__file__).parent / "data" / "public"


def test_a_reset_before_the_syn_ack_does_not_move_the_origin(tmp_path: Path) -> None:
    conv = Conversation(isn_a=1000, isn_b=7_000_000)
    conv.send("a", 0.0, 0, None, "S")
    conv.isn["b"] = 0  # RST-ACK to a SYN without ACK: sequence number 0
    conv.send("b", 0.01, 0, 1, "RA")
    conv.isn["b"] = 7_000_000
    conv.send("a", 1.0, 0, None, "S")
    conv.send("b", 1.01, 0, 1, "SA")
    conv.send("a", 1.02, 1, 1, "A")
    conv.send("b", 1.03, 1, 1, "A", length=100)
    conv.send("a", 1.04, 1, 101, "A")
    path = conv.write(tmp_path / "rst_first.pcap")
    (c,) = analyze(path).connections
    assert (c.b2a.snd_una, c.b2a.snd_max, c.b2a.isn_seen) == (101, 101, True)
    ev = events_of(path, 0, "b2a")
    data = ev.take(ev.is_data)
    assert list(zip(data.start.tolist(), data.end.tolist())) == [(1, 101)]


def test_the_real_capture_that_showed_it() -> None:
    c = analyze(str(PUBLIC / "suricata_tls_subjectaltname.pcap")).connections[3]
    assert (c.b2a.snd_una, c.b2a.snd_max) == (7132, 7132)  # was (-1385057168, 0)


@pytest.mark.parametrize("chunk", [2000, 7000])
def test_without_a_syn_the_origin_does_not_depend_on_batches(chunk: int) -> None:
    path = str(PUBLIC / "pcapplusplus_pcapng_example_mixed_linktypes.pcapng")
    whole = json.loads(render_json(analyze(path).report))
    parts = json.loads(render_json(analyze(path, chunk_bytes=chunk).report))
    assert [c["b2a"]["snd_una"] for c in parts["connections"]] == [c["b2a"]["snd_una"] for c in whole["connections"]]


def test_details_rows_use_the_reports_numbers() -> None:
    """The incident's bytes in details are the loss records' numbers, and its covering ACK
    reaches their end in the same space."""
    path = str(PUBLIC / "pcapplusplus_tls2_ipv6_gaps.pcap")
    a = analyze(path)
    regions = region_dicts(find_regions(path, a))
    incidents = a.incidents_df()
    assert regions and len(regions) == len(incidents)
    for reg in regions:
        covering = [r for r in reg["rows"] if isinstance(r, dict) and r.get("mark") == "covering_ack"]
        for row in covering:
            assert row["ack"] >= reg["end"]
    assert sorted((r["start"], r["end"]) for r in regions) == sorted(zip(incidents["start"], incidents["end"]))
