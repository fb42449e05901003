//! The flow stage of one connection (DOMAIN.md sections 1-3; the core's `connection.py`): it
//! receives its packets a chunk at a time, in capture order, and keeps for each direction what
//! the report needs (handshake options, unwrapped sequence state, unique and retransmitted bytes,
//! SACK and D-SACK counts, duplicate ACKs, windows), and emits each direction's events (the
//! event boundary, `events.rs`): its sends, placed in the sequence space, and the peer's ACKs,
//! marked (duplicate ACK, D-SACK) with the window in bytes.
//!
//! The rules are applied over a chunk's packets of the connection in the order the Python stage
//! applied them (the SYN options of the chunk first, then the anchors of the spaces, then each
//! direction's data, then each direction's ACKs), so that the answers are the same. Definitions
//! follow tcptrace where the report compares with it (a retransmission is "any overlap with
//! bytes already sent", counted on payload bytes), and DOMAIN.md elsewhere (docs/report.md says
//! where they differ).

use super::unwrap::SeqSpace;
use super::{Batch, Endpoint};
use crate::acks::{dsack_first_block, duplicate_ack};
use crate::events::flags::{ACK, FIN, PSH, RST, SYN};
use crate::events::{Event, Placement, StreamFacts, MAX_SACK_BLOCKS};
use crate::rangeset::RangeSet;
use crate::seq::{signed_diff, wire_add};

/// How a connection ended, for the flow table's connection-finished rule (`table.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// a FIN seen in both directions
    Closed,
    /// a RST seen
    Reset,
    /// a side sent SYNs and nothing else, the other side nothing
    Attempt,
}

/// Counts of packets not yet consumed, for [`Connection::ended_with`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Unconsumed {
    pub rst: i64,
    pub fin: [i64; 2],
    pub syn: [i64; 2],
    pub sent: [i64; 2],
}

/// The state and counters of one direction (what its side sent: data and ACKs).
#[derive(Clone, Debug, Default)]
pub struct Direction {
    pub space: SeqSpace,
    pub syn_seen: bool,
    pub isn: Option<i64>,
    pub syn_count: i64,
    pub fin_count: i64,
    pub rst_count: i64,
    pub syn_rexmit: i64,
    pub fin_rexmit: i64,
    pub mss: Option<i64>,
    pub wscale: Option<i64>,
    pub sack_permitted: bool,
    pub ts_option: bool,
    pub packets: i64,
    pub ack_packets: i64,
    pub pure_acks: i64,
    pub data_packets: i64,
    pub data_bytes: i64,
    pub pushed: i64,
    pub unique_bytes: i64,
    pub rexmit_packets: i64,
    pub rexmit_bytes: i64,
    pub out_of_order: i64,
    pub zwnd_probes: i64,
    pub zwnd_probe_bytes: i64,
    /// larger than the MSS (TSO/GRO, BIG TCP)
    pub oversize_segments: i64,
    pub max_seg: i64,
    pub min_seg: i64,
    /// ACKs with at least one SACK block (tcptrace "sack pkts sent")
    pub sack_packets: i64,
    pub dsack_packets: i64,
    pub max_sack_blocks: i64,
    pub empty_sack_options: i64,
    pub dupacks: i64,
    pub triple_dupacks: i64,
    dup_run: i64,
    last_ack: Option<i64>,
    last_ack_win: Option<i64>,
    /// highest cumulative ACK of this direction's data
    pub snd_una: Option<i64>,
    /// highest seq + len sent (SYN and FIN included)
    pub snd_max: i64,
    snd_max_before: i64,
    data_max: Option<i64>,
    data_min: Option<i64>,
    holes: RangeSet,
    pub win_min: Option<i64>,
    pub win_max: i64,
    pub win_sum: i64,
    pub win_count: i64,
    syn_windows: Vec<i64>,
    pub zero_windows: i64,
    /// the last window this side advertised (bytes)
    pub last_win: Option<i64>,
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    pub idle_max_ns: i64,
    fin_at: Option<i64>,
}

