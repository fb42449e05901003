"""The shared part of the sender models: RTO response, undo, registry, options, own models."""
from __future__ import annotations

import pytest
from modelkit import MS, SMSS, ack, send

from tcpsack_analyze.events import Ack
from tcpsack_analyze.models import (
    INFINITE,
    MODELS,
    SenderModel,
    SenderOptions,
    State,
    model_class,
    register,
)
from tcpsack_analyze.scoreboard import AckResult


def test_every_algorithm_is_registered() -> None:
    assert set(MODELS) == {"tahoe", "reno", "newreno", "sack", "ksack", "cubic"}
    with pytest.raises(ValueError, match="unknown sender model 'bbr'"):
        model_class("bbr")


@pytest.mark.parametrize("bad", [{"slow_start": "fast"}, {"reduction": "none"}, {"ssthresh_from": "rwnd"},
                                 {"initial_window": 0}, {"rto_min_s": -1.0}])
def test_options_are_checked(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SenderOptions(**bad)  # type: ignore[arg-type]


def test_rto_response_and_backoff() -> None:
    m = model_class("sack")(SMSS, SenderOptions(rto_min_s=1.0))
    m.on_send(send(0, 0, count=10))
    assert m.rto_deadline_ns == 1000 * MS  # RFC 6298 2.1: 1 s before any sample
    m.on_timeout(1000 * MS)
    # RFC 5681 equation 4 and the loss window; the timer backs off (RFC 6298 5.5)
    assert m.state is State.LOSS and m.cwnd == SMSS and m.ssthresh == 5 * SMSS and m.timeouts == 1
    assert m.rto_deadline_ns == 3000 * MS and m.pipe == 0
    m.on_send(send(1000, 0, resent=True))
    assert m.pipe == SMSS and not m.can_send()
    m.on_timeout(3000 * MS)  # the second expiry: ssthresh is not reduced again
    assert m.ssthresh == 5 * SMSS and m.rto_deadline_ns == 7000 * MS
    m.on_send(send(3000, 0, resent=True))
    m.on_ack(ack(3100, 1))  # new data ACKed: backoff reset, slow start from one segment
    assert m.state is State.LOSS and m.cwnd == 2 * SMSS and m.timer.backoffs == 0
    m.on_ack(ack(3200, 10))  # everything outstanding at the RTO is ACKed: the RTO state ends
    assert m.state is State.SLOW_START and m.rto_deadline_ns is None


def test_linear_timeouts_while_thin() -> None:
    m = model_class("reno")(SMSS, SenderOptions(thin_linear_timeouts=True))
    m.on_send(send(0, 0, count=2))
    m.on_timeout(1000 * MS)
    m.on_timeout(2000 * MS)
    assert m.timer.backoffs == 0 and m.rto_deadline_ns == 3000 * MS  # paper 001 section 4.1


def test_rto_minimum_follows_the_samples() -> None:
    m = model_class("reno")(SMSS, SenderOptions(rto_min_s=0.2))
    m.on_send(send(0, 0, tsval=1))
    m.on_ack(ack(50, 1, tsecr=1))  # a 50 ms sample: SRTT 50, RTTVAR 25: RTO = 150 ms -> 200 ms
    assert m.srtt_s == pytest.approx(0.05) and m.min_rtt_s == pytest.approx(0.05)
    m.on_send(send(60, 1))
    assert m.rto_deadline_ns == 260 * MS


def test_eifel_undo_of_a_spurious_rto() -> None:
    m = model_class("sack")(SMSS, SenderOptions(undo=True))
    m.on_send(send(0, 0, count=10, tsval=100))
    m.on_timeout(1000 * MS)
    m.on_send(send(1000, 0, resent=True, tsval=200))
    m.on_ack(ack(1010, 10, tsecr=100))  # echoes the original: RFC 3522, the RTO was spurious
    assert m.state is State.SLOW_START and m.cwnd >= 10 * SMSS and m.ssthresh == INFINITE


def test_no_undo_when_the_retransmission_is_echoed() -> None:
    m = model_class("sack")(SMSS, SenderOptions(undo=True))
    m.on_send(send(0, 0, count=10, tsval=100))
    m.on_timeout(1000 * MS)
    m.on_send(send(1000, 0, resent=True, tsval=200))
    m.on_ack(ack(1100, 1, tsecr=200))
    assert m.state is State.LOSS and m.cwnd == 2 * SMSS and m.ssthresh == 5 * SMSS


class Fixed(SenderModel):
    """A model of the user's own: a fixed window of four segments, no loss response."""

    def _on_ack(self, ack: Ack, res: AckResult, duplicate: bool) -> None:
        self.cwnd = 4 * self.smss

    def enter_recovery(self, now: int) -> bool:
        return False


def test_a_users_subclass_goes_where_a_name_goes() -> None:
    assert model_class(Fixed) is Fixed
    m = Fixed(SMSS)
    m.on_send(send(0, 0, count=3))
    m.on_ack(ack(100, 1))
    assert m.cwnd == 4 * SMSS and m.send_window() == 2 * SMSS


def test_register_needs_a_name() -> None:
    with pytest.raises(ValueError, match="has no name"):
        register(Fixed)
