"""What a transfer achieved, measured the same way for the capture and for every simulated run.

A simulated run yields the sender's view of its transfer as an
:class:`~tcpsack_analyze.events.EventBatch` (its sends and the ACKs it received), the same
stream the flow stage makes of a sender-side capture. :func:`summarize_events` passes it
through the capture's own stages, the RTT sampler (:class:`~tcpsack_analyze.rtt.RttSampler`) and
the loss tracker (:class:`~tcpsack_analyze.loss.tracker.LossTracker`, summarized by
:func:`~tcpsack_analyze.loss.summary.summarize`), so a timeout, a retransmission, an RTD or a
recovery time of a model means exactly what it means in the report of the capture
(DOMAIN.md sections 4, 5 and 7). :func:`outcome` condenses either into one :class:`Outcome`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.events import EventBatch, StreamFacts
from tcpsack_analyze.loss.records import RTO
from tcpsack_analyze.loss.summary import LossSummary, summarize
from tcpsack_analyze.loss.tracker import LossResult, LossTracker
from tcpsack_analyze.rtt import RttSampler

NS = 1_000_000_000


@dataclass(frozen=True)
class Outcome:
    """One transfer, observed or simulated (times in ms, rates in octets/s).

    ``duration_s`` runs from the first data send to the ACK that covered the last octet
    (``finished``), else to the last ACK. ``timeouts``: the loss tracker's timer resends for a
    capture, the model's RTO expiries for a simulated run (:mod:`.whatif`). ``slow_starts``
    counts the initial one and one per timeout episode, or per entry into the model's loss state
    (the cwnd "falling edges" of paper 000 that restart slow start).
    ``recovery_*_ms`` is per loss incident, from the first transmission of the lost segment to
    the ACK that covered it (``latency_ack_ms`` of the report). ``None``: no sample.
    """

    label: str
    octets: int
    duration_s: float
    throughput_Bps: float | None
    finished: bool
    timeouts: int
    slow_starts: int
    retransmissions: int
    lost: int
    episodes: int
    rtd_mean_ms: float | None
    rtd_p99_ms: float | None
    rtd_max_ms: float | None
    recovery_mean_ms: float | None
    recovery_max_ms: float | None


def track_events(events: EventBatch, smss: int) -> LossResult:
    """The loss tracker's records of a sender-side event stream (a simulated run's)."""
    sampler = RttSampler()
    tracker = LossTracker(0)
    rtt = sampler.feed(events)
    now = int(events.time_ns[-1]) if len(events) else 0
    tracker.feed(events, now=now, facts=StreamFacts(smss, 0, 0, None), rtt=rtt)
    return tracker.finish()


def summarize_events(events: EventBatch, smss: int, res: LossResult | None = None) -> LossSummary:
    """The report's loss section of a sender-side event stream (``res``: its tracker's records,
    when already made)."""
    res = res if res is not None else track_events(events, smss)
    data = int(events.is_data.sum())
    return summarize(res, throughput_Bps=None, mss=smss, data_packets=data, peer_acks=int(events.is_ack.sum()),
                     gilbert_elliott=None)


def transfer_span(events: EventBatch) -> tuple[int, int, int, bool]:
    """(octets, first data send ns, end ns, finished) of a direction's events: the octets between
    its lowest and highest data octet, the end the first ACK that covered the highest (else the
    last event)."""
    data = events.is_data
    if not data.any():
        return 0, 0, 0, False
    lo, hi = int(events.start[data].min()), int(events.end[data].max())
    first = int(events.time_ns[data][0])
    acks = events.is_ack & (events.ack >= hi)
    if acks.any():
        return hi - lo, first, int(events.time_ns[acks][0]), True
    return hi - lo, first, int(events.time_ns[-1]), False


def outcome(label: str, events: EventBatch, loss: LossSummary) -> Outcome:
    """Condense a direction's events and its loss section into an :class:`Outcome`."""
    octets, first, end, finished = transfer_span(events)
    duration = max(end - first, 0) / NS
    return Outcome(
        label=label,
        octets=octets,
        duration_s=duration,
        throughput_Bps=octets / duration if duration > 0 else None,
        finished=finished,
        timeouts=loss.by_trigger.get(RTO, 0),
        slow_starts=1 + loss.episodes_by_trigger.get(RTO, 0),
        retransmissions=loss.retransmissions,
        lost=loss.lost_transmissions,
        episodes=loss.episodes,
        rtd_mean_ms=loss.rtd_ms.mean,
        rtd_p99_ms=loss.rtd_ms.p99,
        rtd_max_ms=loss.rtd_ms.max,
        recovery_mean_ms=loss.latency_ack_ms.mean,
        recovery_max_ms=loss.latency_ack_ms.max,
    )


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is 0."""
    if a is None or b is None or b == 0 or np.isnan(b):
        return None
    return a / b


__all__ = ["Outcome", "outcome", "ratio", "summarize_events", "track_events", "transfer_span"]