/// One TCP connection (a flow epoch) and its two directions.
#[derive(Clone, Debug)]
pub struct Connection {
    pub id: i64,
    pub epoch: i64,
    pub a: Endpoint,
    pub b: Endpoint,
    pub ipver: i64,
    pub dirs: [Direction; 2],
    pub packets: i64,
    pub last_ts_ns: Option<i64>,
    /// a FIN or RST was seen
    pub closed: bool,
    /// packets timestamped before a record captured ahead of them (reader/clock.py)
    pub backwards_timestamps: i64,
    pub vlan_tagged: i64,
    pub syn_ts: Option<i64>,
    pub synack_ts: Option<i64>,
    pub hs_ack_ts: Option<i64>,
    /// sequence number of the opening SYN (set by the flow table)
    pub syn_isn: Option<i64>,
    /// record number of the first packet
    pub first_index: i64,
}

/// Where a row of a chunk is not a send of its direction.
const NOT_SENT: i8 = -2;

/// The rows of one connection in a chunk, with what the stage decides for each.
struct View {
    rows: Vec<usize>,
    d_of: Vec<usize>,
    start: Vec<i64>,
    end: Vec<i64>,
    placement: Vec<i8>,
    has_ack: Vec<bool>,
    ack: Vec<i64>,
    win: Vec<i64>,
    dup: Vec<bool>,
    dsack: Vec<bool>,
    nsack: Vec<u8>,
    sack: Vec<[(i64, i64); MAX_SACK_BLOCKS]>,
    snd_max_run: [Option<Vec<i64>>; 2],
}

impl Connection {
    /// The connection whose first packet is row `row` of `b`: the opener (direction a->b) is
    /// the SYN sender, the SYN-ACK receiver, else the first packet's sender.
    pub fn new(id: i64, b: &Batch, row: usize, epoch: i64) -> Connection {
        let opener_is_src = !(b.flag(row, SYN) && b.flag(row, ACK));
        let (a, bb) = if opener_is_src { (b.src(row), b.dst(row)) } else { (b.dst(row), b.src(row)) };
        Connection {
            id,
            epoch,
            a,
            b: bb,
            ipver: b.ipver[row],
            dirs: [Direction::default(), Direction::default()],
            packets: 0,
            last_ts_ns: None,
            closed: false,
            backwards_timestamps: 0,
            vlan_tagged: 0,
            syn_ts: None,
            synack_ts: None,
            hs_ack_ts: None,
            syn_isn: None,
            first_index: b.index[row],
        }
    }

    /// Bytes of heap its state holds.
    pub fn heap_bytes(&self) -> usize {
        self.dirs.iter().map(|d| 16 * d.holes.len() + 8 * d.syn_windows.capacity()).sum()
    }

    /// A SYN-ACK was seen (the handshake got past its first step).
    pub fn answered(&self) -> bool {
        self.synack_ts.is_some() || (self.dirs[0].syn_seen && self.dirs[1].syn_seen)
    }

    /// How it ended (None while it goes on), counting `extra` packets not yet consumed.
    pub fn ended_with(&self, extra: &Unconsumed) -> Option<Ended> {
        let [a, b] = &self.dirs;
        let rst = a.rst_count + b.rst_count + extra.rst;
        let fins = [a.fin_count + extra.fin[0], b.fin_count + extra.fin[1]];
        let syns = [a.syn_count + extra.syn[0], b.syn_count + extra.syn[1]];
        let sent = [a.packets + extra.sent[0], b.packets + extra.sent[1]];
        if rst > 0 {
            Some(Ended::Reset)
        } else if fins[0] > 0 && fins[1] > 0 {
            Some(Ended::Closed)
        } else if (0..2).any(|d| syns[d] > 0 && sent[d] == syns[d] && sent[1 - d] == 0) {
            Some(Ended::Attempt)
        } else {
            None
        }
    }

    /// The direction (0: a->b, 1: b->a) of row `row` of `b`.
    #[inline]
    pub fn direction_of(&self, b: &Batch, row: usize) -> usize {
        if self.a == self.b || b.src(row) == self.a {
            0
        } else {
            1
        }
    }

    /// True/False when both SYNs were seen; None (unknown) otherwise (DOMAIN.md section 1).
    pub fn window_scale_in_use(&self) -> Option<bool> {
        let [a, b] = &self.dirs;
        if !(a.syn_seen && b.syn_seen) {
            return None;
        }
        Some(a.wscale.is_some() && b.wscale.is_some())
    }

