//! Hand-built chunks for the unit tests of the flow table and the flow stage.

use super::Batch;
use crate::events::flags::ACK;

/// One packet: from endpoint `src` to `dst` (indices into the kit's endpoints), at `t_ms`.
#[derive(Clone, Copy, Debug)]
pub struct Pkt {
    pub src: usize,
    pub dst: usize,
    pub t_ms: i64,
    pub flags: u16,
    pub seq: i64,
    pub ack: i64,
    pub len: i64,
    pub win: i64,
    pub sack: [(i64, i64); 4],
    pub nsack: i64,
}

impl Pkt {
    pub fn new(src: usize, dst: usize, t_ms: i64, flags: u16, seq: i64, ack: i64, len: i64) -> Pkt {
        Pkt { src, dst, t_ms, flags, seq, ack, len, win: 1000, sack: [(0, 0); 4], nsack: 0 }
    }

    pub fn ack(src: usize, dst: usize, t_ms: i64, seq: i64, ack: i64) -> Pkt {
        Pkt::new(src, dst, t_ms, ACK, seq, ack, 0)
    }

    pub fn with_sack(mut self, blocks: &[(i64, i64)]) -> Pkt {
        self.sack[..blocks.len()].copy_from_slice(blocks);
        self.nsack = blocks.len() as i64;
        self
    }
}

/// The columns of a chunk, owned; [`Kit::batch`] views them.
#[derive(Default)]
pub struct Kit {
    index: Vec<i64>,
    ts: Vec<i64>,
    ipver: Vec<i64>,
    src: Vec<u8>,
    dst: Vec<u8>,
    sport: Vec<i64>,
    dport: Vec<i64>,
    seq: Vec<i64>,
    ack: Vec<i64>,
    flags: Vec<i64>,
    win: Vec<i64>,
    paylen: Vec<i64>,
    no: Vec<bool>,
    none: Vec<i64>,
    nsack: Vec<i64>,
    sack: Vec<i64>,
}

/// Endpoint `i`: 10.0.0.i (v4-mapped), port 1000 + i.
fn endpoint(i: usize) -> ([u8; 16], i64) {
    let mut a = [0u8; 16];
    a[10] = 0xff;
    a[11] = 0xff;
    a[12] = 10;
    a[15] = i as u8;
    (a, 1000 + i as i64)
}

impl Kit {
    /// A chunk of `pkts`, whose first record is number `first`.
    pub fn new(first: i64, pkts: &[Pkt]) -> Kit {
        let mut k = Kit::default();
        for (i, p) in pkts.iter().enumerate() {
            let (s, sp) = endpoint(p.src);
            let (d, dp) = endpoint(p.dst);
            k.index.push(first + i as i64);
            k.ts.push(p.t_ms * 1_000_000);
            k.ipver.push(4);
            k.src.extend_from_slice(&s);
            k.dst.extend_from_slice(&d);
            k.sport.push(sp);
            k.dport.push(dp);
            k.seq.push(p.seq);
            k.ack.push(p.ack);
            k.flags.push(p.flags as i64);
            k.win.push(p.win);
            k.paylen.push(p.len);
            k.no.push(false);
            k.none.push(-1);
            k.nsack.push(p.nsack);
            k.sack.extend(p.sack.iter().flat_map(|&(l, r)| [l, r]));
        }
        k
    }

    pub fn batch(&self) -> Batch<'_> {
        Batch {
            index: &self.index,
            ts_ns: &self.ts,
            ipver: &self.ipver,
            src: &self.src,
            dst: &self.dst,
            sport: &self.sport,
            dport: &self.dport,
            seq: &self.seq,
            ack: &self.ack,
            flags: &self.flags,
            win: &self.win,
            paylen: &self.paylen,
            vlan: &self.no,
            mss: &self.none,
            wscale: &self.none,
            sack_permitted: &self.no,
            tsval: &self.none,
            tsecr: &self.none,
            nsack: &self.nsack,
            sack: &self.sack,
            sack_empty: &self.no,
        }
    }
}
