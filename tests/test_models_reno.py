"""Tahoe, Reno (RFC 5681) and NewReno (RFC 6582) driven by hand-made events with explicit times."""
from __future__ import annotations

from modelkit import SMSS, ack, send

from tcpsack_analyze.models import INFINITE, SenderOptions, State, model_class
from tcpsack_analyze.models.base import SenderModel


def window_of_ten(name: str, **options: object) -> SenderModel:
    """A model with ten segments in flight, none ACKed yet."""
    m = model_class(name)(SMSS, SenderOptions(**options))  # type: ignore[arg-type]
    m.on_send(send(0, 0, count=10))
    return m


def test_initial_state() -> None:
    m = model_class("reno")(SMSS)
    assert m.cwnd == 10 * SMSS and m.ssthresh == INFINITE and m.state is State.SLOW_START
    assert m.pipe == 0 and m.can_send()


def test_slow_start_one_smss_per_ack() -> None:
    m = window_of_ten("reno")
    m.on_ack(ack(100, 2))  # two segments ACKed: RFC 5681 grows by min(N, SMSS)
    assert m.cwnd == 11 * SMSS and m.flight == 8 * SMSS and m.send_window() == 3 * SMSS


def test_reno_fast_retransmit_inflation_and_deflation() -> None:
    m = window_of_ten("reno")
    for i in range(2):
        m.on_ack(ack(100 + i, 0, dup=True))
        assert m.state is State.SLOW_START and m.dup_acks == i + 1
    m.on_ack(ack(102, 0, dup=True))  # the third: RFC 5681 section 3.2 steps 2-3
    assert m.state is State.RECOVERY
    assert m.ssthresh == 5 * SMSS and m.cwnd == 8 * SMSS
    m.on_ack(ack(103, 0, dup=True))  # step 4: inflate
    assert m.cwnd == 9 * SMSS
    m.on_send(send(104, 0, resent=True))
    m.on_ack(ack(200, 10))  # step 6: the first new ACK deflates and ends recovery
    assert m.cwnd == 5 * SMSS and m.state is State.CONGESTION_AVOIDANCE


def test_congestion_avoidance_one_smss_per_window() -> None:
    m = window_of_ten("reno")
    for i in range(3):
        m.on_ack(ack(100 + i, 0, dup=True))
    m.on_ack(ack(200, 10))
    assert m.cwnd == 5 * SMSS
    m.on_send(send(201, 10, count=5))
    m.on_ack(ack(300, 14))  # 4 segments: less than cwnd's worth
    assert m.cwnd == 5 * SMSS
    m.on_ack(ack(301, 15))  # the fifth: one SMSS more
    assert m.cwnd == 6 * SMSS


def test_newreno_partial_and_full_ack() -> None:
    m = window_of_ten("newreno")
    for i in range(3):
        m.on_ack(ack(100 + i, 0, dup=True))
    m.on_send(send(103, 0, resent=True))
    m.on_ack(ack(200, 5))  # partial ACK (segment 5 lost too): RFC 6582 step 5
    assert m.state is State.RECOVERY and m.cwnd == 8 * SMSS - 5 * SMSS + SMSS
    m.on_send(send(201, 5, resent=True))
    m.on_ack(ack(300, 10))  # full ACK: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)
    assert m.cwnd == 2 * SMSS and m.state is State.SLOW_START  # below ssthresh


def test_reno_leaves_recovery_on_a_partial_ack() -> None:
    m = window_of_ten("reno")
    for i in range(3):
        m.on_ack(ack(100 + i, 0, dup=True))
    m.on_ack(ack(200, 5))
    assert m.state is not State.RECOVERY and m.cwnd == 5 * SMSS


def test_tahoe_falls_to_one_segment_on_fast_retransmit() -> None:
    m = window_of_ten("tahoe")
    for i in range(3):
        m.on_ack(ack(100 + i, 0, dup=True))
    assert m.state is State.LOSS and m.cwnd == SMSS and m.ssthresh == 5 * SMSS and m.recoveries == 1
    assert m.pipe == 0  # go-back-N: everything outstanding is presumed lost
    m.on_send(send(103, 0, resent=True))
    assert m.pipe == SMSS and not m.can_send()
    m.on_ack(ack(200, 10))
    assert m.state is State.SLOW_START and m.cwnd == 2 * SMSS


def test_thin_stream_fast_retransmit_on_the_first_dupack() -> None:
    m = model_class("reno")(SMSS, SenderOptions(thin_dupack=True))
    m.on_send(send(0, 0, count=3))  # 3 segments in flight: thin (at most 4)
    m.on_ack(ack(100, 0, dup=True))
    assert m.state is State.RECOVERY
    plain = model_class("reno")(SMSS)
    plain.on_send(send(0, 0, count=3))
    plain.on_ack(ack(100, 0, dup=True))
    assert plain.state is State.SLOW_START


def test_ns3_ssthresh_and_full_ack() -> None:
    """ns-3 (SenderOptions.ns3()): GetSsThresh(BytesInFlight) without SACK counts each duplicate
    ACK as a SACKed segment, so three duplicate ACKs on ten in flight give ssthresh (10 - 3) / 2;
    the full ACK sets cwnd = ssthresh (RFC 6582 step 6, option 2) where option 1 takes
    min(ssthresh, max(FlightSize, SMSS) + SMSS)."""
    for full_ack, after in (("ssthresh", 3.5), ("flight", 2)):  # option 1: max(0, SMSS) + SMSS
        m = window_of_ten("newreno", ssthresh_from="pipe", full_ack_cwnd=full_ack)
        for i in range(3):
            m.on_ack(ack(100 + i, 0, dup=True))
        assert m.state is State.RECOVERY and m.ssthresh == 7 * SMSS // 2
        m.on_send(send(103, 0, resent=True))
        m.on_ack(ack(200, 10))  # full ACK, nothing left in flight
        assert m.cwnd == int(after * SMSS) and m.state is not State.RECOVERY