    /// Advertised window in bytes: scaled unless the packet is a SYN (RFC 7323 section 2.2).
    #[inline]
    fn effective_window(&self, d: usize, win: i64, flags: i64) -> i64 {
        if self.window_scale_in_use() == Some(true) && flags as u16 & SYN == 0 {
            win << self.dirs[d].wscale.unwrap_or(0)
        } else {
            win
        }
    }

    /// (min non-zero, max, sum, count) of the windows direction `d` advertised. As tcptrace:
    /// SYN windows are unscaled, so once window scaling is in use they are left out; without
    /// scaling they count like any other window.
    pub fn window_stats(&self, d: usize) -> (Option<i64>, i64, i64, i64) {
        let st = &self.dirs[d];
        let (mut lo, mut hi, mut total, mut count) = (st.win_min, st.win_max, st.win_sum, st.win_count);
        if self.window_scale_in_use() != Some(true) {
            for &w in &st.syn_windows {
                hi = hi.max(w);
                if w > 0 {
                    lo = Some(lo.map_or(w, |l| l.min(w)));
                }
                total += w;
                count += 1;
            }
        }
        (lo, hi, total, count)
    }

    /// "complete", "reset", "open at end of capture" or "no SYN seen".
    pub fn state(&self) -> &'static str {
        let [a, b] = &self.dirs;
        if a.rst_count > 0 || b.rst_count > 0 {
            "reset"
        } else if !(a.syn_seen || b.syn_seen) {
            "no SYN seen"
        } else if a.fin_count > 0 && b.fin_count > 0 {
            "complete"
        } else {
            "open at end of capture"
        }
    }

    /// Capture point -> data sender of `d` -> capture point, from the handshake.
    pub fn turnaround(&self, d: usize) -> Option<i64> {
        match d {
            0 => Some(self.hs_ack_ts? - self.synack_ts?),
            _ => Some(self.synack_ts? - self.syn_ts?),
        }
    }

    /// What the stages behind the boundary need to know of direction `d` besides its events.
    pub fn facts(&self, d: usize) -> StreamFacts {
        let (st, peer) = (&self.dirs[d], &self.dirs[1 - d]);
        StreamFacts {
            mss: peer.mss.filter(|&m| m != 0).unwrap_or(st.max_seg),
            seq_anchor: st.space.anchor.unwrap_or(0),
            turnaround_ns: self.turnaround(d),
            receiver_turnaround_ns: self.turnaround(1 - d),
        }
    }

    /// Account the packets `rows` of `b` (this connection's, in capture order); returns the
    /// events of each direction they made.
    pub fn consume(&mut self, b: &Batch, rows: &[usize]) -> [Vec<Event>; 2] {
        let n = rows.len();
        let d_of: Vec<usize> = rows.iter().map(|&r| self.direction_of(b, r)).collect();
        self.packets += n as i64;
        self.last_ts_ns = Some(b.ts_ns[rows[n - 1]]);
        self.vlan_tagged += rows.iter().filter(|&&r| b.vlan[r]).count() as i64;
        if rows.iter().any(|&r| b.flag(r, FIN | RST)) {
            self.closed = true;
        }
        self.handshake_times(b, rows, &d_of);
        self.syn_options(b, rows, &d_of);
        self.anchor_spaces(b, rows, &d_of);
        let peer_win = self.peer_last_window(b, rows, &d_of);
        let mut v = View {
            rows: rows.to_vec(),
            d_of,
            start: vec![0; n],
            end: vec![0; n],
            placement: vec![NOT_SENT; n],
            has_ack: vec![false; n],
            ack: vec![-1; n],
            win: vec![-1; n],
            dup: vec![false; n],
            dsack: vec![false; n],
            nsack: vec![0; n],
            sack: vec![[(0, 0); MAX_SACK_BLOCKS]; n],
            snd_max_run: [None, None],
        };
        let sels: [Vec<usize>; 2] = [0, 1].map(|d| (0..n).filter(|&i| v.d_of[i] == d).collect());
        let mut acks = [false, false];
        for d in 0..2 {
            if !sels[d].is_empty() {
                acks[d] = self.consume_direction(d, b, &mut v, &sels[d], &peer_win);
            }
        }
        for d in 0..2 {
            if acks[d] {
                self.account_acks(d, b, &mut v, &sels[d]);
            }
        }
        [0, 1].map(|d| events(b, &v, d))
    }

    fn handshake_times(&mut self, b: &Batch, rows: &[usize], d_of: &[usize]) {
        if self.hs_ack_ts.is_some() {
            return;
        }
        for (i, &r) in rows.iter().enumerate().filter(|(_, &r)| b.flag(r, SYN | ACK)).take(8) {
            let (syn, ack, ts) = (b.flag(r, SYN), b.flag(r, ACK), b.ts_ns[r]);
            if syn && !ack && self.syn_ts.is_none() {
                self.syn_ts = Some(ts);
            } else if syn && ack && self.synack_ts.is_none() && self.syn_ts.is_some() {
                self.synack_ts = Some(ts);
            } else if !syn && self.synack_ts.is_some() && d_of[i] == 0 {
                self.hs_ack_ts = Some(ts);
                return;
            }
        }
    }

    /// Options of the SYNs, read before any window of the chunk is scaled.
    fn syn_options(&mut self, b: &Batch, rows: &[usize], d_of: &[usize]) {
        for (i, &r) in rows.iter().enumerate() {
            if !b.flag(r, SYN) {
                continue;
            }
            let st = &mut self.dirs[d_of[i]];
            if st.isn.is_none() {
                st.isn = Some(b.seq[r]);
                st.syn_seen = true;
                if st.space.anchor_at_syn(b.seq[r], st.data_max.is_some()) {
                    st.snd_max = 0; // what was counted belonged to an earlier attempt
                }
            }
            st.syn_count += 1;
            if b.mss[r] >= 0 {
                st.mss = Some(b.mss[r]);
            }
            if b.wscale[r] >= 0 {
                st.wscale = Some(b.wscale[r].min(14)); // RFC 7323 section 2.3: larger means 14
            }
            st.sack_permitted |= b.sack_permitted[r];
            st.ts_option |= b.tsval[r] >= 0;
        }
    }

    /// A space without a SYN starts at the first number seen of it, in capture order: a
    /// sequence number of its sender (not a RST's, which may be 0), or an ACK number of its
    /// receiver less one. Done before either stream is unwrapped, so the origin does not depend
    /// on where chunks end.
    fn anchor_spaces(&mut self, b: &Batch, rows: &[usize], d_of: &[usize]) {
        for d in 0..2 {
            if self.dirs[d].space.anchor.is_some() {
                continue;
            }
            let own = (0..rows.len()).find(|&i| d_of[i] == d && !b.flag(rows[i], RST));
            let ack = (0..rows.len()).find(|&i| d_of[i] != d && b.flag(rows[i], ACK));
            let space = &mut self.dirs[d].space;
            match (own, ack) {
                (o, Some(a)) if o.is_none_or(|o| a < o) => space.ensure_anchor(wire_add(b.ack[rows[a]], -1)),
                (Some(o), _) => space.ensure_anchor(b.seq[rows[o]]),
                _ => {}
            }
        }
    }

    /// For each packet, the other side's last effective window before it (-1 if none yet).
    fn peer_last_window(&self, b: &Batch, rows: &[usize], d_of: &[usize]) -> Vec<i64> {
        let mut last: [Option<i64>; 2] = [None, None];
        let mut out = Vec::with_capacity(rows.len());
        for (i, &r) in rows.iter().enumerate() {
            let d = d_of[i];
            out.push(last[1 - d].or(self.dirs[1 - d].last_win).unwrap_or(-1));
            last[d] = Some(self.effective_window(d, b.win[r], b.flags[r]));
        }
        out
    }

    /// The data of direction `d` in the chunk (rows `sel` of the view); returns whether any
    /// of them carries an ACK (accounted once both directions' data is).
    fn consume_direction(&mut self, d: usize, b: &Batch, v: &mut View, sel: &[usize], peer_win: &[i64]) -> bool {
        let peer_packets = self.dirs[1 - d].packets;
        let eff: Vec<i64> = sel.iter().map(|&i| self.effective_window(d, b.win[v.rows[i]], b.flags[v.rows[i]])).collect();
        let st = &mut self.dirs[d];
        let row = |k: usize| v.rows[sel[k]];
        let n = sel.len();
        let f = |k: usize, fl: u16| b.flag(row(k), fl);
        // time
        let ts0 = b.ts_ns[row(0)];
        st.first_ns.get_or_insert(ts0);
        let mut prev = st.last_ns.unwrap_or(ts0);
        let mut gap_max = i64::MIN;
        for k in 0..n {
            let t = b.ts_ns[row(k)];
            gap_max = gap_max.max(t - prev);
            prev = t;
        }
        st.idle_max_ns = st.idle_max_ns.max(gap_max);
        st.last_ns = Some(prev);

        let syns: Vec<usize> = (0..n).filter(|&k| f(k, SYN)).collect();
        let first_syn_here = if !syns.is_empty() && st.syn_count == syns.len() as i64 { syns[0] as i64 } else { -1 };
        st.fin_count += (0..n).filter(|&k| f(k, FIN)).count() as i64;
        st.rst_count += (0..n).filter(|&k| f(k, RST)).count() as i64;

        // counters that need no order
        st.packets += n as i64;
        for k in 0..n {
            let pl = b.paylen[row(k)];
            st.data_bytes += pl;
            if pl > 0 {
                st.data_packets += 1;
                if f(k, PSH) {
                    st.pushed += 1;
                }
            }
        }
        let payloads = (0..n).map(|k| b.paylen[row(k)]).filter(|&p| p > 0);
        if let (Some(mx), Some(mn)) = (payloads.clone().max(), payloads.clone().min()) {
            st.max_seg = st.max_seg.max(mx);
            st.min_seg = if st.min_seg == 0 { mn } else { st.min_seg.min(mn) };
            if let Some(mss) = st.mss.filter(|&m| m != 0) {
                st.oversize_segments += payloads.filter(|&p| p > mss).count() as i64;
            }
        }

        // sequence numbers: a RST's may be 0 (RFC 9293 section 3.10.7.1): it neither moves the
        // unwrapping along nor snd_max
        let raw: Vec<i64> = (0..n).map(|k| b.seq[row(k)]).collect();
        let follow: Vec<bool> = (0..n).map(|k| !f(k, RST)).collect();
        let mut seq = Vec::new();
        st.space.unwrap_seqs(&raw, &follow, &mut seq);
        let pay_start: Vec<i64> = (0..n).map(|k| seq[k] + f(k, SYN) as i64).collect();
        let pay_end: Vec<i64> = (0..n).map(|k| pay_start[k] + b.paylen[row(k)]).collect();
        // nor do segments before the direction's SYN (of an earlier attempt: the SYN is relative 0)
        let counted = (0..n).filter(|&k| follow[k] && !(first_syn_here > 0 && (k as i64) < first_syn_here));
        if let Some(top) = counted.map(|k| pay_end[k] + f(k, FIN) as i64).max() {
            st.snd_max = st.snd_max.max(top);
        }

        // windows advertised by this side
        for k in 0..n {
            let (syn, rst, ack, w) = (f(k, SYN), f(k, RST), f(k, ACK), eff[k]);
            if syn && !rst {
                st.syn_windows.push(w); // kept apart: they only count unscaled (window_stats)
            }
            if ack && !syn && !rst {
                st.win_max = st.win_max.max(w);
                if w > 0 {
                    st.win_min = Some(st.win_min.map_or(w, |m| m.min(w)));
                }
                st.win_sum += w;
                st.win_count += 1;
            }
            if ack && !rst && w == 0 {
                st.zero_windows += 1;
            }
            v.win[sel[k]] = w;
            if !rst {
                st.last_win = Some(w);
            }
        }

        // data: unique, retransmitted, out of order (tcptrace rexmit(): overlap with bytes seen)
        let mut tracked: Vec<usize> = Vec::new();
        for k in 0..n {
            let i = sel[k];
            let (data, syn, fin, rst, ack) = (b.paylen[row(k)] > 0, f(k, SYN), f(k, FIN), f(k, RST), f(k, ACK));
            v.start[i] = pay_start[k];
            v.end[i] = pay_end[k];
            // every packet is in a stream: one with the ACK flag is an ACK of the peer's data,
            // any other (and one with payload, SYN or FIN) a send of this direction
            if !data && (syn || fin || rst || !ack) {
                v.placement[i] = Placement::None as i8;
            }
            if data && !syn && peer_win[i] == 0 && peer_packets > 0 {
                st.zwnd_probes += 1;
                st.zwnd_probe_bytes += b.paylen[row(k)];
                v.placement[i] = Placement::Probe as i8;
            } else if data {
                tracked.push(k);
            }
        }
        if let Some(&k0) = tracked.first() {
            let base = st.data_max.unwrap_or(pay_start[k0]);
            st.data_min.get_or_insert(pay_start[k0]);
            let mut top = base;
            for &k in &tracked {
                let (s, e) = (pay_start[k], pay_end[k]);
                let code = if s == top {
                    st.unique_bytes += e - s; // the common case: next new data in order
                    Placement::New
                } else {
                    account_segment(st, s, e, top)
                };
                v.placement[sel[k]] = code as i8;
                top = top.max(e);
            }
            st.data_max = Some(top);
        }
        // SYN and FIN retransmissions without data are counted apart: tcptrace counts them as
        // retransmitted data packets (1 byte of sequence space each)
        for k in 0..n {
            let (syn, fin) = (f(k, SYN), f(k, FIN));
            if !(syn || fin) || b.paylen[row(k)] > 0 {
                continue;
            }
            if syn && k as i64 != first_syn_here && Some(raw[k]) == st.isn {
                st.syn_rexmit += 1;
            }
            if fin {
                let end = pay_end[k];
                if st.fin_at.is_some_and(|at| end <= at) {
                    st.fin_rexmit += 1;
                }
                st.fin_at = Some(st.fin_at.map_or(end, |at| at.max(end)));
            }
        }
        // running snd_max of this direction at each row of the chunk (the peer's dupACK test)
        let mut run = vec![-1i64; v.rows.len()];
        for k in 0..n {
            run[sel[k]] = pay_end[k] + f(k, FIN) as i64;
        }
        let mut top = st.snd_max_before;
        for x in run.iter_mut() {
            top = top.max(*x);
            *x = top;
        }
        v.snd_max_run[d] = Some(run);
        st.snd_max_before = st.snd_max;
        (0..n).any(|k| f(k, ACK))
    }

    /// The ACKs direction `d` sent (about the peer's data), rows `sel` of the view.
    fn account_acks(&mut self, d: usize, b: &Batch, v: &mut View, sel: &[usize]) {
        let ai: Vec<usize> = sel.iter().copied().filter(|&i| b.flag(v.rows[i], ACK)).collect();
        let (st, peer) = if d == 0 {
            let [a, p] = &mut self.dirs;
            (a, p)
        } else {
            let [p, a] = &mut self.dirs;
            (a, p)
        };
        let peer_max_before = peer.snd_max_before;
        let mut cum = peer.snd_una;
        let mut prev_ack = st.last_ack.unwrap_or(-1);
        let mut prev_win = st.last_ack_win.unwrap_or(-1);
        let mut run = st.dup_run;
        for &i in &ai {
            let r = v.rows[i];
            let (syn, fin, rst) = (b.flag(r, SYN), b.flag(r, FIN), b.flag(r, RST));
            let pure = b.paylen[r] == 0 && !syn && !fin && !rst;
            st.ack_packets += 1;
            st.pure_acks += pure as i64;
            let ack_raw = b.ack[r];
            let ack = peer.space.unwrap_ack(ack_raw);
            cum = Some(cum.map_or(ack, |c| c.max(ack)));
            v.ack[i] = ack;
            v.has_ack[i] = true;
            // SACK blocks (not on RSTs, as tcptrace)
            st.empty_sack_options += b.sack_empty[r] as i64;
            let nsack = b.nsack[r];
            let has_sack = nsack > 0 && !rst;
            let mut dsack = false;
            if has_sack {
                st.sack_packets += 1;
                st.max_sack_blocks = st.max_sack_blocks.max(nsack);
                let mut edges = [(0i64, 0i64); MAX_SACK_BLOCKS];
                for (k, e) in edges.iter_mut().enumerate() {
                    let near = |raw: i64| ack + signed_diff(raw, ack_raw);
                    *e = (near(b.sack[8 * r + 2 * k]), near(b.sack[8 * r + 2 * k + 1]));
                }
                let m = (nsack as usize).min(MAX_SACK_BLOCKS);
                dsack = dsack_first_block(ack, &edges[..m]);
                st.dsack_packets += dsack as i64;
                v.dsack[i] = dsack;
                v.nsack[i] = nsack as u8;
                v.sack[i] = edges;
            }
            // duplicate ACKs: no data, ACK number unchanged, and either the same window (RFC
            // 5681 section 2) or new SACK information (RFC 6675 section 2), while data is
            // outstanding
            let win = v.win[i];
            let peer_max = v.snd_max_run[1 - d].as_ref().map_or(peer_max_before, |run| run[i]);
            let dup = duplicate_ack(pure, ack == prev_ack, ack < peer_max, win == prev_win, has_sack && !dsack);
            prev_ack = ack;
            prev_win = win;
            v.dup[i] = dup;
            if dup {
                st.dupacks += 1;
                run += 1;
                if run == 3 {
                    st.triple_dupacks += 1;
                }
            } else {
                run = 0;
            }
        }
        peer.snd_una = cum;
        st.last_ack = Some(prev_ack);
        st.last_ack_win = Some(prev_win);
        st.dup_run = run;
    }
}

