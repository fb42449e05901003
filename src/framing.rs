//! Record framing of the two capture formats: cutting a chunk of the stream into records.
//!
//! - classic libpcap files (draft-ietf-opsawg-pcap): both byte orders, microsecond and
//!   nanosecond timestamps;
//! - pcapng (draft-ietf-opsawg-pcapng): sections of either byte order, several interfaces with
//!   their own link types and timestamp resolutions (`if_tsresol`, `if_tsoffset`), Enhanced,
//!   Simple and obsolete Packet Blocks; other blocks are skipped.
//!
//! A walker takes the bytes of a chunk and returns the records wholly inside it, the offset where
//! it stopped (the rest is carried into the next chunk) and the error that stopped it, if any.
//! Records are handed out before the error, so a caller can report the readable prefix.
//!
//! Why not `pcap-parser` (rusticata): its block parsers would do the byte-level cutting, but every
//! check that makes our errors exact (libpcap's maximum record length, the smallest length of each
//! block type, the 64 MB block bound, the trailing length, an interface named before it was
//! described, the offset of each) would still be ours, as would the interface state
//! (`if_tsresol` of any base, `if_tsoffset`, the snap length that bounds Simple Packet Blocks).
//! The framing itself is ~200 lines; the parsers' own error kinds would have to be mapped back to
//! offsets, and a second notion of "incomplete" kept in step with our chunking.

use crate::error::CaptureError;

pub const PCAP_MAGIC_USEC: u32 = 0xA1B2_C3D4;
pub const PCAP_MAGIC_NSEC: u32 = 0xA1B2_3C4D;
pub const PCAP_HEADER: usize = 24;
pub const PCAP_RECORD_HEADER: usize = 16;
/// libpcap's MAXIMUM_SNAPLEN: larger records are corrupt, as libpcap says.
pub const MAX_SNAPLEN: u64 = 262_144;

pub const SHB: u32 = 0x0A0D_0D0A;
pub const IDB: u32 = 0x0000_0001;
pub const OPB: u32 = 0x0000_0002;
pub const SPB: u32 = 0x0000_0003;
pub const EPB: u32 = 0x0000_0006;
pub const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
/// No sane block is larger; beyond this the length field is corrupt.
pub const MAX_BLOCK: u32 = 64 * 1024 * 1024;

/// One capture record: where its captured bytes lie in the chunk, and its header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub start: usize,
    pub caplen: usize,
    pub wirelen: u32,
    pub ts_ns: i64,
    pub linktype: u32,
    /// Offset of the record (or block) header in the capture stream.
    pub file_offset: u64,
}

/// What a walk over one chunk found.
pub struct Walk {
    /// Offset in the chunk where the walk stopped: the bytes from here on are carried over.
    pub pos: usize,
    /// The error that stopped the walk (after the records before it).
    pub error: Option<CaptureError>,
}

pub fn u32_at(d: &[u8], i: usize, big: bool) -> u32 {
    let b = [d[i], d[i + 1], d[i + 2], d[i + 3]];
    if big {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    }
}

fn u16_at(d: &[u8], i: usize, big: bool) -> u16 {
    let b = [d[i], d[i + 1]];
    if big {
        u16::from_be_bytes(b)
    } else {
        u16::from_le_bytes(b)
    }
}

pub fn is_pcap_magic(head: &[u8]) -> bool {
    head.len() >= 4 && [u32_at(head, 0, false), u32_at(head, 0, true)].iter().any(|m| *m == PCAP_MAGIC_USEC || *m == PCAP_MAGIC_NSEC)
}

pub fn is_pcapng_magic(head: &[u8]) -> bool {
    head.len() >= 4 && u32_at(head, 0, false) == SHB
}

/// The state of a classic pcap file, from its 24-byte file header.
#[derive(Clone, Debug)]
pub struct Pcap {
    pub big: bool,
    pub nsec: bool,
    pub linktype: u32,
    pub limit: u64,
}

