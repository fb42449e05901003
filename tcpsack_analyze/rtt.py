"""Round-trip times of one direction: samples from the event stream, and the RFC 6298 estimator.

Two things live here, each once:

* :class:`RttSampler`, a stage fed a direction's :class:`~tcpsack_analyze.events.EventBatch`
  batches (run by the compiled core: ``src/rtt_sampler.rs``). It takes the samples a capture shows at its vantage point:

  - *data/ACK pairs* (tcptrace's rule, with Karn's algorithm, RFC 6298 section 3): a first
    transmission is timed by the first ACK after it whose cumulative value covers its end, when
    that ACK acknowledges exactly its last byte and no retransmission of this direction was sent
    between the two;
  - *timestamps* (RFC 7323 section 4.3): an ACK that advances the cumulative ACK and echoes
    (TSecr) the TSval of a first transmission is timed from that transmission.

  Each :meth:`RttSampler.feed` returns the batch's data/ACK samples in ACK-time order, which the
  loss tracker folds into its estimate; :meth:`RttSampler.finish` returns every sample kept.

* :class:`Rfc6298`, the smoothed RTT / RTT variance estimator of RFC 6298 section 2, used by the
  loss tracker and the sender models; it never reads a clock.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze import _core
from tcpsack_analyze.events import EventBatch
from tcpsack_analyze.stats import SampleBag

ALPHA = 0.125  # RFC 6298 section 2.3
BETA = 0.25
K = 4


@dataclass
class Rfc6298:
    """SRTT and RTTVAR of RFC 6298 section 2 (floats, in the unit of the samples)."""

    srtt: float | None = None
    rttvar: float | None = None

    def update(self, r: float) -> None:
        """Fold one measurement in: 2.2 for the first, 2.3 for the others (RTTVAR first)."""
        if self.srtt is None or self.rttvar is None:
            self.srtt, self.rttvar = float(r), r / 2.0
        else:
            self.rttvar = (1 - BETA) * self.rttvar + BETA * abs(self.srtt - r)
            self.srtt = (1 - ALPHA) * self.srtt + ALPHA * r

    def update_all(self, samples: list[int] | list[float]) -> float:
        """Fold measurements in, in order (as :meth:`update` each); returns the largest SRTT
        reached on the way. One loop with local variables: the loss tracker folds in every
        data/ACK sample of a capture."""
        srtt, var = self.srtt, self.rttvar
        top = -1.0
        for r in samples:
            if srtt is None or var is None:
                srtt, var = float(r), r / 2.0
            else:
                var = (1 - BETA) * var + BETA * abs(srtt - r)
                srtt = (1 - ALPHA) * srtt + ALPHA * r
            if srtt > top:
                top = srtt
        self.srtt, self.rttvar = srtt, var
        return top

    def rto(self, granularity: float, minimum: float = 0.0, maximum: float = float("inf")) -> float | None:
        """RTO = SRTT + max(G, K * RTTVAR), kept within [minimum, maximum] (sections 2.2-2.5);
        None before the first measurement (the caller's initial RTO applies, section 2.1)."""
        if self.srtt is None or self.rttvar is None:
            return None
        return min(max(self.srtt + max(granularity, K * self.rttvar), minimum), maximum)


@dataclass(frozen=True)
class RttResult:
    """The samples of one direction (ns): data/ACK pairs and timestamp echoes."""

    samples: SampleBag
    ts_samples: SampleBag


class RttSampler:
    """Takes RTT samples from one direction's events (module docstring); the rules run in the
    compiled core (``src/rtt_sampler.rs``), which also samples every connection of a capture
    (``flowcore.py``). This is its face for event streams made in Python (``replay``, tests)."""

    def __init__(self) -> None:
        self._core = _core.RttSampler()

    def feed(self, ev: EventBatch) -> tuple[np.ndarray, np.ndarray] | None:
        """Account one batch; returns its data/ACK samples as (ACK times, samples), by time."""
        return self._core.feed(ev.kind, ev.time_ns, ev.index, ev.placement, ev.end, ev.tsval, ev.ack, ev.tsecr)

    @property
    def samples(self) -> SampleBag:
        """Every data/ACK sample so far (ns)."""
        return _bag(self._core.samples())

    @property
    def ts_samples(self) -> SampleBag:
        """Every timestamp sample so far (ns)."""
        return _bag(self._core.ts_samples())

    def finish(self) -> RttResult:
        return RttResult(self.samples, self.ts_samples)


def _bag(samples: np.ndarray) -> SampleBag:
    bag = SampleBag()
    bag.add(samples)
    return bag


__all__ = ["Rfc6298", "RttResult", "RttSampler"]
