"""Link-layer decoding, vectorised over a batch: where does the IP header start?

Supported LINKTYPE_* values (https://www.tcpdump.org/linktypes.html; the table with the header
layout of each is in docs/link-types.md):

- Ethernet (1) with 802.1Q / 802.1ad / 0x9100 tags and PPPoE sessions (RFC 2516);
- raw IP (101, and the DLT_RAW numbers 12 and 14), IPv4 (228), IPv6 (229);
- Linux cooked SLL (113) and SLL2 (276), BSD NULL (0) and LOOP (108), Solaris IPNET (226);
- PPP (9), PPP in HDLC-like framing (50), pppd's PPP_PPPD (166) and PPPoE without Ethernet
  (PPP_ETHER, 51), with or without the 0xFF 0x03 address/control prefix and with 1- or 2-byte
  protocol fields (RFC 1661 section 6.5-6.6, RFC 1662 section 3.2); Cisco HDLC (104, and inside
  9 and 50 when the first byte is 0x0F or 0x8F);
- SLIP (8) with libpcap's 16-byte pseudo-header, ATM with LLC/SNAP (RFC 1483, 100) and Frame
  Relay (107: RFC 2427 NLPID and SNAP, and Cisco's Ethertype encapsulation).
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
PPP = 9
PPP_HDLC = 50
PPP_PPPD = 166
PPP_ETHER = 51
C_HDLC = 104
SLIP = 8
ATM_RFC1483 = 100
FRELAY = 107
IPNET = 226
PPP_LINKTYPES = (PPP, PPP_HDLC, PPP_PPPD)
SUPPORTED = frozenset({
    ETHERNET, NULL, LOOP, *RAW_LINKTYPES, IPV4_ONLY, IPV6_ONLY, SLL, SLL2,
    *PPP_LINKTYPES, PPP_ETHER, C_HDLC, SLIP, ATM_RFC1483, FRELAY, IPNET,
})

ETH_IPV4 = 0x0800
ETH_IPV6 = 0x86DD
VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)
PPPOE_SESSION = 0x8864
PPPOE_HEADER = 6  # version/type, code, session id, length (RFC 2516 section 4)
PPP_IPV4 = 0x0021
PPP_IPV6 = 0x0057
PPP_ADDRESS, PPP_CONTROL = 0xFF, 0x03  # RFC 1662 section 3.1 (all-stations address, UI frame)
CHDLC_ADDRESSES = (0x0F, 0x8F)  # Cisco HDLC unicast and broadcast address bytes
SLIP_HEADER = 16  # libpcap's SLIP pseudo-header: direction, type, 14 bytes of compressed header
SLIP_TYPE_IP = 0x40  # the frame is a plain IP packet (not a Van Jacobson compressed one)
LLC_SNAP = 6  # AA AA 03 + 3-byte OUI, then an Ethertype (RFC 1483 section 4.1)
FR_ADDRESS = 2  # the usual 2-byte Q.922 address
NLPID_IPV4, NLPID_IPV6, NLPID_SNAP = 0xCC, 0x8E, 0x80  # RFC 2427 section 3 / ISO/IEC TR 9577
IPNET_HEADER = 24
IPNET_FAMILY_V4, IPNET_FAMILY_V6 = 2, 26  # Solaris AF_INET, AF_INET6
AF_INET6_VALUES = (10, 24, 28, 30)  # Linux, NetBSD/OpenBSD, FreeBSD, macOS


def _from_ethertype(ethertype: np.ndarray) -> np.ndarray:
    return np.where(ethertype == ETH_IPV4, 4, np.where(ethertype == ETH_IPV6, 6, 0))


def _from_ppp_protocol(buf: np.ndarray, o: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offset after the PPP protocol field at ``o``, IP version or 0).

    With Protocol-Field-Compression (RFC 1661 section 6.5) the field is one byte: PPP protocol
    numbers have an even first byte and an odd last byte, so an odd byte at ``o`` is a whole
    (compressed) protocol number.
    """
    first = buf[o].astype(np.int64)
    compressed = (first & 1) == 1
    proto = np.where(compressed, first, be16(buf, o))
    return o + np.where(compressed, 1, 2), np.where(proto == PPP_IPV4, 4, np.where(proto == PPP_IPV6, 6, 0))


