"""32-bit TCP sequence arithmetic (DOMAIN.md section 2; RFC 9293 section 3.4), for the Python
code that reads raw sequence numbers (the lab, truth).

The rules are the compiled core's (``src/seq.rs``, exposed by ``src/py_rules.rs``), which the
flow stage's unwrapping (``src/flow/unwrap.rs``: a space's two streams, the sender's sequence
numbers and the receiver's acknowledgment numbers, from a common anchor: the ISN when the SYN
was seen, else the first value seen in either stream) uses too; one implementation.

- :func:`signed_diff` ``(a, b)``: ``a - b`` modulo 2**32, as a signed number in [-2**31, 2**31);
- :func:`wire_add` ``(a, b)``: ``a + b`` as the 32-bit number on the wire (``b`` may be negative);
- :func:`wire_sub` ``(a, b)``: how far ``a`` lies ahead of ``b``, in [0, 2**32).
"""
from __future__ import annotations

from tcpsack_analyze._core import SEQ_HALF as HALF
from tcpsack_analyze._core import SEQ_MOD as MOD
from tcpsack_analyze._core import signed_diff, wire_add, wire_sub


def offset_range(start: int, length: int, base: int) -> tuple[int, int] | None:
    """The part at or above ``base`` of the wire range ``[start, start + length)``, as offsets
    from ``base`` (``None`` when it lies wholly below ``base``); sequence space wraps."""
    off = wire_sub(start, base)
    if off < HALF:
        return off, off + length
    end = wire_add(off, length)
    return (0, end) if end < HALF else None


__all__ = ["HALF", "MOD", "offset_range", "signed_diff", "wire_add", "wire_sub"]
