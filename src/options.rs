//! TCP option parsing (RFC 9293 section 3.2, RFC 7323, RFC 2018).
//!
//! The option area is walked one option at a time. Headers-only captures can cut the option
//! area short: an option that runs past the captured bytes is flagged `truncated`, never guessed
//! at; one whose length is impossible (below 2, or past the TCP header) is flagged `malformed`.

pub const KIND_EOL: u8 = 0;
pub const KIND_NOP: u8 = 1;
pub const KIND_MSS: u8 = 2;
pub const KIND_WSCALE: u8 = 3;
pub const KIND_SACK_PERM: u8 = 4;
pub const KIND_SACK: u8 = 5;
pub const KIND_TS: u8 = 8;
pub const MAX_SACK_BLOCKS: usize = 4;

/// Per-packet option values, column by column (-1 where absent).
#[derive(Clone, Debug, Default)]
pub struct TcpOptions {
    pub mss: Vec<i64>,
    pub wscale: Vec<i64>,
    pub sack_permitted: Vec<bool>,
    pub tsval: Vec<i64>,
    /// -1 when there is no timestamp option.
    pub tsecr: Vec<i64>,
    /// Number of SACK blocks (0..4).
    pub nsack: Vec<i64>,
    /// 8 values per packet: the raw 32-bit left and right edges of up to 4 blocks.
    pub sack: Vec<i64>,
    /// A SACK option with no blocks (malformed, length 2).
    pub sack_empty: Vec<bool>,
    /// The option area was cut by the snap length.
    pub truncated: Vec<bool>,
    pub malformed: Vec<bool>,
}

impl TcpOptions {
    /// Empty columns with room for `n` packets.
    pub fn with_capacity(n: usize) -> TcpOptions {
        TcpOptions {
            mss: Vec::with_capacity(n),
            wscale: Vec::with_capacity(n),
            sack_permitted: Vec::with_capacity(n),
            tsval: Vec::with_capacity(n),
            tsecr: Vec::with_capacity(n),
            nsack: Vec::with_capacity(n),
            sack: Vec::with_capacity(8 * n),
            sack_empty: Vec::with_capacity(n),
            truncated: Vec::with_capacity(n),
            malformed: Vec::with_capacity(n),
        }
    }
}

fn be16(p: &[u8], i: usize) -> i64 {
    u16::from_be_bytes([p[i], p[i + 1]]) as i64
}

fn be32(p: &[u8], i: usize) -> i64 {
    u32::from_be_bytes([p[i], p[i + 1], p[i + 2], p[i + 3]]) as i64
}

/// Parse the option area `[begin, header_end)` of packet `p`, of which `[begin, captured_end)`
/// was captured, and append one row to `out`.
pub fn parse_options(p: &[u8], begin: usize, header_end: usize, captured_end: usize, out: &mut TcpOptions) {
    let i = out.mss.len();
    out.mss.push(-1);
    out.wscale.push(-1);
    out.sack_permitted.push(false);
    out.tsval.push(-1);
    out.tsecr.push(-1);
    out.nsack.push(0);
    out.sack.extend([0; 2 * MAX_SACK_BLOCKS]);
    out.sack_empty.push(false);
    let end = header_end.min(captured_end);
    out.truncated.push(captured_end < header_end && begin >= end && begin < header_end);
    out.malformed.push(false);
    let mut c = begin;
    while c < end {
        let kind = p[c];
        if kind == KIND_EOL {
            break;
        }
        if kind == KIND_NOP {
            c += 1;
            continue;
        }
        let length = if c + 1 < end { p[c + 1] as usize } else { 0 };
        if (c + 1 >= end || c + length > end) && end < header_end {
            out.truncated[i] = true; // runs past the captured bytes
            break;
        }
        if length < 2 || c + length > header_end {
            out.malformed[i] = true;
            break;
        }
        // the whole option is captured: c + length <= end
        match (kind, length) {
            (KIND_MSS, 4) => out.mss[i] = be16(p, c + 2),
            (KIND_WSCALE, 3) => out.wscale[i] = p[c + 2] as i64,
            (KIND_TS, 10) => {
                out.tsval[i] = be32(p, c + 2);
                out.tsecr[i] = be32(p, c + 6);
            }
            (KIND_SACK_PERM, _) => out.sack_permitted[i] = true,
            (KIND_SACK, _) => {
                let blocks = ((length - 2) / 8).min(MAX_SACK_BLOCKS);
                out.nsack[i] = blocks as i64;
                if blocks == 0 {
                    out.sack_empty[i] = true;
                }
                for b in 0..blocks {
                    let e = c + 2 + 8 * b;
                    out.sack[8 * i + 2 * b] = be32(p, e);
                    out.sack[8 * i + 2 * b + 1] = be32(p, e + 4);
                }
            }
            _ => {}
        }
        c += length;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(area: &[u8], captured: usize) -> TcpOptions {
        let mut out = TcpOptions::default();
        parse_options(area, 0, area.len(), captured.min(area.len()), &mut out);
        out
    }

    #[test]
    fn linux_syn_options() {
        let o = parse(&[2, 4, 5, 0xB4, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 0, 1, 3, 3, 7], 40);
        assert_eq!((o.mss[0], o.sack_permitted[0], o.tsval[0], o.tsecr[0], o.wscale[0]), (1460, true, 9, 0, 7));
        assert!(!o.truncated[0] && !o.malformed[0]);
    }

    #[test]
    fn sack_blocks() {
        let mut a = vec![1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1, 5, 18];
        for e in [10u32, 20, 30, 40] {
            a.extend(e.to_be_bytes());
        }
        let o = parse(&a, 100);
        assert_eq!(o.nsack[0], 2);
        assert_eq!(&o.sack[..4], &[10, 20, 30, 40]);
        let o = parse(&[1, 1, 5, 2], 100);
        assert!(o.sack_empty[0] && o.nsack[0] == 0);
    }

    #[test]
    fn cut_and_impossible_options() {
        let a = [1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2];
        let o = parse(&a, 6);
        assert!(o.truncated[0] && o.tsval[0] == -1);
        let o = parse(&a, 0);
        assert!(o.truncated[0]);
        let o = parse(&[2, 1, 0, 0], 4); // length below 2
        assert!(o.malformed[0]);
        let o = parse(&[1, 1, 8, 12, 0, 0, 0, 0], 8); // past the header
        assert!(o.malformed[0] && !o.truncated[0]);
        let o = parse(&[0, 2, 4, 5, 0xB4], 8); // after EOL: ignored
        assert_eq!(o.mss[0], -1);
    }

    #[test]
    fn garbage_never_panics() {
        let mut x: u32 = 12345;
        for _ in 0..20000 {
            let n = (x % 41) as usize;
            let mut a = Vec::with_capacity(n);
            for _ in 0..n {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                a.push((x >> 16) as u8 % 12);
            }
            let cut = (x % 45) as usize;
            let o = parse(&a, cut);
            assert!(o.nsack[0] <= 4);
        }
    }
}
