"""CUBIC (RFC 8312 with Linux's constants) and HyStart, by hand."""
from __future__ import annotations

import itertools

import pytest
from modelkit import SMSS, ack, send

from tcpsack_analyze.models import SenderOptions, State, model_class
from tcpsack_analyze.models.base import SenderModel


def after_loss(window: int = 10, **options: object) -> SenderModel:
    """A window of segments, one loss repaired: cwnd reduced by beta, congestion avoidance."""
    m = model_class("cubic")(SMSS, SenderOptions(**options))  # type: ignore[arg-type]
    m.on_send(send(0, 0, count=window, tsval=0))
    for i in range(3):
        m.on_ack(ack(100 + i, 0, sack=((1, 2 + i),), tsecr=0))
    m.on_send(send(103, 0, resent=True, tsval=103))
    m.on_ack(ack(200, window, tsecr=103))
    return m


def test_reduction_by_beta() -> None:
    m = after_loss()
    assert m.ssthresh == 7 * SMSS and m.cwnd == 7 * SMSS  # RFC 8312 4.5: beta = 0.7
    assert m.state is State.CONGESTION_AVOIDANCE


def test_concave_growth_towards_w_max_then_convex() -> None:
    m = after_loss(initial_window=100, window=100)
    assert m.cwnd == 70 * SMSS
    n, t = 100, 200.0
    seen = []
    for _ in range(80):  # a window per 100 ms RTT, one ACK per segment
        window = m.cwnd // SMSS
        m.on_send(send(t, n, count=window, tsval=int(t)))
        for k in range(window):
            m.on_ack(ack(t + 100 + k * 0.1, n + k + 1, tsecr=int(t)))
        n += window
        t += 100
        seen.append(m.cwnd / SMSS)
    # K = cbrt(W_max (1 - beta) / C) = cbrt(100 * 0.3 / 0.4) = 4.2 s: the plateau at W_max = 100
    assert 99 <= seen[40] <= 101
    before_k = seen[40] - seen[30]
    assert seen[9] - seen[0] > before_k  # concave: growth slows towards W_max
    assert seen[79] - seen[69] > before_k  # convex beyond K
    assert all(b >= a for a, b in itertools.pairwise(seen))


def test_tcp_friendly_region_for_small_windows() -> None:
    m = after_loss()  # W_max = 10, RTT 100 ms: the cubic curve is slower than Reno's
    n, t = 10, 200.0
    for _ in range(20):
        window = m.cwnd // SMSS
        m.on_send(send(t, n, count=window, tsval=int(t)))
        for k in range(window):
            m.on_ack(ack(t + 100 + k, n + k + 1, tsecr=int(t)))
        n += window
        t += 100
    # RFC 8312 4.2: W_est grows by 3 (1 - beta) / (1 + beta) = 0.53 segment per RTT
    assert 7 + 0.53 * 20 - 1 <= m.cwnd / SMSS <= 7 + 0.53 * 20 + 1


def test_fast_convergence_lowers_w_max() -> None:
    m = after_loss()
    assert m._w_max == pytest.approx(10)
    m.on_send(send(300, 10, count=7, tsval=300))
    for i in range(3):
        m.on_ack(ack(400 + i, 10, sack=((11, 12 + i),), tsecr=300))
    # cwnd 7 < W_max 10: W_max = 7 * (1 + 0.7) / 2 (RFC 8312 section 4.6)
    assert m._w_max == pytest.approx(7 * 1.7 / 2) and m.ssthresh == int(7 * 0.7 * SMSS)


def test_hystart_ack_train_ends_slow_start() -> None:
    def run(hystart: bool) -> SenderModel:
        m = model_class("cubic")(SMSS, SenderOptions(initial_window=80, hystart=hystart))
        m.on_send(send(0, 0, count=80, tsval=0))
        for k in range(60):  # ACKs 1 ms apart, 100 ms RTT: a train longer than (RTT + 1 ms) / 2
            m.on_ack(ack(100 + k, k + 1, tsecr=0))
        return m

    m = run(True)
    assert m.state is State.CONGESTION_AVOIDANCE and 130 * SMSS <= m.ssthresh == m.cwnd <= 132 * SMSS
    assert run(False).state is State.SLOW_START


def test_linux_beta_in_integer_packets() -> None:
    m = model_class("cubic")(SMSS, SenderOptions(ssthresh_from="cwnd", initial_window=15))
    m.on_send(send(0, 0, count=15, tsval=0))
    for i in range(3):
        m.on_ack(ack(100 + i, 0, sack=((1, 2 + i),), tsecr=0))
    assert m.ssthresh == 15 * 717 // 1024 * SMSS == 10 * SMSS  # bictcp_recalc_ssthresh


