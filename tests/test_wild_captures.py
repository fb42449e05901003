"""Captures from the wild (issue 16): the inputs the fuzz harness (fuzz/) found, kept as regressions.

Each file in tests/data/wild is a failing input minimised (``fuzz/minimise.py``) against the
code that failed; see tests/data/wild/README.md for how each was made. ``report`` and ``details``
must now exit normally, with no traceback, report what was wrong with the timestamps (the
warning line and the JSON fields) and keep every number finite and bounded.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import DATA, run_cli

from tcpsack_analyze.reader.clock import PLAUSIBLE_NS

WILD = DATA / "wild"

# file -> (records, out-of-order timestamps, absurd timestamps, clock jumps, a warning's words)
CASES = {
    "lost_original_stamped_back.pcap": (6, 1, 0, 0, "1 records are timestamped before a record captured ahead of them"),
    "before_1970_and_2pow64_units.pcapng": (2, 0, 2, 0, "2 records have an absurd timestamp"),
    "tsoffset_minus_2pow40_and_2pow64_units.pcapng": (4, 0, 4, 0, "4 records have an absurd timestamp"),
    "jump_of_91_years_rto_estimate.pcap": (5, 0, 0, 1, "1 forward clock jumps of a year or more"),
}


def numbers(value: object) -> list[float]:
    """Every number in a JSON document."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [value]
    items = value.values() if isinstance(value, dict) else value
    return [x for item in items for x in numbers(item)]  # type: ignore[union-attr]


def test_every_wild_input_has_a_case():
    assert {p.name for p in WILD.glob("*.pcap*")} == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_report_counts_the_timestamps_and_stays_bounded(name: str):
    records, backwards, absurd, jumps, warning = CASES[name]
    proc = run_cli("report", "--format", "json", str(WILD / name))
    stderr = proc.stderr.decode()
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and warning in stderr
    doc = json.loads(proc.stdout)
    cap = doc["capture"]
    assert (cap["records"], cap["out_of_order_timestamps"], cap["absurd_timestamps"], cap["clock_jumps"]) == (records, backwards, absurd, jumps)
    assert any(warning in line for line in cap["warnings"])
    assert all(math.isfinite(x) and abs(x) < 2**63 for x in numbers(doc))
    for conn in doc["connections"]:
        assert 0 <= conn["first_packet"] <= conn["last_packet"] <= PLAUSIBLE_NS / 1e9


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_details_runs(name: str, fmt: str):
    proc = run_cli("details", "--format", fmt, str(WILD / name))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr.decode(), proc.stderr.decode()


def test_a_lost_original_stamped_back_keeps_its_loss_event():
    """The lost original is stamped 3 ms before the record ahead of it: analysed at that record's
    time, the two lost originals are less than the 56 ms RTT apart, so one loss event."""
    doc = json.loads(run_cli("report", "--format", "json", str(WILD / "lost_original_stamped_back.pcap")).stdout)
    pattern = doc["connections"][0]["a2b"]["loss"]["pattern"]
    assert (pattern["segments"], pattern["lost"], pattern["loss_events"], pattern["events_by"]) == (5, 2, 1, "rtt")
    assert doc["capture"]["largest_backward_step_s"] == pytest.approx(0.002974)


def test_the_rto_estimate_is_capped(tmp_path: Path):
    """A 91-year jump inside a connection made an RTT sample of 91 years and an RFC 6298 RTO
    beyond int64 (an OverflowError in loss/table.py); the estimate is capped at Linux's 120 s."""
    from tcpsack_analyze.analysis import analyze

    result = analyze(str(WILD / "jump_of_91_years_rto_estimate.pcap"))
    estimates = [r.rto_estimate_ns for res in result.loss.values() for r in res.retransmissions if r.rto_estimate_ns is not None]
    assert estimates and max(estimates) == 120_000_000_000
