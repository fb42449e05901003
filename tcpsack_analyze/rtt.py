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
  loss tracker and the sender models; it never reads a clock. It is the compiled core's
  (``src/rfc6298.rs``), one implementation for both.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze import _core
from tcpsack_analyze.events import EventBatch
from tcpsack_analyze.stats import SampleBag

Rfc6298 = _core.Rfc6298
"""SRTT and RTTVAR of RFC 6298 section 2 (floats, in the unit of the samples), the compiled
core's one estimator (``src/rfc6298.rs``), shared with the loss tracker: ``Rfc6298(srtt=None,
rttvar=None)``; ``update(r)`` folds one measurement in (2.2 for the first, 2.3 for the others,
RTTVAR first); ``update_all(samples)`` folds several in order and returns the largest SRTT
reached on the way; ``rto(granularity, minimum=0.0, maximum=inf)`` is SRTT + max(G, 4 RTTVAR)
within [minimum, maximum], None before the first measurement (section 2.1)."""


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
