//! Link-layer, IP and TCP decoding of one record into the packet columns.
//!
//! Link types (LINKTYPE_* of <https://www.tcpdump.org/linktypes.html>; the header layout of
//! each is in docs/link-types.md):
//!
//! - Ethernet (1) with up to three 802.1Q / 802.1ad / 0x9100 tags and PPPoE sessions (RFC 2516);
//! - raw IP (101, and the DLT_RAW numbers 12 and 14), IPv4 (228), IPv6 (229);
//! - Linux cooked SLL (113) and SLL2 (276), BSD NULL (0) and LOOP (108), Solaris IPNET (226);
//! - PPP (9), PPP in HDLC-like framing (50), pppd's PPP_PPPD (166) and PPPoE without Ethernet
//!   (PPP_ETHER, 51), with or without the 0xFF 0x03 address/control prefix and with 1- or
//!   2-byte protocol fields (RFC 1661 section 6.5-6.6, RFC 1662 section 3.2); Cisco HDLC (104,
//!   and inside 9 and 50 when the first byte is 0x0F or 0x8F);
//! - SLIP (8) with libpcap's 16-byte pseudo-header, ATM with LLC/SNAP (RFC 1483, 100) and Frame
//!   Relay (107: RFC 2427 NLPID and SNAP, and Cisco's Ethertype encapsulation).
//!
//! Lengths come from the IP and TCP headers, never from the captured length: headers-only snap
//! lengths are the normal case (DOMAIN.md section 2). Where the IP length field is zero (TSO/GRO
//! and BIG TCP frames shown to taps, RFC 2675 without a jumbo option) the wire length of the
//! record is used instead. A packet cut inside its IP or TCP header is counted as truncated and
//! not analysed; IP fragments are counted and not analysed. Bytes past the captured length read
//! as zero, and every decision that depends on them is one the captured length already settles.
//!
//! Why not `etherparse`: most of these link types (PPP in its three framings, Cisco HDLC, SLL2,
//! NULL/LOOP, SLIP, ATM LLC/SNAP, Frame Relay, IPNET) are not in it, and what we need from the
//! IP and TCP layers is not a parse that fails on a cut header but a classification of *where*
//! it was cut (truncated, malformed, fragment, non-TCP) with lengths from the headers (TSO
//! length 0, the wire length) and TCP options read up to the capture with a `truncated` flag.
//! One hand decoder over bytes, in safe Rust with bounds-checked reads, keeps those rules in one
//! place.

use std::collections::BTreeMap;

use crate::options::{parse_options, TcpOptions};

pub const ETHERNET: u32 = 1;
pub const NULL: u32 = 0;
pub const LOOP: u32 = 108;
pub const RAW: [u32; 3] = [101, 12, 14];
pub const IPV4_ONLY: u32 = 228;
pub const IPV6_ONLY: u32 = 229;
pub const SLL: u32 = 113;
pub const SLL2: u32 = 276;
pub const PPP: u32 = 9;
pub const PPP_HDLC: u32 = 50;
pub const PPP_PPPD: u32 = 166;
pub const PPP_ETHER: u32 = 51;
pub const C_HDLC: u32 = 104;
pub const SLIP: u32 = 8;
pub const ATM_RFC1483: u32 = 100;
pub const FRELAY: u32 = 107;
pub const IPNET: u32 = 226;
/// Every link type decoded here.
pub const SUPPORTED: [u32; 19] = [
    ETHERNET,
    NULL,
    LOOP,
    RAW[0],
    RAW[1],
    RAW[2],
    IPV4_ONLY,
    IPV6_ONLY,
    SLL,
    SLL2,
    PPP,
    PPP_HDLC,
    PPP_PPPD,
    PPP_ETHER,
    C_HDLC,
    SLIP,
    ATM_RFC1483,
    FRELAY,
    IPNET,
];

