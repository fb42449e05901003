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

Linux's ``tcp_cubic.c`` (``cubic_arithmetic="linux"``, read for its behaviour) counts packets:
``bictcp_update`` recomputes ``cnt`` (ACKed packets per one-packet increase) at most once per
jiffy (HZ 1000 assumed) and not again within HZ/32 while cwnd is unchanged, from the cubic
function in units of 1/1024 s (``cube_rtt_scale`` 410, K = cbrt(2^40 / 410 * (W_max - cwnd)),
``delta = 410 * |t - K|^3 >> 40``), clamps it to 20 before the first loss, caps it by the
TCP-friendly window (``beta_scale`` 15: one packet per 15/8 cwnd ACKed) and to at least 2;
``tcp_cong_avoid_ai`` then adds ``snd_cwnd_cnt // cnt`` packets. W_max = cwnd * 1741 / 2048 with
fast convergence; the minimum RTT ignores samples within one second of an epoch's start; an RTO
resets it all (``bictcp_reset``), and a reduction zeroes ``snd_cwnd_cnt``.

ns-3's ``TcpCubic`` (``cubic_arithmetic="ns3"``; ns-3 3.44, ``src/internet/model/tcp-cubic.cc``,
read for its behaviour) counts differently, and with ns-3's settings the model follows it:

* cwnd in whole segments (``GetCwndInSegments``, rounded down); on a congestion signal
  W_max = segments, or ``int(segments (1 + beta) / 2)`` with fast convergence, and ssthresh =
  ``max(int(segments * beta), 2)`` segments;
* congestion avoidance by an ACK counter: per ACK, the segments it cumulatively ACKs are added
  to it; the target ``W(t + min RTT)`` (with ``int(C |t - K|^3)`` added to or taken from the
  origin, as unsigned 32-bit integers) gives ``cnt = segments // (target - segments)`` (100
  segments when at or above the target; at most 20 before the first loss, at least 2), and
  when the counter reaches cnt, cwnd grows by one segment and the counter by cnt less; the
  TCP-friendly estimate (``TcpFriendliness``, on by default since ns-3.41) counts ACKed segments
  since the epoch began, one segment per ``(segments * 15) >> 3`` of them as Linux's, and caps
  cnt at ``segments // (estimate - segments)`` when it is ahead;
* slow start adds the segments ACKed, not capped at ssthresh, and an ACK that ends it adds
  nothing to congestion avoidance;
* HyStart (on by default in ns-3) tests an RTT sample before the ACK grows cwnd, while
  16 segments <= cwnd <= ssthresh: an ACK train longer than the minimum RTT, or the smallest
  of the round's first 8 samples above twice the minimum RTT (the threshold is the minimum
  RTT clamped to [4 ms, 1 s]); once found it stays found until an RTO;
* an RTO sets W_max from cwnd as any loss does (``GetSsThresh``) and forgets the minimum RTT,
  the TCP-friendly estimate and HyStart's finding (``CubicReset``: not W_max); RTT samples
  within 10 ms of an epoch's start are not taken (``CubicDelta``);
* the ACK that ends fast recovery sets cwnd = ssthresh and counts every segment it covers
  (``ProcessAck``: (ACK - SND.UNA) / SMSS); the one that ends the RTO state counts only those
  above HighData at the RTO (``m_recover``);
* cwnd grows (slow start or congestion avoidance) only while the last data segment sent left
  less than one segment of cwnd free (``m_isCwndLimited``, set by ``SendDataPacket`` as
  cwnd < BytesInFlight + SMSS after each send: Linux's principle of not growing a window the
  sender does not use); the octets ACKed still count towards whole segments.
