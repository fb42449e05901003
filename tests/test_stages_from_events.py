"""The stages behind the event boundary, driven by hand-built events (no capture file).

Each conversation is written as the data sender's sends and the receiver's ACKs of one direction,
with explicit times (ms), as a notebook user would feed them; the RTT stage and the loss tracker
run on them exactly as the pipeline runs them (tests/test_loss_tracker.py pins the same rules
through captures).
"""
from __future__ import annotations

import numpy as np
import pytest

from tcpsack_analyze.events import ACK, Ack, EventBatch, Placement, Send, StreamFacts
from tcpsack_analyze.loss.tracker import LossResult, LossTracker
from tcpsack_analyze.rtt import Rfc6298, RttSampler

MSS = 1000
RTT_MS = 100.0
FACTS = StreamFacts(mss=MSS, seq_anchor=1000, turnaround_ns=0, receiver_turnaround_ns=int(RTT_MS * 1e6))


class Talk:
    """A direction's conversation, event by event (record numbers in order)."""

    def __init__(self) -> None:
        self.events: list[Send | Ack] = []

    def send(self, t_ms: float, seg: int, placement: Placement = Placement.NEW) -> None:
        self.events.append(Send(int(t_ms * 1e6), len(self.events), 1 + seg * MSS, 1 + (seg + 1) * MSS, ACK, None, placement))

    def ack(self, t_ms: float, seg: int, sack: tuple[tuple[int, int], ...] = (), dup: bool = False, dsack: bool = False) -> None:
        blocks = tuple((1 + a * MSS, 1 + b * MSS) for a, b in sack)
        self.events.append(Ack(int(t_ms * 1e6), len(self.events), 1 + seg * MSS, blocks, dsack, dup, 65535, None, ACK))

    def warm_up(self, n: int = 4) -> float:
        """Segments 0..n-1, each acknowledged one RTT later: RTT samples of 100 ms."""
        t = 0.0
        for k in range(n):
            self.send(t, k)
            self.ack(t + RTT_MS, k + 1)
            t += RTT_MS + 0.1
        return t

    def run(self, batches: int = 1) -> LossResult:
        """Feed the events to the RTT stage and the loss tracker, split into ``batches``."""
        ev = EventBatch.of(self.events)
        rtt, tracker = RttSampler(), LossTracker(0)
        for part in np.array_split(np.arange(len(ev)), batches):
            if part.size:
                b = ev.take(part)
                tracker.feed(b, now=int(b.time_ns[-1]), facts=FACTS, rtt=rtt.feed(b))
        return tracker.finish()


def fast_retransmit() -> Talk:
    """Segments 4-9 after the warm-up; 5 is lost, three SACKing dupACKs, its resend, the full ACK."""
    talk = Talk()
    t = talk.warm_up()
    for k in range(4, 10):  # 5 is lost
        talk.send(t + (k - 4), k)
    talk.ack(t + RTT_MS, 5)
    for k, seg in enumerate((6, 7, 8)):
        talk.ack(t + RTT_MS + 2 + k, 5, sack=((6, seg + 1),), dup=True)
    talk.send(t + RTT_MS + 4.1, 5, Placement.REXMIT)
    talk.ack(t + 2 * RTT_MS + 4.1, 10)
    return talk


def test_fast_retransmit_after_three_dupacks_ends_with_the_full_ack() -> None:
    res = fast_retransmit().run()
    (r,) = res.retransmissions
    assert (r.trigger, r.dupacks, r.sacked_segments, r.ca_state) == ("fast", 3, 3, "Recovery")
    assert r.rtd_ns == pytest.approx((RTT_MS + 3.1) * 1e6)
    (ep,) = res.episodes
    assert (ep.trigger, ep.ended, ep.recovery_point) == ("fast", "full_ack", 1 + 10 * MSS)
    (lost,) = res.lost
    assert lost.original and lost.where == "downstream" and lost.start == 1 + 5 * MSS
    assert r.seq == (1000 + 1 + 5 * MSS) % 2**32  # the wire number comes from the stream's anchor


def test_timer_resends_with_doubling_backoff_are_one_rto_episode() -> None:
    talk = Talk()
    t = talk.warm_up()
    talk.send(t, 4)
    talk.send(t + 1, 5)  # both lost
    talk.send(t + 500, 4, Placement.REXMIT)
    talk.send(t + 1500, 4, Placement.REXMIT)
    talk.ack(t + 1500 + RTT_MS, 6)
    res = talk.run()
    first, second = res.retransmissions
    assert (first.trigger, first.backoff, second.trigger, second.backoff) == ("rto", 0, "rto", 1)
    assert first.episode == second.episode == 0 and res.episodes[0].rtos == 2