const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86DD;
const VLAN_TPIDS: [u16; 3] = [0x8100, 0x88A8, 0x9100];
const PPPOE_SESSION: u16 = 0x8864;
const PPPOE_HEADER: usize = 6; // version/type, code, session id, length (RFC 2516 section 4)
const PPP_IPV4: u16 = 0x0021;
const PPP_IPV6: u16 = 0x0057;
const PPP_ADDRESS: u8 = 0xFF; // RFC 1662 section 3.1 (all-stations address)
const PPP_CONTROL: u8 = 0x03; // UI frame
const CHDLC_ADDRESSES: [u8; 2] = [0x0F, 0x8F]; // Cisco HDLC unicast and broadcast
const SLIP_HEADER: usize = 16; // libpcap's SLIP pseudo-header
const SLIP_TYPE_IP: u8 = 0x40; // a plain IP packet (not Van Jacobson compressed)
const LLC_SNAP: usize = 6; // AA AA 03 + 3-byte OUI, then an Ethertype (RFC 1483 section 4.1)
const FR_ADDRESS: usize = 2; // the usual 2-byte Q.922 address
const NLPID_IPV4: u8 = 0xCC;
const NLPID_IPV6: u8 = 0x8E;
const NLPID_SNAP: u8 = 0x80; // RFC 2427 section 3 / ISO/IEC TR 9577
const IPNET_HEADER: usize = 24;
const IPNET_FAMILY_V4: u8 = 2;
const IPNET_FAMILY_V6: u8 = 26; // Solaris AF_INET, AF_INET6
const AF_INET6_VALUES: [u32; 4] = [10, 24, 28, 30]; // Linux, NetBSD/OpenBSD, FreeBSD, macOS

const IPPROTO_TCP: u8 = 6;
const IPV6_FRAGMENT: u8 = 44;
const IPV6_AH: u8 = 51;
const IPV6_EXTENSIONS: [u8; 5] = [0, 43, 60, 51, 44]; // hop-by-hop, routing, destination, AH, fragment
const V4_MAPPED: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF];

pub fn is_supported(linktype: u32) -> bool {
    SUPPORTED.contains(&linktype)
}

/// The captured bytes of one record, read with zeros past their end.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&self, i: usize) -> u8 {
        self.0.get(i).copied().unwrap_or(0)
    }
    fn be16(&self, i: usize) -> u16 {
        u16::from_be_bytes([self.u8(i), self.u8(i + 1)])
    }
    fn be32(&self, i: usize) -> u32 {
        u32::from_be_bytes([self.u8(i), self.u8(i + 1), self.u8(i + 2), self.u8(i + 3)])
    }
    fn le32(&self, i: usize) -> u32 {
        u32::from_le_bytes([self.u8(i), self.u8(i + 1), self.u8(i + 2), self.u8(i + 3)])
    }
}

fn from_ethertype(et: u16) -> u8 {
    match et {
        ETH_IPV4 => 4,
        ETH_IPV6 => 6,
        _ => 0,
    }
}

fn from_version_nibble(b: &Bytes, o: usize) -> u8 {
    match b.u8(o) >> 4 {
        4 => 4,
        6 => 6,
        _ => 0,
    }
}

/// (offset after the PPP protocol field at `o`, IP version or 0). With Protocol-Field-Compression
/// (RFC 1661 section 6.5) the field is one byte: protocol numbers have an even first byte and an
/// odd last byte, so an odd byte at `o` is a whole (compressed) protocol number.
fn from_ppp_protocol(b: &Bytes, o: usize) -> (usize, u8) {
    let first = b.u8(o);
    let (o, proto) = if first & 1 == 1 { (o + 1, first as u16) } else { (o + 2, b.be16(o)) };
    (
        o,
        if proto == PPP_IPV4 {
            4
        } else if proto == PPP_IPV6 {
            6
        } else {
            0
        },
    )
}

/// PPP frames of link type 9, 50 or 166: Cisco HDLC when the first byte says so, else PPP. The
/// 0xFF 0x03 prefix is optional (RFC 1661 section 6.6); pppd's link type 166 puts a direction
/// (0 or 1) where the 0xFF address was.
fn ppp(b: &Bytes, lt: u32) -> (usize, u8) {
    let first = b.u8(0);
    if CHDLC_ADDRESSES.contains(&first) {
        return (4, from_ethertype(b.be16(2)));
    }
    let address = first == PPP_ADDRESS || (lt == PPP_PPPD && first <= 1);
    from_ppp_protocol(b, if address && b.u8(1) == PPP_CONTROL { 2 } else { 0 })
}