impl Pcap {
    /// Parse the file header (`hdr` holds its 24 bytes).
    pub fn from_header(hdr: &[u8]) -> Pcap {
        let le = u32_at(hdr, 0, false);
        let big = !(le == PCAP_MAGIC_USEC || le == PCAP_MAGIC_NSEC);
        let magic = u32_at(hdr, 0, big);
        let snaplen = u32_at(hdr, 16, big) as u64;
        let network = u32_at(hdr, 20, big);
        Pcap { big, nsec: magic == PCAP_MAGIC_NSEC, linktype: network & 0xFFFF, limit: snaplen.max(MAX_SNAPLEN) }
    }

    /// Walk the record headers of `d` (stream offset `base`), appending whole records to `out`.
    pub fn walk(&self, d: &[u8], base: u64, out: &mut Vec<Record>) -> Walk {
        let mut pos = 0;
        while pos + PCAP_RECORD_HEADER <= d.len() {
            let cl = u32_at(d, pos + 8, self.big) as u64;
            if cl > self.limit {
                let msg = format!("record length {cl} exceeds the maximum of {} bytes: corrupt record header", self.limit);
                return Walk { pos, error: Some(CaptureError::at(base + pos as u64, msg)) };
            }
            let next = pos + PCAP_RECORD_HEADER + cl as usize;
            if next > d.len() {
                break;
            }
            let sec = u32_at(d, pos, self.big) as i64;
            let frac = u32_at(d, pos + 4, self.big) as i64;
            out.push(Record {
                start: pos + PCAP_RECORD_HEADER,
                caplen: cl as usize,
                wirelen: u32_at(d, pos + 12, self.big),
                ts_ns: sec * 1_000_000_000 + if self.nsec { frac } else { frac * 1000 },
                linktype: self.linktype,
                file_offset: base + pos as u64,
            });
            pos = next;
        }
        Walk { pos, error: None }
    }

    /// What a stream that ends with `leftover` unread bytes was cut in.
    pub fn unit(leftover: usize) -> &'static str {
        if leftover < PCAP_RECORD_HEADER {
            "record header"
        } else {
            "record data"
        }
    }
}

/// An interface of a pcapng section (Interface Description Block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    pub linktype: u32,
    pub snaplen: u32,
    /// Timestamp units per second (`if_tsresol`); None when it does not fit in 128 bits (then
    /// every timestamp is below a nanosecond from the epoch).
    pub units_per_sec: Option<u128>,
    /// `if_tsoffset`, seconds.
    pub offset_s: i64,
}

impl Interface {
    /// Parse the body of an Interface Description Block (between the block length fields).
    ///
    /// Options stop at `opt_endofopt` or at the first option whose value is not wholly inside
    /// the body (a cut option is not guessed at).
    pub fn parse(body: &[u8], big: bool) -> Interface {
        let mut iface = Interface { linktype: u16_at(body, 0, big) as u32, snaplen: u32_at(body, 4, big), units_per_sec: Some(1_000_000), offset_s: 0 };
        let mut pos = 8;
        while pos + 4 <= body.len() {
            let code = u16_at(body, pos, big);
            let length = u16_at(body, pos + 2, big) as usize;
            if code == 0 || pos + 4 + length > body.len() {
                break;
            }
            let value = &body[pos + 4..pos + 4 + length];
            if code == 9 && length >= 1 {
                // if_tsresol: a power of ten, or of two when the top bit is set
                let v = value[0];
                iface.units_per_sec = if v & 0x80 != 0 { 1u128.checked_shl((v & 0x7F) as u32) } else { 10u128.checked_pow(v as u32) };
            } else if code == 14 && length >= 8 {
                let b: [u8; 8] = value[..8].try_into().expect("8 bytes");
                iface.offset_s = if big { i64::from_be_bytes(b) } else { i64::from_le_bytes(b) };
            }
            pos += 4 + ((length + 3) & !3);
        }
        iface
    }

    /// Nanoseconds since the epoch of a timestamp of `units`; nonsense values (some files hold
    /// values near 2**64 units) are clamped to the range of i64.
    pub fn to_ns(&self, units: u64) -> i64 {
        let ns: i128 = match self.units_per_sec {
            Some(0) | None => 0,
            Some(per) => ((units as u128 * 1_000_000_000) / per) as i128, // < 2**94: no overflow
        };
        let ns = ns + self.offset_s as i128 * 1_000_000_000;
        ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }
}

/// The state of a pcapng walk: byte order and interfaces of the current section.
#[derive(Clone, Debug, Default)]
pub struct Pcapng {
    pub big: bool,
    pub ifaces: Vec<Interface>,
    pub seen_shb: bool,
}

