"""IP and TCP header decoding, vectorised over a batch of records.

Lengths come from the IP and TCP headers, never from the captured length: headers-only
snap lengths are the normal case (DOMAIN.md section 2). Where the IP length field is zero
(TSO/GRO and BIG TCP frames shown to taps, RFC 2675 without a jumbo option) the wire length
of the record is used instead. A packet cut inside its TCP header is counted as truncated and
not analysed; IP fragments are counted and not analysed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcpsack_analyze.reader.fields import be16, be32, take_bytes
from tcpsack_analyze.reader.linklayer import SUPPORTED, locate_ip
from tcpsack_analyze.reader.options import TcpOptions, parse_options
from tcpsack_analyze.reader.records import RecordBatch

IPPROTO_TCP = 6
IPV6_EXTENSIONS = (0, 43, 60, 51, 44)  # hop-by-hop, routing, destination, AH, fragment
V4_MAPPED = np.array([0] * 10 + [0xFF, 0xFF], dtype=np.uint8)

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


def decode_batch(rec: RecordBatch, keep: np.ndarray | None = None) -> tuple[PacketBatch, DecodeCounts]:
    """Decode the TCP packets of ``rec`` (optionally only the records where ``keep`` is true)."""
    counts = DecodeCounts(records=len(rec))
    buf = rec.buf
    start, caplen, wirelen = rec.start, rec.caplen, rec.wirelen
    sel = np.arange(len(rec), dtype=np.int64)
    if keep is not None:
        counts.filtered_out = int((~keep).sum())
        sel = sel[keep]
    lts = rec.linktype[sel]
    unsupported = ~np.isin(lts, list(SUPPORTED))
    if unsupported.any():
        vals, cnt = np.unique(lts[unsupported], return_counts=True)
        counts.unsupported_linktype = {int(v): int(c) for v, c in zip(vals, cnt)}
        sel = sel[~unsupported]
    s, cl, wl = start[sel], caplen[sel], wirelen[sel]
    end = s + cl
    ipoff, ver, tagged = locate_ip(buf, s, cl, rec.linktype[sel])
    counts.non_ip = int((ver == 0).sum())

    # IPv4
    v4 = ver == 4
    ihl = (buf[ipoff] & 0x0F).astype(np.int64) * 4
    tot = be16(buf, ipoff + 2)
    proto = np.where(v4, buf[ipoff + 9], 0).astype(np.int64)
    frag4 = v4 & ((be16(buf, ipoff + 6) & 0x3FFF) != 0)
    iplen = np.where(tot == 0, wl - (ipoff - s), tot)  # TSO / BIG TCP: length field 0
    l4 = ipoff + ihl
    bad = v4 & ((ihl < 20) | (ipoff + 20 > end))
    paytot = iplen - ihl  # bytes after the IP header

    # IPv6 with extension headers
    v6 = ver == 6
    frag6 = np.zeros_like(v6)
    if v6.any():
        i6 = np.nonzero(v6)[0]
        plen = be16(buf, ipoff[i6] + 4)
        plen = np.where(plen == 0, wl[i6] - (ipoff[i6] - s[i6]) - 40, plen)
        nh = buf[ipoff[i6] + 6].astype(np.int64)
        p = ipoff[i6] + 40
        for _ in range(8):
            ext = np.isin(nh, IPV6_EXTENSIONS) & (p + 8 <= end[i6])
            if not ext.any():
                break
            # read only where an extension header is captured: p of the other rows may already
            # lie past the buffer (an extension header longer than the captured bytes)
            r = np.where(ext, p, ipoff[i6])
            isfrag = ext & (nh == 44)
            fragfield = be16(buf, r + 2)
            frag6[i6[isfrag & ((fragfield & 0xFFF9) != 0)]] = True
            hlen = np.where(nh == 44, 8, np.where(nh == 51, (buf[r + 1].astype(np.int64) + 2) * 4, (buf[r + 1].astype(np.int64) + 1) * 8))
            nnh = buf[r].astype(np.int64)
            p = np.where(ext, p + hlen, p)
            nh = np.where(ext, nnh, nh)
        proto[i6] = nh
        l4[i6] = p
        paytot[i6] = plen - (p - ipoff[i6] - 40)
        # cut inside the IPv6 header or its extension-header chain: truncated, not "non-TCP"
        bad[i6] |= (ipoff[i6] + 40 > end[i6]) | (np.isin(nh, IPV6_EXTENSIONS) & (p + 8 > end[i6]))
    frag = frag4 | frag6
    counts.ip_fragments = int(frag.sum())
    ip_ok = (v4 | v6) & ~bad & ~frag
    counts.truncated_tcp += int(((v4 | v6) & bad).sum())
    counts.non_tcp = int((ip_ok & (proto != IPPROTO_TCP)).sum())
    tcp = ip_ok & (proto == IPPROTO_TCP)
    short = tcp & (l4 + 20 > end)
    counts.truncated_tcp += int(short.sum())
    tcp &= ~short
    doff = (buf[np.where(tcp, l4, s) + 12] >> 4).astype(np.int64) * 4  # l4 of non-TCP rows may lie past the buffer
    paylen = paytot - doff
    malformed = tcp & ((doff < 20) | (paylen < 0))
    counts.malformed = int(malformed.sum())
    tcp &= ~malformed

    t = np.nonzero(tcp)[0]
    l4t = l4[t]
    rows = sel[t]
    src = np.empty((t.shape[0], 16), dtype=np.uint8)
    dst = np.empty((t.shape[0], 16), dtype=np.uint8)
    is4 = v4[t]
    if is4.any():
        o = ipoff[t][is4]
        src[is4, :12] = V4_MAPPED
        dst[is4, :12] = V4_MAPPED
        src[is4, 12:] = take_bytes(buf, o + 12, 4)
        dst[is4, 12:] = take_bytes(buf, o + 16, 4)
    if (~is4).any():
        o = ipoff[t][~is4]
        src[~is4] = take_bytes(buf, o + 8, 16)
        dst[~is4] = take_bytes(buf, o + 24, 16)
    opts = parse_options(buf, l4t + 20, l4t + doff[t], end[t])
    batch = PacketBatch(
        index=rows + rec.first_index,
        ts_ns=rec.ts_ns[rows],
        ipver=ver[t],
        src=src,
        dst=dst,
        sport=be16(buf, l4t),
        dport=be16(buf, l4t + 2),
        seq=be32(buf, l4t + 4),
        ack=be32(buf, l4t + 8),
        flags=((buf[l4t + 12].astype(np.int64) & 1) << 8) | buf[l4t + 13],
        win=be16(buf, l4t + 14),
        hdrlen=doff[t],
        paylen=paylen[t],
        vlan=tagged[t],
        opts=opts,
    )
    return batch, counts
