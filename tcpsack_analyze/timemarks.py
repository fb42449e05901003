"""Which records went backwards in time, so that each connection can count its own (issue 16).

The analysis clock (:mod:`tcpsack_analyze.reader.clock`) counts the records timestamped before a
record captured ahead of them over the whole capture, and gives each record an analysis time that
never goes backwards, so the connections cannot see the steps themselves. :class:`MarkingClock`
is that clock, and also keeps the record numbers of the records it counted as going backwards in
the latest chunk, for the pipeline to credit to their connections (``ConnectionReport.
out_of_order_timestamps``). The counts agree by construction: a record is marked exactly when the
clock counted it (an absurd timestamp is not a step back).

It reads one private part of the clock: the shift ``_offset`` in force while :meth:`_run` fills a
stretch of records. When the reader is replaced (the Rust reader), the reader should hand these
marks over itself; this module then goes.
"""
from __future__ import annotations

import numpy as np

from tcpsack_analyze.reader.clock import PLAUSIBLE_NS, AnalysisClock


class MarkingClock(AnalysisClock):
    """An :class:`AnalysisClock` that also gives the record numbers that went backwards."""

    def __init__(self) -> None:
        super().__init__()
        self._records = 0  # records seen
        self._base = 0  # record number of the current chunk's first record
        self._pos = 0  # records of the current chunk done
        self._marks: list[np.ndarray] = []

    def advance(self, raw_ns: np.ndarray) -> np.ndarray:
        self._base, self._pos, self._marks = self._records, 0, []
        out = super().advance(raw_ns)
        self._records += int(np.asarray(raw_ns).shape[0])
        return out

    def marks(self) -> np.ndarray:
        """The record numbers (sorted) of the latest chunk's records counted as going backwards."""
        if not self._marks:
            return np.empty(0, dtype=np.int64)
        return np.concatenate(self._marks) + self._base

    def _run(self, raw: np.ndarray, plausible: np.ndarray, out: np.ndarray) -> int:
        offset, counted = self._offset, self.counts.backwards
        done = super()._run(raw, plausible, out)
        if self.counts.backwards != counted:
            if self._offset != offset:  # a step back by years, which the clock followed
                here = np.zeros(1, dtype=np.int64)
            else:  # out = max(the clock before, the record's shifted time): above it when it stepped back
                shifted = np.minimum(np.where(plausible[:done], raw[:done], 0) + offset, PLAUSIBLE_NS - 1)
                here = np.flatnonzero(plausible[:done] & (out[:done] > shifted))
            self._marks.append(here + self._pos)
        self._pos += done
        return done
