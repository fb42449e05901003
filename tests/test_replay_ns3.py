"""The sender models against ns-3 (tests/data/ns3: another TCP implementation, with its exact
cwnd traced): closed-loop goodput with the observed losses, and open-loop cwnd (issue 14).

Each run's own settings come from its truth.json, on SenderOptions.ns3(): ns-3's habits as
options of the models (``ca_growth="per_ack"``, RFC 5681 equation 3 per ACK as ns-3's TcpNewReno;
``ssthresh_from="pipe"``, ns-3's GetSsThresh(BytesInFlight); SACK kept across an RTO; and
``cubic_arithmetic="ns3"``, TcpCubic's segment counting and HyStart). docs/replay.md has the tables.
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
    """The model of the run's family and ns-3's settings as model options: ``cubic`` for
    TcpCubic, else ``sack`` (TcpNewReno's growth on TcpSocketBase's RFC 6675 recovery, over an
    emulated scoreboard when the receiver does not SACK: SenderOptions.ns3's bookkeeping)."""
    tcp = json.loads((NS3 / run / "truth.json").read_text())["params"]["tcp"]
    model = "cubic" if tcp["cc"] == "TcpCubic" else "sack"
    opts = dataclasses.replace(SenderOptions.ns3(), reduction="prr" if tcp["recovery"] == "TcpPrrRecovery" else "classic",
                               initial_ssthresh=tcp["initial_ssthresh"], rto_min_s=tcp["min_rto"])
    return model, opts


def goodput_ratio(run: str) -> tuple[float, int, int]:
    """Replay goodput / ns-3's, observed losses, 200 ms delayed ACKs (ns-3's); and the RTOs of
    the replay and of ns-3."""
    model, opts = settings(run)
    d = replay_capture(str(NS3 / run / "sender.pcap"), [model], options=opts, delack_ms=200).directions[0]
    assert d.observed is not None and d.observed.throughput_Bps is not None
    got = d.runs[0].outcome
    # the same holes, replayed by position; a lost resend the model never makes is not met
    # (cubic_nosack_rate_50: ns-3 resent 304 segments going back N after its RTOs, some of them
    # lost; the model resends 250 and meets more losses than ns-3's 26, not fewer)
    assert got.finished and got.lost >= 0.95 * d.observed.lost
    assert got.throughput_Bps is not None
    return got.throughput_Bps / d.observed.throughput_Bps, got.timeouts, d.observed.timeouts


WITHIN_5 = ("cubic_sack_prr_rate_250", "newreno_nosack_burst_250", "newreno_nosack_overshoot_50",
            "newreno_nosack_rate_50", "newreno_sack_overshoot_50", "newreno_sack_prr_burst_50", "newreno_sack_rate_50")


def test_goodput_with_the_observed_losses() -> None:
    """Issue 14 asks for ns-3's goodput within 5% on every ns-3 run: met on seven of ten
    (0.962-1.047, each with ns-3's number of RTOs); the other three within 15%
    (newreno_nosack_prr_rate_250 1.063, cubic_sack_prr_burst_50 1.096, cubic_nosack_rate_50
    1.114): docs/replay.md says what is left."""
    assert len(NS3_RUNS) == 10
    runs = {run: goodput_ratio(run) for run in NS3_RUNS}
    for run in WITHIN_5:
        ratio, rtos, ns3_rtos = runs[run]
        assert abs(ratio - 1) < 0.05 and rtos == ns3_rtos, (run, runs[run])
    assert all(abs(ratio - 1) < 0.15 for ratio, _, _ in runs.values()), runs


@pytest.mark.parametrize(("run", "state", "within_10pct"), [
    ("newreno_sack_overshoot_50", 0.99, 0.99),    # measured state 1.000, within 10% 1.000
    ("newreno_sack_prr_burst_50", 0.99, 0.99),    # 0.995, 1.000
    ("newreno_sack_rate_50", 0.99, 0.99),         # 1.000, 1.000
    ("newreno_nosack_rate_50", 0.99, 0.98),       # 0.998, 0.987
    ("newreno_nosack_burst_250", 0.99, 0.97),     # 0.996, 0.979
    ("newreno_nosack_overshoot_50", 0.99, 0.99),  # 0.998, 1.000
    ("newreno_nosack_prr_rate_250", 0.99, 0.99),  # 1.000, 1.000
    ("cubic_sack_prr_rate_250", 0.99, 0.99),      # 1.000, 1.000
    ("cubic_sack_prr_burst_50", 0.99, 0.96),      # 0.998, 0.967
    ("cubic_nosack_rate_50", 0.99, 0.73),         # 0.998, 0.736: small windows, one segment is over 10%
])
def test_open_loop_cwnd_against_ns3(run: str, state: float, within_10pct: float) -> None:
    """Issue 14: the open-loop cwnd within one segment of ns-3's for >= 95% of the ACKs outside
    recovery. Met on all ten runs, 100% each: the model of ns-3's TcpNewReno is ``sack`` with or
    without SACK (ns-3 runs its RFC 6675 recovery over an emulated scoreboard without SACK,
    ``bookkeeping="ns3"``), TcpCubic's arithmetic as ns-3 3.44 has it, and the truth's state taken
    before each ACK (docs/replay.md has the before/after table)."""
    model, opts = settings(run)
    inf = infer_capture(str(NS3 / run / "sender.pcap"), [model], opts)
    d = next(x for x in inf.directions if x.direction == "a2b")
    c = compare(d.runs[0], load(NS3 / run), 0, d.smss)
    assert c.acks_open >= 80 and c.within_one == 1.0 and c.state_match >= state and c.within_10pct >= within_10pct
    assert d.runs[0].conformance >= 0.99  # ns-3's sends fit the model's window and timer
    # the flight size alone is far off (at most 13%: cubic_nosack_rate_50, whose many recoveries
    # end on ACKs that are now judged by ns-3's state before them, Open, and leave a small flight)
    assert c.naive_within_one < 0.15 and c.within_one > c.naive_within_one + 0.4
