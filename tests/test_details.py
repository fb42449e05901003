"""Retransmission regions (``tcpsack_analyze.loss.regions``) and ``tcpsack-analyze details``.

On two lab captures (a thin stream with early/fast/RTO/TLP resends and a bulk SACK transfer with
bursty loss): one region per loss incident, whose rows agree with the incident (the original
transmission is marked and is the first row after the context, the RTR rows are exactly the
incident's retransmissions in order, the last row is the covering ACK), the same regions whatever
the batch size of the second pass, the filters, and the command's output and exit codes, in
process and through the installed script.
"""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import run_cli

from tcpsack_analyze.analysis import Analysis, analyze
from tcpsack_analyze.cli import main
from tcpsack_analyze.loss.regions import AROUND, MAX_ROWS, Elided, Region, RegionRow, collect_regions, find_regions, select

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
THIN = SAMPLES / "lab_thin_stream" / "sender.pcap"
BURSTY = SAMPLES / "lab_reno_sack_bursty" / "sender.pcap"


@cache
def analysis_of(path: Path) -> Analysis:
    return analyze(str(path))


@cache
def regions_of(path: Path, context: int = 3) -> list[Region]:
    return find_regions(str(path), analysis_of(path), context=context)


def rows(region: Region) -> list[RegionRow]:
    return [r for r in region.rows if isinstance(r, RegionRow)]


def incident_of(path: Path, region: Region):
    res = analysis_of(path).loss[(region.conn, region.direction)]
    (inc,) = [i for i in res.incidents if i.start == region.start]
    return inc


@pytest.mark.parametrize("path", [THIN, BURSTY], ids=lambda p: p.parent.name)
def test_one_region_per_incident_consistent_with_it(path: Path) -> None:
    a = analysis_of(path)
    regions = regions_of(path)
    rx = a.retransmissions_df()
    assert len(regions) == len(a.incidents_df()) > 0
    for reg in regions:
        inc = incident_of(path, reg)
        got = rows(reg)
        assert reg.complete
        assert [r.index for r in got] == sorted(r.index for r in got)
        # the original transmission: marked, after the 3 packets of context, and it carries the bytes
        original = [r for r in got if r.mark == "original"]
        assert [r.index for r in original] == [inc.first_index]
        assert got.index(original[0]) == 3 and reg.rows[3] is original[0]
        assert (original[0].dir, original[0].kind, original[0].seq, original[0].len) == ("->", "PKT", inc.start, inc.end - inc.start)
        # the RTR rows: the incident's retransmissions, in order, with its triggers
        rtr = [r for r in got if r.rtr]
        assert len(rtr) == inc.retransmissions == len(reg.resends)
        assert [r.nth for r in rtr] == list(range(1, len(rtr) + 1))
        assert all(r.mark == "retransmission" and r.dir == "->" and r.seq < inc.end and inc.start < r.seq + r.len for r in rtr)
        assert [r.trigger for r in reg.resends] == inc.triggers
        mine = rx[(rx.conn == reg.conn) & (rx.direction == reg.direction)].set_index("index")
        for row, note in zip(rtr, reg.resends):
            assert note.index == row.index and mine.loc[row.index, "trigger"] == note.trigger
            assert note.evidence == mine.loc[row.index, "evidence"] and note.evidence
        assert all(r.rexmit for r in rtr)
        # the last row: the ACK that covered the bytes, at the time the analysis recorded
        last = got[-1]
        assert last.mark == "covering_ack" and last.dir == "<-" and last.ack >= inc.end
        start_ns = a.conn_start_ns[reg.conn]
        assert last.t_ms == pytest.approx((inc.covered_ns - start_ns) / 1e6, abs=1e-6)
        assert original[0].t_ms == pytest.approx((inc.first_ns - start_ns) / 1e6, abs=1e-6)
        assert reg.latency_rexmit_ms == pytest.approx(inc.latency_rexmit_ns / 1e6)
        assert reg.latency_ack_ms == pytest.approx(inc.latency_ack_ns / 1e6)
        # DUP marks only on the receiver's ACKs; the cap keeps the key rows and a few around them
        assert all(r.dir == "<-" and r.kind == "ACK" for r in got if r.dup)
        keys = sum(1 for r in got if r.mark)
        assert len(reg.rows) <= MAX_ROWS + keys * (2 * AROUND + 2)


def test_long_regions_are_elided_around_the_key_rows() -> None:
    regions = regions_of(BURSTY)
    long = [r for r in regions if any(isinstance(x, Elided) for x in r.rows)]
    assert long, "the bursty capture has recoveries longer than the cap"
    for reg in long:
        elided = [x for x in reg.rows if isinstance(x, Elided)]
        assert all(x.elided > 0 for x in elided)
        assert len(reg.rows) - len(elided) >= MAX_ROWS
        got = rows(reg)
        assert got[-1].mark == "covering_ack" and [r.nth for r in got if r.rtr] == [1]


