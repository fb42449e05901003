"""A reference implementation of the analysis clock, for tests only (tests/test_clock.py).

This is the vectorised numpy clock of the Python reader, kept unchanged so that the compiled
clock (src/clock.rs, a sequential pass) can be checked against it on random timestamps: two
formulations of the policy that must agree. The product uses only the compiled one.

The policy, as the Python reader stated it:

The analysis clock: capture timestamps made non-decreasing and bounded, and what was wrong with them.

Real captures have timestamps that go backwards (captures merged from several interfaces, a
clock stepped by NTP, NIC timestamping quirks) and corrupt ones have absurd timestamps (0, before
1970 through a negative pcapng if_tsoffset, near 2**64 units, a jump of years). tcptrace analyses
such files in file order and lets its differences go negative; tshark also keeps file order and
shows the step as a negative ``frame.time_delta`` (reordercap sorts a file by time).

The policy (docs/report.md, "Time that goes backwards"): analysis runs in **capture order**,
the order in which the capture point recorded the packets, which is what the sequence-space and
SACK state machines must see; it is never re-sorted by timestamp. Each record gets an *analysis
time* from a clock that never moves backwards:

- a record whose timestamp is earlier than the latest one so far *goes backwards*: it is counted
  (with the largest step back) and analysed at the clock's time. For a step back shorter than
  JUMP_NS (a year) the clock waits for the capture's time to catch up rather than moving on by the
  record's own differences, so the small reorderings of a merged capture do not add up to a
  drift (the price: after a clock stepped back by T, the next T of the capture is analysed at a
  standing clock; the warning gives T);
- a step back of JUMP_NS or more is not waited for (the capture would stand still for years):
  the clock follows the new timeline, shifted forward to where the clock was, so the records
  after it keep their differences;
- a timestamp outside [0, PLAUSIBLE_NS) (before 1970, or after 2116, the end of what int64
  nanoseconds hold with room for differences) is *absurd*, and so is a lone timestamp a year or
  more away from both its neighbours while they are less than a year apart (one record of
  ``pcapplusplus_pcapng_example_mixed_linktypes.pcapng`` is 46 years ahead of the records around
  it): counted and ignored (the record gets the clock's time; before the first plausible
  timestamp, that of the first plausible one in its batch, or 0 when its batch has none);
- a forward step of JUMP_NS or more is a *clock jump*: counted and kept (a capture may be idle
  that long), reported so that the reader knows where an elapsed or idle time comes from.

Every analysis time lies in [0, PLAUSIBLE_NS) (the shifted timeline saturates just below it), so
differences and sums of a few analysis times never overflow int64 and every quantity derived from
them stays finite. A capture whose time only moves forward keeps its timestamps exactly.

The clock is sans-I/O: it takes each batch's raw timestamps and returns the analysis times,
keeping only the last analysis time and the shift between batches.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PLAUSIBLE_NS = 1 << 62  # 2116-02-20: raw timestamps at or beyond it, or below 0, are absurd
JUMP_NS = 365 * 24 * 3600 * 1_000_000_000  # a forward step of a year or more is a clock jump


@dataclass
class TimeCounts:
    """What the clock found in a capture's timestamps (all records, TCP or not)."""

    backwards: int = 0  # records earlier than the previous plausible timestamp
    largest_backward_ns: int = 0  # the largest such step back
    absurd: int = 0  # records before 1970 or at/after PLAUSIBLE_NS, or lone ones years off
    jumps: int = 0  # forward steps of JUMP_NS or more
    largest_jump_ns: int = 0

    def warnings(self) -> list[str]:
        """One-line warnings, none for a capture whose time only moves forward."""
        out = []
        if self.backwards:
            out.append(
                f"{self.backwards} records are timestamped before a record captured ahead of them (largest step back "
                f"{self.largest_backward_ns / 1e9:.6f} s): analysed in capture order, at the latest earlier timestamp"
            )
        if self.absurd:
            out.append(
                f"{self.absurd} records have an absurd timestamp (before 1970, after 2116, or a lone one a year or more "
                "away from the records around it): their time was ignored"
            )
        if self.jumps:
            out.append(
                f"{self.jumps} forward clock jumps of a year or more (largest {self.largest_jump_ns / 86400e9:.0f} days): "
                "elapsed and idle times include them"
            )
        return out


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
