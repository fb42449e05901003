"""RFC 6675 scoreboard: the RFC's rules case by case, then against a per-octet reference."""
from __future__ import annotations

import time

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from scoreboard_reference import ReferenceScoreboard

from tcpsack_analyze.scoreboard import AckResult, NextSegment, Scoreboard

S = 100  # SMSS of the unit tests


def sent(n_segments: int, smss: int = S, dup_thresh: int = 3) -> Scoreboard:
    """A scoreboard that has sent ``n_segments`` full segments from 0 at t = 0..n-1."""
    sb = Scoreboard(smss, dup_thresh)
    for i in range(n_segments):
        sb.on_send(i * smss, (i + 1) * smss, float(i))
    return sb


def segs(*indices: int) -> list[tuple[int, int]]:
    """SACK blocks for whole segments of S octets, one block per index."""
    return [(i * S, (i + 1) * S) for i in indices]


# ---------------------------------------------------------------------- IsLost (section 4)


def test_islost_needs_dupthresh_discontiguous_segments() -> None:
    sb = sent(10)
    sb.on_ack(0, segs(2, 4), 1.0)
    assert not sb.is_lost(0)  # two SACKed segments, 200 octets: neither rule
    sb.on_ack(0, segs(6), 1.1)
    assert sb.is_lost(0) and sb.is_lost(100) and sb.is_lost(199)
    assert not sb.is_lost(300)  # only two SACKed segments above
    assert sb.lost_below == 200


def test_islost_byte_rule_is_strictly_more_than_dupthresh_minus_one_smss() -> None:
    sb = sent(10)
    sb.on_ack(0, [(100, 300)], 1.0)  # exactly (DupThresh - 1) * SMSS octets
    assert not sb.is_lost(0)
    sb.on_ack(0, [(100, 301)], 1.1)  # one octet more
    assert sb.is_lost(0)


def test_islost_small_discontiguous_segments_count_as_segments() -> None:
    sb = Scoreboard(S)
    for seq in range(0, 100, 10):  # ten 10-octet segments (a thin stream)
        sb.on_send(seq, seq + 10, 0.0)
    sb.on_ack(0, [(10, 20), (30, 40)], 1.0)
    assert not sb.is_lost(0)
    sb.on_ack(0, [(50, 60)], 1.1)  # third discontiguous SACKed segment; 30 octets only
    assert sb.is_lost(0) and sb.is_lost(5) and not sb.is_lost(25)


def test_islost_contiguous_small_segments_count_conservatively() -> None:
    # segment boundaries are not kept: 30 contiguous SACKed octets count as one segment
    sb = Scoreboard(S)
    for seq in range(0, 100, 10):
        sb.on_send(seq, seq + 10, 0.0)
    sb.on_ack(0, [(10, 40)], 1.0)
    assert not sb.is_lost(0)


def test_islost_of_a_sacked_octet_counts_only_octets_above_it() -> None:
    sb = sent(10)
    sb.on_ack(0, [(100, 400)], 1.0)
    assert sb.is_lost(0)
    assert sb.is_lost(100)  # 299 octets above 100
    assert not sb.is_lost(200)  # 199 octets above, two segments


# ---------------------------------------------------------------------- SetPipe (section 4)


def test_pipe_counts_unsacked_octets_that_are_not_lost() -> None:
    sb = sent(5)
    assert sb.pipe() == 500 and sb.pipe_segments() == 5
    sb.on_ack(0, segs(1, 2), 1.0)  # hole [0, 100) not lost yet
    assert sb.pipe() == 300 and sb.pipe_segments() == 2 + 1


def test_pipe_with_another_loss_boundary() -> None:
    sb = sent(5)
    sb.on_ack(0, segs(1, 3), 1.0)  # holes [0, 100), [200, 300), [400, 500): none lost by IsLost
    assert sb.lost_below == 0 and sb.pipe() == 300
    assert sb.pipe(lost_below=sb.high_sack) == 100  # RACK: the holes below the highest SACK
    assert sb.pipe(lost_below=10_000) == 0 and sb.pipe(lost_below=-5) == 300  # clamped


