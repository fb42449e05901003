"""``report --format json|csv`` of one capture is streamed (analysis.stream_report, render.write_*)
and is the same text as the report rendered whole (issue 16)."""
from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tcpsack_analyze.analysis import analyze, stream_report
from tcpsack_analyze.cli import main
from tcpsack_analyze.report.render import render_csv, render_json, write_csv, write_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import gen_many_flows  # noqa: E402

CAPTURES = [
    ROOT / "sample_traces" / "http_206_sack_recovery.pcap",  # losses: reports held for the fits
    ROOT / "tests" / "data" / "public" / "suricata_tls_subjectaltname.pcap",  # 68 connections, resets, late packets
    ROOT / "tests" / "data" / "public" / "ndpi_sites_22ifaces.pcapng",  # timestamps that go backwards
]


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("web") / "web.pcap"
    gen_many_flows.write_pcap(path, gen_many_flows.web(200, 40_000, np.random.default_rng(2)))
    return path


def _all(web: Path) -> list[Path]:
    return [*CAPTURES, web]


def test_streamed_json_and_csv_equal_the_whole_report(web: Path) -> None:
    for path in _all(web):
        whole = analyze(str(path)).report
        stream = stream_report(str(path))
        out = io.StringIO()
        write_json(stream, lambda: (stream.capture, stream.totals), out)
        assert out.getvalue() == render_json(whole), path
        out = io.StringIO()
        write_csv(stream_report(str(path)), out)
        assert out.getvalue() == render_csv(whole), path


def test_the_json_document_keeps_its_schema(web: Path) -> None:
    doc = json.loads(render_json(analyze(str(web)).report))
    assert set(doc) == {"capture", "connections", "loss", "schema_version"}
    assert len(doc["connections"]) == 200 and doc["capture"]["tcp_packets"] == 2000
    assert [c["id"] for c in doc["connections"]] == list(range(200))
    assert all(c["state"] == "complete" and c["out_of_order_timestamps"] == 0 for c in doc["connections"])


def test_csv_rows_are_the_connections_table(web: Path) -> None:
    an = analyze(str(CAPTURES[1]))
    rows = list(csv.DictReader(io.StringIO(render_csv(an.report))))
    df = an.connections_df()
    assert [r["conn"] for r in rows] == [str(c) for c in df["conn"]]
    assert list(rows[0]) == list(df.columns)


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_cli_streams_one_capture(web: Path, fmt: str) -> None:
    got = CliRunner().invoke(main, ["report", "--format", fmt, str(web)])
    assert got.exit_code == 0, got.output
    whole = analyze(str(web)).report
    assert got.stdout == (render_json(whole) if fmt == "json" else render_csv(whole))


def test_cli_stream_of_a_bad_capture_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a capture at all")
    got = CliRunner().invoke(main, ["report", "--format", "json", str(bad)])
    assert got.exit_code == 1 and got.stdout == ""
    assert "not a pcap or pcapng capture" in got.stderr


def test_a_lossy_connection_is_reported_with_its_fit_as_it_finishes() -> None:
    # Each Gilbert-Elliott fit depends on its own sequence only (src/ge.rs), so a connection with
    # losses is reported, fit included, when it is finished, not held to the end of the capture;
    # its fit is the one of the whole report. Connection 0 here ends after 87 of 303 packets.
    path = str(ROOT / "tests" / "data" / "public" / "ndpi_heuristic_tcp_ack_payload.pcap")
    whole = {c.id: c for c in analyze(path).report.connections}
    stream = stream_report(path, chunk_bytes=4096)
    first = next(stream)
    read_so_far = stream._pipe.tcp_packets
    fit = first.a2b.loss.pattern.gilbert_elliott
    assert fit is not None and fit == whole[first.id].a2b.loss.pattern.gilbert_elliott
    rest = list(stream)
    assert read_so_far < stream.capture.tcp_packets == 303 and len(rest) == len(whole) - 1