/// Frame Relay after a 2-byte Q.922 address: RFC 2427 (control 0x03, then an NLPID, or a pad
/// byte and a SNAP header) or Cisco's encapsulation (an Ethertype right after the address).
fn frame_relay(b: &Bytes) -> (usize, u8) {
    let o = FR_ADDRESS;
    let ietf = b.u8(o) == PPP_CONTROL;
    let nlpid = b.u8(o + 1);
    if ietf && nlpid == 0 && b.u8(o + 2) == NLPID_SNAP {
        return (o + 8, from_ethertype(b.be16(o + 6)));
    }
    let v = if !ietf {
        from_ethertype(b.be16(o))
    } else if nlpid == NLPID_IPV4 {
        4
    } else if nlpid == NLPID_IPV6 {
        6
    } else {
        0
    };
    (o + 2, v)
}

/// (offset of the IP header, IP version or 0, 802.1Q/802.1ad tagged) of a frame of link type
/// `lt`. The version is 0 for non-IP frames, frames too short for their link header and
/// unsupported link types.
pub fn locate_ip(p: &[u8], lt: u32) -> (usize, u8, bool) {
    let b = Bytes(p);
    let mut tagged = false;
    let (o, v) = match lt {
        ETHERNET => {
            let mut o = 14;
            let mut et = b.be16(12);
            for _ in 0..3 {
                // up to three stacked tags (QinQ and more)
                if !VLAN_TPIDS.contains(&et) {
                    break;
                }
                tagged = true;
                et = b.be16(o + 2);
                o += 4;
            }
            if et == PPPOE_SESSION {
                from_ppp_protocol(&b, o + PPPOE_HEADER)
            } else {
                (o, from_ethertype(et))
            }
        }
        101 | 12 | 14 | IPV4_ONLY | IPV6_ONLY => (0, from_version_nibble(&b, 0)),
        SLL => (16, from_ethertype(b.be16(14))),
        SLL2 => (20, from_ethertype(b.be16(0))),
        NULL | LOOP => {
            let le = b.le32(0);
            let fam = if lt == LOOP || le >= 256 { b.be32(0) } else { le };
            (
                4,
                if fam == 2 {
                    4
                } else if AF_INET6_VALUES.contains(&fam) {
                    6
                } else {
                    0
                },
            )
        }
        PPP | PPP_HDLC | PPP_PPPD => ppp(&b, lt),
        PPP_ETHER => from_ppp_protocol(&b, PPPOE_HEADER),
        C_HDLC => (4, from_ethertype(b.be16(2))),
        SLIP => (SLIP_HEADER, if b.u8(1) == SLIP_TYPE_IP { from_version_nibble(&b, SLIP_HEADER) } else { 0 }),
        ATM_RFC1483 => {
            let llc = b.u8(0) == 0xAA && b.u8(1) == 0xAA && b.u8(2) == 0x03;
            (LLC_SNAP + 2, if llc { from_ethertype(b.be16(LLC_SNAP)) } else { 0 })
        }
        FRELAY => frame_relay(&b),
        IPNET => {
            let fam = b.u8(1);
            (
                IPNET_HEADER,
                if fam == IPNET_FAMILY_V4 {
                    4
                } else if fam == IPNET_FAMILY_V6 {
                    6
                } else {
                    0
                },
            )
        }
        _ => return (0, 0, false),
    };
    (o, if o >= p.len() { 0 } else { v }, tagged)
}

/// What a chunk held besides analysable TCP packets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecodeCounts {
    pub records: u64,
    pub unsupported_linktype: BTreeMap<u32, u64>,
    pub non_ip: u64,
    pub non_tcp: u64,
    pub ip_fragments: u64,
    /// Cut inside the IP or TCP header.
    pub truncated_tcp: u64,
    /// Impossible header lengths.
    pub malformed: u64,
    pub filtered_out: u64,
}

/// The decoded TCP packets of a chunk, column by column (the Python `PacketBatch`).
#[derive(Clone, Debug, Default)]
pub struct Packets {
    /// Position of the packet's record in the chunk.
    pub row: Vec<i64>,
    pub ipver: Vec<i64>,
    /// 16 bytes per packet, IPv4 as v4-mapped IPv6.
    pub src: Vec<u8>,
    pub dst: Vec<u8>,
    pub sport: Vec<i64>,
    pub dport: Vec<i64>,
    pub seq: Vec<i64>,
    pub ack: Vec<i64>,
    pub flags: Vec<i64>,
    pub win: Vec<i64>,
    /// TCP header length (data offset * 4).
    pub hdrlen: Vec<i64>,
    /// TCP payload length from the IP lengths.
    pub paylen: Vec<i64>,
    pub vlan: Vec<bool>,
    pub opts: TcpOptions,
}

