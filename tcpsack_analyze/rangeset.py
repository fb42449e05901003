"""A set of integers kept as sorted, disjoint, half-open ranges ``[start, end)``.

The building block for sequence-space bookkeeping: bytes seen on the wire, holes below the
highest sequence number, SACKed ranges of a scoreboard (RFC 6675 section 3). Ranges that touch
are merged, so the representation of a set is unique. Operations are O(log n + k) where k is
the number of ranges touched.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator


class RangeSet:
    """Sorted disjoint half-open integer ranges, merged when they touch."""

    __slots__ = ("_starts", "_ends")

    def __init__(self, ranges: Iterable[tuple[int, int]] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in ranges:
            self.add(start, end)

    def __len__(self) -> int:
        """Number of disjoint ranges (not the number of integers: see :meth:`size`)."""
        return len(self._starts)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(zip(self._starts, self._ends))

    def __bool__(self) -> bool:
        return bool(self._starts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RangeSet):
            return NotImplemented
        return self._starts == other._starts and self._ends == other._ends

    def __repr__(self) -> str:
        return f"RangeSet({list(self)!r})"

    def __contains__(self, value: int) -> bool:
        i = bisect_right(self._starts, value) - 1
        return i >= 0 and value < self._ends[i]

    def copy(self) -> RangeSet:
        new = RangeSet()
        new._starts = self._starts.copy()
        new._ends = self._ends.copy()
        return new

    @property
    def low(self) -> int | None:
        """Smallest member, or None when empty."""
        return self._starts[0] if self._starts else None

    @property
    def high(self) -> int | None:
        """One past the largest member, or None when empty."""
        return self._ends[-1] if self._ends else None

    def size(self) -> int:
        """Number of integers in the set."""
        return sum(e - s for s, e in zip(self._starts, self._ends))

    def overlap(self, start: int, end: int) -> int:
        """Number of integers of ``[start, end)`` that are in the set."""
        if end <= start:
            return 0
        i = max(bisect_right(self._starts, start) - 1, 0)
        total = 0
        starts, ends = self._starts, self._ends
        n = len(starts)
        while i < n and starts[i] < end:
            lo = max(starts[i], start)
            hi = min(ends[i], end)
            if hi > lo:
                total += hi - lo
            i += 1
        return total

    def add(self, start: int, end: int) -> int:
        """Add ``[start, end)``; return how many integers were not in the set before."""
        if end <= start:
            return 0
        starts, ends = self._starts, self._ends
        # ranges that overlap or touch [start, end)
        lo = bisect_left(ends, start)
        if lo < len(starts) and starts[lo] <= start and (lo + 1 == len(starts) or starts[lo + 1] > end):
            # the common case of a growing SACK block: inside one range, or extending its end
            grown = end - ends[lo]
            if grown <= 0:
                return 0
            ends[lo] = end
            return grown
        hi = bisect_right(starts, end)
        if lo == hi:
            starts.insert(lo, start)
            ends.insert(lo, end)
            return end - start
        covered = 0
        for k in range(lo, hi):
            covered += max(0, min(ends[k], end) - max(starts[k], start))
        new_start = min(start, starts[lo])
        new_end = max(end, ends[hi - 1])
        starts[lo:hi] = [new_start]
        ends[lo:hi] = [new_end]
        return (end - start) - covered

    def remove(self, start: int, end: int) -> int:
        """Remove ``[start, end)``; return how many integers were removed."""
        if end <= start:
            return 0
        starts, ends = self._starts, self._ends
        lo = bisect_right(ends, start)
        hi = bisect_left(starts, end)
        if lo >= hi:
            return 0
        removed = 0
        new_s: list[int] = []
        new_e: list[int] = []
        for k in range(lo, hi):
            s, e = starts[k], ends[k]
            removed += min(e, end) - max(s, start)
            if s < start:
                new_s.append(s)
                new_e.append(start)
            if e > end:
                new_s.append(end)
                new_e.append(e)
        starts[lo:hi] = new_s
        ends[lo:hi] = new_e
        return removed

    def remove_below(self, value: int) -> None:
        """Drop every member smaller than ``value`` (a cumulative ACK moving forward)."""
        if self._starts and self._starts[0] < value:
            self.remove(self._starts[0], value)

    def gaps(self, start: int, end: int) -> list[tuple[int, int]]:
        """The sub-ranges of ``[start, end)`` that are not in the set, in order."""
        out: list[tuple[int, int]] = []
        cur = start
        for s, e in self.intersecting(start, end):
            if s > cur:
                out.append((cur, s))
            cur = max(cur, e)
        if cur < end:
            out.append((cur, end))
        return out

    def intersecting(self, start: int, end: int) -> list[tuple[int, int]]:
        """The members' ranges that overlap ``[start, end)``, clipped to it."""
        if end <= start:
            return []
        i = max(bisect_right(self._starts, start) - 1, 0)
        out = []
        starts, ends = self._starts, self._ends
        while i < len(starts) and starts[i] < end:
            lo, hi = max(starts[i], start), min(ends[i], end)
            if hi > lo:
                out.append((lo, hi))
            i += 1
        return out
