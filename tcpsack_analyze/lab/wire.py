"""Just enough Ethernet/IPv4/TCP decoding for the emulator to tell what a frame is.

The emulator must decide, per frame and in a few microseconds of Python, whether it is a TCP
segment that carries data (the only frames the loss models may drop) and record its sequence
numbers when it drops it. Headers follow RFC 791 (IPv4) and RFC 9293 (TCP); the lab runs with
IPv6 disabled, so other frames (ARP) are passed through undecoded.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["Segment", "decode", "flags_text"]

_ETH_HEADER = 14
_ETHERTYPE_IPV4 = 0x0800
_PROTO_TCP = 6
_FLAG_LETTERS = "FSRPAUEC"  # bit 0 (FIN) upwards, tcpdump's letters


@dataclass(frozen=True, slots=True)
class Segment:
    """The TCP/IP fields of one frame that the drop log records."""

    src: str
    dst: str
    sport: int
    dport: int
    seq: int
    ack: int
    payload_len: int
    flags: int

    @property
    def is_data(self) -> bool:
        """True when the segment carries payload (SYN and FIN alone do not count)."""
        return self.payload_len > 0


def decode(frame: bytes) -> Segment | None:
    """Decode an Ethernet frame; None unless it is an unfragmented-header IPv4/TCP segment.

    The payload length comes from the IPv4 total length, not from the frame size, so
    Ethernet padding of short frames is not mistaken for data.
    """
    if len(frame) < _ETH_HEADER + 20 or struct.unpack_from("!H", frame, 12)[0] != _ETHERTYPE_IPV4:
        return None
    ip = _ETH_HEADER
    ihl = (frame[ip] & 0x0F) * 4
    if frame[ip + 9] != _PROTO_TCP or len(frame) < ip + ihl + 20:
        return None
    total_len = struct.unpack_from("!H", frame, ip + 2)[0]
    tcp = ip + ihl
    sport, dport, seq, ack, offset_byte, flags = struct.unpack_from("!HHIIBB", frame, tcp)
    header_len = (offset_byte >> 4) * 4
    return Segment(
        src=".".join(str(b) for b in frame[ip + 12 : ip + 16]),
        dst=".".join(str(b) for b in frame[ip + 16 : ip + 20]),
        sport=sport,
        dport=dport,
        seq=seq,
        ack=ack,
        payload_len=max(0, total_len - ihl - header_len),
        flags=flags,
    )


def flags_text(flags: int) -> str:
    """TCP flags as letters, lowest bit first: 0x18 -> "PA", 0x12 -> "SA"."""
    return "".join(letter for bit, letter in enumerate(_FLAG_LETTERS) if flags & (1 << bit))