def test_pipe_before_and_after_retransmission() -> None:
    sb = sent(10)
    r = sb.on_ack(0, segs(1) + [(300, 1000)], 1.0)  # holes [0, 100) and [200, 300), both lost
    assert r.loss_detected and r.dup_acks == 1  # by IsLost, before DupThresh dupACKs
    assert sb.pipe() == 0
    assert sb.enter_recovery(1.0) == (0, 100)
    assert sb.high_rxt == 100 and sb.rescue_rxt == 100 and sb.recovery_point == 1000
    sb.on_send(0, 100, 1.0, retransmission=True)
    assert sb.pipe() == 100  # lost but retransmitted: counted once
    assert sb.next_seg() == NextSegment(200, 300, 1)
    sb.on_send(200, 300, 1.0, retransmission=True)
    assert sb.pipe() == 200 and sb.pipe_segments() == 2 and sb.high_rxt == 300
    sb.on_send(1000, 1100, 1.1)
    assert sb.pipe() == 300  # new data is in the pipe, not lost


def test_pipe_counts_retransmitted_octet_twice_when_not_lost() -> None:
    sb = sent(5)
    sb.on_ack(0, segs(2), 1.0)
    sb.enter_recovery(1.0)  # the caller may enter recovery on its own grounds
    sb.on_send(0, 100, 1.0)
    # [0, 100): not lost (+1), retransmitted (+1); [100, 200) and [300, 500): +1
    assert sb.pipe() == 200 + 100 + 200


# ---------------------------------------------------------------------- NextSeg (section 4)


def test_nextseg_rule1_lowest_lost_hole_not_retransmitted() -> None:
    sb = sent(10)
    sb.on_ack(0, segs(1, 3, 5, 7), 1.0)
    assert sb.next_seg(available_new_data=10_000) == NextSegment(0, 100, 1)
    sb.enter_recovery(1.0)
    sb.on_send(0, 100, 1.0)
    assert sb.next_seg(available_new_data=10_000) == NextSegment(200, 300, 1)
    sb.on_send(200, 300, 1.1)
    # hole [400, 500) has two SACKed segments above: not lost, so new data first
    assert sb.next_seg(available_new_data=10_000) == NextSegment(1000, 1100, 2)


def test_nextseg_segment_stops_at_smss_and_at_the_hole() -> None:
    sb = sent(10)
    sb.on_ack(0, [(250, 260)] + segs(5, 7, 9), 1.0)
    assert sb.next_seg() == NextSegment(0, 100, 1)
    sb.enter_recovery(1.0)
    sb.on_send(0, 100, 1.0)
    assert sb.next_seg() == NextSegment(100, 200, 1)
    sb.on_send(100, 200, 1.0)
    assert sb.next_seg() == NextSegment(200, 250, 1)  # ends where the SACKed octets start


def test_nextseg_rule2_new_data_limited_by_application_and_window() -> None:
    sb = sent(3)
    assert sb.next_seg() is None
    assert sb.next_seg(available_new_data=40) == NextSegment(300, 340, 2)
    assert sb.next_seg(available_new_data=500) == NextSegment(300, 400, 2)
    assert sb.next_seg(available_new_data=500, send_window_end=330) == NextSegment(300, 330, 2)
    assert sb.next_seg(available_new_data=500, send_window_end=300) is None


def test_nextseg_rule3_unsacked_not_lost_below_highest_sack() -> None:
    sb = sent(5)
    sb.on_ack(0, segs(1, 3, 4), 1.0)  # [0, 100) lost, [200, 300) not lost (two above)
    assert sb.enter_recovery(1.0) == (0, 100)
    sb.on_send(0, 100, 1.0, retransmission=True)
    assert sb.next_seg(available_new_data=100) == NextSegment(500, 600, 2)
    assert sb.next_seg() == NextSegment(200, 300, 3)
    sb.on_send(200, 300, 1.0)
    assert sb.next_seg() is None  # rescue waits until HighACK passes the fast retransmit


