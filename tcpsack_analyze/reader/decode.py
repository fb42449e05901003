"""What the decoder hands on: the TCP packets of a chunk as columns, and what else the chunk held.

The decoding is done by the compiled core (``src/decode.rs``). Lengths come from the IP and TCP
headers, never from the captured length: headers-only snap lengths are the normal case
(DOMAIN.md section 2). Where the IP length field is zero (TSO/GRO and BIG TCP frames shown to
taps, RFC 2675 without a jumbo option) the wire length of the record is used instead. A packet
cut inside its IP or TCP header is counted as truncated and not analysed; IP fragments are
counted and not analysed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcpsack_analyze.reader.options import TcpOptions

FIN, SYN, RST, PSH, ACK, URG, ECE, CWR = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80


@dataclass
class DecodeCounts:
    """What a batch held besides analysable TCP packets."""

    records: int = 0
    unsupported_linktype: dict[int, int] = field(default_factory=dict)
    non_ip: int = 0
    non_tcp: int = 0
    ip_fragments: int = 0
    truncated_tcp: int = 0  # cut inside the IP or TCP header
    malformed: int = 0  # impossible header lengths
    filtered_out: int = 0

    def add(self, other: DecodeCounts) -> None:
        for name in ("records", "non_ip", "non_tcp", "ip_fragments", "truncated_tcp", "malformed", "filtered_out"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for lt, c in other.unsupported_linktype.items():
            self.unsupported_linktype[lt] = self.unsupported_linktype.get(lt, 0) + c


@dataclass
class PacketBatch:
    """Decoded TCP packets of one chunk, in file order (struct of arrays)."""

    index: np.ndarray  # record number in the capture (0-based)
    ts_ns: np.ndarray
    ipver: np.ndarray
    src: np.ndarray  # (n, 16) uint8, IPv4 as v4-mapped IPv6
    dst: np.ndarray
    sport: np.ndarray
    dport: np.ndarray
    seq: np.ndarray  # raw 32-bit values in int64
    ack: np.ndarray
    flags: np.ndarray
    win: np.ndarray
    hdrlen: np.ndarray  # TCP header length (data offset * 4)
    paylen: np.ndarray  # TCP payload length from the IP lengths
    vlan: np.ndarray  # bool: frame carried 802.1Q/802.1ad tags
    opts: TcpOptions

    def __len__(self) -> int:
        return int(self.index.shape[0])
