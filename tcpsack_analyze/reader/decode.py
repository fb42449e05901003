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

from tcpsack_analyze.reader.fields import be16, gather, take_bytes
from tcpsack_analyze.reader.linklayer import SUPPORTED, locate_ip
from tcpsack_analyze.reader.options import TcpOptions, parse_options
from tcpsack_analyze.reader.records import RecordBatch

IPPROTO_TCP = 6
IPV6_EXTENSIONS = (0, 43, 60, 51, 44)  # hop-by-hop, routing, destination, AH, fragment
V4_MAPPED = np.array([0] * 10 + [0xFF, 0xFF], dtype=np.uint8)
V4_MAPPED_WORDS = V4_MAPPED.view(np.uint32)  # the same 12 bytes as three host-order words

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


IPV4_HEADER = np.dtype(
    [("vihl", "u1"), ("tos", "u1"), ("len", ">u2"), ("id", ">u2"), ("frag", ">u2"), ("ttl", "u1"),
     ("proto", "u1"), ("csum", ">u2"), ("src", "=u4"), ("dst", "=u4")]  # addresses: raw bytes
)
TCP_HEADER = np.dtype(
    [("sport", ">u2"), ("dport", ">u2"), ("seq", ">u4"), ("ack", ">u4"), ("off_flags", ">u2"), ("win", ">u2"),
     ("csum", ">u2"), ("urp", ">u2")]
)


def decode_batch(rec: RecordBatch, keep: np.ndarray | None = None) -> tuple[PacketBatch, DecodeCounts]:
    """Decode the TCP packets of ``rec`` (optionally only the records where ``keep`` is true)."""
    counts = DecodeCounts(records=len(rec))
    buf = rec.buf
    sel: np.ndarray | None = None  # the records decoded; None: all of them
    if keep is not None:
        counts.filtered_out = int(len(rec) - np.count_nonzero(keep))
        sel = np.nonzero(keep)[0]
    lts = rec.linktype if sel is None else rec.linktype[sel]
    if lts.size and (lts == lts[0]).all():  # the usual case: one link type
        if int(lts[0]) not in SUPPORTED:
            counts.unsupported_linktype = {int(lts[0]): int(lts.size)}
            sel = np.zeros(0, dtype=np.int64)
    else:
        unsupported = ~np.isin(lts, list(SUPPORTED))
        if unsupported.any():
            vals, cnt = np.unique(lts[unsupported], return_counts=True)
            counts.unsupported_linktype = {int(v): int(c) for v, c in zip(vals, cnt)}
            sel = np.nonzero(~unsupported)[0] if sel is None else sel[~unsupported]
    if sel is not None:
        s, cl, wl, lts = rec.start[sel], rec.caplen[sel], rec.wirelen[sel], rec.linktype[sel]
    else:
        s, cl, wl = rec.start, rec.caplen, rec.wirelen
    end = s + cl
    ipoff, ver, tagged = locate_ip(buf, s, cl, lts)
    counts.non_ip = int(np.count_nonzero(ver == 0))

    # IPv4 (the header is read for every row; rows of other versions overwrite or ignore it)
    ip = gather(buf, ipoff, IPV4_HEADER)
    v4 = ver == 4
    ihl = (ip["vihl"] & 0x0F).astype(np.int64) * 4
    tot = ip["len"].astype(np.int64)
    proto = np.where(v4, ip["proto"], 0).astype(np.int64)
    frag4 = v4 & ((ip["frag"] & 0x3FFF) != 0)
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
    counts.ip_fragments = int(np.count_nonzero(frag))
    ip_ok = (v4 | v6) & ~bad & ~frag
    counts.truncated_tcp += int(np.count_nonzero((v4 | v6) & bad))
    is_tcp = proto == IPPROTO_TCP
    counts.non_tcp = int(np.count_nonzero(ip_ok & ~is_tcp))
    tcp = ip_ok & is_tcp
    short = tcp & (l4 + 20 > end)
    counts.truncated_tcp += int(np.count_nonzero(short))
    t = np.nonzero(tcp & ~short)[0]

    # the TCP header of every row left, in one read (its 20 bytes are captured)
    l4t = l4[t]
    th = gather(buf, l4t, TCP_HEADER)
    off_flags = th["off_flags"].astype(np.int64)
    doff = (off_flags >> 12) * 4
    paylen = paytot[t] - doff
    malformed = (doff < 20) | (paylen < 0)
    counts.malformed = int(np.count_nonzero(malformed))
    if counts.malformed:
        ok = ~malformed
        t, l4t, th, off_flags, doff, paylen = t[ok], l4t[ok], th[ok], off_flags[ok], doff[ok], paylen[ok]

    rows = t if sel is None else sel[t]
    m = t.shape[0]
    src = np.empty((m, 16), dtype=np.uint8)
    dst = np.empty((m, 16), dtype=np.uint8)
    # IPv4 addresses as v4-mapped IPv6, written a 32-bit word at a time (bytes kept in order)
    src_w, dst_w = src.view(np.uint32), dst.view(np.uint32)
    is4 = v4[t]
    if is4.all():
        src_w[:, :3] = V4_MAPPED_WORDS
        dst_w[:, :3] = V4_MAPPED_WORDS
        src_w[:, 3] = ip["src"][t]
        dst_w[:, 3] = ip["dst"][t]
    else:
        t4 = t[is4]
        src_w[is4, :3] = V4_MAPPED_WORDS
        dst_w[is4, :3] = V4_MAPPED_WORDS
        src_w[is4, 3] = ip["src"][t4]
        dst_w[is4, 3] = ip["dst"][t4]
        o = ipoff[t[~is4]]
        src[~is4] = take_bytes(buf, o + 8, 16)
        dst[~is4] = take_bytes(buf, o + 24, 16)
    opts = parse_options(buf, l4t + 20, l4t + doff, end[t])
    batch = PacketBatch(
        index=rows + rec.first_index,
        ts_ns=rec.ts_ns[rows],
        ipver=ver[t],
        src=src,
        dst=dst,
        sport=th["sport"].astype(np.int64),
        dport=th["dport"].astype(np.int64),
        seq=th["seq"].astype(np.int64),
        ack=th["ack"].astype(np.int64),
        flags=off_flags & 0x1FF,
        win=th["win"].astype(np.int64),
        hdrlen=doff,
        paylen=paylen,
        vlan=tagged[t],
        opts=opts,
    )
    return batch, counts