fn min_block(btype: u32) -> u32 {
    match btype {
        SHB => 28,
        IDB => 20,
        EPB | OPB => 32,
        SPB => 16,
        _ => 12,
    }
}

impl Pcapng {
    /// Walk the blocks of `d` (stream offset `base`), appending the packets to `out`; stop at the
    /// first block not wholly inside `d` or at the first corrupt one (with its error).
    pub fn walk(&mut self, d: &[u8], base: u64, out: &mut Vec<Record>) -> Walk {
        let mut pos = 0;
        while pos + 12 <= d.len() {
            match self.block(d, pos, base, out) {
                Ok(Some(next)) => pos = next,
                Ok(None) => break,
                Err(error) => return Walk { pos, error: Some(error) },
            }
        }
        Walk { pos, error: None }
    }

    /// Handle the block at `pos`: the offset of the next block, None when it is not wholly in `d`.
    fn block(&mut self, d: &[u8], pos: usize, base: u64, out: &mut Vec<Record>) -> Result<Option<usize>, CaptureError> {
        let at = base + pos as u64;
        let mut big = self.big;
        let btype = u32_at(d, pos, big);
        let new_section = btype == SHB || !self.seen_shb;
        if new_section {
            if btype != SHB && u32_at(d, pos, false) != SHB {
                return Err(CaptureError::at(at, "pcapng file does not start with a Section Header Block"));
            }
            big = if u32_at(d, pos + 8, false) == BYTE_ORDER_MAGIC {
                false
            } else if u32_at(d, pos + 8, true) == BYTE_ORDER_MAGIC {
                true
            } else {
                return Err(CaptureError::at(at + 8, "bad byte-order magic in pcapng Section Header Block"));
            };
        }
        let blen = u32_at(d, pos + 4, big);
        if blen < min_block(btype) || !blen.is_multiple_of(4) || blen > MAX_BLOCK {
            return Err(CaptureError::at(at, format!("corrupt pcapng block (type 0x{btype:08x}, length {blen})")));
        }
        let blen = blen as usize;
        if pos + blen > d.len() {
            return Ok(None);
        }
        if u32_at(d, pos + blen - 4, big) as usize != blen {
            return Err(CaptureError::at(at, format!("corrupt pcapng block (type 0x{btype:08x}): trailing length does not match")));
        }
        if new_section {
            // interface ids are per section
            *self = Pcapng { big, ifaces: Vec::new(), seen_shb: true };
        }
        match btype {
            IDB => self.ifaces.push(Interface::parse(&d[pos + 8..pos + blen - 4], big)),
            EPB | OPB => {
                let if_id = if btype == EPB { u32_at(d, pos + 8, big) as usize } else { u16_at(d, pos + 8, big) as usize };
                let cl = u32_at(d, pos + 20, big) as usize;
                if if_id >= self.ifaces.len() {
                    return Err(CaptureError::at(at, format!("packet block names interface {if_id}, which was never described")));
                }
                if 32 + cl > blen {
                    return Err(CaptureError::at(at, format!("packet block captured length {cl} overruns its block")));
                }
                let iface = &self.ifaces[if_id];
                let units = ((u32_at(d, pos + 12, big) as u64) << 32) | u32_at(d, pos + 16, big) as u64;
                out.push(Record {
                    start: pos + 28,
                    caplen: cl,
                    wirelen: u32_at(d, pos + 24, big),
                    ts_ns: iface.to_ns(units),
                    linktype: iface.linktype,
                    file_offset: at,
                });
            }
            SPB => {
                let Some(iface) = self.ifaces.first() else {
                    return Err(CaptureError::at(at, "simple packet block before any interface description"));
                };
                // the wire length, then the packet; the captured length is implied (and no timestamp)
                let wl = u32_at(d, pos + 8, big);
                let cl = (wl as usize).min(blen - 16);
                let cl = if iface.snaplen != 0 { cl.min(iface.snaplen as usize) } else { cl };
                out.push(Record { start: pos + 12, caplen: cl, wirelen: wl, ts_ns: 0, linktype: iface.linktype, file_offset: at });
            }
            _ => {} // SHB (handled above) and blocks we do not need
        }
        Ok(Some(pos + blen))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcap_header(big: bool, nsec: bool, snaplen: u32, linktype: u32) -> Vec<u8> {
        let magic = if nsec { PCAP_MAGIC_NSEC } else { PCAP_MAGIC_USEC };
        let mut h = Vec::new();
        for (v, w) in [(magic, 4), (2, 2), (4, 2), (0, 4), (0, 4), (snaplen, 4), (linktype, 4)] {
            if w == 4 {
                h.extend(if big { v.to_be_bytes() } else { v.to_le_bytes() });
            } else {
                h.extend(if big { (v as u16).to_be_bytes() } else { (v as u16).to_le_bytes() });
            }
        }
        h
    }

    fn pcap_record(big: bool, sec: u32, frac: u32, data: &[u8], wirelen: u32) -> Vec<u8> {
        let mut r = Vec::new();
        for v in [sec, frac, data.len() as u32, wirelen] {
            r.extend(if big { v.to_be_bytes() } else { v.to_le_bytes() });
        }
        r.extend(data);
        r
    }

    #[test]
    fn pcap_both_byte_orders_and_resolutions() {
        for big in [false, true] {
            for nsec in [false, true] {
                let hdr = pcap_header(big, nsec, 65535, 1);
                let p = Pcap::from_header(&hdr);
                assert_eq!((p.big, p.nsec, p.linktype, p.limit), (big, nsec, 1, MAX_SNAPLEN));
                let mut d = pcap_record(big, 10, 7, b"abc", 60);
                d.extend(pcap_record(big, 11, 0, b"", 0));
                let mut out = Vec::new();
                let w = p.walk(&d, 24, &mut out);
                assert_eq!((w.pos, w.error), (d.len(), None));
                assert_eq!(out.len(), 2);
                assert_eq!(out[0].ts_ns, 10_000_000_000 + if nsec { 7 } else { 7000 });
                assert_eq!((out[0].start, out[0].caplen, out[0].wirelen, out[0].file_offset), (16, 3, 60, 24));
                assert_eq!(out[1].file_offset, 24 + 19);
            }
        }
    }

    #[test]
    fn pcap_linktype_fcs_bits_ignored() {
        let p = Pcap::from_header(&pcap_header(false, false, 65535, 0x1000_0001));
        assert_eq!(p.linktype, 1);
    }

    #[test]
    fn pcap_incomplete_record_is_carried_and_absurd_length_stops() {
        let p = Pcap::from_header(&pcap_header(false, false, 65535, 1));
        let d = pcap_record(false, 1, 0, &[0; 40], 40);
        let mut out = Vec::new();
        let w = p.walk(&d[..30], 24, &mut out);
        assert_eq!((w.pos, out.len()), (0, 0));
        let mut bad = d.clone();
        bad[8..12].copy_from_slice(&(1u32 << 31).to_le_bytes());
        let mut d2 = d.clone();
        d2.extend(bad);
        let w = p.walk(&d2, 24, &mut out);
        assert_eq!(out.len(), 1);
        let e = w.error.unwrap();
        assert_eq!(e.offset, Some(24 + 56));
        assert!(e.message.contains("2147483648"));
    }

    fn block(big: bool, btype: u32, body: &[u8]) -> Vec<u8> {
        let blen = (12 + body.len()).div_ceil(4) * 4;
        let w = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut b = Vec::new();
        b.extend(w(btype));
        b.extend(w(blen as u32));
        b.extend(body);
        b.resize(blen - 4, 0);
        b.extend(w(blen as u32));
        b
    }

    fn shb(big: bool) -> Vec<u8> {
        let mut body = if big { BYTE_ORDER_MAGIC.to_be_bytes() } else { BYTE_ORDER_MAGIC.to_le_bytes() }.to_vec();
        body.extend([0, 1, 0, 0]);
        body.extend([0xFF; 8]);
        let mut b = block(big, SHB, &body);
        if big {
            // the section header of a big-endian section is big-endian, type included
            b[..4].copy_from_slice(&SHB.to_be_bytes());
        }
        b
    }

    fn idb(big: bool, linktype: u16, snaplen: u32, opts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let h = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut body = Vec::new();
        body.extend(h(linktype));
        body.extend([0, 0]);
        body.extend(if big { snaplen.to_be_bytes() } else { snaplen.to_le_bytes() });
        for (code, v) in opts {
            body.extend(h(*code));
            body.extend(h(v.len() as u16));
            body.extend(v);
            body.resize(body.len().div_ceil(4) * 4, 0);
        }
        block(big, IDB, &body)
    }

    fn epb(big: bool, if_id: u32, units: u64, data: &[u8]) -> Vec<u8> {
        let w = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut body = Vec::new();
        for v in [if_id, (units >> 32) as u32, units as u32, data.len() as u32, data.len() as u32 + 4] {
            body.extend(w(v));
        }
        body.extend(data);
        block(big, EPB, &body)
    }

    #[test]
    fn pcapng_interfaces_resolutions_and_block_kinds() {
        for big in [false, true] {
            let mut d = shb(big);
            d.extend(idb(big, 1, 0, &[]));
            d.extend(idb(big, 101, 0, &[(9, vec![9]), (14, if big { 5i64.to_be_bytes() } else { 5i64.to_le_bytes() }.to_vec())]));
            d.extend(idb(big, 113, 0, &[(9, vec![0x80 | 10])]));
            d.extend(block(big, 0x0BAD, b"unknown block"));
            d.extend(epb(big, 0, 1_500_000, b"us"));
            d.extend(epb(big, 1, 2_000_000_123, b"ns"));
            d.extend(epb(big, 2, 2048, b"binary"));
            d.extend(block(big, SPB, &[if big { [0, 0, 0, 3] } else { [3, 0, 0, 0] }, *b"spb\0"].concat()));
            let mut st = Pcapng::default();
            let mut out = Vec::new();
            let w = st.walk(&d, 0, &mut out);
            assert_eq!((w.pos, w.error), (d.len(), None));
            let ts: Vec<i64> = out.iter().map(|r| r.ts_ns).collect();
            assert_eq!(ts, vec![1_500_000_000, 7_000_000_123, 2_000_000_000, 0]);
            let lts: Vec<u32> = out.iter().map(|r| r.linktype).collect();
            assert_eq!(lts, vec![1, 101, 113, 1]);
            assert_eq!(&d[out[3].start..out[3].start + out[3].caplen], b"spb");
        }
    }

    #[test]
    fn pcapng_errors_name_the_block() {
        let mut d = shb(false);
        d.extend(epb(false, 0, 0, b"x"));
        let mut out = Vec::new();
        let w = Pcapng::default().walk(&d, 0, &mut out);
        let e = w.error.unwrap();
        assert_eq!(e.offset, Some(28));
        assert!(e.message.contains("never described"));

        let mut d = shb(false);
        let n = d.len();
        d.extend(idb(false, 1, 0, &[]));
        d[n + 4] = 13; // block length not a multiple of 4
        let w = Pcapng::default().walk(&d, 100, &mut out);
        assert_eq!(w.error.unwrap().offset, Some(100 + n as u64));

        let w = Pcapng::default().walk(&epb(false, 0, 0, b""), 0, &mut out);
        assert!(w.error.unwrap().message.contains("Section Header"));
    }

    #[test]
    fn pcapng_timestamps_of_any_resolution() {
        let iface = |per: Option<u128>, off: i64| Interface { linktype: 1, snaplen: 0, units_per_sec: per, offset_s: off };
        assert_eq!(iface(Some(1_000_000), 0).to_ns(3), 3000);
        assert_eq!(iface(Some(3), 0).to_ns(4), 1_333_333_333);
        assert_eq!(iface(Some(1_000_000_000_000), 0).to_ns(1_999), 1);
        assert_eq!(iface(None, 2).to_ns(u64::MAX), 2_000_000_000);
        assert_eq!(iface(Some(1), 0).to_ns(u64::MAX), i64::MAX);
        assert_eq!(iface(Some(1_000_000), i64::MIN).to_ns(0), i64::MIN);
    }

    #[test]
    fn idb_option_cut_by_the_block_is_ignored() {
        // if_tsresol claims 4 bytes of value but the body ends after the option header
        let body = [1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 4, 0];
        let i = Interface::parse(&body, false);
        assert_eq!(i.units_per_sec, Some(1_000_000));
    }
}