def test_context_zero_starts_at_the_original() -> None:
    for reg in find_regions(str(THIN), analysis_of(THIN), context=0):
        inc = incident_of(THIN, reg)
        assert reg.rows[0].mark == "original" and reg.rows[0].index == inc.first_index


def test_second_pass_does_not_depend_on_batches() -> None:
    a = analysis_of(BURSTY)
    wanted = select(a.loss, a.report.connections, conn_start_ns=a.conn_start_ns)
    small = collect_regions(str(BURSTY), wanted, a.loss, chunk_bytes=4096)
    assert small == regions_of(BURSTY)


def test_filters() -> None:
    a = analysis_of(THIN)
    inc = a.incidents_df()
    rx = a.retransmissions_df()
    rto = find_regions(str(THIN), a, trigger="rto")
    assert len(rto) == sum(1 for t in inc.triggers if "rto" in t) > 0
    assert all(any(r.trigger == "rto" for r in reg.resends) for reg in rto)
    spurious = find_regions(str(THIN), a, trigger="spurious")
    assert len(spurious) == rx.spurious.notna().sum() > 0  # one resend per incident here
    assert all(any(r.spurious for r in reg.resends) for reg in spurious)
    slow = find_regions(str(THIN), a, min_rtd_ms=700)
    assert 0 < len(slow) < len(inc)
    assert all(any(r.rtd_ms is not None and r.rtd_ms >= 700 for r in reg.resends) for reg in slow)
    assert len(find_regions(str(THIN), a, conn=0)) == len(inc)
    assert find_regions(str(THIN), a, conn=1) == []


# --------------------------------------------------------------------------- the command


def invoke(*args: str):
    result = CliRunner().invoke(main, ["details", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr
    return result


def test_text_output() -> None:
    res = invoke(str(THIN), "--trigger", "rto")
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert out.startswith(f"{THIN}: 1 retransmission regions (15 loss incidents in the capture)")
    for text in ("Retransmission region for packet", "<-- Transmitted", "<-- 1. Retransmission", "<-- covering ACK",
                 "Retransmission count: 1", "Time between first trans and last retrans: 846.175 ms", ": rto, RTD 846.175 ms"):
        assert text in out


def test_json_output_is_the_regions() -> None:
    res = invoke(str(BURSTY), "--format", "json", "--context", "1", "--trigger", "fast")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    expect = find_regions(str(BURSTY), analysis_of(BURSTY), trigger="fast", context=1)
    assert len(doc) == len(expect) == 5
    assert doc[0]["rows"][1]["mark"] == "original" and doc[0]["resends"][0]["trigger"] == "fast"
    assert [r["index"] for r in doc[0]["rows"] if "index" in r] == [r.index for r in rows(expect[0])]
    assert any("elided" in r for d in doc for r in d["rows"])


def test_no_match_is_not_an_error() -> None:
    res = invoke(str(BURSTY), "--trigger", "rto")
    assert res.exit_code == 0 and "0 retransmission regions (39 loss incidents" in res.stdout
    assert json.loads(invoke(str(BURSTY), "--trigger", "rto", "--format", "json").stdout) == []


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["--conn", "7"], 2, "no connection 7 (the capture has connections 0-0)"),
        (["--conn", "-1"], 2, "no connection -1"),
    ],
)
def test_bad_conn_is_one_line(args: list[str], code: int, words: str) -> None:
    res = invoke(str(THIN), *args)
    assert res.exit_code == code and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0]


def test_stdin_and_unreadable_files(tmp_path: Path) -> None:
    res = invoke("-")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1 and "stdin" in res.stderr
    bad = tmp_path / "text.pcap"
    bad.write_bytes(b"not a capture\n")
    res = invoke(str(bad))
    assert res.exit_code == 1 and res.stderr.strip() == f"error: {bad} at byte 0: not a pcap or pcapng capture (starts with bytes 6e6f7420)"


def test_truncated_capture_shows_the_prefix(tmp_path: Path) -> None:
    data = THIN.read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) // 2 + 7])
    res = invoke(str(cut), "--format", "json")
    assert res.exit_code == 3
    assert "warning: incomplete capture" in res.stderr
    doc = json.loads(res.stdout)
    assert 0 < len(doc) < len(regions_of(THIN))


def test_console_script() -> None:
    proc = run_cli("details", str(THIN), "--min-rtd", "800", "--format", "json")
    assert proc.returncode == 0, proc.stderr.decode()
    doc = json.loads(proc.stdout)
    assert len(doc) == 1 and doc[0]["resends"][0]["rtd_ms"] >= 800
    proc = run_cli("details", str(THIN), "--conn", "3")
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode().strip().count("\n") == 0 and "no connection 3" in proc.stderr.decode()
