"""Proportional Rate Reduction (RFC 6937 section 3), the recovery reduction of the SACK models.

During recovery the sender may send, per ACK, ``sndcnt`` octets so that by the end of recovery
it has sent ssthresh / RecoverFS of what was delivered: proportionally while pipe > ssthresh,
and with slow-start reduction bound (PRR-SSRB) back up to ssthresh once pipe has fallen below.
As Linux's ``tcp_cwnd_reduction``, at least one segment goes out on the ACK that starts
recovery (the fast retransmission). The caller sets ``cwnd = pipe + sndcnt``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ProportionalRateReduction:
    """PRR state of one recovery episode; octets throughout."""

    ssthresh: int
    recover_fs: int  # RecoverFS: HighData - HighACK at the start of recovery (Linux: prior cwnd)
    smss: int
    delivered: int = 0  # prr_delivered
    out: int = 0  # prr_out

    def on_ack(self, delivered: int, pipe: int) -> int:
        """An ACK reported ``delivered`` new octets (DeliveredData); returns the new cwnd."""
        self.delivered += delivered
        if pipe > self.ssthresh:
            sndcnt = -(-self.delivered * self.ssthresh // max(self.recover_fs, 1)) - self.out
        else:
            limit = max(self.delivered - self.out, delivered) + self.smss
            sndcnt = min(self.ssthresh - pipe, limit)
        if self.out == 0:
            sndcnt = max(sndcnt, self.smss)
        return pipe + max(sndcnt, 0)

    def on_send(self, length: int) -> None:
        self.out += length
