"""The rules that judge an ACK: D-SACK and duplicate ACK (DOMAIN.md section 3), in one place.

They are written once, in the compiled core (``src/acks.rs``), where the flow stage marks every
ACK event with them (``dup``, ``dsack``: stages read the marks and never decide again); the
Python code that still steps ACKs one at a time (the replay simulator) calls the same functions
through this module. Every sequence number is unwrapped, so comparisons are plain.

- :func:`dsack_first_block` ``(ack, nsack, l0, r0, l1, r1)``: RFC 2883 section 4 (and Linux's
  ``tcp_check_dsack``): the first SACK block ``l0, r0`` reports a duplicate when it starts below
  the ACK's own cumulative ACK, or when a second block ``l1, r1`` exists (``nsack > 1``) and
  contains it; an ACK without blocks (``nsack == 0``) has none.
- :func:`duplicate_ack` ``(pure, same_ack, outstanding, same_window, new_sack)``: RFC 5681
  section 2: an ACK that carries no data and no SYN/FIN/RST (``pure``), acknowledges the same
  number as the receiver's previous ACK (``same_ack``) while data is outstanding
  (``outstanding``), and advertises the same window (``same_window``); RFC 6675 section 2 also
  counts it when it carries SACK information other than a D-SACK (``new_sack``).
"""
from __future__ import annotations

from tcpsack_analyze._core import dsack_first_block, duplicate_ack

__all__ = ["dsack_first_block", "duplicate_ack"]
