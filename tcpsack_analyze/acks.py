"""The rules that judge an ACK: D-SACK and duplicate ACK (DOMAIN.md section 3), in one place.

Each rule is written once, on numpy arrays, and works unchanged on plain integers and booleans
(the operators are the same), so the flow stage applies it to a whole batch and a sans-I/O state
machine (the scoreboard, a sender model) to one ACK. Every sequence number here is unwrapped
(:mod:`~tcpsack_analyze.seqspace`), so comparisons are plain integer comparisons.
"""
from __future__ import annotations

from typing import Any, TypeVar, cast

import numpy as np

from tcpsack_analyze.seqspace import Seq

B = TypeVar("B", bool, np.ndarray)  # one ACK's flags or a batch's


def dsack_first_block(ack: Seq, nsack: Seq, l0: Seq, r0: Seq, l1: Seq, r1: Seq) -> Any:
    """Whether the first SACK block of an ACK reports a duplicate (a D-SACK).

    RFC 2883 section 4 (and Linux's ``tcp_check_dsack``): the first block is a D-SACK when it
    starts below the ACK's own cumulative ACK, or when a second block exists and contains it.
    ``l0, r0`` is the first block, ``l1, r1`` the second (read only when ``nsack > 1``); an ACK
    without blocks (``nsack == 0``) has none. Returns a bool for ints, a bool array for arrays.
    """
    return (nsack > 0) & ((l0 < ack) | ((nsack > 1) & (l1 <= l0) & (r0 <= r1)))


def duplicate_ack(pure: B, same_ack: B, outstanding: B, same_window: B, new_sack: B) -> B:
    """Whether an ACK is a duplicate ACK (DOMAIN.md section 3).

    RFC 5681 section 2: an ACK that carries no data and no SYN/FIN/RST (``pure``), acknowledges
    the same number as the receiver's previous ACK (``same_ack``) while data is outstanding
    (``outstanding``: the ACK is below the sender's highest sequence number sent), and advertises
    the same window (``same_window``). RFC 6675 section 2 also counts such an ACK when it carries
    SACK information (``new_sack``: a SACK block other than a D-SACK), whatever its window.
    """
    return cast(B, pure & same_ack & outstanding & (same_window | new_sack))


__all__ = ["dsack_first_block", "duplicate_ack"]
