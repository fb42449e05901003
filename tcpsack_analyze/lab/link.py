"""One direction of the emulated link, as a pure function of arrival times (no I/O, no clock).

A frame offered at time ``now`` goes through, in this order:

1. the loss model, for TCP segments that carry data only (SYN, FIN-only and pure ACK segments,
   and non-TCP frames, are never dropped by it) -- drop reason ``loss``;
2. the bottleneck, when a rate is set: a drop-tail FIFO holding at most ``queue`` frames
   (including the one being serialised); a frame that finds it full is dropped -- reason
   ``queue``; otherwise it leaves the bottleneck after every frame ahead of it, at
   ``max(now, previous departure) + bits / rate`` (the usual single-server queue, as tbf/htb
   with a pfifo of that limit behave);
3. the one-way propagation delay, added after the bottleneck.

The result is the frame's delivery time, which never decreases from one frame to the next in
a direction, so the emulator can keep each direction's pending frames in a plain FIFO.
Loss before the queue matches netem, which decides loss at enqueue.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from tcpsack_analyze.lab.droplog import Drop
from tcpsack_analyze.lab.lossmodels import LossModel, parse
from tcpsack_analyze.lab.wire import Segment, decode

__all__ = ["LinkConfig", "LinkDirection"]

_ETHERNET_OVERHEAD = 24
"""Preamble, SFD, FCS and inter-frame gap (8 + 4 + 12 bytes) a wire adds to a captured frame."""


@dataclass(frozen=True)
class LinkConfig:
    """Parameters of one direction: delay in seconds, rate in bit/s (0 = unlimited), the queue
    limit in frames, and the loss model's command-line spelling (see ``lossmodels``)."""

    delay: float = 0.0
    rate: float = 0.0
    queue: int = 100
    loss: str = "none"

    def __post_init__(self) -> None:
        if self.delay < 0 or self.rate < 0:
            raise ValueError("delay and rate must not be negative")
        if self.queue < 1:
            raise ValueError("the queue must hold at least one frame")
        parse(self.loss, seed=0)  # reject a bad spelling now, not in the emulator process

    def to_dict(self) -> dict[str, object]:
        """Parameters for ``truth.json`` (delay in seconds, rate in bit/s)."""
        return {"delay": self.delay, "rate": self.rate, "queue": self.queue, "loss": self.loss}


@dataclass
class LinkDirection:
    """The state of one direction of one section of path: loss model, bottleneck backlog and
    counters. ``name`` is the direction (``fwd``, ``rev``), ``where`` the section (upstream or
    downstream of the mid capture point; None on a path without one), both copied into drops."""

    name: str
    config: LinkConfig
    loss: LossModel
    where: str | None = None
    forwarded: int = 0
    drops_by_reason: dict[str, int] = field(default_factory=lambda: {"loss": 0, "queue": 0})
    _departures: deque[float] = field(default_factory=deque)  # bottleneck exits still ahead

    @classmethod
    def build(cls, name: str, config: LinkConfig, seed: int, where: str | None = None) -> LinkDirection:
        """A direction whose loss model is seeded with ``seed``."""
        return cls(name, config, parse(config.loss, seed), where)

    def offer(self, now: float, frame: bytes) -> float | Drop:
        """Delivery time of ``frame`` arriving at ``now``, or the record of its drop."""
        seg = decode(frame)
        if seg is not None and seg.is_data and self.loss.drop():
            return self._dropped(now, "loss", frame, seg)
        depart = now
        if self.config.rate > 0:
            backlog = self._departures
            while backlog and backlog[0] <= now:
                backlog.popleft()
            if len(backlog) >= self.config.queue:
                return self._dropped(now, "queue", frame, seg)
            start = backlog[-1] if backlog else now
            depart = start + (len(frame) + _ETHERNET_OVERHEAD) * 8 / self.config.rate
            backlog.append(depart)
        self.forwarded += 1
        return depart + self.config.delay

    def _dropped(self, now: float, reason: str, frame: bytes, seg: Segment | None) -> Drop:
        self.drops_by_reason[reason] += 1
        return Drop.of(now, self.name, reason, len(frame), seg, self.where)
