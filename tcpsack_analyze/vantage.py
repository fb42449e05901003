"""Where was the capture taken? Near the opener, near the responder, or mid-path (DOMAIN.md 1).

The handshake splits the round trip at the capture point: SYN -> SYN-ACK is the part of the RTT
between the capture point and the responder, SYN-ACK -> ACK the part between the capture point
and the opener. Without a complete handshake, the minimum data->ACK RTT of each direction
gives the same split. A part below 10% of the whole counts as "near".
"""
from __future__ import annotations

from dataclasses import dataclass

NEAR_FRACTION = 0.10


@dataclass(frozen=True)
class Vantage:
    """The inferred capture point of a connection, with its evidence."""

    position: str  # "near opener", "near responder", "mid-path" or "unknown"
    fraction_to_responder: float | None  # share of the RTT between capture point and responder
    method: str  # "handshake", "data/ACK RTT" or "none"
    evidence: str

    def for_direction(self, d: int) -> str:
        """Vantage for the data sent by direction ``d`` (0: opener -> responder)."""
        if self.position == "near opener":
            return "near sender" if d == 0 else "near receiver"
        if self.position == "near responder":
            return "near receiver" if d == 0 else "near sender"
        return self.position


def infer(
    syn_ns: int | None, synack_ns: int | None, ack_ns: int | None, min_rtt_ab_ms: float | None, min_rtt_ba_ms: float | None
) -> Vantage:
    """Infer the vantage point from handshake times, else from minimum data/ACK RTTs.

    ``min_rtt_ab_ms`` is measured on opener->responder data (capture point -> responder -> back),
    ``min_rtt_ba_ms`` on responder->opener data.
    """
    if syn_ns is not None and synack_ns is not None and ack_ns is not None and ack_ns >= synack_ns >= syn_ns:
        far = (synack_ns - syn_ns) / 1e6
        near = (ack_ns - synack_ns) / 1e6
        method = "handshake"
        evidence = f"SYN->SYN-ACK {far:.3f} ms, SYN-ACK->ACK {near:.3f} ms"
    elif min_rtt_ab_ms is not None and min_rtt_ba_ms is not None:
        far, near = min_rtt_ab_ms, min_rtt_ba_ms
        method = "data/ACK RTT"
        evidence = f"min RTT of opener data {far:.3f} ms, of responder data {near:.3f} ms"
    else:
        return Vantage("unknown", None, "none", "no complete handshake and no RTT samples in both directions")
    total = far + near
    if total <= 0:
        return Vantage("unknown", None, method, evidence + " (zero round trip: timestamps too coarse)")
    frac = far / total
    if frac >= 1 - NEAR_FRACTION:
        pos = "near opener"
    elif frac <= NEAR_FRACTION:
        pos = "near responder"
    else:
        pos = "mid-path"
    return Vantage(pos, frac, method, f"{evidence}: {100 * frac:.1f}% of the RTT lies between the capture point and the responder")
