"""k-SACK: SACK recovery that reduces cwnd only for k losses in a window (paper 004 section II).

*Lookahead-loss* is the number of outstanding segments presumed lost (RFC 6675 IsLost: DupThresh
SACKed segments above them), counted per hole as the least number of segments of at most SMSS.
Recovery starts as in the SACK model (on the scoreboard's loss signal) but in the *halt growth*
phase, which freezes cwnd and ssthresh. When the lookahead-loss reaches k the sender enters
*k-recovery*: the first time in an episode ssthresh = max(cwnd / 2, 2 SMSS) and cwnd = ssthresh;
a re-entry within the same episode halves cwnd (at least one SMSS) and keeps ssthresh. When it
falls below k the sender goes back to halt growth. Recovery ends at RecoveryPoint with cwnd as it
stands (the paper: growth is unfrozen, slow start or congestion avoidance as cwnd and ssthresh
say). Sending is governed by the RFC 6675 pipe, as the paper's pipe estimation.
"""
from __future__ import annotations

from tcpsack_analyze.events import Ack
from tcpsack_analyze.models.base import RECOVERY, register
from tcpsack_analyze.models.sack import Sack
from tcpsack_analyze.scoreboard import AckResult


@register
class KSack(Sack):
    name = "ksack"

    _k_phase = False  # in k-recovery (else halt growth)
    _k_entered = False  # k-recovery was entered in this episode

    def lookahead_loss(self) -> int:
        """Outstanding segments presumed lost (paper 004's lookahead-loss)."""
        lost_end = self.board.lost_below
        return sum(-(-(min(b, lost_end) - a) // self.smss) for a, b in self.board.holes() if a < lost_end)

    def enter_recovery(self, now: int) -> bool:
        entered = super().enter_recovery(now)
        if entered:
            self._update_phase()
        return entered

    def _recovery_ack(self, res: AckResult) -> None:
        self._update_phase()

    def _update_phase(self) -> None:
        """Halt growth or k-recovery, by the lookahead-loss (module docstring)."""
        lost = self.lookahead_loss()
        if lost >= self.options.k and not self._k_phase:
            if self._k_entered:
                self.cwnd = max(self.cwnd // 2, self.smss)
            else:
                self.ssthresh = max(self.cwnd // 2, 2 * self.smss)
                self.cwnd = self.ssthresh
            self._k_phase = self._k_entered = True
        elif lost < self.options.k:
            self._k_phase = False

    def _exit_recovery(self) -> None:
        self.state = self._open_state()

    def _reduce(self) -> None:
        self._k_phase = self._k_entered = False

    def _on_ack(self, ack: Ack, res: AckResult, duplicate: bool) -> None:
        super()._on_ack(ack, res, duplicate)
        if self.state is not RECOVERY:
            self._k_phase = False
