"""The retransmission timer of a sender model: RFC 6298 with configurable limits and backoff.

Sans-I/O: the model tells the timer when data is sent and acknowledged and asks it for its
deadline; nothing here reads a clock. Times are ns on the capture clock.

* SRTT/RTTVAR and ``RTO = SRTT + max(G, 4 * RTTVAR)`` come from the one estimator,
  :class:`~tcpsack_analyze.rtt.Rfc6298` (section 2), bounded by ``[minimum, maximum]``
  (section 2.4: 1 s in the RFC; 2.5: at least 60 s maximum, 120 s in Linux). Linux bounds the
  variance term instead (``RTO = SRTT + max(200 ms, 4 * RTTVAR)``, ``minimum_on_variance``).
* Before the first sample the initial RTO applies (section 2.1: 1 s; 3 s in older stacks).
* Timer management (section 5): started on a send when not running (5.1), restarted when new
  data is acknowledged (5.3), stopped when everything is acknowledged (5.2).
* Backoff (5.5): each expiry multiplies the RTO by ``backoff`` (2), unless ``linear`` is set
  (the thin-stream linear timeouts of paper 001 chapter 4: no backoff while thin). An ACK of new
  data resets the backoff (as Linux does; RFC 6298 5.7 lets the new sample do it).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tcpsack_analyze.rtt import Rfc6298

NS = 1_000_000_000
GRANULARITY_S = 0.001  # G: clock granularity (Linux: one jiffy, 1-4 ms)


@dataclass
class RetransmissionTimer:
    """RFC 6298 retransmission timer (module docstring). Durations in seconds, times in ns."""

    minimum_s: float
    initial_s: float
    maximum_s: float
    backoff: float
    minimum_on_variance: bool = False  # Linux: RTO = SRTT + max(minimum, 4 RTTVAR)
    estimator: Rfc6298 = field(default_factory=Rfc6298)
    backoffs: int = 0  # expiries since the last ACK of new data
    deadline_ns: int | None = None
    _base: float | None = field(default=None, repr=False)  # base_s() until the next sample

    def base_s(self) -> float:
        """The RTO before backoff (section 2), or Linux's ``__tcp_set_rto`` with
        ``minimum_on_variance`` (the minimum bounds the variance term, not the RTO). Kept
        until the next sample, the only thing that changes it."""
        if self._base is None:
            self._base = self._compute_base()
        return self._base

    def _compute_base(self) -> float:
        if self.minimum_on_variance:
            rto = self.estimator.rto(max(GRANULARITY_S, self.minimum_s), 0.0, self.maximum_s)
        else:
            rto = self.estimator.rto(GRANULARITY_S, self.minimum_s, self.maximum_s)
        return self.initial_s if rto is None else rto

    def current_s(self, linear: bool = False) -> float:
        """The RTO with the backoff of the expiries so far (section 5.5), at most the maximum."""
        base = self.base_s()
        if linear or not self.backoffs:
            return min(base, self.maximum_s)
        return min(base * self.backoff ** self.backoffs, self.maximum_s)

    def sample(self, rtt_s: float) -> None:
        """A round-trip measurement (Karn's rule is the caller's business, section 3)."""
        self.estimator.update(rtt_s)
        self._base = None

    def on_send(self, now: int, linear: bool = False) -> None:
        """Section 5.1: start the timer when it is not running."""
        if self.deadline_ns is None:
            self.deadline_ns = now + int(self.current_s(linear) * NS)

    def on_new_ack(self, now: int, outstanding: bool, linear: bool = False) -> None:
        """Sections 5.2, 5.3: new data acknowledged; restart or stop the timer; reset backoff."""
        self.backoffs = 0
        self.deadline_ns = now + int(self.current_s(linear) * NS) if outstanding else None

    def on_expiry(self, now: int, linear: bool = False) -> None:
        """Section 5.5-5.6: back off (unless linear) and restart for the retransmission."""
        if not linear:
            self.backoffs += 1
        self.deadline_ns = now + int(self.current_s(linear) * NS)


__all__ = ["NS", "RetransmissionTimer"]
