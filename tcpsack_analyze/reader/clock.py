"""The analysis clock: capture timestamps made non-decreasing and bounded, and what was wrong with them.

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
keeping only the last analysis time and the shift between batches. It runs in the compiled core
(``src/clock.rs``, one pass per batch); this module holds the policy's statement, the counts'
warnings and the Python face of the clock.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze import _core

PLAUSIBLE_NS: int = _core.PLAUSIBLE_NS  # 2**62 (2116-02-20): raw timestamps at or beyond it, or below 0, are absurd
JUMP_NS: int = _core.JUMP_NS  # a step of a year or more is a clock jump (forward) or a clock stepped back


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


class AnalysisClock:
    """Turns raw record timestamps into analysis times, batch after batch (see the module doc)."""

    def __init__(self) -> None:
        self._core = _core.Clock()
        self._records = 0  # records advanced over so far
        self._base = 0  # record number of the latest batch's first record

    @property
    def counts(self) -> TimeCounts:
        """What the clock found so far."""
        return TimeCounts(*self._core.counts())

    def advance(self, raw_ns: np.ndarray) -> np.ndarray:
        """The analysis times (int64) of one batch of raw timestamps (int64 ns), in capture order."""
        raw = np.ascontiguousarray(raw_ns, dtype=np.int64)
        self._base = self._records
        self._records += raw.shape[0]
        return self._core.advance(raw)

    def marks(self) -> np.ndarray:
        """The record numbers (int64, sorted, counting every record advanced over from 0) of the
        latest batch's records counted as going backwards, for the pipeline to credit to their
        connections (``ConnectionReport.out_of_order_timestamps``); an absurd timestamp is not
        one of them."""
        out: np.ndarray = self._core.marks() + self._base
        return out
