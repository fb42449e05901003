"""32-bit TCP sequence arithmetic (DOMAIN.md section 2; RFC 9293 section 3.4), for the Python
code that reads raw sequence numbers (the lab, truth, the loss tracker's raw edges).

The flow stage's unwrapping of a capture's sequence numbers to 64-bit numbers (two streams of a
space, the sender's sequence numbers and the receiver's acknowledgment numbers, from a common
anchor: the ISN when the SYN was seen, else the first value seen in either stream) runs in the
compiled core: ``src/flow/unwrap.rs``, over ``src/seq.rs``, the core's twin of these functions.
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
