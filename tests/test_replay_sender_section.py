"""``report --sender``: the sender section per direction (issue 14), schema 3.

(Kept beside the replay tests: issue 14's files. The report's own tests are in test_cli.py and
test_loss_frames.py.)"""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tcpsack_analyze.analysis import analyze
from tcpsack_analyze.cli import main
from tcpsack_analyze.models.infer import infer_capture
from tcpsack_analyze.models.section import sender_section
from tcpsack_analyze.report.render import render_text
from tcpsack_analyze.report.sender import sender_report, with_sender

ROOT = Path(__file__).resolve().parent.parent
RENO = str(ROOT / "sample_traces/lab_reno_sack_bursty/sender.pcap")
BBR = str(ROOT / "tests/data/lab/bbr_random2/sender.pcap")


def test_without_the_option_the_section_is_null() -> None:
    r = CliRunner().invoke(main, ["report", RENO, "--format", "json"])
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert doc["schema_version"] == 3
    assert doc["connections"][0]["a2b"]["sender"] is None and doc["connections"][0]["b2a"]["sender"] is None
    assert "sender:" not in CliRunner().invoke(main, ["report", RENO]).output


def test_the_section_is_the_inferences_best_fit() -> None:
    report = analyze(RENO).report
    inference = infer_capture(RENO)
    rep = with_sender(report, inference)
    a2b, b2a = rep.connections[0].a2b, rep.connections[0].b2a
    assert a2b.sender == sender_section(inference.directions[0])
    assert a2b.sender is not None and a2b.sender.best == "sack" and a2b.sender.cwnd_segments is not None
    assert b2a.sender is not None and b2a.sender.best is None and b2a.sender.status.startswith("no data")
    text = render_text(rep)
    assert "a->b sender:" in text and "best model:" in text and "sack" in text


def test_cli_json_and_text() -> None:
    r = CliRunner().invoke(main, ["report", RENO, "--sender", "--format", "json"])
    assert r.exit_code == 0, r.output
    sec = json.loads(r.output)["connections"][0]["a2b"]["sender"]
    assert sec["best"] == "sack" and sec["verdict"].startswith("sack (confidence")
    assert set(sec["limiting"]) == {"cwnd", "receive window", "application"}
    assert abs(sum(sec["limiting"].values()) - 1) < 1e-9
    assert sec["cwnd_segments"]["min"] <= sec["cwnd_segments"]["median"] <= sec["cwnd_segments"]["max"]
    r = CliRunner().invoke(main, ["report", RENO, "--sender"])
    assert r.exit_code == 0 and "a->b sender:" in r.output and "falling edges:" in r.output


def test_no_fit_on_bbr_and_stdin_refused() -> None:
    sec = sender_report(analyze(BBR).report).connections[0].a2b.sender
    assert sec is not None and sec.status == "ok" and sec.best is None and sec.verdict == "no loss-based model fits"
    r = CliRunner().invoke(main, ["report", "-", "--sender"])
    assert r.exit_code == 2 and "stdin" in r.output