/// Account payload `[lo, hi)` sent when the highest byte seen was `top`, and say where it
/// falls: REXMIT when it overlapped bytes already seen (a retransmission, counting the overlap
/// as tcptrace does), FILL when it fills a hole, GAP past a gap, NEW otherwise.
fn account_segment(st: &mut Direction, lo: i64, hi: i64, top: i64) -> Placement {
    let data_min = st.data_min.expect("set with the first data");
    if lo < data_min {
        // below everything seen so far: the space below becomes a hole
        st.holes.add(lo, data_min);
        st.data_min = Some(lo);
    }
    if lo >= top {
        // new data past a gap: the gap becomes a hole
        st.holes.add(top, lo);
        st.unique_bytes += hi - lo;
        return if lo > top { Placement::Gap } else { Placement::New };
    }
    let upto = hi.min(top);
    let unseen = st.holes.overlap(lo, upto);
    if st.holes.contains(lo) && hi < top {
        st.out_of_order += 1;
    }
    st.holes.remove(lo, hi);
    let seen = (upto - lo) - unseen;
    st.unique_bytes += (hi - lo) - seen;
    if seen > 0 {
        st.rexmit_packets += 1;
        st.rexmit_bytes += seen;
        Placement::Rexmit
    } else {
        Placement::Fill
    }
}

