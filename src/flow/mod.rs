//! The flow table and the flow stage in the core (docs/core.md phases 2-4): which connection
//! and direction each packet is (`table`), what each direction did as a stream of events with
//! the tcptrace counters (`stage`, over the sequence unwrapping of `unwrap`), and the chunk
//! driver that runs them with the RTT sampler behind them (`pipeline`).
//!
//! They work on one chunk of the capture at a time ([`Batch`]: the decoded packet columns) and
//! apply their rules over the chunk exactly as the Python stages they replace did, so that the
//! answers are the same (the golden files, tests/test_golden.py).

pub mod pipeline;
pub mod stage;
pub mod table;
pub mod unwrap;

/// The decoded TCP packets of one chunk as columns (`reader.PacketBatch`), in capture order:
/// `src`/`dst` hold 16 bytes a packet (IPv4 v4-mapped), `sack` 8 raw edges a packet.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    pub index: &'a [i64],
    pub ts_ns: &'a [i64],
    pub ipver: &'a [i64],
    pub src: &'a [u8],
    pub dst: &'a [u8],
    pub sport: &'a [i64],
    pub dport: &'a [i64],
    pub seq: &'a [i64],
    pub ack: &'a [i64],
    pub flags: &'a [i64],
    pub win: &'a [i64],
    pub paylen: &'a [i64],
    pub vlan: &'a [bool],
    pub mss: &'a [i64],
    pub wscale: &'a [i64],
    pub sack_permitted: &'a [bool],
    pub tsval: &'a [i64],
    pub tsecr: &'a [i64],
    pub nsack: &'a [i64],
    pub sack: &'a [i64],
    pub sack_empty: &'a [bool],
}

/// An endpoint: address (16 bytes) and port.
pub type Endpoint = ([u8; 16], u16);

impl Batch<'_> {
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether every column has the length of `index` (the PyO3 side checks what it is handed).
    pub fn consistent(&self) -> bool {
        let n = self.len();
        [self.ts_ns, self.ipver, self.sport, self.dport, self.seq, self.ack, self.flags, self.win, self.paylen]
            .iter()
            .chain([self.mss, self.wscale, self.tsval, self.tsecr, self.nsack].iter())
            .all(|c| c.len() == n)
            && [self.vlan, self.sack_permitted, self.sack_empty].iter().all(|c| c.len() == n)
            && self.src.len() == 16 * n
            && self.dst.len() == 16 * n
            && self.sack.len() == 8 * n
    }

    pub fn src(&self, i: usize) -> Endpoint {
        (self.src[16 * i..16 * i + 16].try_into().expect("16 bytes"), self.sport[i] as u16)
    }

    pub fn dst(&self, i: usize) -> Endpoint {
        (self.dst[16 * i..16 * i + 16].try_into().expect("16 bytes"), self.dport[i] as u16)
    }

    #[inline]
    pub fn flag(&self, i: usize, f: u16) -> bool {
        self.flags[i] as u16 & f != 0
    }
}

#[cfg(test)]
pub(crate) mod testkit;
