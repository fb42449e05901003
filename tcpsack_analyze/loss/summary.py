"""The loss sections of the report: per direction, and combined over a capture (DOMAIN.md 4-9).

Built from a :class:`~tcpsack_analyze.loss.tracker.LossResult`; every figure is computed from
the capture. Where a figure rests on an inference (the RTT that groups losses into events, the
delayed-ACK guess behind the Mathis constant) the section says which.
"""
from __future__ import annotations

import functools
from array import array
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcpsack_analyze.loss.patterns import GilbertElliott, LossPattern, achieved_percent, loss_pattern, mathis_throughput
from tcpsack_analyze.loss.records import (
    RTO,
    UPSTREAM,
    Fill,
    LossIncident,
    LostTransmission,
    RecoveryEpisode,
    Retransmission,
    ca_state,
    sack_finished_without_rto,
)
from tcpsack_analyze.loss.table import RecordTable
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
    max_rto_backoff: int  # doublings of the timer interval within a run of timer resends
    rto_sequence_ms: tuple[float, ...]  # the timer intervals of the longest such run
    rto_backoff: str | None  # how they grew: exponential, linear, linear_then_exponential, mixed
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
    pattern_from: str | None  # the losses behind it: resends (sender side), holes (receiver side), both (mid-path)
    events_rtt_ms: float | None  # the RTT that grouped losses into events (full-path SRTT)
    delayed_acks: bool | None  # inferred from ACKs per data segment (Mathis constant)
    mathis_Bps: float | None
    mathis_achieved_pct: float | None


def _counts(table: RecordTable, name: str) -> dict[str, int]:
    """How many records have each value of a field (None left out)."""
    return dict(Counter(x for x in table.column(name) if x is not None))


def _ack_latencies(incidents: RecordTable) -> np.ndarray:
    """First transmission to covering ACK, ns, of the incidents that lost something."""
    lost, _ = incidents.ints("lost")
    covered, seen = incidents.ints("covered_ns")
    first, _ = incidents.ints("first_ns")
    keep = (lost != 0) & seen
    return covered[keep] - first[keep]


