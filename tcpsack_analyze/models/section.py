"""The ``sender`` section of a report direction: the inference summed up (issue 14).

:func:`sender_section` condenses a :class:`~tcpsack_analyze.models.infer.DirectionInference`
into the few numbers a report shows per direction: the best-fitting model and its confidence
(or why there is none), the inferred cwnd (min/median/max, segments), the share of time per
limiting factor, the cwnd falling edges (timeouts and slow starts, paper 000), and the naive
flight-size bound beside it. Plain frozen data with a JSON-ready :meth:`SenderSection.to_dict`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tcpsack_analyze.models.infer import DirectionInference

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class SenderSection:
    """What the report says about a direction's sender (module docstring)."""

    status: str  # "ok", or why no model could run
    verdict: str  # "sack (confidence 0.86)", "no loss-based model fits", or the status
    best: str | None
    confidence: float
    conformance: float | None  # share of the sends the best model allows
    cwnd_segments: dict[str, float] | None  # min, median, max of the best model's cwnd
    naive_bound_segments: dict[str, float] | None  # the same of the flight size
    limiting: dict[str, float] | None  # time share: cwnd, receive window, application
    falling_edges: int | None
    timeouts: int | None
    recoveries: int | None
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _summary(values: np.ndarray) -> dict[str, float] | None:
    if not values.size:
        return None
    return {"min": float(values.min()), "median": float(np.median(values)), "max": float(values.max())}


def sender_section(inf: DirectionInference) -> SenderSection:
    """The section of one direction (the best model's figures; none without a fit)."""
    best = inf.best
    naive = None if inf.naive_segments is None else dict(zip(("min", "median", "max"), inf.naive_segments))
    if best is None:
        return SenderSection(inf.status, inf.verdict, None, 0.0, None, None, naive, None, None, None, None)
    return SenderSection(
        inf.status, inf.verdict, best.model, inf.confidence, best.conformance,
        _summary(best.cwnd / inf.smss), naive, dict(best.limiting), best.falling_edges, best.timeouts, best.recoveries,
    )


__all__ = ["SCHEMA_VERSION", "SenderSection", "sender_section"]