"""
from __future__ import annotations

from tcpsack_analyze.events import Ack, Send
from tcpsack_analyze.models.base import LOSS, SLOW_START, register
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
NS3_CNT_CLAMP = 20  # ns-3's CntClamp: the largest cnt before the first loss
NS3_DELTA_NS = 10_000_000  # ns-3's CubicDelta: no RTT sample this soon after an epoch starts
NS3_HYSTART_DELAY_MAX_S = 1.0
U32 = 1 << 32
LINUX_HZ = 1000  # jiffies per second (CONFIG_HZ; 250 on some kernels)
LINUX_CUBE_RTT_SCALE = 410  # bic_scale 41 * 10
LINUX_CUBE_FACTOR = (1 << 40) // LINUX_CUBE_RTT_SCALE
LINUX_BETA_SCALE = 15  # 8 * (1024 + 717) / 3 / (1024 - 717)


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
        if self.options.cubic_arithmetic == "ns3":
            self._ns3_rtt(rtt_s, now)
        elif self.options.cubic_arithmetic == "linux":
            if self._epoch_ns is None or now - self._epoch_ns >= NS:  # bictcp_acked
                self._lx_delay_min = rtt_s if self._lx_delay_min is None else min(self._lx_delay_min, rtt_s)

    _hs_rtt: float | None = None  # the RTT sample of the ACK being processed
    _hs_round_start = 0
    _hs_last_ack = 0

    def _on_ack(self, ack: Ack, res: AckResult, duplicate: bool) -> None:
        if (res.cumulative and self.options.hystart and self.state is SLOW_START
                and self.options.cubic_arithmetic != "ns3"):
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
        if self.options.cubic_arithmetic == "ns3":
            return self._ns3_ssthresh()
        if self.options.cubic_arithmetic == "linux":
            return self._linux_ssthresh()
        cwnd = self.cwnd / self.smss
        self._w_max = cwnd * (1 + BETA) / 2 if cwnd < self._w_max else cwnd  # fast convergence
        self._epoch_ns = None
        if self.options.ssthresh_from == "cwnd":  # Linux: snd_cwnd * 717 / 1024 packets
            return max(self._cwnd_packets() * BETA_LINUX // 1024, 2) * self.smss
        return max(int(cwnd * BETA * self.smss), 2 * self.smss)

    def _increase_ca(self, acked: int, now: int) -> None:
        if self.options.cubic_arithmetic == "linux":
            self._linux_increase(-(-acked // self.smss), now)
            return
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

    # ------------------------------------------------------------------ ns-3's TcpCubic

    _ns3_min_rtt: float | None = None  # m_delayMin, forgotten on an RTO
    _ns3_count = 0  # m_cWndCnt
    _ns3_w_max = 0  # m_lastMaxCwnd, segments
    _ns3_origin = 0
    _ns3_rest = 0  # octets ACKed short of a whole segment (m_bytesAckedNotProcessed)
    _ns3_found = False
    _ns3_round_end = 0  # m_endSeq
    _ns3_round_start: int | None = None
    _ns3_last_ack: int | None = None
    _ns3_round_min: float | None = None
    _ns3_samples = 0
    _ns3_cwnd_limited = False  # m_isCwndLimited: the last send left less than a segment of cwnd
    _ns3_ack_cnt = 0  # m_ackCnt: segments ACKed towards the TCP-friendly estimate
    _ns3_tcp_cwnd = 0  # m_tcpCwnd: the TCP-friendly estimate, segments

    _ns3_ended_loss = False  # this ACK ends the RTO state

    def on_ack(self, ack: Ack) -> AckResult:
        was_loss = self.state is LOSS
        self._ns3_ended_loss = False
        if was_loss and self.options.cubic_arithmetic == "ns3":
            self._ns3_ended_loss = max(self.board.high_ack, ack.ack) >= self._loss_point
        return super().on_ack(ack)

    def on_send(self, send: Send, *, rescue: bool = False) -> None:
        super().on_send(send, rescue=rescue)
        if self.options.cubic_arithmetic == "ns3":
            self._ns3_cwnd_limited = self.cwnd < self.pipe_after_send + self.smss

    def _ns3_ssthresh(self) -> int:
        """``TcpCubic::GetSsThresh``: W_max with fast convergence and ssthresh, in segments."""
        seg = self.cwnd // self.smss
        self._ns3_w_max = int(seg * (1 + BETA) / 2) if seg < self._ns3_w_max else seg
        self._epoch_ns = None
        return max(int(seg * BETA), 2) * self.smss

    def on_timeout(self, now: int) -> None:
        super().on_timeout(now)
        if self.options.cubic_arithmetic == "linux":  # cubictcp_state(TCP_CA_Loss): bictcp_reset
            self._lx_w_max = self._lx_cnt = self._lx_cwnd_cnt = self._lx_ack_cnt = self._lx_tcp_cwnd = 0
            self._lx_last_cwnd = self._lx_last_time = 0
            self._lx_delay_min = None
            self._epoch_ns = None
        if self.options.cubic_arithmetic == "ns3":  # CongestionStateSet(CA_LOSS): CubicReset, HystartReset
            self._ns3_origin = self._ns3_ack_cnt = self._ns3_tcp_cwnd = 0
            self._k = 0.0
            self._ns3_min_rtt = None
            self._ns3_found = False
            self._ns3_hystart_reset(now)

    def _ns3_hystart_reset(self, now: int) -> None:
        self._ns3_round_start = self._ns3_last_ack = now
        self._ns3_round_end = self.board.high_data
        self._ns3_round_min = None
        self._ns3_samples = 0

    def _ns3_rtt(self, rtt_s: float, now: int) -> None:
        """``TcpCubic::PktsAcked`` and ``HystartUpdate`` (module docstring)."""
        if self._epoch_ns is not None and now - self._epoch_ns < NS3_DELTA_NS:
            return
        if self._ns3_min_rtt is None or rtt_s < self._ns3_min_rtt:
            self._ns3_min_rtt = rtt_s
        if not (self.options.hystart and self.cwnd <= self.ssthresh and self.cwnd >= HYSTART_LOW_WINDOW * self.smss):
            return
        if self._ns3_found:
            return
        min_ns = self._ns3_min_rtt * NS
        if self._ns3_last_ack is not None and now - self._ns3_last_ack <= HYSTART_ACK_DELTA_NS:
            self._ns3_last_ack = now
            if self._ns3_round_start is not None and now - self._ns3_round_start > min_ns:
                self._ns3_found = True
        if self._ns3_samples < HYSTART_MIN_SAMPLES:
            if self._ns3_round_min is None or rtt_s < self._ns3_round_min:
                self._ns3_round_min = rtt_s
            self._ns3_samples += 1
        elif self._ns3_round_min is not None:
            threshold = min(max(self._ns3_min_rtt, HYSTART_DELAY_MIN_S), NS3_HYSTART_DELAY_MAX_S)
            if self._ns3_round_min > self._ns3_min_rtt + threshold:
                self._ns3_found = True
        if self._ns3_found:
            self.ssthresh = self.cwnd

    def _grow(self, res: AckResult, now: int) -> None:
        if self.options.cubic_arithmetic != "ns3":
            super()._grow(res, now)
            return
        if not res.cumulative:
            return
        if res.exited_recovery:  # ProcessAck leaving CA_RECOVERY: every segment the ACK covers
            segments = res.newly_acked // self.smss
        elif self._ns3_ended_loss:  # leaving CA_LOSS: only the segments above m_recover
            segments = max(0, self.board.high_ack - self._loss_point) // self.smss
        else:
            segments, self._ns3_rest = divmod(res.delivered + self._ns3_rest, self.smss)
        if segments <= 0:
            return
        if not self._ns3_cwnd_limited:
            segments = 0
        elif self.cwnd < self.ssthresh:
            if self.options.hystart and self.board.high_ack > self._ns3_round_end:
                self._ns3_hystart_reset(now)
            self.cwnd += segments * self.smss
            segments = 0
        if self.cwnd >= self.ssthresh and segments > 0:
            self._ns3_count += segments
            cnt = self._ns3_cnt(now, segments)
            if self._ns3_count >= cnt:
                self.cwnd += self.smss
                self._ns3_count -= cnt
        if self.state is not LOSS:
            self.state = self._open_state()

    def _ns3_cnt(self, now: int, acked: int) -> int:
        """``TcpCubic::Update`` for ``acked`` segments: ACKs per one-segment increase (module docstring)."""
        seg = self.cwnd // self.smss
        self._ns3_ack_cnt += acked
        if self._epoch_ns is None:
            self._epoch_ns = now
            self._ns3_ack_cnt, self._ns3_tcp_cwnd = acked, seg
            if self._ns3_w_max <= seg:
                self._k, self._ns3_origin = 0.0, seg
            else:
                self._k, self._ns3_origin = ((self._ns3_w_max - seg) / C) ** (1 / 3), self._ns3_w_max
        t = (now - self._epoch_ns) / NS + (self._ns3_min_rtt or 0.0)
        delta = int(C * abs(t - self._k) ** 3) % U32
        target = (self._ns3_origin - delta if t < self._k else self._ns3_origin + delta) % U32
        cnt = seg // (target - seg) if target > seg else 100 * seg
        if self._ns3_w_max == 0 and cnt > NS3_CNT_CLAMP:
            cnt = NS3_CNT_CLAMP
        step = (seg * LINUX_BETA_SCALE) >> 3  # TCP friendliness, ns-3's scale is Linux's 15
        while step and self._ns3_ack_cnt > step:
            self._ns3_ack_cnt -= step
            self._ns3_tcp_cwnd += 1
        if self._ns3_tcp_cwnd > seg:
            cnt = min(cnt, seg // (self._ns3_tcp_cwnd - seg))
        return max(cnt, 2)

    # ------------------------------------------------------------------ Linux's tcp_cubic.c

    _lx_w_max = 0  # last_max_cwnd, packets
    _lx_origin = 0  # bic_origin_point
    _lx_k = 0  # bic_K, 1/1024 s
    _lx_cnt = 0
    _lx_cwnd_cnt = 0  # snd_cwnd_cnt
    _lx_ack_cnt = 0
    _lx_tcp_cwnd = 0
    _lx_last_cwnd = 0
    _lx_last_time = 0  # jiffies
    _lx_epoch = 0  # jiffies
    _lx_delay_min: float | None = None

    def _linux_ssthresh(self) -> int:
        """``cubictcp_recalc_ssthresh``: W_max with fast convergence, cwnd * 717 / 1024."""
        cwnd = self._cwnd_packets()
        self._lx_w_max = cwnd * (1024 + BETA_LINUX) // 2048 if cwnd < self._lx_w_max else cwnd
        self._epoch_ns = None
        self._lx_cwnd_cnt = 0  # tcp_init_cwnd_reduction
        return max(cwnd * BETA_LINUX // 1024, 2) * self.smss

    def _linux_increase(self, acked: int, now: int) -> None:
        """``bictcp_update`` then ``tcp_cong_avoid_ai`` for ``acked`` packets (module docstring)."""
        cwnd = self._cwnd_packets()
        self._lx_ack_cnt += acked
        jiffies = now * LINUX_HZ // NS
        if not (self._lx_last_cwnd == cwnd and jiffies - self._lx_last_time <= LINUX_HZ // 32):
            if not (self._epoch_ns is not None and jiffies == self._lx_last_time):
                self._lx_last_cwnd, self._lx_last_time = cwnd, jiffies
                if self._epoch_ns is None:
                    self._epoch_ns, self._lx_epoch = now, jiffies
                    self._lx_ack_cnt, self._lx_tcp_cwnd = acked, cwnd
                    if self._lx_w_max <= cwnd:
                        self._lx_k, self._lx_origin = 0, cwnd
                    else:
                        self._lx_k = round((LINUX_CUBE_FACTOR * (self._lx_w_max - cwnd)) ** (1 / 3))
                        self._lx_origin = self._lx_w_max
                t = jiffies - self._lx_epoch + int((self._lx_delay_min or 0.0) * LINUX_HZ)
                t = (t << 10) // LINUX_HZ
                offs = self._lx_k - t if t < self._lx_k else t - self._lx_k
                delta = (LINUX_CUBE_RTT_SCALE * offs ** 3) >> 40
                target = self._lx_origin - delta if t < self._lx_k else self._lx_origin + delta
                self._lx_cnt = cwnd // (target - cwnd) if target > cwnd else 100 * cwnd
                if self._lx_w_max == 0 and self._lx_cnt > NS3_CNT_CLAMP:
                    self._lx_cnt = NS3_CNT_CLAMP  # the same clamp of 20 as ns-3's
            step = (cwnd * LINUX_BETA_SCALE) >> 3  # TCP friendliness
            while step and self._lx_ack_cnt > step:
                self._lx_ack_cnt -= step
                self._lx_tcp_cwnd += 1
            if self._lx_tcp_cwnd > cwnd:
                self._lx_cnt = min(self._lx_cnt, cwnd // (self._lx_tcp_cwnd - cwnd))
            self._lx_cnt = max(self._lx_cnt, 2)
        cnt = max(self._lx_cnt, 1)
        if self._lx_cwnd_cnt >= cnt:  # tcp_cong_avoid_ai
            self._lx_cwnd_cnt = 0
            cwnd += 1
        self._lx_cwnd_cnt += acked
        if self._lx_cwnd_cnt >= cnt:
            more = self._lx_cwnd_cnt // cnt
            self._lx_cwnd_cnt -= more * cnt
            cwnd += more
        self.cwnd = cwnd * self.smss