def test_dsack_marks_the_resend_spurious() -> None:
    talk = Talk()
    t = talk.warm_up()
    talk.send(t, 4)
    talk.send(t + 500, 4, Placement.REXMIT)  # the original was only late
    talk.ack(t + 590, 5)
    talk.ack(t + 500 + RTT_MS, 5, sack=((4, 5),), dsack=True)
    res = talk.run()
    (r,) = res.retransmissions
    assert r.spurious == "dsack" and res.lost == []


def _probe_before_the_sack_of_its_original(talk: Talk, dsack: bool = False) -> None:
    """Segment 4 is lost, segment 5 arrives; a probe resends 5 just before 5's SACK comes back
    (the lab's thin streams, lab_thin_stream and thin_300: a tail-loss probe of the highest
    segment 2 SRTT after its send, its original's SACK 1 RTT after)."""
    t = talk.warm_up()
    talk.send(t, 4)
    talk.send(t + 10, 5)
    talk.send(t + 10 + RTT_MS - 20, 5, Placement.REXMIT)  # the probe, 80 ms after 5's original
    talk.ack(t + RTT_MS + 10, 4, sack=((5, 6),), dup=True)  # 5's original arrived
    if dsack:  # the probe arrives too: the receiver reports its bytes twice
        talk.ack(t + 10 + 2 * RTT_MS - 20, 4, sack=((5, 6), (5, 6)), dup=True, dsack=True)
    talk.send(t + 300, 4, Placement.REXMIT)
    talk.ack(t + 300 + RTT_MS, 6)


def test_a_sack_sooner_than_the_resend_could_cause_shows_it_unneeded() -> None:
    """DOMAIN.md s4: an ACK sooner than the minimum RTT after a resend shows it spurious; a SACK
    block is such an ACK. The probe's original was not lost: one loss, segment 4."""
    talk = Talk()
    _probe_before_the_sack_of_its_original(talk)
    res = talk.run()
    probe = next(r for r in res.retransmissions if r.start == 1 + 5 * MSS)
    assert probe.spurious == "early_ack"
    assert [(x.start, x.original) for x in res.lost] == [(1 + 4 * MSS, True)]


def test_a_later_dsack_names_the_evidence() -> None:
    """The receiver's D-SACK of the probe's bytes, arriving after the SACK that already showed the
    probe unneeded, makes the evidence ``dsack``: the receiver's own word outranks timing."""
    talk = Talk()
    _probe_before_the_sack_of_its_original(talk, dsack=True)
    res = talk.run()
    probe = next(r for r in res.retransmissions if r.start == 1 + 5 * MSS)
    assert probe.spurious == "dsack" and len(res.lost) == 1


def _thin_probe_then_timer(talk: Talk, ack_past_probe: bool) -> None:
    """A thin stream: segment 4 is lost and probed; the ACK of the probe reaches exactly the
    probe's end (5), or beyond it when segment 5 arrived too; segment 5 is lost and resent by
    the timer (lab run thin_random10, rel. seq 3901 and 13101)."""
    t = talk.warm_up()
    talk.send(t, 4)
    talk.send(t + 2 * RTT_MS + 50, 4, Placement.REXMIT)  # the probe: highest segment, no ACK
    talk.ack(t + 3 * RTT_MS + 50, 5)
    talk.send(t + 3 * RTT_MS + 60, 5)
    if ack_past_probe:
        talk.send(t + 3 * RTT_MS + 70, 6)
        talk.ack(t + 4 * RTT_MS + 70, 7, sack=())  # beyond the probe's end: its episode is over
        talk.send(t + 4 * RTT_MS + 80, 7)
        talk.send(t + 7 * RTT_MS, 7, Placement.REXMIT)
    else:
        talk.send(t + 6 * RTT_MS, 5, Placement.REXMIT)
    talk.ack(t + 8 * RTT_MS, 8 if ack_past_probe else 6)


@pytest.mark.parametrize("ack_past_probe", [False, True])
def test_one_tail_loss_probe_until_an_ack_beyond_it(ack_past_probe: bool) -> None:
    """RFC 8985 s7.4 and Linux's tlp_high_seq: an ACK that only reaches the probe's end (the
    probe was a resend and snd_una advanced) leaves it open, and the next timer is an RTO, not a
    second probe, though new data went out in between; an ACK beyond it allows the next probe."""
    talk = Talk()
    _thin_probe_then_timer(talk, ack_past_probe)
    res = talk.run()
    probe, timer = res.retransmissions
    assert probe.trigger == "tlp"
    assert timer.trigger == ("tlp" if ack_past_probe else "rto")


@pytest.mark.parametrize("batches", [2, 3, 7])
def test_batching_does_not_change_the_findings(batches: int) -> None:
    talk = Talk()
    t = talk.warm_up()
    for k in range(4, 10):
        talk.send(t + (k - 4), k)
    for k, seg in enumerate((6, 7, 8)):
        talk.ack(t + RTT_MS + 2 + k, 5 if k else 4, sack=((6, seg + 1),), dup=bool(k))
    talk.send(t + RTT_MS + 4.1, 5, Placement.REXMIT)
    talk.send(t + RTT_MS + 4.2, 4, Placement.REXMIT)
    talk.ack(t + 2 * RTT_MS + 4.1, 10)
    one, many = talk.run(), talk.run(batches)
    assert one.retransmissions == many.retransmissions and one.episodes == many.episodes
    assert one.rtd_samples_ns.tolist() == many.rtd_samples_ns.tolist()


