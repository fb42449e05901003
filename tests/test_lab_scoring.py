"""Scoring loss forensics against lab truth: hand-built truths and records, one real sample."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tcpsack_analyze.lab.droplog import Drop
from tcpsack_analyze.lab.scoring import (
    Transmission,
    TruthSegment,
    drop_bursts,
    hidden_drops,
    drop_place,
    drop_time,
    expand_retransmissions,
    expected_state,
    flow_map,
    forward_data_drops,
    lost_transmissions,
    match_drops,
    redundant_drops,
    run_lengths,
    score,
    transmissions_from_capture,
    true_rtd,
)
from tcpsack_analyze.loss import records as rec
from tcpsack_analyze.truth import Flow, Retransmission, Truth, load

SENDER, RECEIVER = "10.0.0.1", "10.0.0.2"
T0 = 1_700_000_000.0
FLOWS = {(0, "a2b"): 0, (1, "b2a"): 1}  # conn 0: a is the sender of flow 0; conn 1: b sends flow 1


def make_truth(retransmissions=(), drops=(), probes=(), delay=0.025, upstream_delay=None) -> Truth:
    flows = [
        Flow(0, SENDER, 40000, RECEIVER, 5001, 1000, "reno", 10**6, 10**6, T0, T0 + 10, 0),
        Flow(1, SENDER, 40001, RECEIVER, 5001, 2000, "reno", 10**6, 10**6, T0, T0 + 10, 0),
    ]
    link = {"delay": delay, "rate": 0, "queue": 100, "loss": "none"}
    params = {"forward": link, "reverse": link}
    if upstream_delay is not None:  # a path with a mid point: delay is then the second section's
        params["upstream"] = {"forward": dict(link, delay=upstream_delay), "reverse": dict(link, delay=upstream_delay)}
    return Truth(
        params=params, sysctls={}, topology={}, captures=[], clock={},
        emulator={}, trace={"lost_events": 0}, flows=flows, drops=list(drops),
        retransmissions=list(retransmissions), ca_states=[], probes=[list(p) for p in probes], summary="",
    )


def kretx(t, seq, kind="fast", ca_state="Recovery", flow=0, length=1448, segs=1, err=0, capture_t=None) -> Retransmission:
    return Retransmission(t=T0 + t, flow=flow, seq=seq, rel_seq=None, len=length, segs=segs, flags="A",
                          ca_state=ca_state, backoff=0, retransmits=0, timer=kind in ("rto", "tlp", "rack_timer"),
                          kind=kind, err=err, capture_t=None if capture_t is None else T0 + capture_t)


def ours(t, seq, trigger=rec.FAST, episode_trigger=None, conn=0, direction="a2b") -> rec.Retransmission:
    return rec.Retransmission(
        conn=conn, direction=direction, index=0, time_ns=round((T0 + t) * 1e9), seq=seq, start=0, end=1448,
        nth=1, trigger=trigger, episode=0, rtd_ns=0, dupacks=0, sacked_segments=0, silence_ns=0,
        since_ack_ns=None, flight_segments=1, backoff=0, rto_estimate_ns=None, srtt_ns=None, highest=False,
        thin=False, episode_trigger=episode_trigger if episode_trigger is not None else trigger,
    )


def drop(t, seq, length=1448, sport=40000, direction="fwd", reason="loss", where=None) -> Drop:
    src, dst = (SENDER, RECEIVER) if direction == "fwd" else (RECEIVER, SENDER)
    sport, dport = (sport, 5001) if direction == "fwd" else (5001, sport)
    return Drop(T0 + t, direction, reason, length + 66, src, dst, sport, dport, seq, 0, length, "A", where)


def lost(t, seq, index=0, conn=0, direction="a2b", start=0) -> rec.LostTransmission:
    return rec.LostTransmission(conn=conn, direction=direction, index=index, time_ns=round((T0 + t) * 1e9),
                                seq=seq, start=start, end=start + 1448, original=True,
                                where=rec.DOWNSTREAM if index is not None else rec.UPSTREAM)


# --------------------------------------------------------------------------- flows


@dataclass
class Conn:  # the fields of ConnectionReport that flow_map reads
    id: int
    a_addr: str
    a_port: int
    b_addr: str
    b_port: int


def test_flow_map_uses_the_sender_port_and_the_data_direction() -> None:
    conns = [Conn(0, SENDER, 40000, RECEIVER, 5001), Conn(1, RECEIVER, 5001, SENDER, 40001), Conn(2, SENDER, 40002, RECEIVER, 5001)]
    assert flow_map(conns, make_truth()) == FLOWS


# --------------------------------------------------------------------------- expansion


def test_expansion_splits_multi_segment_records_and_skips_failed_ones() -> None:
    truth = make_truth([
        kretx(1.0, 5000),
        kretx(2.0, 10000, length=2896, segs=2, capture_t=2.00001),
        kretx(3.0, 20000, length=2000, segs=2),  # no MSS known: equal halves
        kretx(4.0, 2**32 - 100, length=300, segs=3),  # wraps
        kretx(5.0, 30000, err=-105),  # failed: never on the wire
    ])
    segs = expand_retransmissions(truth)
    assert [(s.seq, s.len, s.record, s.part) for s in segs] == [
        (5000, 1448, 0, 0), (10000, 1448, 1, 0), (11448, 1448, 1, 1), (20000, 1000, 2, 0), (21000, 1000, 2, 1),
        (2**32 - 100, 100, 3, 0), (0, 100, 3, 1), (100, 100, 3, 2),
    ]
    assert segs[1].t == T0 + 2.00001 and segs[0].t == T0 + 1.0  # capture_t when known
    by_mss = expand_retransmissions(truth, mss=1448)
    assert [(s.seq, s.len) for s in by_mss if s.record == 2] == [(20000, 1448), (21448, 552)]


def test_expansion_follows_the_capture_when_it_shows_the_pieces() -> None:
    truth = make_truth([kretx(3.0, 20000, length=2000, segs=2, capture_t=3.0)])
    wire = {0: [Transmission(T0 + 1.0, 20000, 2000, 1), Transmission(T0 + 3.00001, 20000, 600, 7),
                Transmission(T0 + 3.00002, 20600, 1400, 8)]}
    assert [(s.seq, s.len) for s in expand_retransmissions(truth, wire)] == [(20000, 600), (20600, 1400)]
    # pieces that do not tile the record: equal halves (the flow's largest segment, 2000 B, is no MSS for 2)
    wire[0][2] = Transmission(T0 + 3.00002, 20700, 1300, 8)
    assert [(s.seq, s.len) for s in expand_retransmissions(truth, wire)] == [(20000, 1000), (21000, 1000)]


# --------------------------------------------------------------------------- retransmissions and triggers


def test_one_to_one_matching_by_flow_seq_and_time() -> None:
    truth = make_truth([
        kretx(1.0, 5000, "rto", "Loss"),
        kretx(1.3, 5000, "rto", "Loss"),  # the same bytes again: told apart by time
        kretx(2.0, 9000, "fast", "Recovery", flow=1),
        kretx(3.0, 7000, "tlp", "Open"),
    ])
    mine = [
        ours(1.3005, 5000, rec.RTO),
        ours(1.0001, 5000, rec.RTO),
        ours(2.0, 9000, rec.FAST, conn=0),  # wrong connection: flow 0 has no retransmission of 9000
        ours(3.010, 7000, rec.TLP),  # 10 ms off: not the same transmission
    ]
    s = score(truth, mine, [], FLOWS)
    assert (s.retrans_truth, s.retrans_ours, s.retrans_matched) == (4, 4, 2)
    assert s.retrans_precision == 0.5 and s.retrans_recall == 0.5
    assert {(u.seq, u.flow) for u in s.unmatched_truth} == {(9000, 1), (7000, 0)}
    assert {u.seq for u in s.unmatched_ours} == {9000, 7000}
    assert s.trigger_agreement == 1.0 and s.trigger_confusion == {("rto", "rto"): 2}
    assert s.tlp_truth == 1 and s.tlp_recall == 0.0 and s.tlp_precision == 0.0
    wide = score(truth, mine, [], FLOWS, tol_s=0.02)
    assert wide.retrans_matched == 3 and wide.tlp_recall == 1.0 and wide.tlp_precision == 1.0
    shifted = score(truth, [ours(1.0251, 5000, rec.RTO)], [], FLOWS, shift_s=0.025)
    assert shifted.retrans_matched == 1  # a receiver-side capture sees it one delay later


def test_receiver_vantage_leaves_out_dropped_retransmissions_and_shifts_by_the_delay() -> None:
    truth = make_truth([kretx(1.0, 5000, "rto", "Loss"), kretx(1.4, 5000, "rto", "Loss")],
                       drops=[drop(0.5, 5000), drop(1.000004, 5000)], delay=0.04)
    mine = [ours(1.4402, 5000, rec.RTO)]  # only the second resend arrived, 40 ms later
    s = score(truth, mine, [], FLOWS, vantage="receiver")
    assert (s.retrans_truth, s.retrans_dropped, s.retrans_matched, s.retrans_recall) == (1, 1, 1, 1.0)
    at_sender = score(truth, mine, [], FLOWS)
    assert (at_sender.retrans_truth, at_sender.retrans_dropped, at_sender.retrans_matched) == (2, 0, 0)
    with pytest.raises(ValueError):
        score(truth, mine, [], FLOWS, vantage="middle")


def test_multi_segment_retransmission_matches_one_record_per_wire_segment() -> None:
    truth = make_truth([kretx(1.0, 10000, "loss_recovery", "Loss", length=4344, segs=3)])
    mine = [ours(1.0, 10000 + k * 1448, rec.RECOVERY, episode_trigger=rec.RTO) for k in range(3)]
    s = score(truth, mine[:2], [], FLOWS, mss=1448)
    assert (s.retrans_truth, s.retrans_matched, s.retrans_precision) == (3, 2, 1.0)
    assert s.retrans_recall == pytest.approx(2 / 3)
    assert [u.seq for u in s.unmatched_truth] == [12896]
    assert score(truth, mine, [], FLOWS, mss=1448).retrans_recall == 1.0


def test_trigger_agreement_and_confusion() -> None:
    truth = make_truth([
        kretx(1.0, 1000, "rto", "Loss"),
        kretx(2.0, 2000, "loss_recovery", "Loss"),
        kretx(3.0, 3000, "fast", "Recovery"),
        kretx(4.0, 4000, "rack_timer", "Recovery"),
        kretx(5.0, 5000, "tlp", "Open"),
        kretx(6.0, 6000, "tlp", "Disorder"),
        kretx(7.0, 7000, "other", "Disorder"),
    ])
    mine = [
        ours(1.0, 1000, rec.RTO),
        ours(2.0, 2000, rec.RECOVERY, episode_trigger=rec.RTO),  # Loss: agrees
        ours(3.0, 3000, rec.EARLY),  # Recovery: agrees
        ours(4.0, 4000, rec.RTO),  # Loss: disagrees
        ours(5.0, 5000, rec.TLP),
        ours(6.0, 6000, rec.AMBIGUOUS),  # unknown: disagrees, and the TLP is missed
        ours(7.0, 7000, rec.TLP),  # other in Disorder -> Open: agrees
    ]
    s = score(truth, mine, [], FLOWS)
    assert s.retrans_matched == 7
    assert s.trigger_agreement == pytest.approx(5 / 7)
    assert s.trigger_confusion == {
        ("fast", "early"): 1, ("loss_recovery", "recovery"): 1, ("other", "tlp"): 1, ("rack_timer", "rto"): 1,
        ("rto", "rto"): 1, ("tlp", "ambiguous"): 1, ("tlp", "tlp"): 1,
    }
    assert s.state_confusion[("Recovery", "Loss")] == 1 and s.state_confusion[("Open", "unknown")] == 1
    assert s.tlp_truth == 2 and s.tlp_recall == 0.5 and s.tlp_precision == 0.5


def test_expected_state() -> None:
    assert [expected_state(k, "Open") for k in ("rto", "loss_recovery", "fast", "recovery", "rack_timer", "tlp")] == \
        ["Loss", "Loss", "Recovery", "Recovery", "Recovery", "Open"]
    assert [expected_state("other", st) for st in ("Loss", "Recovery", "Open", "CWR")] == ["Loss", "Recovery", "Open", "Open"]


def test_empty_sides_score_one_not_a_division_error() -> None:
    s = score(make_truth(), [], [], FLOWS)
    assert (s.retrans_precision, s.retrans_recall, s.trigger_agreement, s.drop_precision, s.drop_recall) == (1, 1, 1, 1, 1)
    assert s.bursts is None
    assert "P 1.000 R 1.000" in s.summary()


# --------------------------------------------------------------------------- drops


def test_drop_log_matching_sender_side_and_upstream() -> None:
    probes = [[T0, 0, 1, 1, 10, 10, 60000, 65535], [T0, 0, 1, 1, 10, 10, 60000, 65535]]  # srtt 60 ms
    truth = make_truth(drops=[
        drop(1.000005, 5000),
        drop(1.000010, 6448, reason="queue"),
        drop(2.000005, 5000),  # the retransmission lost again
        drop(3.0, 9000),  # never reported by us
        drop(3.5, 0, length=0),  # a pure ACK (queue drop): not data
        drop(4.0, 7000, direction="rev"),  # reverse direction: not ours to find
        drop(5.0, 11000, sport=40001),  # flow 1, seen at the receiver side as upstream losses
    ], probes=probes)
    assert len(forward_data_drops(truth)) == 5
    mine = [
        lost(1.0, 5000, index=3),
        lost(1.0, 6448, index=4),
        lost(2.0, 5000, index=9),
        lost(2.5, 5000, index=12),  # no such drop near it
        lost(5.05, 11000, index=None, conn=1, direction="b2a"),  # hole seen 50 ms later: within one RTT
    ]
    s = score(truth, [], mine, FLOWS)
    assert (s.drops_truth, s.drops_ours, s.drops_matched) == (5, 5, 4)
    assert s.drop_precision == 0.8 and s.drop_recall == 0.8
    assert [d.seq for d in s.unmatched_drops] == [9000] and [r.time_ns for r in s.unmatched_lost] == [round((T0 + 2.5) * 1e9)]
    # a hole seen later than the window is still matched, by its bytes, to the drop before it
    assert score(truth, [], mine, FLOWS, upstream_window_s=0.01).drops_matched == 4
    # upstream records take the nearest drop of the same seq
    pairs = match_drops(forward_data_drops(truth), [lost(2.03, 5000, index=None)], FLOWS, truth)
    assert pairs == [(2, (0,))]
    # a hole that showed seconds after its drop (after the sender's timeout): the latest drop of
    # its bytes before it, never one after it
    assert match_drops(forward_data_drops(truth), [lost(9.0, 5000, index=None)], FLOWS, truth) == [(2, (0,))]
    assert match_drops(forward_data_drops(truth), [lost(0.5, 5000, index=None)], FLOWS, truth) == []


def test_hidden_drops_are_those_a_capture_after_them_cannot_see() -> None:
    """A drop before the capture point shows there only as a hole below data that passed."""
    seg = [Transmission(0.01 * k, 1000 + 1000 * n, 1000, k) for k, n in enumerate((0, 1, 2, 1, 2))]
    assert hidden_drops(seg, {1}) == set()  # 2 passed above it before its resend (3): a hole
    assert hidden_drops(seg, {2}) == {2}  # the end of the flight: resent in order (4), no hole
    assert hidden_drops(seg, {1, 3}) == {3}  # the resend of a hole died too: the hole stays one
    assert hidden_drops(seg, {1, 2}) == {1, 2}  # a burst that ended the flight: both resent in order, no hole
    assert hidden_drops(seg, set()) == set()


def test_records_of_one_transmission_count_once() -> None:
    # the kernel resent two 100 B messages as one 200 B segment: one drop, two records of ours
    truth = make_truth(drops=[drop(1.000004, 1801, 200)])
    mine = [lost(1.0, 1901, index=42, start=1900), lost(1.0, 1801, index=42, start=1800), lost(2.0, 1801, index=50)]
    assert lost_transmissions(mine) == [(1, 0), (2,)]
    s = score(truth, [], mine, FLOWS)
    assert (s.drops_ours, s.drops_matched, s.drop_recall) == (2, 1, 1.0) and s.drop_precision == 0.5
    assert [r.index for r in s.unmatched_lost] == [50]


def test_redundant_drops_are_told_apart() -> None:
    wire = {0: [Transmission(T0 + 0.001, 1000, 100, 0), Transmission(T0 + 0.002, 1100, 100, 1),
                Transmission(T0 + 0.5, 1000, 100, 2), Transmission(T0 + 0.501, 1100, 100, 3)]}
    # go-back-N: the resend of 1000 was not needed (the first copy arrived) and was dropped
    truth = make_truth(drops=[drop(0.002005, 1100, 100), drop(0.500005, 1000, 100)])
    assert redundant_drops(forward_data_drops(truth), wire, truth) == {1}
    s = score(truth, [], [lost(0.002, 1100, index=1)], FLOWS, wire)
    assert (s.drop_recall, s.drops_redundant, s.drop_recall_needed) == (0.5, 1, 1.0)
    assert "R 1.000 of the 1 not redundant" in s.summary()
    assert s.bursts == {2: 1}  # transmissions 1 and 2 follow each other
    without = score(truth, [], [], FLOWS)
    assert without.drops_redundant is None and without.drop_recall_needed is None


def _mid_path_truth() -> Truth:
    """10 ms sender -> mid point. Segment 5000: original dropped upstream, its first resend too,
    the second fills the hole at the mid point. Segment 6448: seen at the mid point, dropped
    after it (stamped then, 10 ms after the sender sent it), resent once."""
    return make_truth(
        [kretx(1.1, 5000), kretx(1.15, 6448, "recovery"), kretx(1.2, 5000, "recovery")],
        drops=[drop(1.0, 5000, where="upstream"), drop(1.010004, 6448, where="downstream"),
               drop(1.1, 5000, where="upstream")],
        delay=0.015, upstream_delay=0.01,
    )


def test_drop_place_and_time_relative_to_the_capture() -> None:
    up, down = _mid_path_truth().drops[:2]
    truth = _mid_path_truth()
    assert [drop_place(d, v) for v in ("sender", "mid", "receiver") for d in (up, down)] == \
        ["downstream", "downstream", "upstream", "downstream", "upstream", "upstream"]
    assert drop_time(up, "sender", truth) == (up.t, 0.0) and drop_time(down, "mid", truth) == (down.t, 0.0)
    t, slack = drop_time(down, "sender", truth)  # left the sender one upstream delay earlier
    assert t == pytest.approx(down.t - 0.01) and slack == 0.0  # no emulator lateness recorded
    with pytest.raises(ValueError):
        drop_place(drop(1.0, 5000), "mid")  # a truth without a mid point cannot be split there


def test_mid_point_scores_each_side_and_leaves_out_what_it_cannot_see() -> None:
    truth = _mid_path_truth()
    mine_rx = [ours(1.16, 6448, rec.RECOVERY, rec.FAST)]  # the only resend seen as one: 5000's fills a hole
    mine_lost = [lost(1.0115, 5000, index=None), lost(1.010, 6448, index=4)]
    s = score(truth, mine_rx, mine_lost, FLOWS, vantage="mid")
    assert (s.retrans_truth, s.retrans_dropped, s.retrans_fills, s.retrans_matched) == (1, 1, 1, 1)
    assert s.place_confusion == {("downstream", "downstream"): 1, ("upstream", "upstream"): 1}
    assert (s.upstream.truth, s.upstream.ours, s.upstream.matched, s.upstream.precision, s.upstream.recall) == (2, 1, 1, 1.0, 0.5)
    assert (s.downstream.truth, s.downstream.matched, s.downstream.precision, s.downstream.recall) == (1, 1, 1.0, 1.0)
    assert "upstream P 1.000 R 0.500 (1 of 2 truth, 1 ours)" in s.summary()
    # a loss placed on the wrong side is a miss on both sides
    wrong = score(truth, mine_rx, [lost(1.0115, 5000, index=None), lost(1.012, 6448, index=None)], FLOWS, vantage="mid")
    assert wrong.place_confusion[("downstream", "upstream")] == 1 and wrong.downstream.recall == 0.0
    assert wrong.upstream.precision == 0.5
    # from the sender every drop is downstream, and the one after the mid point is found one upstream delay earlier
    at_sender = score(truth, [], [lost(1.0, 5000, index=1), lost(1.0, 6448, index=2), lost(1.1, 5000, index=7)], FLOWS)
    assert (at_sender.downstream.matched, at_sender.downstream.recall, at_sender.upstream.truth) == (3, 1.0, 0)


# --------------------------------------------------------------------------- bursts


def test_run_lengths() -> None:
    assert run_lengths([]) == {}
    assert run_lengths([True, True, False, True, False, False, True, True, True, True, False, True, True]) == {1: 1, 2: 2, 4: 1}


def test_burst_histogram_from_the_sender_transmissions() -> None:
    wire = {0: [Transmission(T0 + k * 0.001, 1000 + k * 100, 100, k) for k in range(10)]}
    wire[0].append(Transmission(T0 + 0.1, 1100, 100, 10))  # retransmission of segment 1
    truth = make_truth(drops=[
        drop(0.001005, 1100, 100), drop(0.002005, 1200, 100), drop(0.003005, 1300, 100),  # 1-3: a burst of 3
        drop(0.006005, 1600, 100),  # 6: alone
        drop(0.1, 1100, 100),  # the retransmission of 1, sent after 9 (not dropped): alone
        drop(0.5, 5000, 100),  # not on the capture
    ])
    hist, missing = drop_bursts(forward_data_drops(truth), wire, truth)
    assert hist == {1: 2, 3: 1} and missing == 1
    s = score(truth, [], [], FLOWS, wire)
    assert s.bursts == {1: 2, 3: 1} and s.drops_not_on_capture == 1
    assert "bursts 1:2 3:1" in s.summary()
    # the last of the burst of 3 moved 10 ms in time: no longer the same transmission
    truth.drops[2] = drop(0.013, 1300, 100)
    assert drop_bursts(forward_data_drops(truth), wire, truth) == ({1: 2, 2: 1}, 2)


# --------------------------------------------------------------------------- a real lab sample


SAMPLE = Path(__file__).resolve().parent.parent / "sample_traces" / "lab_reno_sack_bursty"


@pytest.mark.skipif(not SAMPLE.exists(), reason="sample trace missing")
def test_truth_scores_itself_perfectly_on_a_lab_sample() -> None:
    truth = load(SAMPLE)
    wire = transmissions_from_capture(SAMPLE / "sender.pcap", truth)
    assert set(wire) == {0}
    segments = expand_retransmissions(truth, wire)
    multi = [r for r in truth.retransmissions if r.segs > 1]
    assert multi and len(segments) == sum(r.segs for r in truth.retransmissions if r.err == 0)
    on_wire = {(w.seq, w.len) for w in wire[0]}
    assert all((s.seq, s.len) in on_wire for s in segments)  # every piece as the capture shows it

    conn_flows = {(0, "a2b"): 0}  # one connection, opened by the sender
    mine = [ours(s.t - T0, s.seq, rec.RTO if s.kind == "rto" else rec.RECOVERY, rec.RTO if s.kind in ("rto", "loss_recovery") else rec.FAST)
            for s in segments]
    lost_records = [lost(d.t - 2e-6 - T0, d.seq, index=k) for k, d in enumerate(forward_data_drops(truth))]
    s = score(truth, mine, lost_records, conn_flows, wire)
    assert (s.retrans_precision, s.retrans_recall, s.drop_precision, s.drop_recall) == (1, 1, 1, 1)
    assert s.trigger_agreement == 1.0
    # bursty:0.01:3 drops three consecutive data segments per event (two events may touch)
    assert s.drops_not_on_capture == 0
    assert sum(k * v for k, v in s.bursts.items()) == s.drops_truth
    assert s.bursts.get(3, 0) >= 1 and all(k % 3 == 0 for k in s.bursts)


# --------------------------------------------------------------------------- the validation runs of tests/data/lab

LAB_DATA = Path(__file__).resolve().parent / "data" / "lab"
LAB_RUNS = sorted(p for p in LAB_DATA.glob("*") if p.is_dir())


def test_the_validation_runs_exist() -> None:
    assert {p.name for p in LAB_RUNS} >= {
        "thin_300", "thin_bursty_backoff", "thin_linear_timeouts", "nosack_random10", "sack_no_timestamps",
        "both_bursty", "ack_queue", "midpath_random", "midpath_bursty",
    }


@pytest.mark.parametrize("run", LAB_RUNS, ids=lambda p: p.name)
def test_validation_run_is_small_documented_and_consistent(run: Path) -> None:
    from tcpsack_analyze.lab.crosscheck import crosscheck

    assert sum(f.stat().st_size for f in run.iterdir()) < 600 * 1024
    truth = load(run)
    assert f"`{truth.command}`" in (LAB_DATA / "README.md").read_text()
    assert truth.trace["lost_events"] == 0 and all(c["dropped_by_kernel"] == 0 for c in truth.captures)
    assert crosscheck(truth).problems == []
    # the truth's own retransmissions and drops are all on the sender capture as scoring reads it
    wire = transmissions_from_capture(run / "sender.pcap", truth)
    on_wire = {(w.seq, w.len) for ws in wire.values() for w in ws}
    assert all((s.seq, s.len) in on_wire for s in expand_retransmissions(truth, wire))
    hist, missing = drop_bursts(forward_data_drops(truth), wire, truth)
    assert missing == 0 and sum(k * v for k, v in hist.items()) == len(forward_data_drops(truth))


def test_validation_runs_show_what_they_are_for() -> None:
    runs = {p.name: load(p) for p in LAB_RUNS}

    def kinds(name: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in runs[name].retransmissions:
            out[r.kind] = out.get(r.kind, 0) + 1
        return out

    backoffs = [r.backoff for r in runs["thin_bursty_backoff"].retransmissions if r.kind == "rto"]
    assert max(backoffs) >= 3 and kinds("thin_bursty_backoff")["tlp"] >= 3
    linear = [r for r in runs["thin_linear_timeouts"].retransmissions if r.kind == "rto"]
    assert runs["thin_linear_timeouts"].sysctls["sender"]["net.ipv4.tcp_thin_linear_timeouts"] == "1"
    assert all(r.backoff == 0 for r in linear) and max(r.retransmits for r in linear) >= 3
    assert kinds("thin_300")["tlp"] >= 5 and kinds("thin_300")["rto"] >= 3
    assert runs["nosack_random10"].sysctls["sender"]["net.ipv4.tcp_sack"] == "0"
    assert kinds("nosack_random10")["rto"] >= 3 and kinds("nosack_random10")["loss_recovery"] >= 20
    assert runs["sack_no_timestamps"].sysctls["sender"]["net.ipv4.tcp_timestamps"] == "0"
    assert {c["point"] for c in runs["both_bursty"].captures} == {"sender", "receiver"}
    ack_drops = runs["ack_queue"].drops
    assert ack_drops and all(d.direction == "rev" and not d.len for d in ack_drops)
    for name in ("midpath_random", "midpath_bursty"):  # loss on both sides of a mid capture point
        assert {c["point"] for c in runs[name].captures} == {"sender", "mid"}
        places = [d.where for d in runs[name].data_drops()]
        assert places.count("upstream") >= 15 and places.count("downstream") >= 15
    assert all(d.where is None for name, t in runs.items() if "upstream" not in t.params for d in t.drops)


def test_receiver_vantage_on_a_real_run_with_late_frames() -> None:
    run = LAB_DATA / "both_bursty"
    truth = load(run)
    sender = transmissions_from_capture(run / "sender.pcap", truth)
    receiver = transmissions_from_capture(run / "receiver.pcap", truth)
    segments = expand_retransmissions(truth, sender)
    delay = truth.params["forward"]["delay"]
    # our records at the receiver: the arrival of each retransmitted segment that got there
    mine = []
    for s in segments:
        arrivals = [w.t for w in receiver[0] if w.seq == s.seq and 0 <= w.t - s.t - delay < 0.05]
        if arrivals:
            mine.append(ours(min(arrivals) - T0, s.seq))
    assert 0 < len(mine) < len(segments)  # some resends were dropped on the way
    s = score(truth, mine, [], {(0, "a2b"): 0}, sender, vantage="receiver")
    assert s.retrans_dropped == len(segments) - len(mine)
    assert (s.retrans_precision, s.retrans_recall) == (1.0, 1.0)


def test_true_rtd_times_each_resend_from_the_previous_copy_of_its_first_byte() -> None:
    """The thesis's case (issue 13): 101-401 resent after a TLP of 301-401 is timed from the
    original of 101 (1.000 s), not from the probe (0.256 s); a resend with no earlier copy of its
    first byte on the capture has none; the resend's own copy stamped a few us early is skipped."""
    wire = [
        Transmission(1.000, 101, 100, 0), Transmission(1.100, 201, 100, 1), Transmission(1.200, 301, 100, 2),
        Transmission(1.158, 301, 100, 3),  # the TLP, out of order in the list on purpose
        Transmission(1.413998, 101, 300, 4),  # the resend itself, stamped 2 us before its trace time
    ]
    resend = TruthSegment(flow=0, seq=101, len=300, t=1.414, kind="rto", ca_state="Loss", record=0)
    assert true_rtd(resend, wire) == pytest.approx(0.414)
    assert true_rtd(TruthSegment(0, 301, 100, 1.414, "rto", "Loss", 1), wire) == pytest.approx(0.214)
    assert true_rtd(TruthSegment(0, 2**32 - 50, 100, 1.414, "rto", "Loss", 2), wire) is None
    wrapped = [Transmission(0.5, 2**32 - 50, 100, 0)]  # covers 2**32-50 .. 49 across the wrap
    assert true_rtd(TruthSegment(0, 10, 40, 0.9, "fast", "Recovery", 0), wrapped) == pytest.approx(0.4)
