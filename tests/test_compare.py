"""``compare``: figures from reports, changes against a baseline, Jain's index, the noise test."""
from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpsack_analyze.check.rules import RuleError, parse_rules
from tcpsack_analyze.compare import capture_figures, flow_figures, jain_index, noise_test, side_by_side
from tcpsack_analyze.compare.noise import bootstrap_median_difference
from tcpsack_analyze.compare.rules import NOISE_NAMES, SIDE_BY_SIDE_NAMES, bind, judge_comparison, judge_noise

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_traces"


def test_jain_index_known_values():
    assert jain_index([5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert jain_index([9.0, 0.0, 0.0]) == pytest.approx(1 / 3)  # one flow takes all: 1/n
    assert jain_index([1.0, 3.0]) == pytest.approx(16 / 20)
    assert jain_index([]) is None and jain_index([0.0, 0.0]) is None


def _dir(data: int, unique: int, tput: float | None, rexmit: int, rto: int, rtd: dict | None) -> dict:
    loss = {"retransmissions": rexmit, "by_trigger": {"rto": rto} if rto else {}, "rtd_ms": rtd, "latency_ack_ms": None}
    return {"data_packets": data, "unique_bytes": unique, "throughput_Bps": tput, "loss": loss}


def _report() -> dict:
    idle = _dir(0, 0, None, 0, 0, None)
    return {
        "connections": [
            {"id": 0, "first_packet": 10.0, "last_packet": 12.0, "a2b": _dir(100, 4000, 2000.0, 10, 1, {"median": 50.0, "p99": 90.0}), "b2a": idle},
            {"id": 1, "first_packet": 11.0, "last_packet": 14.0, "a2b": idle, "b2a": _dir(50, 3000, 1000.0, 0, 0, None)},
        ],
        "loss": {"retransmissions": 10, "by_trigger": {"rto": 1}, "rtd_ms": {"median": 50.0, "p99": 90.0}, "latency_ack_ms": None},
    }


def test_flow_and_capture_figures_from_a_hand_built_report():
    flows = flow_figures("x", _report())
    assert [(f.flow, f.throughput_Bps, f.retransmission_rate, f.timeouts) for f in flows] == [
        ("conn 0 a2b", 2000.0, 0.1, 1), ("conn 1 b2a", 1000.0, 0.0, 0)]
    cap = capture_figures("x", _report())
    # 7000 unique bytes from t=10 to t=14; 10 retransmissions of 150 data packets
    assert (cap.flows, cap.throughput_Bps, cap.retransmission_rate, cap.timeouts) == (2, 1750.0, pytest.approx(10 / 150), 1)
    assert cap.jain == pytest.approx(9e6 / (2 * 5e6))
    assert (cap.rtd_median_ms, cap.rtd_p99_ms, cap.latency_ack_p99_ms) == (50.0, 90.0, None)


def test_side_by_side_changes_against_the_first():
    a, b = flow_figures("x", _report())
    comp = side_by_side([a, b])
    c = comp.changes[0]
    assert (c.throughput_ratio, c.retransmission_rate_change, c.timeouts_change, c.rtd_median_change_ms) == (0.5, -0.1, -1, None)
    assert comp.jain == pytest.approx(9e6 / (2 * 5e6))
    res = judge_comparison(bind(parse_rules(["throughput_ratio >= 0.9", "rtd_median_change_ms <= 10", "timeouts_change <= 0"]), SIDE_BY_SIDE_NAMES), comp)
    assert [o.status for o in res.outcomes] == ["fail", "error", "pass"]  # a null change fails closed


def test_compare_rule_names_are_checked():
    with pytest.raises(RuleError, match="not a compared metric"):
        bind(parse_rules(["throughput_raito >= 0.9"]), SIDE_BY_SIDE_NAMES)
    with pytest.raises(RuleError, match="not a compared metric"):
        bind(parse_rules(["throughput_ratio_moved >= 0"]), NOISE_NAMES)


def test_bootstrap_is_deterministic_and_separates_clear_shifts():
    base = [10.0, 11.0, 9.0, 10.5, 9.5, 10.2]
    up = [x + 100 for x in base]
    first = bootstrap_median_difference(base, up, resamples=2000, confidence=0.95, seed=7)
    assert first == bootstrap_median_difference(base, up, resamples=2000, confidence=0.95, seed=7)
    assert first[0] > 0  # every new sample is above every baseline one


@settings(max_examples=30, deadline=None)
@given(
    base=st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=12),
    new=st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=12),
    shift=st.floats(-1e3, 1e3),
)
def test_bootstrap_interval_moves_with_a_constant_shift(base, new, shift):
    """Same seed, same resampled indices: adding c to every new sample moves the interval by c."""
    low, high = bootstrap_median_difference(base, new, resamples=200, confidence=0.9, seed=1)
    low2, high2 = bootstrap_median_difference(base, [x + shift for x in new], resamples=200, confidence=0.9, seed=1)
    assert low <= high
    assert low2 == pytest.approx(low + shift, abs=1e-6) and high2 == pytest.approx(high + shift, abs=1e-6)