def test_rtt_sampler_follows_karn() -> None:
    """A segment resent before its ACK gives no data/ACK sample (RFC 6298 section 3)."""
    talk = Talk()
    talk.send(0, 0)
    talk.ack(100, 1)  # clean: 100 ms
    talk.send(200, 1)
    talk.send(900, 1, Placement.REXMIT)
    talk.ack(1000, 2)  # ambiguous: no sample
    talk.send(1100, 2)
    talk.ack(1180, 3)  # clean: 80 ms
    sampler = RttSampler()
    sampler.feed(EventBatch.of(talk.events))
    assert sorted(sampler.samples.array().tolist()) == [80_000_000, 100_000_000]


def test_rfc6298_estimator() -> None:
    est = Rfc6298()
    assert est.rto(granularity=0.001) is None
    est.update(100.0)
    assert (est.srtt, est.rttvar) == (100.0, 50.0)  # section 2.2
    assert est.rto(granularity=1.0, minimum=1000.0) == 1000.0  # 300 ms, raised to the 1 s floor
    est.update(200.0)
    assert est.rttvar == pytest.approx(0.75 * 50 + 0.25 * 100)  # section 2.3, RTTVAR first
    assert est.srtt == pytest.approx(0.875 * 100 + 0.125 * 200)


def test_head_resent_inside_a_recovery_not_ack_clocked_is_a_timeout() -> None:
    """Issue 13: a stalled recovery's timer fires while dupACKs still arrive (RFC 6298 s. 5;
    RFC 6582 s. 4's Impatient timer fires well before an RTO after the head's last copy): the
    head resent 3 ms after the last dupACK and the previous send is ``rto`` and ends the fast
    episode; the go-back-N resend at the next partial ACK is that timeout episode's recovery."""
    talk = Talk()
    t = talk.warm_up()
    for k in range(4, 13):  # 5 and 6 are lost
        talk.send(t + (k - 4) * 0.2, k)
    talk.ack(t + RTT_MS, 5)
    for k in range(3):
        talk.ack(t + RTT_MS + 2 + k, 5, dup=True)
    talk.send(t + RTT_MS + 4, 5, Placement.REXMIT)  # fast retransmit, lost again
    for k in range(3, 7):
        talk.ack(t + RTT_MS + 2 + k, 5, dup=True)
    talk.send(t + RTT_MS + 11, 5, Placement.REXMIT)  # the timer: 3 ms after the last dupACK
    talk.ack(t + 2 * RTT_MS + 11, 6)  # partial ACK
    talk.send(t + 2 * RTT_MS + 11, 6, Placement.REXMIT)  # go-back-N at the ACK's instant
    talk.ack(t + 3 * RTT_MS + 11, 13)
    res = talk.run()
    fast, timer, gbn = res.retransmissions
    assert (fast.trigger, fast.ca_state) == ("fast", "Recovery")
    assert (timer.trigger, timer.ca_state, timer.episode) == ("rto", "Loss", 1)
    assert (gbn.trigger, gbn.episode_trigger, gbn.ca_state, gbn.episode) == ("recovery", "rto", "Loss", 1)
    assert [(e.trigger, e.ended) for e in res.episodes] == [("fast", "rto"), ("rto", "full_ack")]


def test_go_back_n_after_an_undone_timeout_resumes_its_episode() -> None:
    """Issue 13: a timeout judged spurious ends its episode ``undone``, but a sender that does
    not undo (ns-3) goes on with go-back-N: an ACK-clocked resend below snd_max with no dupACK
    then resumes the Loss episode instead of coming out ``ambiguous``."""
    talk = Talk()
    t = talk.warm_up()
    for k in (4, 5, 6):  # 4 delayed, 5 lost
        talk.send(t + (k - 4), k)
    talk.send(t + 400, 4, Placement.REXMIT)  # the timer
    talk.ack(t + 450, 5)  # the delayed original: too soon to be the resend's
    talk.send(t + 450, 5, Placement.REXMIT)  # go-back-N, clocked by that ACK
    talk.ack(t + 550, 7)
    res = talk.run()
    timer, gbn = res.retransmissions
    assert (timer.trigger, timer.spurious) == ("rto", "early_ack")
    assert (gbn.trigger, gbn.episode, gbn.ca_state, gbn.dupacks) == ("recovery", timer.episode, "Loss", 0)
    (ep,) = res.episodes
    assert (ep.trigger, ep.ended, ep.retransmissions) == ("rto", "full_ack", 2)
