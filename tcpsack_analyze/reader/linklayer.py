"""Link-layer decoding, vectorised over a batch: where does the IP header start?

Supported LINKTYPE_* values (https://www.tcpdump.org/linktypes.html): Ethernet (1) with
802.1Q / 802.1ad / 0x9100 tags and PPPoE sessions, raw IP (101, and the DLT_RAW numbers 12 and
14), IPv4 (228), IPv6 (229), Linux cooked SLL (113) and SLL2 (276), BSD NULL (0) and LOOP (108).
"""
from __future__ import annotations

import numpy as np

from tcpsack_analyze.reader.fields import be16, be32, le32

ETHERNET = 1
NULL = 0
LOOP = 108
RAW_LINKTYPES = (101, 12, 14)
IPV4_ONLY = 228
IPV6_ONLY = 229
SLL = 113
SLL2 = 276
SUPPORTED = frozenset({ETHERNET, NULL, LOOP, *RAW_LINKTYPES, IPV4_ONLY, IPV6_ONLY, SLL, SLL2})

ETH_IPV4 = 0x0800
ETH_IPV6 = 0x86DD
VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)
PPPOE_SESSION = 0x8864
PPP_IPV4 = 0x0021
PPP_IPV6 = 0x0057
AF_INET6_VALUES = (10, 24, 28, 30)  # Linux, NetBSD/OpenBSD, FreeBSD, macOS


def _from_ethertype(ethertype: np.ndarray) -> np.ndarray:
    return np.where(ethertype == ETH_IPV4, 4, np.where(ethertype == ETH_IPV6, 6, 0))


def locate_ip(buf: np.ndarray, start: np.ndarray, caplen: np.ndarray, linktype: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (ip_offset, ip_version, vlan_tagged) for every record.

    ``ip_version`` is 4 or 6, or 0 for non-IP frames, frames too short for their link header
    and unsupported link types (the caller counts those separately).
    """
    n = start.shape[0]
    if n and (linktype == linktype[0]).all():  # the usual case: one link type, no row selection
        return _locate(buf, start, caplen, int(linktype[0]))
    off = np.zeros(n, dtype=np.int64)
    ver = np.zeros(n, dtype=np.int64)
    tagged = np.zeros(n, dtype=bool)
    for lt in np.unique(linktype):
        sel = np.nonzero(linktype == lt)[0]
        off[sel], ver[sel], tagged[sel] = _locate(buf, start[sel], caplen[sel], int(lt))
    return off, ver, tagged


def _locate(buf: np.ndarray, s: np.ndarray, caplen: np.ndarray, lt: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`locate_ip` for records of the one link type ``lt``."""
    tag = np.zeros(s.shape[0], dtype=bool)
    if lt == ETHERNET:
        o = s + 14
        et = be16(buf, s + 12)
        for _ in range(3):  # up to three stacked tags (QinQ and more)
            is_tag = (et == VLAN_TPIDS[0]) | (et == VLAN_TPIDS[1]) | (et == VLAN_TPIDS[2])
            if not is_tag.any():
                break
            tag |= is_tag
            et = np.where(is_tag, be16(buf, o + 2), et)
            o = np.where(is_tag, o + 4, o)
        pppoe = et == PPPOE_SESSION
        if pppoe.any():
            proto = be16(buf, o + 6)
            et = np.where(pppoe, np.where(proto == PPP_IPV4, ETH_IPV4, np.where(proto == PPP_IPV6, ETH_IPV6, 0)), et)
            o = np.where(pppoe, o + 8, o)
        v = _from_ethertype(et)
    elif lt in RAW_LINKTYPES or lt in (IPV4_ONLY, IPV6_ONLY):
        o = s
        nib = buf[s] >> 4
        v = np.where(nib == 4, 4, np.where(nib == 6, 6, 0))
    elif lt == SLL:
        o = s + 16
        v = _from_ethertype(be16(buf, s + 14))
    elif lt == SLL2:
        o = s + 20
        v = _from_ethertype(be16(buf, s))
    elif lt in (NULL, LOOP):
        o = s + 4
        fam = be32(buf, s) if lt == LOOP else np.where(le32(buf, s) < 256, le32(buf, s), be32(buf, s))
        v = np.where(fam == 2, 4, np.where(np.isin(fam, AF_INET6_VALUES), 6, 0))
    else:
        return np.zeros(s.shape[0], dtype=np.int64), np.zeros(s.shape[0], dtype=np.int64), tag
    return o, np.where(o >= s + caplen, 0, v).astype(np.int64, copy=False), tag
