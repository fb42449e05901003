"""Thinning what a figure cannot show: at most a few marks per pixel column.

A time-sequence graph of a million packets has far more marks than its axes have pixel
columns. Lines are thinned with M4 (keep, per column, the first, last, lowest and highest point:
the drawn line is the same to the pixel); vertical ranges (data segments) become one range per
column spanning all of that column's ranges. Retransmissions, losses and drops are never thinned.
"""
from __future__ import annotations

import numpy as np

__all__ = ["column_of", "envelope", "m4", "union_per_column"]


def column_of(x: np.ndarray, lo: float, hi: float, columns: int) -> np.ndarray:
    """The pixel column (0..columns-1) of each x, for axes spanning [lo, hi]."""
    span = hi - lo if hi > lo else 1.0
    return np.clip(((x - lo) / span * columns).astype(np.int64), 0, columns - 1)


def m4(x: np.ndarray, y: np.ndarray, lo: float, hi: float, columns: int) -> np.ndarray:
    """Indices (sorted) of the points of the line (x, y) kept by M4 over ``columns`` columns."""
    if x.size <= 4 * columns:
        return np.arange(x.size)
    col = column_of(x, lo, hi, columns)
    by_y = np.lexsort((y, col))  # within each column, by y: first is the min, last the max
    by_x = np.lexsort((np.arange(x.size), col))  # within each column, in order
    starts = np.flatnonzero(np.r_[True, col[by_y][1:] != col[by_y][:-1]])
    ends = np.r_[starts[1:], col.size] - 1
    keep = np.concatenate([by_y[starts], by_y[ends], by_x[starts], by_x[ends]])
    return np.unique(keep)


def envelope(x: np.ndarray, bottom: np.ndarray, top: np.ndarray, lo: float, hi: float, columns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One vertical range per pixel column holding ranges: (x of the column's first range,
    lowest bottom, highest top)."""
    col = column_of(x, lo, hi, columns)
    order = np.argsort(col, kind="stable")
    col = col[order]
    starts = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
    return x[order][starts], np.minimum.reduceat(bottom[order], starts), np.maximum.reduceat(top[order], starts)


def union_per_column(x: np.ndarray, bottom: np.ndarray, top: np.ndarray, lo: float, hi: float, columns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of the vertical ranges [bottom, top] that fall in each pixel column, as ranges
    at an x inside the column: what the column shows, with the overlaps merged. (Sequence
    numbers times columns must stay below 2**63.)"""
    if not x.size:
        return x, bottom, top
    col = column_of(x, lo, hi, columns)
    order = np.lexsort((bottom, col))
    col, x, bottom, top = col[order], x[order], bottom[order], top[order]
    first_x = x[np.r_[0, np.flatnonzero(col[1:] != col[:-1]) + 1]]
    # the running highest top within each column: shift each column above the previous one
    span = int(top.max()) - int(bottom.min()) + 1
    shifted = col * span + (top - bottom.min())
    reach = np.maximum.accumulate(shifted) - col * span + bottom.min()
    starts = np.r_[True, (col[1:] != col[:-1]) | (bottom[1:] > reach[:-1])]
    first = np.flatnonzero(starts)
    ends = np.r_[first[1:], col.size] - 1
    column_x = first_x[np.searchsorted(np.unique(col), col[first])]
    return column_x, bottom[first], reach[ends]
