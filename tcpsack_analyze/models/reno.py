"""Reno: fast retransmit and fast recovery with window inflation (RFC 5681 section 3.2).

On the DupThresh-th duplicate ACK: ssthresh = max(FlightSize / 2, 2 SMSS) (equation 4),
cwnd = ssthresh + DupThresh * SMSS (step 3); each further duplicate ACK inflates cwnd by one
SMSS (step 4); the first ACK of new data deflates it to ssthresh and ends recovery (step 6).
Without SACK the pipe is the flight, so inflation is what lets new data out during recovery.
"""
from __future__ import annotations

from tcpsack_analyze.events import Ack
from tcpsack_analyze.models.base import RECOVERY, SenderModel, register
from tcpsack_analyze.scoreboard import AckResult


@register
class Reno(SenderModel):
    name = "reno"

    def _on_ack(self, ack: Ack, res: AckResult, duplicate: bool) -> None:
        if self.state is RECOVERY:
            if res.cumulative:
                self._recovery_ack(res)
            elif duplicate:
                self.cwnd += self.smss  # step 4: window inflation
            return
        if self._loss_signal(res, duplicate):
            self.enter_recovery(ack.time_ns)
        else:
            self._grow(res, ack.time_ns)

    def _recovery_ack(self, res: AckResult) -> None:
        """An ACK of new data in recovery: step 6, deflate and leave."""
        self.cwnd = self.ssthresh
        self.state = self._open_state()

    def enter_recovery(self, now: int) -> bool:
        self.ssthresh = self._ssthresh_on_loss()
        self.cwnd = self.ssthresh + self.options.dup_thresh * self.smss
        self.state = RECOVERY
        self.recoveries += 1
        self._recover = self.board.high_data
        return True

    _recover = 0  # RFC 6582's "recover": HighData when recovery began (NewReno reads it)
