"""Retransmission delay (RTD) and RTO backoff of thin streams against kernel truth (issue 13).

On the thin-stream lab runs (tests/data/lab/thin_*, README there), each kernel retransmission
is matched to our record (lab scoring) and its true RTD is measured from the sender capture: the
time from the previous transmission of the resend's *first byte* to the resend (DOMAIN.md
section 5; the thesis, seed 001, times each byte range from its own previous transmission).
The kernel says which packets are resends and when; the capture only supplies the earlier copies.

Thin streams under RTOs make the kernel merge queued messages into one resend (a 500-byte resend
of 5 messages, the first of which was lost 1.2 s earlier and the last sent once 0.3 s earlier),
which is where the RTD goes wrong today; the targets (per-run mean and p90 within 2 %, the RTO
backoff the kernel applied) are strict xfails, the rest pinned.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tcpsack_analyze.analysis import analyze
from tcpsack_analyze.lab.scoring import (
    STAMP_S,
    flow_map,
    rtd_pairs,
    sender_transmissions,
)
from tcpsack_analyze.seqspace import wire_sub
from tcpsack_analyze.truth import load

LAB = Path(__file__).parent / "data" / "lab"
THIN = sorted(p.parent.name for p in LAB.glob("thin_*/truth.json"))
LINEAR = [n for n in THIN if load(LAB / n).params["tcp"]["thin_linear_timeouts"]]


@dataclass(frozen=True)
class Resend:
    """One kernel retransmission matched to ours."""

    packet: int  # frame number in the sender capture (1-based)
    truth_ms: float  # RTD from the previous copy of its first byte
    ours_ms: float | None
    merged: bool  # the latest earlier copy of any of its bytes does not start at its first byte


@dataclass(frozen=True)
class ThinRun:
    resends: list[Resend]
    kernel_max_backoff: int  # icsk_backoff of the kernel's timer resends, at most
    ours_max_backoff: int  # the report's max_rto_backoff


def _analyse(name: str) -> ThinRun:
    run = LAB / name
    truth = load(run)
    an = analyze(str(run / "sender.pcap"), packets=True)
    flows = flow_map(an.connections, truth)
    wire = sender_transmissions(an.packets_df(), flows)
    ours = [r for res in an.loss.values() for r in res.retransmissions]
    resends = []
    for p in rtd_pairs(truth, ours, flows, wire):
        seg = p.segment
        assert p.truth_s is not None, (name, seg)
        earlier = [w for w in wire[seg.flow] if w.t < seg.t - STAMP_S]
        overlapping = max((w for w in earlier if wire_sub(w.seq, seg.seq) < seg.len or wire_sub(seg.seq, w.seq) < w.len),
                          key=lambda w: w.t)
        resends.append(Resend(p.ours.index + 1, p.truth_s * 1e3, None if p.ours_s is None else p.ours_s * 1e3, overlapping.seq != seg.seq))
    sender = next(c for c in an.report.connections if (c.id, "a2b") in flows or (c.id, "b2a") in flows)
    direction = sender.a2b if (sender.id, "a2b") in flows else sender.b2a
    return ThinRun(resends, max((r.backoff for r in truth.retransmissions if r.kind == "rto"), default=0), direction.loss.max_rto_backoff)


@pytest.fixture(scope="module")
def thin() -> dict[str, ThinRun]:
    return {name: _analyse(name) for name in THIN}


def _mean_p90(values: list[float]) -> tuple[float, float]:
    s = sorted(values)
    return sum(s) / len(s), s[int(0.9 * (len(s) - 1))]


def test_the_thin_runs_hold_merged_resends_and_long_timeout_chains(thin: dict[str, ThinRun]) -> None:
    assert {"thin_linear_merged", "thin_linear_long_burst", "thin_linear_timeouts", "thin_bursty_backoff"} <= set(THIN)
    assert sum(r.merged for run in thin.values() for r in run.resends) >= 15
    assert thin["thin_linear_long_burst"].kernel_max_backoff == 1  # 7 linear timeouts, then doubling


def test_rtd_of_resends_that_repeat_one_earlier_copy(thin: dict[str, ThinRun]) -> None:
    """Pinned: a resend whose bytes were last sent as one copy starting where it starts gets its
    RTD to 0.05 ms (capture stamps), on every thin run."""
    for name, run in thin.items():
        off = [r for r in run.resends if not r.merged and (r.ours_ms is None or abs(r.ours_ms - r.truth_ms) > 0.05)]
        assert not off, (name, off[:4])


def test_rtd_of_merged_resends_is_timed_from_the_previous_copy_of_their_first_byte(thin: dict[str, ThinRun]) -> None:
    """A merged resend is timed from the previous copy of its first byte (DOMAIN.md section 5),
    not from a later copy of its tail (a TLP or an RTO resend): thin_linear_merged packet 38,
    1201-1701, truth 1192.6 ms (was 308.6 ms)."""
    merged = [(name, r) for name, run in thin.items() for r in run.resends if r.merged]
    assert len(merged) >= 12
    off = [(name, r) for name, r in merged if r.ours_ms is None or abs(r.ours_ms - r.truth_ms) > 0.05]
    assert not off, off


def test_rtd_mean_and_p90_within_2_percent_target(thin: dict[str, ThinRun]) -> None:
    for name, run in thin.items():
        truth = _mean_p90([r.truth_ms for r in run.resends])
        ours = _mean_p90([r.ours_ms for r in run.resends if r.ours_ms is not None])
        assert ours == pytest.approx(truth, rel=0.02), name


def test_rto_backoff_with_exponential_timeouts(thin: dict[str, ThinRun]) -> None:
    """Pinned: without linear timeouts, consecutive timer resends are the backoff."""
    for name in set(THIN) - set(LINEAR):
        assert thin[name].ours_max_backoff == thin[name].kernel_max_backoff, name


@pytest.mark.xfail(strict=True, reason="issue 13: max_rto_backoff counts timer resends in a row (thin_linear_long_burst 7, "
                   "thin_linear_merged 7, thin_linear_timeouts 5) where tcp_thin_linear_timeouts kept the RTO flat "
                   "(kernel backoff 1, 1, 0)")
def test_rto_backoff_with_linear_timeouts_target(thin: dict[str, ThinRun]) -> None:
    for name in LINEAR:
        assert thin[name].ours_max_backoff == thin[name].kernel_max_backoff, name
