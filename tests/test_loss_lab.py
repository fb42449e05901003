"""Loss forensics against kernel truth on every lab capture (the loss-forensics acceptance bar).

Runs the analysis on each sender-side capture of ``sample_traces/lab_*`` and
``tests/data/lab/*`` and scores it with :mod:`tcpsack_analyze.lab.scoring`:
retransmissions found (precision and recall >= 99 %), triggers agreeing with the kernel's
congestion state (>= 95 %) with tail loss probes recognised, lost transmissions equal to the
emulator's drop log (>= 98 %, drops of copies an earlier copy had already delivered left apart:
nothing resends them, so no sender-side analysis can see them), and the burst-length histogram.
Receiver-side captures must find the losses as holes later filled, and mid-path captures must
place each loss on the right side of the capture point.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tcpsack_analyze.analysis import analyze
from tcpsack_analyze.lab.scoring import Score, flow_map, score, sender_transmissions
from tcpsack_analyze.truth import load

ROOT = Path(__file__).parents[1]
RUNS = sorted(p.parent for d in ("sample_traces", "tests/data/lab") for p in (ROOT / d).glob("*/truth.json"))
SENDER_RUNS = [r for r in RUNS if (r / "sender.pcap").exists()]
RECEIVER_RUNS = [r for r in RUNS if (r / "receiver.pcap").exists()]
MID_RUNS = [r for r in RUNS if (r / "mid.pcap").exists()]


def _score(run: Path, capture: str, vantage: str) -> Score:
    truth = load(run)
    an = analyze(str(run / capture))
    flows = flow_map(an.connections, truth)
    tx = sender_transmissions(analyze(str(run / "sender.pcap"), packets=True).packets_df(), flows) if (run / "sender.pcap").exists() else None
    rx = [r for res in an.loss.values() for r in res.retransmissions]
    lost = [x for res in an.loss.values() for x in res.lost]
    return score(truth, rx, lost, flows, tx, vantage=vantage)


@pytest.fixture(scope="module")
def sender_scores() -> dict[str, Score]:
    return {run.name: _score(run, "sender.pcap", "sender") for run in SENDER_RUNS}


def test_every_kernel_retransmission_is_found_and_nothing_else(sender_scores: dict[str, Score]) -> None:
    truth = sum(s.retrans_truth for s in sender_scores.values())
    ours = sum(s.retrans_ours for s in sender_scores.values())
    matched = sum(s.retrans_matched for s in sender_scores.values())
    assert truth >= 600  # the bar is measured on a real amount of data
    assert matched / truth >= 0.99 and matched / ours >= 0.99, {k: s.summary() for k, s in sender_scores.items()}
    for name, s in sender_scores.items():
        assert s.retrans_recall >= 0.97 and s.retrans_precision >= 0.97, (name, s.summary())


def test_triggers_agree_with_the_kernel_state(sender_scores: dict[str, Score]) -> None:
    # issue 13's bar: >= 97% on the corpus with SACK and on the one without; per run, only
    # lab_thin_stream misses one (rel. seq 12001, resent 200 ms after an RTO of 11801 at a SACK
    # hole: the kernel had left Loss for Recovery, by its F-RTO/undo logic that we do not model;
    # we keep the timeout episode until its recovery point)
    for corpus in ("sack", "nosack"):
        part = [s for name, s in sender_scores.items() if ("nosack" in name) == (corpus == "nosack")]
        matched = sum(s.retrans_matched for s in part)
        agree = sum(s.trigger_agreement * s.retrans_matched for s in part)
        assert matched >= 300 and agree / matched >= 0.99, corpus
    for name, s in sender_scores.items():
        assert s.trigger_agreement == 1.0 or (name == "lab_thin_stream" and s.trigger_agreement >= 0.93), (name, s.summary(), s.trigger_confusion)
    tlp = sum(s.tlp_truth for s in sender_scores.values())
    tlp_found = sum(s.tlp_recall * s.tlp_truth for s in sender_scores.values())
    assert tlp >= 20 and tlp_found / tlp >= 0.9


def test_lost_transmissions_equal_the_drop_log(sender_scores: dict[str, Score]) -> None:
    """Pooled over the sender-side runs. What we miss: in nosack_random10, 3 needed resends
    (relative seq 82537, 131769, 181001), each the last of a go-back-N train sent after a hole
    whose own resend was lost again; one cumulative ACK ~7 RTTs later covered the whole train,
    which without SACK cannot tell which copies the receiver already had, so the train is called
    spurious (docs/report.md, ``spurious``) and its originals not lost."""
    needed = sum(s.drops_truth - s.drops_redundant for s in sender_scores.values())
    found = sum(s.drops_matched for s in sender_scores.values())
    ours = sum(s.drops_ours for s in sender_scores.values())
    assert needed >= 300
    assert found / needed >= 0.995 and found / ours >= 0.995, {k: s.summary() for k, s in sender_scores.items()}
    # a tail-loss probe whose original's SACK came back sooner than the probe's own could is
    # unneeded, and its original not lost (lab_thin_stream, thin_300)
    assert found == ours


def test_burst_histogram_equals_the_drop_logs(sender_scores: dict[str, Score]) -> None:
    """Ours from analyze() against the drop log's runs over the transmissions a sender-side
    analysis can know of (drops of copies an earlier copy had already delivered leave no trace:
    nothing resends them; lab/scoring.drops_seen). Equal on every run but nosack_random10, whose
    three needed go-back-N resends the capture cannot tell from unneeded ones (see
    test_lost_transmissions_equal_the_drop_log), and there off by at most those."""
    differ = []
    for run in SENDER_RUNS:
        an = analyze(str(run / "sender.pcap"))
        ours: Counter[int] = Counter()
        for res in an.loss.values():
            ours.update(_bursts(res))
        s = sender_scores[run.name]
        assert s.bursts_seen is not None
        if dict(ours) != s.bursts_seen:
            differ.append(run.name)
            errors = (s.drops_truth - (s.drops_redundant or 0) - s.drops_matched) + (s.drops_ours - s.drops_matched)
            assert 0 < errors and abs(sum(k * v for k, v in ours.items()) - sum(k * v for k, v in s.bursts_seen.items())) <= errors, run.name
    assert differ == ["nosack_random10"] and len(SENDER_RUNS) >= 20, differ


def _bursts(res) -> list[int]:
    from tcpsack_analyze.loss.patterns import bursts

    return [int(n) for n in bursts(res.lost_flags)[:, 1]]


@pytest.mark.parametrize("run", RECEIVER_RUNS, ids=lambda r: r.name)
def test_receiver_side_losses_are_holes_later_filled(run: Path) -> None:
    s = _score(run, "receiver.pcap", "receiver")
    an = analyze(str(run / "receiver.pcap"))
    lost = [x for res in an.loss.values() for x in res.lost]
    assert lost and all(x.where == "upstream" and x.index is None for x in lost)
    # one loss per hole filled: a dropped retransmission of the same hole is invisible
    # downstream, as is an original dropped at the end of a flight (drops_hidden); every other
    # drop is found, and the loss pattern from the holes has the drop log's bursts
    assert s.drops_hidden is not None and s.drops_matched == s.drops_ours == s.drops_truth - s.drops_hidden, s.summary()
    ours: Counter[int] = Counter()
    for res in an.loss.values():
        ours.update(_bursts(res))
    assert dict(ours) == s.bursts_seen


@pytest.fixture(scope="module")
def mid_scores() -> dict[str, Score]:
    return {run.name: _score(run, "mid.pcap", "mid") for run in MID_RUNS}


def test_mid_path_losses_are_placed_up_or_downstream_of_the_capture(mid_scores: dict[str, Score]) -> None:
    """The drop log says on which side of the mid capture point each drop happened; we say it
    from the capture alone: a hole later filled is an upstream loss, a resend of something seen
    here a downstream one. Measured on midpath_random and midpath_bursty: downstream P 1.0 R 1.0
    (16 + 15 drops), upstream P 1.0 R 0.89 and 0.92 (16 of 18, 33 of 36).

    What no mid-path analysis can see, and the bound allows: a resend dropped upstream. Its
    bytes either are a hole here already (the original was dropped upstream too: one hole,
    filled once, whatever number of copies died before it) or were seen here before (the
    original was dropped downstream: the next copy that gets here is just a later resend).
    Those are the truth's retransmissions that the emulator dropped upstream
    (``retrans_dropped`` at this vantage), and they are exactly the upstream drops we miss."""
    for name, s in mid_scores.items():
        assert all(truth == ours for truth, ours in s.place_confusion), (name, s.place_confusion)  # no loss misplaced
        assert s.downstream.truth >= 15 and s.downstream.precision == 1.0 and s.downstream.recall == 1.0, (name, s.summary())
        assert s.upstream.truth >= 18 and s.upstream.precision == 1.0, (name, s.summary())
        assert s.retrans_dropped > 0, name  # the runs do hold resends dropped upstream
        assert s.upstream.matched == s.upstream.truth - s.retrans_dropped, (name, s.summary(), s.unmatched_drops)
        # each upstream loss we found is a hole that a kernel resend filled first
        assert s.retrans_fills >= s.upstream.matched, (name, s.retrans_fills)
        # and the resends the mid point sees as resends (the rest that got here) are all found
        assert s.retrans_recall == 1.0 and s.retrans_precision == 1.0, (name, s.summary())
    upstream = sum(s.upstream.truth for s in mid_scores.values())
    found = sum(s.upstream.matched for s in mid_scores.values())
    assert upstream >= 50 and found / upstream >= 0.88


def _rto_rtds(name: str) -> list[tuple[int, float]]:
    res = analyze(str(ROOT / "tests" / "data" / "lab" / name / "sender.pcap")).loss[(0, "a2b")]
    """(timer resends before it in its run, RTD ms) of each timer resend."""
    return [(r.rto_run - 1, r.rtd_ns / 1e6) for r in res.retransmissions if r.trigger == "rto" and r.rtd_ns is not None]


def test_thin_stream_rtds_sit_at_the_rto_level_and_double_with_backoff() -> None:
    """Thin stream, bursty loss: successive timeouts of one segment double (RFC 6298 5.5), as in
    the thesis tables; the kernel truth of this run has backoff 0-5."""
    rtds = _rto_rtds("thin_bursty_backoff")
    assert max(b for b, _ in rtds) >= 4
    for (b0, x0), (b1, x1) in zip(rtds, rtds[1:]):
        if b1 == b0 + 1 and b0 >= 1:
            assert x1 == pytest.approx(2 * x0, rel=0.1)
    assert min(x for b, x in rtds if b == 1) > 400  # RTO level: well above the 200 ms RTT


def test_thin_linear_timeouts_keep_the_rto_flat() -> None:
    """tcp_thin_linear_timeouts: up to 6 timeouts of a thin stream without doubling."""
    later = [x for b, x in _rto_rtds("thin_linear_timeouts") if b >= 1]
    assert len(later) >= 6 and max(later) < 1.2 * min(later)
