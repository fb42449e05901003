"""The sender models against ns-3 (tests/data/ns3: another TCP implementation, with its exact
cwnd traced): closed-loop goodput with the observed losses, and open-loop cwnd (issue 14).

Each run's own settings come from its truth.json; two ns-3 habits are options of the models:
``ca_growth="per_ack"`` (RFC 5681 equation 3 per ACK, as ns-3's TcpNewReno) and
``ssthresh_from="pipe"`` (ns-3's GetSsThresh(BytesInFlight)). docs/replay.md has the tables.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tcpsack_analyze.models import SenderOptions
from tcpsack_analyze.models.infer import infer_capture
from tcpsack_analyze.models.validate import compare
from tcpsack_analyze.replay.capture import replay_capture
from tcpsack_analyze.truth import load

NS3 = Path(__file__).resolve().parent / "data" / "ns3"
NS3_RUNS = sorted(p.name for p in NS3.iterdir() if (p / "truth.json").exists())


def settings(run: str) -> tuple[str, SenderOptions]:
    """The model of the run's family and ns-3's settings as model options."""
    tcp = json.loads((NS3 / run / "truth.json").read_text())["params"]["tcp"]
    model = "cubic" if tcp["cc"] == "TcpCubic" else "sack" if tcp["sack"] else "newreno"
    opts = dataclasses.replace(SenderOptions.rfc(), reduction="prr" if tcp["recovery"] == "TcpPrrRecovery" else "classic",
                               initial_ssthresh=tcp["initial_ssthresh"], rto_min_s=tcp["min_rto"],
                               ca_growth="per_ack", ssthresh_from="pipe")
    return model, opts


def goodput_ratio(run: str) -> float:
    """Replay goodput / ns-3's, observed losses, 200 ms delayed ACKs (ns-3's)."""
    model, opts = settings(run)
    d = replay_capture(str(NS3 / run / "sender.pcap"), [model], options=opts, delack_ms=200).directions[0]
    assert d.observed is not None and d.observed.throughput_Bps is not None
    got = d.runs[0].outcome
    # the same holes, replayed by position; a lost resend the model never makes is not met
    # (cubic_nosack_rate_50: ns-3 resent 304 segments going back N after its RTOs, one of them
    # lost; the model resends 40 and meets 25 of the 26 losses)
    assert got.finished and got.lost >= 0.95 * d.observed.lost
    assert got.throughput_Bps is not None
    return got.throughput_Bps / d.observed.throughput_Bps


def test_goodput_with_the_observed_losses() -> None:
    """Issue 14 asks for ns-3's goodput within 5% on every ns-3 run. It holds on
    cubic_sack_prr_burst_50 (0.99); the ten runs span 0.56-1.14. Pinned: the one that holds,
    and the spread."""
    assert len(NS3_RUNS) == 10
    ratios = {run: goodput_ratio(run) for run in NS3_RUNS}
    assert abs(ratios["cubic_sack_prr_burst_50"] - 1) < 0.05
    assert all(0.5 < r < 1.2 for r in ratios.values()), ratios


@pytest.mark.parametrize(("run", "within_one", "state"), [
    ("newreno_sack_overshoot_50", 0.99, 0.99),   # measured 1.000, 0.995
    ("newreno_sack_prr_burst_50", 0.99, 0.96),   # 1.000, 0.967
    ("newreno_sack_rate_50", 0.99, 0.91),        # 1.000, 0.916
    ("newreno_nosack_burst_250", 0.93, 0.96),    # 0.937, 0.969
    ("newreno_nosack_overshoot_50", 0.92, 0.99),  # 0.925, 0.995
])
def test_open_loop_cwnd_against_ns3(run: str, within_one: float, state: float) -> None:
    """Issue 14: the open-loop cwnd within one segment of ns-3's for >= 95% of the ACKs outside
    recovery. Met on the three NewReno + SACK runs (100%); 92-94% on two NewReno runs without
    SACK; not met on the other two without SACK (48%, 76%) nor on CUBIC (4-26%): docs/replay.md."""
    model, opts = settings(run)
    inf = infer_capture(str(NS3 / run / "sender.pcap"), [model], opts)
    d = next(x for x in inf.directions if x.direction == "a2b")
    c = compare(d.runs[0], load(NS3 / run), 0, d.smss)
    assert c.within_one >= within_one and c.state_match >= state
    assert c.naive_within_one < 0.1  # the flight size alone is far off
