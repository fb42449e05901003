"""The figures ``compare`` puts side by side, read from a capture's report (its JSON dict).

A *flow* is a direction that sent payload (``data_packets > 0``): its figures are the report's
own (``throughput_Bps``, ``loss.retransmissions``, ``loss.by_trigger.rto``, ``loss.rtd_ms``),
nothing recomputed. A *capture* pools its flows: retransmissions and timeouts summed, the RTD
percentiles of the report's pooled loss totals (``loss.rtd_ms``, DOMAIN.md s. 5), and its
throughput is the unique bytes of all flows over the time from the first to the last packet of
their connections (for one connection, that is the flow's own ``throughput_Bps``). Jain's
fairness index (DOMAIN.md s. 9) is over the capture's flows' throughputs.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# the figures of one item, in display order (each a field of Figures)
FIGURES = (
    "flows",
    "throughput_Bps",
    "retransmissions",
    "retransmission_rate",
    "timeouts",
    "rtd_median_ms",
    "rtd_p99_ms",
    "latency_ack_p99_ms",
    "jain",
)


@dataclass(frozen=True)
class Figures:
    """One compared item: a capture (``flow`` None) or one flow of a capture."""

    capture: str
    flow: str | None  # "conn 0 a2b" for a flow item
    flows: int
    throughput_Bps: float | None
    retransmissions: int
    retransmission_rate: float | None  # retransmissions / data packets sent
    timeouts: int  # retransmissions the timer sent (by_trigger.rto)
    rtd_median_ms: float | None
    rtd_p99_ms: float | None
    latency_ack_p99_ms: float | None
    jain: float | None  # over the capture's flows; None for a flow item

    @property
    def label(self) -> str:
        return self.capture if self.flow is None else f"{self.capture} {self.flow}"


def jain_index(values: Sequence[float]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when all equal, 1/n when one takes all
    (Jain, Chiu and Hawe 1984; DOMAIN.md s. 9). None without values or when all are 0."""
    square_sum = sum(x * x for x in values)
    if not values or square_sum == 0:
        return None
    return sum(values) ** 2 / (len(values) * square_sum)


def _senders(report: dict[str, Any]) -> list[tuple[dict[str, Any], str, dict[str, Any]]]:
    return [(c, name, c[name]) for c in report["connections"] for name in ("a2b", "b2a") if c[name]["data_packets"] > 0]


def _summary(s: dict[str, Any] | None, key: str) -> float | None:
    return None if s is None else s[key]


def _rate(retransmissions: int, data_packets: int) -> float | None:
    return retransmissions / data_packets if data_packets else None


def flow_figures(capture: str, report: dict[str, Any]) -> list[Figures]:
    """One item per flow of the capture, in connection order."""
    out = []
    for conn, name, d in _senders(report):
        loss = d["loss"]
        out.append(Figures(
            capture, f"conn {conn['id']} {name}", 1, d["throughput_Bps"], loss["retransmissions"],
            _rate(loss["retransmissions"], d["data_packets"]), loss["by_trigger"].get("rto", 0),
            _summary(loss["rtd_ms"], "median"), _summary(loss["rtd_ms"], "p99"), _summary(loss["latency_ack_ms"], "p99"), None,
        ))
    return out


def capture_figures(capture: str, report: dict[str, Any]) -> Figures:
    """The capture as one item: its flows pooled."""
    senders = _senders(report)
    conns = {c["id"]: c for c, _, _ in senders}.values()
    span = max((c["last_packet"] for c in conns), default=0.0) - min((c["first_packet"] for c in conns), default=0.0)
    unique = sum(d["unique_bytes"] for _, _, d in senders)
    loss = report["loss"]
    flows = flow_figures(capture, report)
    return Figures(
        capture, None, len(senders), unique / span if span > 0 else None, loss["retransmissions"],
        _rate(loss["retransmissions"], sum(d["data_packets"] for _, _, d in senders)), loss["by_trigger"].get("rto", 0),
        _summary(loss["rtd_ms"], "median"), _summary(loss["rtd_ms"], "p99"), _summary(loss["latency_ack_ms"], "p99"),
        jain_index([f.throughput_Bps for f in flows if f.throughput_Bps is not None]),
    )