impl Packets {
    /// Empty columns with room for `n` packets (one chunk's records: no reallocation while decoding).
    pub fn with_capacity(n: usize) -> Packets {
        let v = || Vec::with_capacity(n);
        let b = || Vec::with_capacity(n);
        Packets {
            row: v(),
            ipver: v(),
            src: Vec::with_capacity(16 * n),
            dst: Vec::with_capacity(16 * n),
            sport: v(),
            dport: v(),
            seq: v(),
            ack: v(),
            flags: v(),
            win: v(),
            hdrlen: v(),
            paylen: v(),
            vlan: b(),
            opts: TcpOptions::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.row.len()
    }

    pub fn is_empty(&self) -> bool {
        self.row.is_empty()
    }
}

/// The IP layer of a packet as far as TCP decoding needs it.
struct Ip {
    frag: bool,
    /// Cut inside the IP header or the IPv6 extension-header chain.
    bad: bool,
    proto: u8,
    l4: usize,
    /// Bytes after the IP header (and extension headers), from the length fields.
    paytot: i64,
}

fn ipv4(b: &Bytes, o: usize, end: usize, wirelen: i64) -> Ip {
    let ihl = (b.u8(o) & 0x0F) as usize * 4;
    let tot = b.be16(o + 2) as i64;
    let iplen = if tot == 0 { wirelen - o as i64 } else { tot }; // TSO / BIG TCP: length field 0
    Ip { frag: b.be16(o + 6) & 0x3FFF != 0, bad: ihl < 20 || o + 20 > end, proto: b.u8(o + 9), l4: o + ihl, paytot: iplen - ihl as i64 }
}

fn ipv6(b: &Bytes, o: usize, end: usize, wirelen: i64) -> Ip {
    let mut plen = b.be16(o + 4) as i64;
    if plen == 0 {
        plen = wirelen - o as i64 - 40;
    }
    let mut nh = b.u8(o + 6);
    let mut p = o + 40;
    let mut frag = false;
    for _ in 0..8 {
        if !(IPV6_EXTENSIONS.contains(&nh) && p + 8 <= end) {
            break;
        }
        if nh == IPV6_FRAGMENT && b.be16(p + 2) & 0xFFF9 != 0 {
            frag = true; // a fragment offset or the more-fragments flag
        }
        let hlen = match nh {
            IPV6_FRAGMENT => 8,
            IPV6_AH => (b.u8(p + 1) as usize + 2) * 4,
            _ => (b.u8(p + 1) as usize + 1) * 8,
        };
        nh = b.u8(p);
        p += hlen;
    }
    Ip { frag, bad: o + 40 > end || (IPV6_EXTENSIONS.contains(&nh) && p + 8 > end), proto: nh, l4: p, paytot: plen - (p - o - 40) as i64 }
}

/// Decode one record (captured bytes `p`) and append it to `out` when it is an analysable TCP
/// packet; otherwise count why not.
pub fn decode_record(p: &[u8], wirelen: u32, linktype: u32, row: i64, out: &mut Packets, counts: &mut DecodeCounts) {
    if !is_supported(linktype) {
        *counts.unsupported_linktype.entry(linktype).or_insert(0) += 1;
        return;
    }
    let (o, ver, tagged) = locate_ip(p, linktype);
    if ver == 0 {
        counts.non_ip += 1;
        return;
    }
    let b = Bytes(p);
    let end = p.len();
    let ip = if ver == 4 { ipv4(&b, o, end, wirelen as i64) } else { ipv6(&b, o, end, wirelen as i64) };
    if ip.frag {
        counts.ip_fragments += 1;
    }
    if ip.bad {
        counts.truncated_tcp += 1;
        return;
    }
    if ip.frag {
        return;
    }
    if ip.proto != IPPROTO_TCP {
        counts.non_tcp += 1;
        return;
    }
    let t = ip.l4;
    if t + 20 > end {
        counts.truncated_tcp += 1;
        return;
    }
    let off_flags = b.be16(t + 12) as i64;
    let doff = (off_flags >> 12) * 4;
    let paylen = ip.paytot - doff;
    if doff < 20 || paylen < 0 {
        counts.malformed += 1;
        return;
    }
    out.row.push(row);
    out.ipver.push(ver as i64);
    if ver == 4 {
        for (col, a) in [(&mut out.src, o + 12), (&mut out.dst, o + 16)] {
            col.extend_from_slice(&V4_MAPPED);
            col.extend_from_slice(&p[a..a + 4]);
        }
    } else {
        out.src.extend_from_slice(&p[o + 8..o + 24]);
        out.dst.extend_from_slice(&p[o + 24..o + 40]);
    }
    out.sport.push(b.be16(t) as i64);
    out.dport.push(b.be16(t + 2) as i64);
    out.seq.push(b.be32(t + 4) as i64);
    out.ack.push(b.be32(t + 8) as i64);
    out.flags.push(off_flags & 0x1FF);
    out.win.push(b.be16(t + 14) as i64);
    out.hdrlen.push(doff);
    out.paylen.push(paylen);
    out.vlan.push(tagged);
    parse_options(p, t + 20, t + doff as usize, end, &mut out.opts);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 TCP packet with `opts` (padded to 4 bytes) and `payload` bytes of payload.
    pub fn ipv4_tcp(opts: &[u8], payload: usize, frag: u16) -> Vec<u8> {
        let olen = opts.len().div_ceil(4) * 4;
        let tot = 20 + 20 + olen + payload;
        let mut p = vec![0x45, 0, (tot >> 8) as u8, tot as u8, 0, 1, (frag >> 8) as u8, frag as u8, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        p.extend([0x30, 0x39, 0, 80, 0, 0, 0, 100, 0, 0, 0, 200, ((5 + olen / 4) << 4) as u8, 0x18, 0xFF, 0xFF, 0, 0, 0, 0]);
        p.extend(opts);
        p.resize(20 + 20 + olen, 0);
        p.resize(tot, 0xAB);
        p
    }

    fn ether(ip: &[u8], ethertype: u16, tags: usize) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        for _ in 0..tags {
            f.extend([0x81, 0x00, 0x00, 0x05]);
        }
        f.extend(ethertype.to_be_bytes());
        f.extend(ip);
        f
    }

    fn decode(p: &[u8], lt: u32) -> (Packets, DecodeCounts) {
        let mut out = Packets::default();
        let mut c = DecodeCounts::default();
        decode_record(p, p.len() as u32, lt, 0, &mut out, &mut c);
        (out, c)
    }

    #[test]
    fn ethernet_ipv4_tcp_with_options() {
        let opts = [2, 4, 5, 0xB4, 1, 3, 3, 7, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2];
        let (pk, c) = decode(&ether(&ipv4_tcp(&opts, 100, 0), ETH_IPV4, 0), ETHERNET);
        assert_eq!(c, DecodeCounts::default());
        assert_eq!((pk.sport[0], pk.dport[0], pk.seq[0], pk.ack[0], pk.flags[0], pk.win[0]), (12345, 80, 100, 200, 0x18, 65535));
        assert_eq!((pk.hdrlen[0], pk.paylen[0], pk.ipver[0], pk.vlan[0]), (40, 100, 4, false));
        assert_eq!(&pk.src[10..16], &[0xFF, 0xFF, 10, 0, 0, 1]);
        let o = &pk.opts;
        assert_eq!((o.mss[0], o.wscale[0], o.sack_permitted[0], o.tsval[0], o.tsecr[0]), (1460, 7, true, 1, 2));
    }

    #[test]
    fn vlan_tags_and_pppoe() {
        let (pk, _) = decode(&ether(&ipv4_tcp(&[], 0, 0), ETH_IPV4, 2), ETHERNET);
        assert!(pk.vlan[0]);
        let mut pppoe = vec![0x11, 0, 0, 1, 0, 0, 0, 0x21];
        pppoe.extend(ipv4_tcp(&[], 5, 0));
        let (pk, _) = decode(&ether(&pppoe, PPPOE_SESSION, 0), ETHERNET);
        assert_eq!(pk.paylen, vec![5]);
        // three tags are followed, a fourth is not
        let (_, c) = decode(&ether(&ipv4_tcp(&[], 0, 0), ETH_IPV4, 4), ETHERNET);
        assert_eq!(c.non_ip, 1);
    }

    #[test]
    fn link_types_find_the_ip_header() {
        let ip = ipv4_tcp(&[], 3, 0);
        let with = |head: &[u8]| [head, &ip[..]].concat();
        let cases: Vec<(u32, Vec<u8>)> = vec![
            (101, ip.clone()),
            (NULL, with(&[2, 0, 0, 0])),
            (LOOP, with(&[0, 0, 0, 2])),
            (SLL, with(&[0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00])),
            (SLL2, with(&[0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0])),
            (PPP, with(&[0xFF, 0x03, 0x00, 0x21])),
            (PPP, with(&[0x21])),
            (PPP_PPPD, with(&[0x01, 0x03, 0x00, 0x21])),
            (PPP_HDLC, with(&[0x0F, 0x00, 0x08, 0x00])),
            (C_HDLC, with(&[0x8F, 0x00, 0x08, 0x00])),
            (PPP_ETHER, with(&[0x11, 0, 0, 1, 0, 0, 0x00, 0x21])),
            (SLIP, with(&[0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
            (ATM_RFC1483, with(&[0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00])),
            (FRELAY, with(&[0x18, 0x41, 0x03, 0xCC])),
            (FRELAY, with(&[0x18, 0x41, 0x03, 0x00, 0x80, 0, 0, 0, 0x08, 0x00])),
            (FRELAY, with(&[0x18, 0x41, 0x08, 0x00])),
            (IPNET, with(&[1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
        ];
        for (lt, frame) in cases {
            let (pk, c) = decode(&frame, lt);
            assert_eq!((pk.len(), c.non_ip), (1, 0), "link type {lt}");
            assert_eq!(pk.paylen[0], 3, "link type {lt}");
        }
        let (_, c) = decode(&ip, 147);
        assert_eq!(c.unsupported_linktype.get(&147), Some(&1));
    }

    #[test]
    fn ipv6_extension_headers_and_fragments() {
        let tcp = &ipv4_tcp(&[], 4, 0)[20..];
        let mut p = vec![0x60, 0, 0, 0, 0, (8 + tcp.len()) as u8, 0, 64];
        p.extend([0x20, 0x01, 0x0d, 0xb8].iter().chain([0u8; 11].iter()).chain([1u8].iter()));
        p.extend([0x20, 0x01, 0x0d, 0xb8].iter().chain([0u8; 11].iter()).chain([2u8].iter()));
        p.extend([6, 0, 0, 0, 0, 0, 0, 0]); // hop-by-hop options, next header TCP
        p.extend(tcp);
        let (pk, c) = decode(&p, 101);
        assert_eq!((pk.len(), pk.ipver[0], pk.paylen[0], c.truncated_tcp), (1, 6, 4, 0));
        assert_eq!(pk.dst[15], 2);
        // a fragment header with an offset: counted, not analysed
        p[6] = 44;
        p[40..48].copy_from_slice(&[6, 0, 0, 8, 0, 0, 0, 1]);
        let (pk, c) = decode(&p, 101);
        assert_eq!((pk.len(), c.ip_fragments), (0, 1));
        // the chain cut by the capture: truncated, not non-TCP
        let (_, c) = decode(&p[..44], 101);
        assert_eq!((c.truncated_tcp, c.non_tcp), (1, 0));
    }

    #[test]
    fn truncation_and_malformed_headers() {
        let p = ipv4_tcp(&[2, 4, 5, 0xB4], 0, 0);
        let (_, c) = decode(&p[..30], 101); // cut inside the TCP header
        assert_eq!(c.truncated_tcp, 1);
        let (_, c) = decode(&p[..12], 101); // cut inside the IP header
        assert_eq!(c.truncated_tcp, 1);
        let (pk, c) = decode(&p[..40], 101); // cut inside the options
        assert_eq!((pk.len(), c.truncated_tcp, pk.opts.truncated[0]), (1, 0, true));
        let mut m = p.clone();
        m[32] = 0x40; // data offset 16 bytes
        let (pk, c) = decode(&m, 101);
        assert_eq!((pk.len(), c.malformed), (0, 1));
        let (_, c) = decode(&ipv4_tcp(&[], 10, 0x2000), 101); // more fragments
        assert_eq!(c.ip_fragments, 1);
        // an IPv4 header cut before its fragment field: bytes past the capture read as zero
        let (_, c) = decode(&p[..5], 101);
        assert_eq!((c.ip_fragments, c.truncated_tcp), (0, 1));
    }

    #[test]
    fn tso_length_zero_uses_the_wire_length() {
        let mut p = ipv4_tcp(&[], 0, 0);
        p[2] = 0;
        p[3] = 0;
        let mut out = Packets::default();
        let mut c = DecodeCounts::default();
        decode_record(&p, 40 + 64000, 101, 0, &mut out, &mut c);
        assert_eq!(out.paylen, vec![64000]);
    }
}