def test_noise_test_verdicts():
    flows = flow_figures("x", _report())
    same = noise_test(flows * 3, flows * 3, baseline_captures=3, new_captures=3, resamples=500)
    tp = same.shifts[0]
    assert (tp.metric, tp.moved, tp.difference) == ("throughput_Bps", 0, 0.0)
    assert same.throughput_ratio == 1.0 and "bootstrap" in same.method
    one = noise_test(flows[:1], flows, baseline_captures=1, new_captures=1, resamples=500)
    assert one.shifts[0].moved is None  # one baseline sample: no interval
    res = judge_noise(bind(parse_rules(["throughput_Bps_moved >= 0"]), NOISE_NAMES), one)
    assert res.exit_status == 2


# ---------------------------------------------------------------- the command
def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(["tcpsack-analyze", "compare", *args], capture_output=True, text=True, env=env, cwd=SAMPLES)


def _truth_throughput(run: str) -> float:
    flow = json.loads((SAMPLES / run / "truth.json").read_text())["flows"][0]
    return flow["bytes_sent"] / (flow["acked"] - flow["start"])


def test_compare_sack_against_nosack_matches_kernel_truth(tmp_path):
    expected = _truth_throughput("lab_reno_nosack_bursty") / _truth_throughput("lab_reno_sack_bursty")
    assert expected < 0.9  # the NewReno run took longer than the SACK one on the same path and loss
    junit = tmp_path / "cmp.xml"
    r = _run("lab_reno_sack_bursty/sender.pcap", "lab_reno_nosack_bursty/sender.pcap", "--format", "json",
             "--rule", "throughput_ratio >= 0.9", "--rule", "timeouts_change >= 0", "--junit", str(junit), "-j", "1")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["changes"][0]["throughput_ratio"] == pytest.approx(expected, rel=0.03)
    assert [o["status"] for o in doc["rules"]["outcomes"]] == ["fail", "pass"]
    cases = ET.parse(junit).getroot().findall("./testsuite/testcase")
    assert [c.find("failure") is not None for c in cases] == [True, False]


def test_compare_noise_same_runs_both_sides_is_deterministic():
    args = ["--baseline", "lab_bottleneck", "--baseline", "lab_reno_sack_bursty", "--new", "lab_bottleneck",
            "--new", "lab_reno_sack_bursty", "--rule", "throughput_Bps_moved == 0", "--format", "json", "--resamples", "500"]
    first, second = _run(*args), _run(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    doc = json.loads(first.stdout)
    assert all(s["moved"] == 0 and s["difference"] == 0 for s in doc["shifts"] if s["moved"] is not None)


def test_compare_bad_options_exit_2():
    assert _run("lab_bottleneck/sender.pcap", "--baseline", "x").returncode == 2
    r = _run("lab_bottleneck/sender.pcap", "lab_thin_stream/sender.pcap", "--rule", "troughput_ratio > 1")
    assert r.returncode == 2 and "not a compared metric" in r.stderr
    one = _run("lab_bottleneck/sender.pcap")  # a side-by-side of one item has no ratio to show
    assert one.returncode == 2 and one.stderr.count("\n") == 1 and "--flows" in one.stderr and not one.stdout
    flows = _run("lab_bottleneck/sender.pcap", "--flows")  # its two flows do compare
    assert flows.returncode == 0 and "Jain's fairness index across the 2 items" in flows.stdout