def test_nextseg_rule4_rescue_once_per_recovery_and_only_as_last_resort() -> None:
    sb = sent(5, dup_thresh=2)
    sb.on_ack(0, segs(1), 1.0)
    r = sb.on_ack(0, segs(1, 2), 1.1)  # tail [300, 500) lost too, but nothing SACKed above it
    assert r.loss_detected and r.dup_acks == 2
    assert sb.enter_recovery(1.1) == (0, 100)
    sb.on_send(0, 100, 1.1)
    sb.on_ack(100, segs(1, 2), 1.2)  # HighACK + 1 == RescueRxt + 1: HighACK not > RescueRxt
    assert sb.next_seg() is None
    sb.on_ack(300, [], 1.3)
    assert sb.in_recovery and sb.high_sack is None
    assert sb.next_seg(available_new_data=50) == NextSegment(500, 550, 2)  # rule 2 first
    rescue = sb.next_seg()
    assert rescue == NextSegment(400, 500, 4)  # ends with the highest un-SACKed octet
    sb.on_send(rescue.start, rescue.end, 1.3, retransmission=True, rescue=True)
    assert sb.rescue_rxt == sb.recovery_point == 500
    assert sb.high_rxt == 100  # rule 4 does not move HighRxt
    assert sb.pipe() == 200  # so the rescued octets count once
    assert sb.next_seg() is None  # one rescue per recovery
    r = sb.on_ack(500, [], 1.4)
    assert r.exited_recovery and not sb.in_recovery


def test_nextseg_rule4_not_outside_recovery_and_ends_in_its_hole() -> None:
    sb = sent(5)
    assert sb.next_seg() is None
    sb.on_ack(0, [(450, 480)], 1.0)
    sb.enter_recovery(1.0)
    sb.on_send(0, 100, 1.0)
    sb.on_ack(200, [(450, 480)], 1.1)
    sb.on_ack(200, [(480, 500)], 1.1)  # SACK reaches HighData; highest hole is [200, 450)
    sb.on_send(200, 300, 1.2)  # rule 3 would have said so
    sb.on_send(300, 400, 1.2)
    sb.on_send(400, 450, 1.2)
    assert sb.next_seg() == NextSegment(350, 450, 4)


# ---------------------------------------------------------------------- ACKs, recovery (section 5)


def test_dupacks_counted_then_loss_detected_at_dupthresh() -> None:
    sb = Scoreboard(S)
    for seq in range(0, 100, 10):
        sb.on_send(seq, seq + 10, 0.0)
    results = [sb.on_ack(0, [(10, 10 + 10 * k)], 1.0 + k) for k in (1, 2, 3)]
    assert [r.dup_acks for r in results] == [1, 2, 3]
    assert [r.loss_detected for r in results] == [False, False, True]  # step (1): not IsLost
    assert not sb.is_lost(0)
    r = sb.on_ack(0, [(10, 40)], 5.0)  # nothing new: not a duplicate ACK in RFC 6675's sense
    assert not r.duplicate and r.dup_acks == 3 and not r.loss_detected


def test_cumulative_ack_resets_dupacks_and_can_also_be_a_duplicate() -> None:
    sb = sent(10)
    sb.on_ack(0, segs(2), 1.0)
    sb.on_ack(0, segs(2, 3), 1.1)
    r = sb.on_ack(100, segs(2, 3, 5), 1.2)
    assert r.cumulative and r.duplicate and r.dup_acks == 1
    assert r.newly_acked == 100 and r.newly_sacked == 100 and r.delivered == 200
    r = sb.on_ack(400, segs(5), 1.3)
    assert r.cumulative and not r.duplicate and r.dup_acks == 0
    assert r.newly_acked == 300 and r.sacked_then_acked == 200 and r.delivered == 100


def test_recovery_ends_when_cumulative_ack_reaches_recovery_point() -> None:
    sb = sent(10)
    sb.on_ack(0, segs(1, 2, 3), 1.0)
    sb.enter_recovery(1.0)
    sb.on_send(1000, 1100, 1.0)  # new data after entry is beyond RecoveryPoint
    sb.on_ack(0, segs(1, 2, 3, 10), 1.5)
    r = sb.on_ack(999, segs(10), 2.0)
    assert sb.in_recovery and not r.exited_recovery and not r.loss_detected
    r = sb.on_ack(1000, segs(10), 2.1)
    assert r.exited_recovery and not sb.in_recovery
    assert list(sb.sacked_ranges()) == [(1000, 1100)]  # kept across the exit (step (A))
    assert sb.can_enter_recovery