/// The events of direction `d` in the chunk: its sends and the peer's ACKs, in capture order.
fn events(b: &Batch, v: &View, d: usize) -> Vec<Event> {
    let mut out = Vec::new();
    for i in 0..v.rows.len() {
        let r = v.rows[i];
        let (time_ns, index, flags) = (b.ts_ns[r], b.index[r], b.flags[r] as u16);
        if v.d_of[i] == d && v.placement[i] != NOT_SENT {
            let placement = Placement::from_i8(v.placement[i]).expect("a placement");
            out.push(Event::send(time_ns, index, v.start[i], v.end[i], flags, b.tsval[r], placement));
        } else if v.d_of[i] != d && v.has_ack[i] {
            let blocks = &v.sack[i][..(v.nsack[i] as usize).min(MAX_SACK_BLOCKS)];
            out.push(Event::ack(time_ns, index, v.ack[i], blocks, v.dsack[i], v.dup[i], v.win[i], b.tsecr[r], flags));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::testkit::{Kit, Pkt};

    fn run(pkts: &[Pkt]) -> (Connection, [Vec<Event>; 2]) {
        let kit = Kit::new(0, pkts);
        let b = kit.batch();
        let mut c = Connection::new(0, &b, 0, 0);
        let rows: Vec<usize> = (0..pkts.len()).collect();
        let ev = c.consume(&b, &rows);
        (c, ev)
    }

    #[test]
    fn placement_and_counters_of_a_loss_and_its_repair() {
        let mut p = vec![Pkt::new(0, 1, 0, SYN, 999, 0, 0), Pkt::new(1, 0, 10, SYN | ACK, 4999, 1000, 0), Pkt::ack(0, 1, 20, 1000, 5000)];
        for k in 0..4 {
            p.push(Pkt::new(0, 1, 21 + k, ACK, 1000 + 100 * k, 5000, 100)); // 1..401 relative
        }
        p.push(Pkt::ack(1, 0, 31, 5000, 1100));
        p.push(Pkt::ack(1, 0, 32, 5000, 1100).with_sack(&[(1200, 1300)])); // 101..201 lost
        p.push(Pkt::ack(1, 0, 33, 5000, 1100).with_sack(&[(1200, 1400)]));
        p.push(Pkt::ack(1, 0, 34, 5000, 1100).with_sack(&[(1200, 1400)]));
        p.push(Pkt::new(0, 1, 35, ACK, 1100, 5000, 100)); // the retransmission
        p.push(Pkt::ack(1, 0, 45, 5000, 1400));
        p.push(Pkt::ack(1, 0, 46, 5000, 1400).with_sack(&[(1100, 1200)])); // a D-SACK
        let (c, [a2b, _]) = run(&p);
        let sends: Vec<(i64, i64, Placement)> = a2b.iter().filter(|e| e.is_send()).map(|e| (e.start, e.end, e.placement)).collect();
        assert_eq!(sends[0], (1, 1, Placement::None)); // the SYN: no payload, after its own number
        assert_eq!(
            &sends[1..],
            &[(1, 101, Placement::New), (101, 201, Placement::New), (201, 301, Placement::New), (301, 401, Placement::New), (101, 201, Placement::Rexmit)]
        );
        let acks: Vec<&Event> = a2b.iter().filter(|e| e.is_ack()).collect();
        assert_eq!(
            acks.iter().map(|e| (e.ack, e.dup, e.dsack)).collect::<Vec<_>>()[1..],
            [(101, false, false), (101, true, false), (101, true, false), (101, true, false), (401, false, false), (401, false, true)]
        );
        assert_eq!(acks[2].blocks(), &[(201, 301)]);
        let (a, b) = (&c.dirs[0], &c.dirs[1]);
        assert_eq!((a.unique_bytes, a.rexmit_packets, a.rexmit_bytes, a.data_packets, a.snd_max), (400, 1, 100, 5, 401));
        assert_eq!((b.dupacks, b.triple_dupacks, b.sack_packets, b.dsack_packets, b.max_sack_blocks), (3, 1, 4, 1, 1));
        assert_eq!(
            (a.snd_una, c.state(), c.syn_ts, c.synack_ts, c.hs_ack_ts),
            (Some(401), "open at end of capture", Some(0), Some(10_000_000), Some(20_000_000))
        );
        assert_eq!(c.facts(0).turnaround_ns, Some(10_000_000));
    }

    #[test]
    fn a_segment_past_a_gap_and_the_fill() {
        let p = [
            Pkt::new(0, 1, 0, ACK, 1, 9, 100),
            Pkt::new(0, 1, 1, ACK, 201, 9, 100), // past a gap of 101..201
            Pkt::new(0, 1, 2, ACK, 101, 9, 100), // fills it: out of order, not a retransmission
            Pkt::new(0, 1, 3, ACK, 51, 9, 100),  // overlaps bytes seen: 100 of them
        ];
        let (c, [a2b, _]) = run(&p);
        let placed: Vec<Placement> = a2b.iter().map(|e| e.placement).collect();
        assert_eq!(placed, vec![Placement::New, Placement::Gap, Placement::Fill, Placement::Rexmit]);
        let a = &c.dirs[0];
        assert_eq!((a.unique_bytes, a.out_of_order, a.rexmit_bytes), (300, 1, 100));
        assert_eq!(c.state(), "no SYN seen");
    }
}
