"""A reference implementation of the analysis clock, for tests only (tests/test_clock.py).

This is the vectorised numpy clock of the Python reader, kept unchanged so that the compiled
clock (src/clock.rs, a sequential pass) can be checked against it on random timestamps: two
formulations of the policy that must agree. The product uses only the compiled one.

The policy is stated in tcpsack_analyze/reader/clock.py (and docs/report.md, "Time that goes
backwards").
"""
from __future__ import annotations

import numpy as np

from tcpsack_analyze.reader.clock import TimeCounts

PLAUSIBLE_NS = 1 << 62  # 2116-02-20: raw timestamps at or beyond it, or below 0, are absurd
JUMP_NS = 365 * 24 * 3600 * 1_000_000_000  # a forward step of a year or more is a clock jump


def _lone(raw: np.ndarray, plausible: np.ndarray) -> np.ndarray:
    """Indexes of the lone records a year or more away from both plausible neighbours, which are
    themselves less than a year apart (a stray timestamp, not a clock step). Neighbours are
    looked for within the batch, so the first and last plausible records of a batch are never lone."""
    where = np.flatnonzero(plausible)
    if where.size < 3:
        return np.empty(0, dtype=np.int64)
    v = raw[where]  # all in [0, 2**62): the differences below cannot overflow
    before, this, after = v[:-2], v[1:-1], v[2:]
    lone = (np.abs(this - before) >= JUMP_NS) & (np.abs(after - this) >= JUMP_NS) & (np.abs(after - before) < JUMP_NS)
    return where[1:-1][lone]


class AnalysisClock:
    """Turns raw record timestamps into analysis times, batch after batch (see the module doc)."""

    def __init__(self) -> None:
        self.counts = TimeCounts()
        self._now: int | None = None  # the last analysis time
        self._offset = 0  # added to raw timestamps since the clock last followed a step back of a year or more

    def advance(self, raw_ns: np.ndarray) -> np.ndarray:
        """The analysis times (int64) of one batch of raw timestamps (int64 ns), in capture order."""
        raw = np.asarray(raw_ns, dtype=np.int64)
        plausible = (raw >= 0) & (raw < PLAUSIBLE_NS)
        plausible[_lone(raw, plausible)] = False
        self.counts.absurd += int(raw.size - np.count_nonzero(plausible))
        if not plausible.any():  # nothing to go by: the clock stands (at 0 before any plausible one)
            return np.full(raw.size, self._now or 0, dtype=np.int64)
        if self._now is None:  # the first plausible timestamp starts the clock
            self._now = int(raw[np.argmax(plausible)])
        out = np.empty(raw.size, dtype=np.int64)
        first = 0
        while first < raw.size:  # one pass per step back of a year or more (rare)
            first = self._run(raw[first:], plausible[first:], out[first:]) + first
        return out

    def _run(self, raw: np.ndarray, plausible: np.ndarray, out: np.ndarray) -> int:
        """Fill ``out`` up to the first record that steps back a year or more (not included unless
        it is the first: then the clock follows it by raising the offset). Returns how many were done."""
        # raw + offset < 2**62 + 2**62: no overflow; the sum saturates just below PLAUSIBLE_NS
        shifted = np.minimum(np.where(plausible, raw, 0) + self._offset, PLAUSIBLE_NS - 1)
        now = self._now or 0
        held = np.where(plausible, shifted, now)  # an absurd timestamp holds the clock
        before = np.maximum.accumulate(np.concatenate(([now], held)))
        back = np.where(plausible, before[:-1] - held, 0)  # how far each record steps back (> 0)
        big = np.flatnonzero(back >= JUMP_NS)
        if big.size and big[0] == 0:  # a clock step back by years, or the end of a lone record far ahead
            self._offset = min(self._offset + int(back[0]), PLAUSIBLE_NS - 1)
            self.counts.backwards += 1
            self.counts.largest_backward_ns = max(self.counts.largest_backward_ns, int(back[0]))
            out[0] = now
            return 1
        done = int(big[0]) if big.size else raw.size
        back, latest, out[:done] = back[:done], before[:done], before[1 : done + 1]
        if (back > 0).any():
            self.counts.backwards += int(np.count_nonzero(back > 0))
            self.counts.largest_backward_ns = max(self.counts.largest_backward_ns, int(back.max()))
        steps = out[:done] - latest  # the clock's forward steps
        if (steps >= JUMP_NS).any():
            self.counts.jumps += int(np.count_nonzero(steps >= JUMP_NS))
            self.counts.largest_jump_ns = max(self.counts.largest_jump_ns, int(steps.max()))
        self._now = int(out[done - 1])
        return done
