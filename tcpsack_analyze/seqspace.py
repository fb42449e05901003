"""Unwrapping 32-bit TCP sequence numbers to 64-bit numbers (DOMAIN.md section 2).

A sequence space (the bytes one side sends) is seen through two streams of 32-bit values: the
sequence numbers of that side's segments and the acknowledgment numbers (and SACK edges) of the
other side. Each stream is unwrapped incrementally, one value relative to the previous one
(RFC 9293 section 3.4 compares sequence numbers modulo 2**32 in the same way), starting from a
common anchor: the ISN when the SYN was seen, else the first value seen in either stream.
"""
from __future__ import annotations

from typing import TypeVar

import numpy as np

MOD = 1 << 32
HALF = 1 << 31


# a sequence number or an array of them; the result has the type of the first argument
Seq = TypeVar("Seq", int, np.ndarray)


def signed_diff(a: Seq, b: Seq | int) -> Seq:
    """``a - b`` modulo 2**32, as a signed number in [-2**31, 2**31)."""
    return ((a - b + HALF) % MOD) - HALF


def wire_add(a: Seq, b: Seq | int) -> Seq:
    """``a + b`` as the 32-bit number on the wire (``b`` may be negative, or a relative offset)."""
    return (a + b) % MOD


def wire_sub(a: Seq, b: Seq | int) -> Seq:
    """How far ``a`` lies ahead of ``b`` in 32-bit sequence space: ``a - b`` modulo 2**32, in
    [0, 2**32)."""
    return (a - b) % MOD


def offset_range(start: int, length: int, base: int) -> tuple[int, int] | None:
    """The part at or above ``base`` of the wire range ``[start, start + length)``, as offsets
    from ``base`` (``None`` when it lies wholly below ``base``); sequence space wraps."""
    off = int(wire_sub(start, base))
    if off < HALF:
        return off, off + length
    end = int(wire_add(off, length))
    return (0, end) if end < HALF else None


class Unwrapper:
    """Unwraps one stream of 32-bit values, carrying its state across batches."""

    __slots__ = ("last_raw", "last_abs")

    def __init__(self) -> None:
        self.last_raw: int | None = None
        self.last_abs = 0

    def start(self, anchor_raw: int, anchor_abs: int) -> None:
        """Begin the stream at a value whose unwrapped number is known."""
        self.last_raw = anchor_raw
        self.last_abs = anchor_abs

    @property
    def started(self) -> bool:
        return self.last_raw is not None

    def unwrap(self, raw: np.ndarray) -> np.ndarray:
        """Unwrapped 64-bit numbers for ``raw`` (in stream order); the stream must be started."""
        if raw.size == 0:
            return raw.astype(np.int64)
        assert self.last_raw is not None
        prev = np.empty_like(raw)
        prev[0] = self.last_raw
        prev[1:] = raw[:-1]
        out = self.last_abs + np.cumsum(signed_diff(raw, prev))
        self.last_raw = int(raw[-1])
        self.last_abs = int(out[-1])
        return out


class SeqSpace:
    """The sequence space of one direction: its anchor and its two streams."""

    __slots__ = ("anchor", "seqs", "acks")

    def __init__(self) -> None:
        self.anchor: int | None = None  # raw value whose unwrapped number is 0
        self.seqs = Unwrapper()
        self.acks = Unwrapper()

    def ensure_anchor(self, raw: int) -> None:
        if self.anchor is None:
            self.anchor = raw

    def anchor_at_syn(self, isn: int, data_seen: bool) -> bool:
        """The SYN was seen: its ISN is relative 0 (domain.md section 2). A space anchored
        before it (by a stray segment or an ACK number of an earlier attempt) starts again at
        the ISN, unless data was already placed in it (then the numbers already reported stay
        valid). Returns whether an earlier origin was given up."""
        moved = self.anchor is not None and self.anchor != isn and not data_seen
        if self.anchor is None or moved:
            self.anchor = isn
            self.seqs = Unwrapper()
            self.acks = Unwrapper()
        return moved

    def _start(self, stream: Unwrapper, first_raw: int) -> None:
        assert self.anchor is not None
        stream.start(first_raw, int(signed_diff(first_raw, self.anchor)))

    def unwrap_seqs(self, raw: np.ndarray, follow: np.ndarray | None = None) -> np.ndarray:
        """Unwrapped sequence numbers of ``raw`` (in stream order). Rows where ``follow`` is
        False are unwrapped near the stream's latest value without moving it along."""
        if follow is not None and not follow.all():
            out = np.empty(raw.shape, np.int64)
            if follow.any():
                out[follow] = self.unwrap_seqs(raw[follow])
            if not self.seqs.started:
                self.ensure_anchor(int(raw[~follow][0]))
                assert self.anchor is not None
                self._start(self.seqs, self.anchor)
            assert self.seqs.last_raw is not None
            out[~follow] = self.seqs.last_abs + signed_diff(raw[~follow], self.seqs.last_raw)
            return out
        if raw.size and not self.seqs.started:
            self.ensure_anchor(int(raw[0]))
            self._start(self.seqs, int(raw[0]))
        return self.seqs.unwrap(raw)

    def unwrap_acks(self, raw: np.ndarray) -> np.ndarray:
        if raw.size and not self.acks.started:
            # acknowledgment numbers point one past data: anchor so the first ACK is >= 0
            self.ensure_anchor(int(raw[0]) - 1)
            self._start(self.acks, int(raw[0]))
        return self.acks.unwrap(raw)

    @staticmethod
    def unwrap_near(raw: np.ndarray, ref_raw: np.ndarray, ref_abs: np.ndarray) -> np.ndarray:
        """Unwrap values known to lie within 2**31 of a reference (SACK edges near the ACK)."""
        return np.asarray(ref_abs + signed_diff(raw, ref_raw))