def test_stale_ack_does_not_move_high_ack() -> None:
    sb = sent(5)
    sb.on_ack(300, [], 1.0)
    r = sb.on_ack(100, segs(4), 1.1)
    assert sb.high_ack == 300 and r.newly_acked == 0 and not r.cumulative
    assert r.duplicate and list(sb.sacked_ranges()) == [(400, 500)]


def test_dsack_below_cumulative_ack() -> None:
    sb = sent(5)
    sb.on_ack(200, [], 1.0)
    r = sb.on_ack(200, [(0, 100)], 1.1)  # a spurious retransmission of [0, 100) arrived
    assert r.dsack == (0, 100) and not r.duplicate and r.newly_sacked == 0
    r = sb.on_ack(200, [(150, 250), (300, 400)], 1.2)  # left edge below the ACK: D-SACK
    assert r.dsack == (150, 250)
    assert r.newly_sacked == 150 and r.duplicate  # the part above the ACK is SACK info too


def test_dsack_inside_second_block() -> None:
    sb = sent(10)
    sb.on_ack(0, segs(3, 4), 1.0)
    r = sb.on_ack(0, [(300, 400), (300, 500)], 1.1)
    assert r.dsack == (300, 400) and not r.duplicate
    r = sb.on_ack(0, [(600, 700), (600, 800)], 1.2)  # D-SACK inside a new block
    assert r.dsack == (600, 700) and r.duplicate and r.newly_sacked == 200


def test_not_dsack() -> None:
    sb = sent(10)
    assert sb.on_ack(0, [(300, 400)], 1.0).dsack is None
    assert sb.on_ack(0, [(500, 600), (300, 400)], 1.1).dsack is None
    assert sb.on_ack(0, [(300, 500), (300, 400)], 1.2).dsack is None  # second inside first
    assert sb.on_ack(0, [], 1.3).dsack is None


def test_rto_terminates_recovery_and_blocks_reentry_until_recovery_point() -> None:
    sb = sent(10)
    sb.on_ack(0, segs(1, 2, 3), 1.0)
    sb.enter_recovery(1.0)
    sb.on_send(0, 100, 1.0)
    sb.on_send(1000, 1200, 1.1)
    sb.on_rto(3.0)
    assert not sb.in_recovery and sb.recovery_point == 1200 and sb.sacked_bytes == 0
    assert not sb.can_enter_recovery
    r = sb.on_ack(100, segs(5, 6, 7, 8), 3.5)
    assert r.duplicate and not r.loss_detected and sb.is_lost(100)
    with pytest.raises(RuntimeError):
        sb.enter_recovery(3.5)
    sb.on_ack(1200, [], 4.0)
    assert sb.can_enter_recovery


def test_rto_may_keep_sack_information() -> None:
    sb = sent(10)
    sb.on_ack(0, segs(1, 2, 3), 1.0)
    sb.on_rto(3.0, expunge_sack=False)
    assert sb.sacked_bytes == 300 and sb.is_lost(0)


def test_enter_recovery_twice_is_refused() -> None:
    sb = sent(5)
    sb.enter_recovery(1.0)
    with pytest.raises(RuntimeError):
        sb.enter_recovery(1.0)


def test_send_validation() -> None:
    sb = sent(2)
    with pytest.raises(ValueError):
        sb.on_send(300, 400, 1.0)  # gap after HighData
    with pytest.raises(ValueError):
        sb.on_send(100, 200, 1.0, retransmission=False)
    with pytest.raises(ValueError):
        sb.on_send(200, 300, 1.0, retransmission=True)
    with pytest.raises(ValueError):
        sb.on_send(200, 300, 1.0, rescue=True)
    with pytest.raises(ValueError):
        sb.on_send(200, 200, 1.0)
    with pytest.raises(ValueError):
        Scoreboard(0)