def _ppp(buf: np.ndarray, s: np.ndarray, lt: int) -> tuple[np.ndarray, np.ndarray]:
    """PPP frames of link type 9, 50 or 166: Cisco HDLC when the first byte says so, else PPP.

    The 0xFF 0x03 prefix is optional (RFC 1661 section 6.6, Address-and-Control-Field
    Compression); pppd's link type 166 puts a direction (0 or 1) where the 0xFF address was.
    """
    first, second = buf[s], buf[s + 1]
    address = (first == PPP_ADDRESS) | ((first <= 1) if lt == PPP_PPPD else False)
    o, v = _from_ppp_protocol(buf, np.where(address & (second == PPP_CONTROL), s + 2, s))
    chdlc = (first == CHDLC_ADDRESSES[0]) | (first == CHDLC_ADDRESSES[1])
    return np.where(chdlc, s + 4, o), np.where(chdlc, _from_ethertype(be16(buf, s + 2)), v)


def _frame_relay(buf: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Frame Relay after a 2-byte Q.922 address: RFC 2427 (control 0x03, then an NLPID, or a pad
    byte and a SNAP header) or Cisco's encapsulation (an Ethertype right after the address)."""
    o = s + FR_ADDRESS
    ietf = buf[o] == PPP_CONTROL
    nlpid = buf[o + 1]
    snap = ietf & (nlpid == 0) & (buf[o + 2] == NLPID_SNAP)
    v_ietf = np.where(nlpid == NLPID_IPV4, 4, np.where(nlpid == NLPID_IPV6, 6, 0))
    v_snap = _from_ethertype(be16(buf, o + 6))
    v_cisco = _from_ethertype(be16(buf, o))
    return np.where(snap, o + 8, o + 2), np.where(snap, v_snap, np.where(ietf, v_ietf, v_cisco))


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
        v = _from_ethertype(et)
        pppoe = et == PPPOE_SESSION
        if pppoe.any():
            o_ppp, v_ppp = _from_ppp_protocol(buf, o + PPPOE_HEADER)
            o, v = np.where(pppoe, o_ppp, o), np.where(pppoe, v_ppp, v)
    elif lt in RAW_LINKTYPES or lt in (IPV4_ONLY, IPV6_ONLY):
        o = s
        v = _from_version_nibble(buf, o)
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
    elif lt in PPP_LINKTYPES:
        o, v = _ppp(buf, s, lt)
    elif lt == PPP_ETHER:
        o, v = _from_ppp_protocol(buf, s + PPPOE_HEADER)
    elif lt == C_HDLC:
        o = s + 4
        v = _from_ethertype(be16(buf, s + 2))
    elif lt == SLIP:
        o = s + SLIP_HEADER
        v = np.where(buf[s + 1] == SLIP_TYPE_IP, _from_version_nibble(buf, o), 0)
    elif lt == ATM_RFC1483:
        o = s + LLC_SNAP + 2
        llc = (buf[s] == 0xAA) & (buf[s + 1] == 0xAA) & (buf[s + 2] == 0x03)
        v = np.where(llc, _from_ethertype(be16(buf, s + LLC_SNAP)), 0)
    elif lt == FRELAY:
        o, v = _frame_relay(buf, s)
    elif lt == IPNET:
        o = s + IPNET_HEADER
        fam = buf[s + 1]
        v = np.where(fam == IPNET_FAMILY_V4, 4, np.where(fam == IPNET_FAMILY_V6, 6, 0))
    else:
        return np.zeros(s.shape[0], dtype=np.int64), np.zeros(s.shape[0], dtype=np.int64), tag
    return o, np.where(o >= s + caplen, 0, v).astype(np.int64, copy=False), tag


def _from_version_nibble(buf: np.ndarray, o: np.ndarray) -> np.ndarray:
    """The IP version read from the first header byte, for link types without a protocol field."""
    nib = buf[o] >> 4
    return np.where(nib == 4, 4, np.where(nib == 6, 6, 0))
