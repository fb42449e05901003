"""Tahoe: fast retransmit, then slow start from one segment (Jacobson 1988; paper 000).

Three duplicate ACKs make Tahoe retransmit the missing segment and treat the loss like a
timeout without waiting for one: ssthresh = max(FlightSize / 2, 2 SMSS), cwnd = 1 SMSS, and
go-back-N from the cumulative ACK (the base's :attr:`~.base.LOSS` state), so every
fast retransmission is a cwnd "falling edge".
"""
from __future__ import annotations

from tcpsack_analyze.events import Ack
from tcpsack_analyze.models.base import SenderModel, register
from tcpsack_analyze.scoreboard import AckResult


@register
class Tahoe(SenderModel):
    name = "tahoe"

    def _on_ack(self, ack: Ack, res: AckResult, duplicate: bool) -> None:
        if self._loss_signal(res, duplicate):
            self.enter_recovery(ack.time_ns)
        else:
            self._grow(res, ack.time_ns)

    def enter_recovery(self, now: int) -> bool:
        self.ssthresh = self._ssthresh_on_loss()
        self.recoveries += 1
        self._enter_loss(now)
        return True