def test_ack_of_data_never_seen_sent_advances_high_data() -> None:
    sb = sent(2)
    sb.on_ack(0, [(300, 400)], 1.0)
    assert sb.high_data == 400 and sb.pipe() == 300
    sb.on_ack(500, [], 1.1)
    assert sb.high_data == 500 and sb.outstanding == 0 and sb.pipe() == 0


def test_results_are_frozen_and_nextseg_unpacks() -> None:
    sb = sent(3)
    r = sb.on_ack(100, [], 1.0)
    with pytest.raises(AttributeError):
        r.high_ack = 0  # type: ignore[misc]
    start, end, rule = sb.next_seg(available_new_data=1) or (0, 0, 0)
    assert (start, end, rule) == (300, 301, 2)


def test_large_scoreboard_is_fast() -> None:
    # 20 000 segments, every other one SACKed: 10 000 holes. Every call stays cheap.
    sb = Scoreboard(1448)
    n = 20_000
    for i in range(n):
        sb.on_send(i * 1448, (i + 1) * 1448, i * 1e-5)
    t0 = time.perf_counter()
    for i in range(1, n, 2):
        sb.on_ack(0, [(i * 1448, (i + 1) * 1448)], 1.0)
    assert sb.enter_recovery(1.0) == (0, 1448)
    for _ in range(200):
        seg = sb.next_seg()
        assert seg is not None and seg.rule == 1
        sb.on_send(seg.start, seg.end, 1.1)
        sb.pipe()
        sb.is_lost(sb.high_ack)
    sb.on_ack(1448, [], 1.2)
    # lost: every hole below the third-highest SACKed segment; retransmitted: 200 of them
    assert sb.lost_below == (n - 5) * 1448 and sb.high_rxt == 401 * 1448
    assert sb.pipe() == (2 + 200) * 1448
    assert time.perf_counter() - t0 < 2.0  # about 0.3 s; quadratic would take minutes


def test_huge_sacked_ranges() -> None:
    sb = Scoreboard(100)
    sb.on_send(0, 10_000_000, 0.0)  # one TSO super-segment, as a capture shows it
    sb.on_ack(0, [(1000, 9_999_000)], 1.0)
    assert sb.lost_below == 1000 and sb.is_lost(999) and not sb.is_lost(9_999_000)
    assert sb.next_seg() == NextSegment(0, 100, 1)
    assert sb.enter_recovery(1.0) == (0, 100)
    sb.on_send(0, 100, 1.0)
    sb.on_ack(9_999_000, [], 2.0)
    assert sb.next_seg() == NextSegment(9_999_900, 10_000_000, 4)
    assert sb.pipe() == 1000 and sb.pipe_segments() == 10


# ---------------------------------------------------------------------- against the reference


def assert_same(sb: Scoreboard, ref: ReferenceScoreboard) -> None:
    assert sb.high_ack == ref.high_ack
    assert sb.high_data == ref.high_data
    assert sb.high_rxt == ref.high_rxt
    assert sb.rescue_rxt == ref.rescue_rxt
    assert sb.recovery_point == ref.recovery_point
    assert sb.in_recovery == ref.in_recovery
    assert sb.dup_acks == ref.dup_acks
    assert sb.can_enter_recovery == ref.can_enter_recovery()
    assert {x for s, e in sb.sacked_ranges() for x in range(s, e)} == ref.sacked
    assert sb.sacked_bytes == len(ref.sacked)
    for seq in range(ref.high_ack - 2, ref.high_data + 2):
        assert sb.is_lost(seq) == ref.is_lost(seq), seq
    assert sb.pipe() == ref.pipe()
    assert sb.pipe_segments() == ref.pipe_segments()
    for avail, wnd in ((0, None), (3, None), (2 * sb.smss, None), (2 * sb.smss, ref.high_data + 1)):
        assert sb.next_seg(avail, wnd) == ref.next_seg(avail, wnd), (avail, wnd)


