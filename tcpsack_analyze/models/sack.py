"""SACK-based loss recovery (RFC 6675), with the classic or the PRR (RFC 6937) reduction.

Recovery starts when the scoreboard says so (DupThresh duplicate ACKs or IsLost of the first
hole, section 5 steps (1)-(2)), sets RecoveryPoint and ssthresh (section 5 step 4.2: half the
FlightSize, or half cwnd per ``ssthresh_from``). With ``reduction="classic"`` cwnd = ssthresh
at once and the sender sends while cwnd - pipe >= 1 SMSS (step (C)); with ``"prr"`` cwnd follows
PRR on every ACK. Recovery ends when the cumulative ACK reaches RecoveryPoint (step (A)) with
cwnd = ssthresh. This with Reno growth, PRR and RACK-TLP (:meth:`SenderOptions.linux`) is
Linux's ``reno``.
"""
from __future__ import annotations

from tcpsack_analyze.events import Ack
from tcpsack_analyze.models.base import RECOVERY, SenderModel, register
from tcpsack_analyze.models.prr import ProportionalRateReduction
from tcpsack_analyze.scoreboard import AckResult


@register
class Sack(SenderModel):
    name = "sack"
    uses_sack = True

    _prr: ProportionalRateReduction | None = None
    _pipe_at_entry = 0

    def _on_ack(self, ack: Ack, res: AckResult, duplicate: bool) -> None:
        if self.state is RECOVERY:
            if not res.exited_recovery and self.board.in_recovery:
                self._recovery_ack(res)
                return
            self._exit_recovery()
        if self._loss_signal(res, duplicate):
            pipe = self.pipe  # before the fast retransmission is counted (RFC 6937: sent after)
            self.enter_recovery(ack.time_ns)
            if self._prr is not None:
                self.cwnd = self._prr.on_ack(res.delivered, pipe)
        else:
            self._grow(res, ack.time_ns)

    def _recovery_ack(self, res: AckResult) -> None:
        """An ACK inside recovery: PRR sets cwnd; the classic reduction leaves it alone.

        ns-3 (``bookkeeping="ns3"``, ``TcpPrrRecovery::DoRecovery`` as ``TcpSocketBase`` calls
        it): without SACK, PRR gets the pipe from before a duplicate ACK's emulated SACK
        (``m_bytesInFlight`` is refreshed before ``DupAck`` adds it), so each duplicate ACK lets
        one segment out whatever PRR's count says; with SACK, a duplicate ACK's DeliveredData is
        the octets it SACKs plus one segment (while prr_delivered < RecoverFS), so ns-3's PRR
        sends up to twice RFC 6937's during recovery."""
        if self._prr is not None:
            pipe = self.pipe
            delivered = res.delivered
            if self.emulated_now and self.options.bookkeeping == "ns3":
                pipe += self.emulated_now
            elif (self._sack_seen and res.duplicate and self.options.bookkeeping == "ns3"
                  and self._prr.delivered < self._prr.recover_fs):
                delivered += self.smss  # DupAck's DoRecovery adds a segment to the SACKed octets
            self.cwnd = self._prr.on_ack(delivered, pipe)

    def _exit_recovery(self) -> None:
        self.cwnd = self.ssthresh
        self._prr = None
        self.state = self._open_state()

    def _reduce(self) -> None:
        """Step 4.2: the reduction on entering recovery."""
        self.ssthresh = self._ssthresh_on_loss()
        if self.options.reduction == "prr":
            # RFC 6937 RecoverFS = FlightSize; Linux prior_cwnd; ns-3 its BytesInFlight (the pipe
            # before the fast retransmission, with the head lost: m_recoveryFlightSize)
            frm = self.options.ssthresh_from
            recover_fs = self.cwnd if frm == "cwnd" else self._pipe_at_entry if frm == "pipe" else self.flight
            self._prr = ProportionalRateReduction(self.ssthresh, recover_fs, self.smss)
        else:
            self.cwnd = self.ssthresh

    def enter_recovery(self, now: int) -> bool:
        if not self.board.can_enter_recovery:
            return False
        self._pipe_at_entry = self.pipe
        self._reduce()  # from the pipe before the fast retransmission is marked sent (HighRxt)
        self.board.enter_recovery(now)
        self.state = RECOVERY
        self.recoveries += 1
        return True

    def _on_sent(self, length: int, resent: bool) -> None:
        if self._prr is not None and self.state is RECOVERY:
            self._prr.on_send(length)
