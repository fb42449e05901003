"""CUBIC (RFC 8312, with Linux's constants), on SACK recovery with PRR.

Congestion avoidance follows the cubic function of the time since the last reduction
(section 4.1): ``W(t) = C (t - K)^3 + W_max`` in segments, ``K = cbrt(W_max (1 - beta) / C)``,
C = 0.4, beta = 0.7 (Linux: ``bic_scale`` 41 / 1024 * 10 and ``beta`` 717 / 1024). Per ACK cwnd
moves towards W(t + RTT) by ``(W(t + RTT) - cwnd) / cwnd`` segments per segment ACKed, and never
below the TCP-friendly estimate ``W_est = W_max beta + 3 (1 - beta) / (1 + beta) t / RTT``
(section 4.2). On a congestion signal ssthresh = max(cwnd beta, 2 SMSS) (section 4.5) and with
fast convergence (section 4.6) W_max = cwnd (1 + beta) / 2 when cwnd fell short of the previous
W_max. As Linux, the epoch restarts on the first ACK after a reduction and t includes the
minimum RTT.

HyStart (``hystart``; Ha and Rhee, "Taming the elephants", 2011; Linux's ``hystart_update``):
in slow start with cwnd >= 16 segments, per round (a window of data, from the first ACK after
the previous round's data), slow start ends (ssthresh = cwnd) when ACKs less than 2 ms apart
have formed a train longer than half of (minimum RTT + 1 ms) since the round began (ACK train;
Linux's unpaced threshold with its pacing allowance ``hystart_ack_delay`` at its 1 ms cap), or when the smallest of the round's first 8 RTT samples
exceeds the minimum RTT by ``clamp(min RTT / 8, 4 ms, 16 ms)`` (delay increase).
"""
from __future__ import annotations

from tcpsack_analyze.events import Ack
from tcpsack_analyze.models.base import SLOW_START, register
from tcpsack_analyze.models.rto import NS
from tcpsack_analyze.models.sack import Sack
from tcpsack_analyze.scoreboard import AckResult

C = 0.4
BETA = 0.7
BETA_LINUX = 717  # /1024, Linux's beta in integer arithmetic
HYSTART_LOW_WINDOW = 16  # segments
HYSTART_MIN_SAMPLES = 8
HYSTART_DELAY_MIN_S, HYSTART_DELAY_MAX_S = 0.004, 0.016
HYSTART_ACK_DELTA_NS = 2_000_000  # ACKs closer than this form a train
HYSTART_ACK_DELAY_NS = 1_000_000  # Linux's hystart_ack_delay: at most 1 ms, reached at usual rates


@register
class Cubic(Sack):
    name = "cubic"

    _w_max = 0.0  # segments
    _k = 0.0  # seconds
    _epoch_ns: int | None = None
    _w_est = 0.0
    _origin = 0.0  # segments: the plateau of the cubic function
    _hs_round_end: int | None = None  # HyStart: HighData when the round began
    _hs_round_min = float("inf")
    _hs_samples = 0

    def _on_rtt(self, rtt_s: float, now: int) -> None:
        self._hs_rtt = rtt_s

    _hs_rtt: float | None = None  # the RTT sample of the ACK being processed
    _hs_round_start = 0
    _hs_last_ack = 0

    def _on_ack(self, ack: Ack, res: AckResult, duplicate: bool) -> None:
        if res.cumulative and self.options.hystart and self.state is SLOW_START:
            self._hystart(ack.time_ns)
        self._hs_rtt = None
        super()._on_ack(ack, res, duplicate)

    def _hystart(self, now: int) -> None:
        """HyStart's ACK-train and delay-increase tests (module docstring)."""
        if self._hs_round_end is None or self.board.high_ack >= self._hs_round_end:
            self._hs_round_end = self.board.high_data
            self._hs_round_start = self._hs_last_ack = now
            self._hs_round_min = float("inf")
            self._hs_samples = 0
        if self.cwnd < HYSTART_LOW_WINDOW * self.smss or self.min_rtt_s is None:
            return
        found = False
        if now - self._hs_last_ack <= HYSTART_ACK_DELTA_NS:
            self._hs_last_ack = now
            found = now - self._hs_round_start > (self.min_rtt_s * NS + HYSTART_ACK_DELAY_NS) / 2
        if self._hs_rtt is not None and self._hs_samples < HYSTART_MIN_SAMPLES:
            self._hs_round_min = min(self._hs_round_min, self._hs_rtt)
            self._hs_samples += 1
        if self._hs_samples >= HYSTART_MIN_SAMPLES:
            threshold = min(max(self.min_rtt_s / 8, HYSTART_DELAY_MIN_S), HYSTART_DELAY_MAX_S)
            found = found or self._hs_round_min > self.min_rtt_s + threshold
        if found:
            self.ssthresh = self.cwnd

    def _ssthresh_on_loss(self) -> int:
        cwnd = self.cwnd / self.smss
        self._w_max = cwnd * (1 + BETA) / 2 if cwnd < self._w_max else cwnd  # fast convergence
        self._epoch_ns = None
        if self.options.ssthresh_from == "cwnd":  # Linux: snd_cwnd * 717 / 1024 packets
            return max(self._cwnd_packets() * BETA_LINUX // 1024, 2) * self.smss
        return max(int(cwnd * BETA * self.smss), 2 * self.smss)

    def _increase_ca(self, acked: int, now: int) -> None:
        cwnd = self.cwnd / self.smss
        rtt = self.min_rtt_s or self.srtt_s or 0.0
        if self._epoch_ns is None:
            self._epoch_ns = now
            self._k = ((self._w_max - cwnd) / C) ** (1 / 3) if cwnd < self._w_max else 0.0
            self._origin = max(self._w_max, cwnd)
            self._w_est = cwnd
        t = (now - self._epoch_ns) / NS + rtt
        target = self._origin + C * (t - self._k) ** 3
        segments = acked / self.smss
        self._w_est += 3 * (1 - BETA) / (1 + BETA) * segments / cwnd  # section 4.2, per ACK
        if target > cwnd:
            self._ca_credit += (target - cwnd) / cwnd * segments
        else:
            self._ca_credit += segments / (100 * cwnd)  # Linux: one segment per 100 cwnd
        if self._w_est > cwnd + self._ca_credit:
            self._ca_credit = self._w_est - cwnd
        whole = int(self._ca_credit)
        if whole:
            self.cwnd += whole * self.smss
            self._ca_credit -= whole
