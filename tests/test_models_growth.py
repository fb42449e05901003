"""Slow-start growth rules (RFC 5681, RFC 3465 / paper 002) and the RFC 6298 timer of the models."""
from __future__ import annotations

import pytest

from tcpsack_analyze.models.growth import slow_start_increase
from tcpsack_analyze.models.rto import NS, RetransmissionTimer

S = 1000


@pytest.mark.parametrize(("rule", "acked", "after_rto", "expected"), [
    ("per_ack", 3 * S, False, S),  # RFC 5681: one SMSS per ACK however much it covers
    ("per_ack", 200, False, 200),  # min(N, SMSS)
    ("abc", 3 * S, False, 2 * S),  # RFC 3465: L = 2
    ("abc", 3 * S, True, S),  # L = 1 in a slow start after an RTO
    ("lbc", 3 * S, True, 2 * S),  # LBC keeps L after an RTO
    ("sabc", 3 * S, False, 2 * S),  # 1 + (3 - 1) * 0.5 segments
    ("sabc", 3 * S, True, S),  # SABC only in the first slow start
    ("bytes", 5 * S, False, 5 * S),  # Linux: no per-ACK limit
    ("bytes", 2 * S + 1, False, 3 * S),  # in packets: a short one counts whole
    ("abc", 0, False, 0),
])
def test_slow_start_increase(rule: str, acked: int, after_rto: bool, expected: int) -> None:
    assert slow_start_increase(rule, acked, S, limit=2, scale=0.5, after_rto=after_rto) == expected


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown slow-start rule"):
        slow_start_increase("fast", S, S, limit=2, scale=0.5, after_rto=False)


def test_timer_initial_minimum_and_backoff() -> None:
    timer = RetransmissionTimer(minimum_s=0.2, initial_s=1.0, maximum_s=60.0, backoff=2.0)
    assert timer.base_s() == 1.0  # RFC 6298 2.1: before any sample
    timer.sample(0.010)  # 10 ms: SRTT + 4 RTTVAR = 30 ms, raised to the 200 ms minimum (2.4)
    assert timer.base_s() == pytest.approx(0.2)
    timer.on_send(0)
    assert timer.deadline_ns == int(0.2 * NS)
    timer.on_send(NS // 10)  # 5.1: a running timer is not restarted by a send
    assert timer.deadline_ns == int(0.2 * NS)
    timer.on_expiry(int(0.2 * NS))  # 5.5: back off
    assert timer.backoffs == 1 and timer.deadline_ns == int(0.2 * NS) + int(0.4 * NS)
    timer.on_expiry(int(0.6 * NS), linear=True)  # thin-stream linear timeouts: no further backoff
    assert timer.backoffs == 1
    timer.on_new_ack(NS, outstanding=False)  # 5.2: stopped when all is ACKed; backoff reset
    assert timer.deadline_ns is None and timer.backoffs == 0


def test_timer_maximum() -> None:
    timer = RetransmissionTimer(minimum_s=1.0, initial_s=1.0, maximum_s=3.0, backoff=2.0)
    for _ in range(5):
        timer.on_expiry(0)
    assert timer.current_s() == 3.0


def test_linux_bounds_the_variance_term() -> None:
    rfc = RetransmissionTimer(minimum_s=0.2, initial_s=1.0, maximum_s=120.0, backoff=2.0)
    linux = RetransmissionTimer(minimum_s=0.2, initial_s=1.0, maximum_s=120.0, backoff=2.0, minimum_on_variance=True)
    for timer in (rfc, linux):
        for _ in range(50):
            timer.sample(0.2)  # a steady 200 ms: RTTVAR decays towards 0
    assert rfc.base_s() == pytest.approx(0.2, abs=0.005)  # max(SRTT + 4 RTTVAR, 200 ms)
    assert linux.base_s() == pytest.approx(0.4, abs=0.005)  # SRTT + max(200 ms, 4 RTTVAR)
