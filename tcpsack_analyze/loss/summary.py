"""The loss sections of the report: per direction, and combined over a capture (DOMAIN.md 4-9).

Built from a :class:`~tcpsack_analyze.loss.tracker.LossResult`; every figure is computed from
the capture. Where a figure rests on an inference (the RTT that groups losses into events, the
delayed-ACK guess behind the Mathis constant) the section says which.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.loss.patterns import GilbertElliott, LossPattern, achieved_percent, loss_pattern, mathis_throughput
from tcpsack_analyze.loss.records import RTO, UPSTREAM
from tcpsack_analyze.loss.tracker import LossResult
from tcpsack_analyze.stats import Summary

MS = 1e-6  # ns -> ms
DELAYED_ACK_RATIO = 0.75  # fewer ACKs than this per data segment: the receiver delays ACKs


@dataclass(frozen=True)
class LossSummary:
    """Loss forensics of one direction's data (the sender of this direction)."""

    retransmissions: int
    by_trigger: dict[str, int]  # fast, early, recovery, rto, tlp, ambiguous
    sender_state: dict[str, int]  # state the triggers imply: Recovery, Loss, Open, unknown
    spurious: dict[str, int]  # by evidence: dsack, eifel, early_ack, already_acked
    max_rto_backoff: int
    network_duplicates: int
    reorderings: int  # holes filled without a retransmission
    fills: dict[str, int]  # holes filled, by cause
    episodes: int
    episodes_by_trigger: dict[str, int]
    episodes_ended: dict[str, int]  # full_ack, rto, end_of_capture
    episodes_sack_without_rto: int  # SACK in use and finished by a full ACK, no timeout
    episode_duration_ms: Summary
    rtd_ms: Summary  # DOMAIN.md 5: consecutive transmissions of each original segment
    rto_rtd_ms: Summary  # the same, for timeout resends only
    latency_rexmit_ms: Summary  # per incident: first transmission to last retransmission
    latency_ack_ms: Summary  # per incident: first transmission to the covering ACK
    incidents: int
    lost_transmissions: int
    lost_downstream: int
    lost_upstream: int
    thin_time_share: float | None  # of the time with data in flight, share with <= 4 packets
    thin_loss_share: float | None  # of the retransmissions, share sent in thin state
    pattern: LossPattern
    events_rtt_ms: float | None  # the RTT that grouped losses into events (full-path SRTT)
    delayed_acks: bool | None  # inferred from ACKs per data segment (Mathis constant)
    mathis_Bps: float | None
    mathis_achieved_pct: float | None


def _ms(values: list[int]) -> Summary:
    return Summary.of(np.asarray(values, dtype=np.int64), MS)


def summarize(
    res: LossResult,
    *,
    throughput_Bps: float | None,
    mss: int | None,
    data_packets: int,
    peer_acks: int,
    gilbert_elliott: GilbertElliott | None,
) -> LossSummary:
    """The loss section of one direction; ``peer_acks`` are the ACKs its receiver sent.

    ``gilbert_elliott`` is the direction's Baum-Welch fit, made for all the directions of a
    capture at once (:func:`~tcpsack_analyze.loss.patterns.fit_gilbert_elliott_all`).
    """
    rx = res.retransmissions
    srtt = res.srtt_full_ns
    pattern = loss_pattern(res.lost_flags, res.lost_times, srtt if srtt and srtt > 0 else None, gilbert_elliott)
    delayed = None if data_packets == 0 else peer_acks < DELAYED_ACK_RATIO * data_packets
    mathis = mathis_throughput(mss or 0, None if srtt is None else srtt / 1e9, pattern.P_prime, bool(delayed)) if mss else None
    episodes = res.episodes
    return LossSummary(
        retransmissions=len(rx),
        by_trigger=dict(Counter(r.trigger for r in rx)),
        sender_state=dict(Counter(r.ca_state for r in rx)),
        spurious=dict(Counter(r.spurious for r in rx if r.spurious)),
        max_rto_backoff=max((r.backoff for r in rx if r.trigger == RTO), default=0),
        network_duplicates=res.network_duplicates,
        reorderings=res.reorderings,
        fills=dict(Counter(f.cause for f in res.fills)),
        episodes=len(episodes),
        episodes_by_trigger=dict(Counter(e.trigger for e in episodes)),
        episodes_ended=dict(Counter(e.ended for e in episodes)),
        episodes_sack_without_rto=sum(1 for e in episodes if e.sack_finished_without_rto),
        episode_duration_ms=_ms([e.duration_ns for e in episodes if e.duration_ns is not None]),
        rtd_ms=Summary.of(res.rtd_samples_ns, MS),
        rto_rtd_ms=Summary.of(res.rto_rtd_samples_ns, MS),
        latency_rexmit_ms=_ms([i.latency_rexmit_ns for i in res.incidents if i.lost]),
        latency_ack_ms=_ms([x for i in res.incidents if i.lost and (x := i.latency_ack_ns) is not None]),
        incidents=len(res.incidents),
        lost_transmissions=len(res.lost),
        lost_downstream=sum(1 for x in res.lost if x.where != UPSTREAM),
        lost_upstream=sum(1 for x in res.lost if x.where == UPSTREAM),
        thin_time_share=res.thin_ns / res.busy_ns if res.busy_ns else None,
        thin_loss_share=sum(1 for r in rx if r.thin) / len(rx) if rx else None,
        pattern=pattern,
        events_rtt_ms=None if srtt is None else srtt * MS,
        delayed_acks=delayed,
        mathis_Bps=mathis,
        mathis_achieved_pct=None if throughput_Bps is None else achieved_percent(throughput_Bps, mathis),
    )


@dataclass(frozen=True)
class LossTotals:
    """Over every connection of a capture: samples pooled, so each connection weighs by its
    number of retransmissions (DOMAIN.md section 5)."""

    directions_with_data: int
    directions_with_retransmissions: int
    retransmissions: int
    by_trigger: dict[str, int]
    rtd_ms: Summary
    latency_ack_ms: Summary
    dupacks_per_connection: Summary  # duplicate ACKs per connection (both directions)
    connections_without_dupacks: int
    thin_loss_share: float | None


def combine(results: list[LossResult], dupacks_per_connection: list[int], data_directions: int) -> LossTotals:
    """Pool the samples of all directions of a capture."""
    rx = [r for res in results for r in res.retransmissions]
    lat = [x for res in results for i in res.incidents if i.lost and (x := i.latency_ack_ns) is not None]
    return LossTotals(
        directions_with_data=data_directions,
        directions_with_retransmissions=sum(1 for res in results if res.retransmissions),
        retransmissions=len(rx),
        by_trigger=dict(Counter(r.trigger for r in rx)),
        rtd_ms=Summary.of(np.concatenate([res.rtd_samples_ns for res in results]) if results else np.empty(0, np.int64), MS),
        latency_ack_ms=_ms(lat),
        dupacks_per_connection=Summary.of(np.asarray(dupacks_per_connection, dtype=np.int64)),
        connections_without_dupacks=sum(1 for n in dupacks_per_connection if n == 0),
        thin_loss_share=sum(1 for r in rx if r.thin) / len(rx) if rx else None,
    )