def fill_and_ack(m: SenderModel, una: int, nxt: int, t: float, acks: int) -> list[int]:
    """Keep cwnd full (ns-3 grows only while cwnd-limited) and ACK one segment per ms; cwnd
    in segments after each ACK."""
    grown = []
    for _ in range(acks):
        window = m.cwnd // SMSS
        if una + window > nxt:
            m.on_send(send(t, nxt, count=una + window - nxt, tsval=int(t)))
            nxt = una + window
        m.on_ack(ack(t + 100, una + 1, tsecr=int(t)))
        una, t = una + 1, t + 1
        grown.append(m.cwnd // SMSS)
    return grown


def test_ns3_arithmetic_counts_whole_segments() -> None:
    """ns-3's TcpCubic (cubic_arithmetic="ns3"): ssthresh = int(segments * 0.7), W_max in whole
    segments; in congestion avoidance one segment per cnt segments ACKed, cnt =
    segments // (target - segments), and the epoch starts at the first ACK after the loss."""
    m = after_loss(window=15, initial_window=15, cubic_arithmetic="ns3")
    assert m.ssthresh == 10 * SMSS  # int(15 * 0.7) = 10, not 10.5
    assert m._ns3_w_max == 15  # type: ignore[attr-defined]
    # the ACK that ends recovery: cwnd = ssthresh, then IncreaseWindow with every segment it
    # covers (ProcessAck leaving CA_RECOVERY: (ack - SND.UNA) / SMSS = 15). 100 ms RTT:
    # K = cbrt((15 - 10) / 0.4) = 2.32 s; the target 15 - int(0.4 * (2.32 - 0.1)^3) = 11 gives
    # cnt = 10 // 1 = 10: one segment, 5 left on the counter
    assert m.cwnd == 11 * SMSS and m._ns3_count == 5 and m.state is State.CONGESTION_AVOIDANCE  # type: ignore[attr-defined]
    # now cnt = 11 // (12 - 11) = 11: six more ACKs reach it
    assert fill_and_ack(m, 15, 15, 300.0, 12) == [11] * 5 + [12] * 7


def test_ns3_grows_only_while_cwnd_limited() -> None:
    """ns-3 grows cwnd only when the last send left less than a segment of it free
    (m_isCwndLimited, set in SendDataPacket): one segment at a time in a window of 11 does not."""
    m = after_loss(window=15, initial_window=15, cubic_arithmetic="ns3")
    n, t = 15, 300.0
    for _ in range(12):
        m.on_send(send(t, n, tsval=int(t)))
        m.on_ack(ack(t + 100, n + 1, tsecr=int(t)))
        assert m.cwnd == 11 * SMSS
        n, t = n + 1, t + 1


def test_ns3_clamps_cnt_before_the_first_loss_and_keeps_w_max_on_an_rto() -> None:
    """Before any loss cnt is clamped to 20, and the TCP-friendly estimate (on by default since
    ns-3.41) caps it once (8 * 15) >> 3 = 15 segments were ACKed in the epoch: on the 16th the
    estimate is 9 > 8, cnt = 8 // 1 and the 16 counted give one segment. An RTO sets W_max to
    cwnd (GetSsThresh) and CubicReset forgets the minimum RTT, not W_max."""
    m = model_class("cubic")(SMSS, SenderOptions(cubic_arithmetic="ns3", initial_ssthresh=6 * SMSS, initial_window=4))
    m.on_send(send(0, 0, count=4, tsval=0))
    m.on_ack(ack(100, 4, tsecr=0))  # slow start adds the 4 segments ACKed, past ssthresh
    assert m.cwnd == 8 * SMSS and m.state is State.CONGESTION_AVOIDANCE
    assert fill_and_ack(m, 4, 4, 200.0, 20) == [8] * 15 + [9] * 5
    m.on_timeout(2_000 * 1_000_000)
    assert m.ssthresh == 6 * SMSS and m.cwnd == SMSS  # int(9 * 0.7)
    assert m._ns3_w_max == 9 and m._ns3_min_rtt is None  # type: ignore[attr-defined]


def test_linux_arithmetic_counts_packets() -> None:
    """tcp_cubic.c (cubic_arithmetic="linux"): before any loss the cubic function gives cnt =
    100 * cwnd, clamped to 20; the TCP-friendly window (one packet per (10 * 15) >> 3 = 18
    packets ACKed) passes cwnd on the 19th ACK and caps cnt at 10 // 1, so tcp_cong_avoid_ai
    spends the 18 packets counted so far on one packet of cwnd. ssthresh on a loss:
    cwnd * 717 / 1024 packets; W_max = cwnd; an RTO forgets W_max."""
    m = model_class("cubic")(SMSS, SenderOptions(cubic_arithmetic="linux", initial_ssthresh=10 * SMSS))
    m.on_send(send(0, 0, count=40, tsval=0))
    windows = []
    for k in range(20):  # one packet per ACK, 40 ms apart: cnt is recomputed on each
        m.on_ack(ack(100 + 40 * k, k + 1, tsecr=0))
        windows.append(m.cwnd // SMSS)
    assert windows == [10] * 18 + [11, 11]
    m.on_ack(ack(1_000, 20, sack=((21, 22),)))
    m.on_ack(ack(1_001, 20, sack=((21, 23),)))
    m.on_ack(ack(1_002, 20, sack=((21, 24),)))
    assert m.state is State.RECOVERY and m.ssthresh == 11 * 717 // 1024 * SMSS
    assert m._lx_w_max == 11 and m._lx_cwnd_cnt == 0  # type: ignore[attr-defined]
    m.on_timeout(5_000 * 1_000_000)
    assert m._lx_w_max == 0 and m._lx_delay_min is None  # type: ignore[attr-defined]