ACTIONS = ["new"] * 3 + ["next"] * 3 + ["pump", "rxt", "drop", "drop", "stale", "recover", "rto"] + ["deliver"] * 6
MAX_DATA = 120  # octets: the reference is quadratic


@settings(max_examples=250, deadline=None)
@given(st.data())
def test_network_replay_matches_reference(data: st.DataObject) -> None:
    """A sender, a lossy reordering network and a SACK receiver (RFC 2018, RFC 2883).

    The receiver's SACK blocks are always true (no reneging): the first block covers the segment
    just received, or is a D-SACK for a duplicate; the others come in any order and some are
    left out, as the option's 3-4 blocks force. Stale ACKs are replayed out of order.
    """
    smss = data.draw(st.sampled_from([4, 10]), label="smss")
    dup_thresh = data.draw(st.integers(1, 4), label="dup_thresh")
    start = data.draw(st.sampled_from([0, 2**40 - 37]), label="start")
    sb = Scoreboard(smss, dup_thresh, start)
    ref = ReferenceScoreboard(smss, dup_thresh, start)
    received: set[int] = set()
    network: list[tuple[int, int]] = []
    history: list[tuple[int, list[tuple[int, int]]]] = []
    rcv_cum = start
    now = 0.0

    def send(s: int, e: int, rescue: bool = False) -> None:
        sb.on_send(s, e, now, rescue=rescue)
        ref.on_send(s, e, rescue=rescue)
        network.append((s, e))

    def recover() -> None:
        fast = sb.enter_recovery(now)
        assert fast == ref.enter_recovery()
        if fast is not None and data.draw(st.booleans(), label="send fast retransmit"):
            send(*fast)

    def ack(cum: int, blocks: list[tuple[int, int]]) -> None:
        result = sb.on_ack(cum, blocks, now)
        assert isinstance(result, AckResult)
        assert result == ref.on_ack(cum, blocks)
        for name in ("loss_detected", "exited_recovery", "duplicate"):
            if getattr(result, name):
                event(name)
        if result.dsack is not None:
            event("D-SACK")
        if result.loss_detected and data.draw(st.booleans(), label="enter on loss"):
            recover()

    for _ in range(data.draw(st.integers(1, 40), label="steps")):
        now += 0.01
        action = data.draw(st.sampled_from(ACTIONS), label="action")
        if action == "new" and sb.high_data - start < MAX_DATA:
            n = data.draw(st.integers(1, 2 * smss), label="len")
            send(sb.high_data, sb.high_data + n)
        elif action == "next":
            avail = data.draw(st.just(0) | st.integers(0, 2 * smss), label="avail")
            if sb.high_data - start >= MAX_DATA:
                avail = 0
            wnd = data.draw(st.none() | st.integers(sb.high_data - 2, sb.high_data + 2 * smss), label="wnd")
            seg = sb.next_seg(avail, wnd)
            assert seg == ref.next_seg(avail, wnd)
            event(f"NextSeg rule {seg.rule if seg else None}")
            if seg is not None:
                send(seg.start, seg.end, rescue=seg.rule == 4)
        elif action == "pump":  # step (C): NextSeg until it fails, no new data available
            for _ in range(6):
                seg = sb.next_seg()
                assert seg == ref.next_seg()
                event(f"NextSeg rule {seg.rule if seg else None}")
                if seg is None:
                    break
                send(seg.start, seg.end, rescue=seg.rule == 4)
                assert_same(sb, ref)
        elif action == "rxt" and sb.outstanding:
            s = data.draw(st.integers(sb.high_ack, sb.high_data - 1), label="rxt start")
            e = data.draw(st.integers(s + 1, s + smss), label="rxt end")
            if sb.high_data - start >= MAX_DATA:
                e = min(e, sb.high_data)
            send(s, e)
        elif action in ("deliver", "drop") and network:
            s, e = network.pop(data.draw(st.integers(0, len(network) - 1), label="segment"))
            if action == "drop":
                continue
            duplicate = all(x in received for x in range(s, e))
            received.update(range(s, e))
            while rcv_cum in received:
                rcv_cum += 1
            runs: list[tuple[int, int]] = []
            for x in sorted(y for y in received if y > rcv_cum):
                if runs and runs[-1][1] == x:
                    runs[-1] = (runs[-1][0], x + 1)
                else:
                    runs.append((x, x + 1))
            first = [r for r in runs if r[0] <= s < r[1] or r[0] < e <= r[1]]
            others = data.draw(st.permutations([r for r in runs if r not in first]), label="order")
            blocks = first[:1] + list(others)
            if duplicate and data.draw(st.booleans(), label="dsack"):
                blocks = [(s, e)] + blocks
            blocks = blocks[: data.draw(st.integers(0, 4), label="nblocks")]
            history.append((rcv_cum, blocks))
            ack(rcv_cum, blocks)
        elif action == "stale" and history:
            ack(*history[data.draw(st.integers(0, len(history) - 1), label="stale ack")])
        elif action == "recover" and sb.can_enter_recovery:
            recover()
        elif action == "rto":
            expunge = data.draw(st.booleans(), label="expunge")
            sb.on_rto(now, expunge_sack=expunge)
            ref.on_rto(expunge)
        assert_same(sb, ref)


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_arbitrary_sack_blocks_match_reference(data: st.DataObject) -> None:
    """Any blocks at all, even ones no receiver would send: overlapping, odd edges, above
    HighData (a send the capture missed), below the cumulative ACK; cumulative ACKs that go
    backwards; sends of new data and retransmissions at any time."""
    smss = data.draw(st.sampled_from([3, 10]), label="smss")
    dup_thresh = data.draw(st.integers(1, 4), label="dup_thresh")
    sb = Scoreboard(smss, dup_thresh)
    ref = ReferenceScoreboard(smss, dup_thresh)
    now = 0.0
    for _ in range(data.draw(st.integers(1, 30), label="steps")):
        now += 0.01
        action = data.draw(st.sampled_from(["send", "send", "ack", "ack", "ack", "recover", "rto"]))
        if action == "send" and sb.high_data < 100:
            s = data.draw(st.integers(max(0, sb.high_data - 30), sb.high_data), label="seq")
            e = data.draw(st.integers(s + 1, s + 2 * smss), label="end")
            rescue = s < sb.high_data and data.draw(st.booleans(), label="rescue")
            sb.on_send(s, e, now, rescue=rescue)
            ref.on_send(s, e, rescue=rescue)
        elif action == "ack":
            hi = sb.high_data + 5
            cum = data.draw(st.integers(max(0, sb.high_ack - 5), hi), label="cum")
            edge = st.integers(max(0, sb.high_ack - 10), hi)
            blocks = data.draw(
                st.lists(st.tuples(edge, edge).map(lambda t: (min(t), max(t))), max_size=4),
                label="blocks",
            )
            assert sb.on_ack(cum, blocks, now) == ref.on_ack(cum, blocks)
        elif action == "recover" and sb.can_enter_recovery:
            assert sb.enter_recovery(now) == ref.enter_recovery()
        elif action == "rto":
            expunge = data.draw(st.booleans(), label="expunge")
            sb.on_rto(now, expunge_sack=expunge)
            ref.on_rto(expunge)
        assert_same(sb, ref)


def test_relay_sacked_keeps_the_count_and_moves_it() -> None:
    sb = sent(10)
    sb.on_ack(0, [(S, 2 * S), (4 * S, 6 * S)], 1.0)
    assert sb.sacked_bytes == 3 * S and sb.lost_below == S and sb.pipe() == 6 * S
    sb.relay_sacked(2 * S)
    assert list(sb.sacked_ranges()) == [(2 * S, 5 * S)] and sb.sacked_bytes == 3 * S
    assert sb.lost_below == 2 * S and sb.pipe() == 5 * S  # the cached IsLost boundary was dropped
    sb.relay_sacked(9 * S)  # clipped at HighData
    assert list(sb.sacked_ranges()) == [(9 * S, 10 * S)] and sb.sacked_bytes == S
    sb.relay_sacked(sb.high_data)
    assert sb.sacked_bytes == 0 and list(sb.sacked_ranges()) == []