def rto_runs(rx: RecordTable) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each run of timer resends without progress (rows with ``rto_run`` 1, 2, ...), in order:
    its timer intervals (ns) and its backoff (doublings) at each resend."""
    run, _ = rx.ints("rto_run")
    interval, _ = rx.ints("rto_interval_ns")
    backoff, _ = rx.ints("backoff")
    timer = np.flatnonzero(run > 0)
    starts = timer[run[timer] == 1]
    ends = np.append(starts[1:], timer[-1] + 1 if timer.size else 0)
    out = []
    for lo, hi in zip(starts, ends):
        rows = timer[(timer >= lo) & (timer < hi)]
        out.append((interval[rows], backoff[rows]))
    return out


def backoff_shape(backoff: np.ndarray) -> str | None:
    """How the timer grew over one run of timer resends, from its doublings at each step:
    ``exponential`` (every step doubled, RFC 6298 section 5.5), ``linear`` (none did: thin-stream
    linear timeouts, paper 001 section 4.1.2), ``linear_then_exponential`` (flat steps, then only
    doubling ones: Linux's tcp_thin_linear_timeouts after its 6 linear retries), ``mixed``
    otherwise; None for a run of one resend (no step)."""
    steps = np.diff(backoff) > 0
    if steps.size == 0:
        return None
    if steps.all():
        return "exponential"
    if not steps.any():
        return "linear"
    first = int(np.argmax(steps))
    return "linear_then_exponential" if steps[first:].all() else "mixed"


def _rto_sequence(rx: RecordTable) -> tuple[tuple[float, ...], str | None]:
    """The timer intervals (ms) of the longest run of timer resends, the first if several are
    as long, and the shape of its growth (:func:`backoff_shape`)."""
    runs = rto_runs(rx)
    if not runs:
        return (), None
    interval, backoff = max(runs, key=lambda r: r[0].size)
    return tuple(round(float(x) * MS, 1) for x in interval), backoff_shape(backoff)


def _pattern_from(downstream: int, upstream: int) -> str | None:
    """Which losses the loss pattern counts (DOMAIN.md section 7): transmissions seen here and
    resent (``resends``, lost after the capture point, as at the sender), holes filled later
    (``holes``, lost before it, as at the receiver), or ``both`` (a mid-path capture)."""
    if downstream and upstream:
        return "both"
    return "resends" if downstream else "holes" if upstream else None


def _thin_share(tables: list[RecordTable]) -> float | None:
    """Share of the retransmissions sent in thin state."""
    n = sum(len(t) for t in tables)
    return sum(int(t.ints("thin")[0].sum()) for t in tables) / n if n else None


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
    srtt = res.srtt_full_ns
    pattern = loss_pattern(res.lost_flags, res.lost_times, srtt if srtt and srtt > 0 else None, gilbert_elliott)
    delayed = None if data_packets == 0 else peer_acks < DELAYED_ACK_RATIO * data_packets
    mathis = mathis_throughput(mss or 0, None if srtt is None else srtt / 1e9, pattern.P_prime, bool(delayed)) if mss else None
    return LossSummary(
        **_record_figures(res),
        network_duplicates=res.network_duplicates,
        reorderings=res.reorderings,
        thin_time_share=res.thin_ns / res.busy_ns if res.busy_ns else None,
        pattern=pattern,
        events_rtt_ms=None if srtt is None else srtt * MS,
        delayed_acks=delayed,
        mathis_Bps=mathis,
        mathis_achieved_pct=None if throughput_Bps is None else achieved_percent(throughput_Bps, mathis),
    )


def _record_figures(res: LossResult) -> dict[str, Any]:
    """The fields of :class:`LossSummary` read from the loss records and RTD samples.

    Most directions of a capture of many connections have no record at all; their figures are
    the same every time, so they are computed once (:func:`_no_record_figures`) and copied.
    """
    if not (any(len(t) for t in res.tables) or res.rtd_samples_ns.size or res.rto_rtd_samples_ns.size):
        figures, dicts = _no_record_figures()
        out = figures.copy()
        for k in dicts:
            out[k] = figures[k].copy()
        return out
    return _figures_of(res.retransmission_table, res.episode_table, res.incident_table, res.lost_table, res.fill_table,
                       res.rtd_samples_ns, res.rto_rtd_samples_ns)


@functools.cache
def _no_record_figures() -> tuple[dict[str, Any], tuple[str, ...]]:
    """:func:`_figures_of` empty tables (shared: the caller copies its dicts), and which of
    its figures are dicts."""
    empty = np.empty(0, np.int64)
    tables = (RecordTable(Retransmission), RecordTable(RecoveryEpisode), RecordTable(LossIncident), RecordTable(LostTransmission), RecordTable(Fill))
    figures = _figures_of(*tables, empty, empty)
    return figures, tuple(k for k, v in figures.items() if isinstance(v, dict))


def _figures_of(rx: RecordTable, ep: RecordTable, inc: RecordTable, lost: RecordTable, fills: RecordTable, rtd_ns: np.ndarray,
                rto_rtd_ns: np.ndarray) -> dict[str, Any]:
    triggers = rx.column("trigger")
    backoff, _ = rx.ints("backoff")
    rto = np.asarray([t == RTO for t in triggers], dtype=bool)
    end_ns, ended_seen = ep.ints("end_ns")
    ep_start, _ = ep.ints("start_ns")
    ended = ep.column("ended")
    inc_lost, _ = inc.ints("lost")
    last_rexmit, _ = inc.ints("last_rexmit_ns")
    first_ns, _ = inc.ints("first_ns")
    upstream = sum(1 for w in lost.column("where") if w == UPSTREAM)
    rto_sequence_ms, rto_backoff = _rto_sequence(rx)
    return dict(
        retransmissions=len(rx),
        by_trigger=dict(Counter(triggers)),
        sender_state=dict(Counter(map(ca_state, triggers, rx.column("episode_trigger")))),
        spurious=_counts(rx, "spurious"),
        max_rto_backoff=int(backoff[rto].max()) if rto.any() else 0,
        rto_sequence_ms=rto_sequence_ms,
        rto_backoff=rto_backoff,
        fills=_counts(fills, "cause"),
        episodes=len(ep),
        episodes_by_trigger=_counts(ep, "trigger"),
        episodes_ended=dict(Counter(ended)),
        episodes_sack_without_rto=sum(map(sack_finished_without_rto, ep.column("sack_in_use"), ep.column("rtos"), ended)),
        episode_duration_ms=Summary.of(end_ns[ended_seen] - ep_start[ended_seen], MS),
        rtd_ms=Summary.of(rtd_ns, MS),
        rto_rtd_ms=Summary.of(rto_rtd_ns, MS),
        latency_rexmit_ms=Summary.of((last_rexmit - first_ns)[inc_lost != 0], MS),
        latency_ack_ms=Summary.of(_ack_latencies(inc), MS),
        incidents=len(inc),
        lost_transmissions=len(lost),
        lost_downstream=len(lost) - upstream,
        lost_upstream=upstream,
        thin_loss_share=_thin_share([rx]),
        pattern_from=_pattern_from(len(lost) - upstream, upstream),
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


class LossPool:
    """What a capture's loss totals pool, added one direction at a time as its connection is
    reported: counts, and the RTD and ACK-latency samples (8 bytes each), not the directions'
    loss records, so that a long lossy capture's report does not hold every record to the end."""

    def __init__(self) -> None:
        self.by_trigger: Counter[str] = Counter()
        self.directions_with_retransmissions = 0
        self.retransmissions = 0
        self.thin = 0  # retransmissions sent in thin state
        self.rtd_ns = array("q")
        self.latency_ack_ns = array("q")

    def add(self, res: LossResult) -> None:
        """Pool one direction's loss results."""
        rx = res.retransmission_table
        if len(rx):
            self.directions_with_retransmissions += 1
            self.retransmissions += len(rx)
            self.by_trigger.update(rx.column("trigger"))
            self.thin += int(rx.ints("thin")[0].sum())
        self.rtd_ns.extend(res.rtd_samples_ns.tolist())
        if len(res.incident_table):
            self.latency_ack_ns.extend(_ack_latencies(res.incident_table).tolist())

    def totals(self, dupacks_per_connection: list[int], data_directions: int) -> LossTotals:
        """The capture's :class:`LossTotals` (samples pooled: each connection weighs by its
        number of retransmissions, DOMAIN.md section 5)."""
        return LossTotals(
            directions_with_data=data_directions,
            directions_with_retransmissions=self.directions_with_retransmissions,
            retransmissions=self.retransmissions,
            by_trigger=dict(self.by_trigger),
            rtd_ms=Summary.of(np.frombuffer(self.rtd_ns, np.int64), MS),
            latency_ack_ms=Summary.of(np.frombuffer(self.latency_ack_ns, np.int64), MS),
            dupacks_per_connection=Summary.of(np.asarray(dupacks_per_connection, dtype=np.int64)),
            connections_without_dupacks=sum(1 for n in dupacks_per_connection if n == 0),
            thin_loss_share=self.thin / self.retransmissions if self.retransmissions else None,
        )

