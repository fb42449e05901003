"""NewReno: fast recovery that survives partial ACKs (RFC 6582 section 3.2).

Recovery lasts until the cumulative ACK reaches ``recover`` (HighData at entry). A partial ACK
deflates cwnd by the octets it acknowledged, adds back one SMSS if that was at least one SMSS,
and keeps the sender in recovery (step 5: one retransmission per partial ACK); a full ACK sets
cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS) (step 6, option 1; option 2, cwnd = ssthresh,
with ``full_ack_cwnd="ssthresh"``) and ends it. A new
recovery needs the cumulative ACK to pass the last ``recover`` (section 3.2 step 1).
"""
from __future__ import annotations

from tcpsack_analyze.models.base import register
from tcpsack_analyze.models.reno import Reno
from tcpsack_analyze.scoreboard import AckResult


@register
class NewReno(Reno):
    name = "newreno"

    def _recovery_ack(self, res: AckResult) -> None:
        if self.board.high_ack >= self._recover:  # full ACK: step 6, option 1 or 2 (full_ack_cwnd)
            self.cwnd = (self.ssthresh if self.options.full_ack_cwnd == "ssthresh"
                         else min(self.ssthresh, max(self.flight, self.smss) + self.smss))
            self.state = self._open_state()
            return
        self.cwnd = max(self.cwnd - res.newly_acked, self.smss)  # partial ACK: deflate
        if res.newly_acked >= self.smss:
            self.cwnd += self.smss

    def enter_recovery(self, now: int) -> bool:
        if self.recoveries and self.board.high_ack < self._recover:
            return False  # step 1: still inside the previous recovery's window
        return super().enter_recovery(now)
