"""Round-trip times of one direction: samples from the event stream, and the RFC 6298 estimator.

Two things live here, each once:

* :class:`RttSampler`, a stage fed a direction's :class:`~tcpsack_analyze.events.EventBatch`
  batches. It takes the samples a capture shows at its vantage point:

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
from tcpsack_analyze.events import EventBatch, Placement
from tcpsack_analyze.seqspace import signed_diff
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


_NOTHING = np.empty(0, np.int64)
_NOTHING.flags.writeable = False


class RttSampler:
    """Takes RTT samples from one direction's events (module docstring)."""

    def __init__(self) -> None:
        # first transmissions awaiting their ACK: end, send time, resends before it, record number
        # (empty columns are one shared read-only array: they are replaced, never written to)
        self._pend_end = self._pend_ts = self._pend_rx = self._pend_order = _NOTHING
        self._rexmits = 0  # resends so far (Karn's rule)
        self._rexmit_orders = _NOTHING  # record numbers of resends still relevant
        self._tsval_keys = self._tsval_ts = _NOTHING  # TSvals of first transmissions and their times
        self._snd_una: int | None = None
        self.samples = SampleBag()
        self.ts_samples = SampleBag()

    def feed(self, ev: EventBatch) -> tuple[np.ndarray, np.ndarray] | None:
        """Account one batch; returns its data/ACK samples as (ACK times, samples), by time."""
        data = ev.is_data
        rexmit = data & (ev.placement == Placement.REXMIT)
        first_tx = data & ~rexmit
        if rexmit.any():
            self._rexmit_orders = np.concatenate([self._rexmit_orders, ev.index[rexmit]])
        rx_cum = self._rexmits + np.cumsum(rexmit)
        if rexmit.any():
            self._rexmits = int(rx_cum[-1])
        if first_tx.any():
            self._pend_end = np.concatenate([self._pend_end, ev.end[first_tx]])
            self._pend_ts = np.concatenate([self._pend_ts, ev.time_ns[first_tx]])
            self._pend_rx = np.concatenate([self._pend_rx, rx_cum[first_tx]])
            self._pend_order = np.concatenate([self._pend_order, ev.index[first_tx]])
            tsv = ev.tsval[first_tx]
            has = tsv >= 0
            if has.any():
                self._tsval_keys = np.concatenate([self._tsval_keys, tsv[has]])
                self._tsval_ts = np.concatenate([self._tsval_ts, ev.time_ns[first_tx][has]])
        acks = ev.is_ack
        if not acks.any():
            return None
        order, ack, at, tsecr = ev.index[acks], ev.ack[acks], ev.time_ns[acks], ev.tsecr[acks]
        prev_una = self._snd_una
        cum = np.maximum.accumulate(ack)
        if prev_una is not None:
            cum = np.maximum(cum, prev_una)
        self._snd_una = int(cum[-1])
        self._timestamps(at, ack, cum, tsecr, prev_una)
        return self._pairs(order, ack, at)

    def _timestamps(self, at: np.ndarray, ack: np.ndarray, cum: np.ndarray, tsecr: np.ndarray, prev_una: int | None) -> None:
        """RFC 7323 section 4.3: an ACK that advances snd_una echoes the TSval of the data it
        acknowledges."""
        if not self._tsval_keys.size:
            return
        adv = np.empty(ack.size, dtype=bool)
        adv[0] = prev_una is None or ack[0] > prev_una
        adv[1:] = cum[1:] > cum[:-1]
        adv &= tsecr >= 0
        if not adv.any():
            return
        keys, first = np.unique(self._tsval_keys, return_index=True)
        pos = np.minimum(np.searchsorted(keys, tsecr[adv]), keys.size - 1)
        hit = keys[pos] == tsecr[adv]
        samples = at[adv][hit] - self._tsval_ts[first[pos[hit]]]
        samples = samples[samples >= 0]
        if samples.size:
            self.ts_samples.add(samples)
        # keep only what a later ACK can still echo (TSvals compare modulo 2**32)
        keep = signed_diff(self._tsval_keys, int(tsecr[adv].max())) >= 0
        self._tsval_keys = self._tsval_keys[keep]
        self._tsval_ts = self._tsval_ts[keep]

    def _pairs(self, order: np.ndarray, abs_acks: np.ndarray, ack_ts: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Data/ACK pairs (tcptrace's rule with Karn's algorithm, module docstring)."""
        if self._pend_end.size == 0:
            return None
        out = None
        cum = np.maximum.accumulate(abs_acks)
        # first ACK (in capture order, after the segment) whose cumulative value covers its end
        k = np.maximum(np.searchsorted(cum, self._pend_end, side="left"), np.searchsorted(order, self._pend_order, side="right"))
        done = k < cum.size
        if done.any():
            kd = k[done]
            exact = abs_acks[kd] == self._pend_end[done]
            rx_at_ack = self._rexmits - np.searchsorted(np.sort(-self._rexmit_orders), -order[kd], side="left")
            clean = exact & (rx_at_ack == self._pend_rx[done])
            samples = ack_ts[kd][clean] - self._pend_ts[done][clean]
            at = ack_ts[kd][clean]
            ok = samples >= 0
            samples = samples[ok]
            if samples.size:
                self.samples.add(samples)
                by_time = np.argsort(at[ok], kind="stable")
                out = (at[ok][by_time], samples[by_time])
        keep = ~done
        if keep.any():
            self._pend_end = self._pend_end[keep]
            self._pend_ts = self._pend_ts[keep]
            self._pend_rx = self._pend_rx[keep]
            self._pend_order = self._pend_order[keep]
        else:  # every one acknowledged: the shared empty column, not four empty arrays
            self._pend_end = self._pend_ts = self._pend_rx = self._pend_order = _NOTHING
        oldest = self._pend_order.min() if self._pend_order.size else order[-1]
        relevant = self._rexmit_orders > oldest
        self._rexmit_orders = self._rexmit_orders[relevant] if relevant.any() else _NOTHING
        return out

    def finish(self) -> RttResult:
        return RttResult(self.samples, self.ts_samples)


__all__ = ["Rfc6298", "RttResult", "RttSampler"]
