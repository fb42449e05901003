"""How much cwnd grows in slow start for one ACK: per ACK, ABC, LBC, SABC or by bytes.

Each rule takes the octets this ACK newly acknowledged (RFC 6937 DeliveredData) and returns the
increase of cwnd in octets, before the caller caps it at ssthresh:

* ``per_ack``: RFC 5681 section 3.1, ``cwnd += min(N, SMSS)``: one SMSS per ACK of new data;
* ``abc``: Appropriate Byte Counting, RFC 3465 section 2.2 (paper 002): ``min(N, L * SMSS)``
  with ``L = 2`` in the initial slow start, and ``L = 1`` in a slow start after an RTO
  (section 2.3);
* ``lbc``: Limited Byte Counting (paper 002): the same by-bytes rule with the limit ``L``, used in
  every slow start, including the one after an RTO, and counted during loss recovery as well;
* ``sabc``: Scaled ABC (paper 002 section 4, equation 1): ``cwnd += (1 + (n - 1) * S) * SMSS``
  for an ACK of ``n = ceil(N / SMSS)`` new segments, in the first slow start only (per ACK
  after an RTO);
* ``bytes``: Linux's ``tcp_slow_start``: ``cwnd += N``, no per-ACK limit, counted in whole
  segments as Linux counts the packets ACKed (a short segment counts as one).
"""
from __future__ import annotations

SLOW_START_RULES = ("per_ack", "abc", "lbc", "sabc", "bytes")


def slow_start_increase(rule: str, acked: int, smss: int, *, limit: int, scale: float, after_rto: bool) -> int:
    """The slow-start increase of cwnd in octets for an ACK of ``acked`` new octets.

    Args:
        rule: one of :data:`SLOW_START_RULES`.
        limit: ABC/LBC's ``L`` in segments (2 in RFC 3465).
        scale: SABC's ``S``.
        after_rto: this slow start follows a retransmission timeout (ABC then uses ``L = 1``).
    """
    if acked <= 0:
        return 0
    if rule == "per_ack":
        return min(acked, smss)
    if rule == "abc":
        return min(acked, (1 if after_rto else limit) * smss)
    if rule == "lbc":
        return min(acked, limit * smss)
    if rule == "sabc":
        if after_rto:  # paper 002 section 4: SABC only in the first slow start
            return min(acked, smss)
        segments = -(-acked // smss)
        return int((1 + (segments - 1) * scale) * smss)
    if rule == "bytes":
        return -(-acked // smss) * smss
    raise ValueError(f"unknown slow-start rule {rule!r} (one of {', '.join(SLOW_START_RULES)})")


__all__ = ["SLOW_START_RULES", "slow_start_increase"]
