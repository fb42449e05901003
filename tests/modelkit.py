"""Hand-made sender conversations for the sender-model tests (aioquic's test_recovery style).

Segments are numbered from 0 and are ``SMSS`` octets long, the first starting at octet 1 (the
event stream's ISN-relative space); times are milliseconds, turned into ns here.
"""
from __future__ import annotations

from tcpsack_analyze.events import ACK, Ack, Placement, Send

SMSS = 1000
MS = 1_000_000


def seq(n: int) -> int:
    """First octet of segment ``n``."""
    return 1 + n * SMSS


def send(t_ms: float, n: int, *, resent: bool = False, tsval: int | None = None, count: int = 1) -> Send:
    """Segments ``n .. n + count - 1`` sent at once (one TSO send when count > 1)."""
    return Send(int(t_ms * MS), 0, seq(n), seq(n + count), ACK, tsval,
                Placement.REXMIT if resent else Placement.NEW)


def ack(t_ms: float, n: int, *, sack: tuple[tuple[int, int], ...] = (), dup: bool = False,
        win: int = 1 << 30, tsecr: int | None = None) -> Ack:
    """Cumulative ACK of segments below ``n``; ``sack`` as (first, end) segment numbers."""
    blocks = tuple((seq(a), seq(b)) for a, b in sack)
    return Ack(int(t_ms * MS), 0, seq(n), blocks, False, dup, win, tsecr, ACK)
