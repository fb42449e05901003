//! The chunk driver: flow table -> flow stage -> RTT sampler -> loss tracker over one chunk of the
//! capture at a time, handing on each touched connection's events (for the callers that read
//! them: `events_of`, plots, models) and the connections finished after the chunk, frozen with
//! their loss records.
//!
//! The stages behind the event boundary are fed in one place, [`Pipeline::feed`], per direction
//! of each touched connection ([`Stages`]): the RTT sampler, then the loss tracker
//! (`LossTracker::feed(&mut self, events: &[Event], now: i64, facts: &StreamFacts, rtt: &[(i64,
//! i64)])`, src/loss/tracker.rs) with the chunk's events, the time of the connection's last
//! packet, the flow stage's facts and the sampler's data/ACK samples.

use std::collections::HashSet;

use super::stage::Connection;
use super::table::{Delays, FlowTable, Handle};
use super::Batch;
use crate::events::{Dir, Event, StreamFacts};
use crate::loss::tracker::{Horizon, LazyTracker, LossResult, THIN_PACKETS};
use crate::rtt_sampler::{RttSampler, SampleBag};

/// The stages behind the event boundary that the core runs, per direction of a connection:
/// the RTT sampler and the loss tracker (src/loss/tracker.rs), fed the same events; the loss
/// tracker is made with the direction's first data or ACK (`LazyTracker`).
pub struct Stages {
    pub rtt: [RttSampler; 2],
    pub loss: [LazyTracker; 2],
}

/// One connection a chunk touched: what each direction's stages behind the boundary read.
#[derive(Clone, Debug)]
pub struct Touched {
    pub id: i64,
    /// time of the connection's last packet in the chunk
    pub now: i64,
    pub events: [Vec<Event>; 2],
    pub facts: [StreamFacts; 2],
    /// the chunk's data/ACK RTT samples of each direction (ACK time, sample), by time
    pub rtt: [Vec<(i64, i64)>; 2],
}

/// The names of a direction's counters in [`ConnResult::counts`], in order
/// (`results.DirectionCounts`, with the window mean as its sum and count). `NONE` marks a
/// counter that is not known (None in Python); booleans are 0/1.
pub const COUNT_FIELDS: [&str; 41] = [
    "packets",
    "ack_packets",
    "pure_acks",
    "sack_packets",
    "dsack_packets",
    "max_sack_blocks",
    "empty_sack_options",
    "unique_bytes",
    "data_packets",
    "data_bytes",
    "pushed",
    "rexmit_packets",
    "rexmit_bytes",
    "syn_rexmits",
    "fin_rexmits",
    "out_of_order",
    "zwnd_probes",
    "zwnd_probe_bytes",
    "syn_count",
    "fin_count",
    "rst_count",
    "dupacks",
    "triple_dupacks",
    "zero_windows",
    "window_min",
    "window_max",
    "window_sum",
    "window_count",
    "wscale",
    "mss",
    "sack_permitted",
    "ts_option",
    "max_seg",
    "min_seg",
    "oversize_segments",
    "first_ns",
    "last_ns",
    "idle_max_ns",
    "snd_una",
    "snd_max",
    "syn_seen",
];

/// A counter that is not known.
pub const NONE: i64 = i64::MIN;

/// A finished connection, frozen: identity, handshake, state, counters and RTT samples (a few
/// hundred bytes; its working state is gone).
#[derive(Clone, Debug)]
pub struct ConnResult {
    pub id: i64,
    pub epoch: i64,
    pub a_addr: [u8; 16],
    pub a_port: i64,
    pub b_addr: [u8; 16],
    pub b_port: i64,
    pub ipver: i64,
    pub state: &'static str,
    pub packets: i64,
    pub vlan_tagged: i64,
    pub backwards_timestamps: i64,
    pub syn_ns: Option<i64>,
    pub synack_ns: Option<i64>,
    pub hs_ack_ns: Option<i64>,
    pub window_scale_in_use: Option<bool>,
    pub counts: [[i64; COUNT_FIELDS.len()]; 2],
    /// data/ACK samples and timestamp samples of each direction (ns)
    pub rtt: [(Vec<i64>, Vec<i64>); 2],
    /// each direction's loss records (None when the stages did not run)
    pub loss: Option<[LossResult; 2]>,
}

fn opt(v: Option<i64>) -> i64 {
    v.unwrap_or(NONE)
}

impl ConnResult {
    fn of(c: Connection, stages: Option<Box<Stages>>) -> ConnResult {
        let counts = [0, 1].map(|d| {
            let s = &c.dirs[d];
            let (lo, hi, sum, count) = c.window_stats(d);
            [
                s.packets,
                s.ack_packets,
                s.pure_acks,
                s.sack_packets,
                s.dsack_packets,
                s.max_sack_blocks,
                s.empty_sack_options,
                s.unique_bytes,
                s.data_packets,
                s.data_bytes,
                s.pushed,
                s.rexmit_packets,
                s.rexmit_bytes,
                s.syn_rexmit,
                s.fin_rexmit,
                s.out_of_order,
                s.zwnd_probes,
                s.zwnd_probe_bytes,
                s.syn_count,
                s.fin_count,
                s.rst_count,
                s.dupacks,
                s.triple_dupacks,
                s.zero_windows,
                opt(lo),
                hi,
                sum,
                count,
                opt(s.wscale),
                opt(s.mss),
                s.sack_permitted as i64,
                s.ts_option as i64,
                s.max_seg,
                s.min_seg,
                s.oversize_segments,
                opt(s.first_ns),
                opt(s.last_ns),
                s.idle_max_ns,
                opt(s.snd_una),
                s.snd_max,
                s.syn_seen as i64,
            ]
        });
        let (rtt, loss) = match stages.map(|b| *b) {
            Some(Stages { rtt: [r0, r1], loss: [l0, l1] }) => {
                ([(r0.samples.to_vec(), r0.ts_samples.to_vec()), (r1.samples.to_vec(), r1.ts_samples.to_vec())], Some([l0.finish(), l1.finish()]))
            }
            None => ([(Vec::new(), Vec::new()), (Vec::new(), Vec::new())], None),
        };
        ConnResult {
            id: c.id,
            epoch: c.epoch,
            a_addr: c.a.0,
            a_port: c.a.1 as i64,
            b_addr: c.b.0,
            b_port: c.b.1 as i64,
            ipver: c.ipver,
            state: c.state(),
            packets: c.packets,
            vlan_tagged: c.vlan_tagged,
            backwards_timestamps: c.backwards_timestamps,
            syn_ns: c.syn_ts,
            synack_ns: c.synack_ts,
            hs_ack_ns: c.hs_ack_ts,
            window_scale_in_use: c.window_scale_in_use(),
            counts,
            rtt,
            loss,
        }
    }
}

/// A connection the flow table handed back, with its stages, not yet frozen: a caller that
/// freezes them one at a time (`Finishing::result`) holds one connection's records at a time, not
/// those of every connection finished at once (all of a capture's at its end).
pub struct Finishing {
    conn: Box<Connection>,
    stages: Option<Box<Stages>>,
}

impl Finishing {
    pub fn id(&self) -> i64 {
        self.conn.id
    }

    /// Close its stages into its frozen result; its working state goes.
    pub fn result(self) -> ConnResult {
        ConnResult::of(*self.conn, self.stages)
    }
}

/// What one chunk gave.
#[derive(Default)]
pub struct ChunkOut {
    /// the ids of the connections the chunk touched, in the order they went to the sink
    pub touched: Vec<i64>,
    /// whether each was asked for (`Pipeline::set_events_for`)
    pub wanted: Vec<bool>,
    /// the connections finished after it (all that were live, at the end of the capture), to
    /// be frozen ([`Finishing::result`]) one at a time by the caller
    pub finished: Vec<Finishing>,
    /// connection id and direction of each packet of the chunk
    pub row_conn: Vec<i64>,
    pub row_dir: Vec<i8>,
}

pub struct Pipeline {
    table: FlowTable,
    stages: Vec<Option<Box<Stages>>>, // by table handle (boxed: a tracker is a few KB, moved once)
    /// run the stages behind the boundary (else the flow stage alone: events)
    run_stages: bool,
    numbered: i64,
    first_merge: usize,
    thin_packets: i64,
    horizon: Horizon,
    /// hand on only these connections' events (None: every one's)
    events_for: Option<HashSet<i64>>,
}

impl Pipeline {
    pub fn new(delays: Delays, run_stages: bool) -> Pipeline {
        Pipeline {
            table: FlowTable::new(delays),
            stages: Vec::new(),
            run_stages,
            numbered: 0,
            first_merge: SampleBag::FIRST_MERGE,
            thin_packets: THIN_PACKETS,
            horizon: Horizon::default(),
            events_for: None,
        }
    }

    /// Where the RTT sample bags of connections created from now on first merge their samples
    /// (`SampleBag::FIRST_MERGE`; the memory-bound tests use small captures).
    pub fn set_first_merge(&mut self, n: usize) {
        self.first_merge = n;
    }

    /// The loss trackers of connections created from now on: their thin-stream bound and D-SACK
    /// horizon (tests shorten it to see records move within a short capture).
    pub fn set_loss(&mut self, thin_packets: i64, horizon: Horizon) {
        self.thin_packets = thin_packets;
        self.horizon = horizon;
    }

    /// The live loss trackers' (records held as objects: resends, resent segments, episodes),
    /// bytes that grow with outstanding data, and resends moved into their tables so far.
    pub fn loss_state(&self) -> ((usize, usize, usize), usize, usize) {
        let (mut live, mut held, mut moved) = ((0, 0, 0), 0, 0);
        for t in self.stages.iter().flatten().flat_map(|s| s.loss.iter()).filter_map(LazyTracker::running) {
            let (a, b, c) = t.live_records();
            live = (live.0 + a, live.1 + b, live.2 + c);
            held += t.held_bytes();
            moved += t.moved_retransmissions();
        }
        (live, held, moved)
    }

    /// Hand on, from now on, only the events of the connections `ids` (None: of every one): a
    /// caller that reads one connection's events (`events_of`) gets no others across.
    pub fn set_events_for(&mut self, ids: Option<HashSet<i64>>) {
        self.events_for = ids;
    }

    /// Whether any connection's events are asked for (a report asks for none).
    pub fn wants_events(&self) -> bool {
        self.events_for.as_ref().is_none_or(|ids| !ids.is_empty())
    }

    /// How many connections were numbered so far (ids 0 to this - 1).
    pub fn connections(&self) -> i64 {
        self.numbered
    }

    /// How many connections are live.
    pub fn live(&self) -> usize {
        self.table.live()
    }

    /// Bytes the live connections' working state holds (the flow stage's, the RTT samplers' and
    /// the loss trackers' own structs), for the memory-bound tests: it follows the live
    /// connections, not the capture.
    pub fn held_bytes(&self) -> usize {
        let stages: usize = self
            .stages
            .iter()
            .flatten()
            .map(|s| s.rtt.iter().map(RttSampler::heap_bytes).sum::<usize>() + s.loss.iter().map(LazyTracker::boxed_bytes).sum::<usize>())
            .sum();
        // (what grows in the loss trackers: loss_state)
        let live = self.stages.iter().flatten().count();
        self.table.held_bytes() + stages + size_of::<Option<Box<Stages>>>() * self.stages.capacity() + size_of::<Stages>() * live
    }

    /// Run one chunk. `backwards`: the record numbers (sorted) the analysis clock counted as
    /// going backwards in it, credited to their connections. Each touched connection goes to
    /// `sink` as soon as the flow stage and the RTT sampler are done with it (its `id` is -1:
    /// connections are numbered at the end of the chunk, `ChunkOut::touched` gives the ids in
    /// the same order), so that a chunk's events need not all be held at once.
    pub fn feed(&mut self, b: &Batch, backwards: &[i64], sink: &mut dyn FnMut(&Touched)) -> ChunkOut {
        let n = b.len();
        let mut touched: Vec<Handle> = Vec::new();
        let mut row_handle = vec![0usize; n];
        let mut row_dir = vec![0i8; n];
        let (stages, run_stages, first_merge) = (&mut self.stages, self.run_stages, self.first_merge);
        let (thin, horizon) = (self.thin_packets, self.horizon);
        self.table.split(b, |table, h, rows| {
            let conn = table.conn_mut(h);
            if !backwards.is_empty() {
                conn.backwards_timestamps += rows.iter().filter(|&&r| backwards.binary_search(&b.index[r]).is_ok()).count() as i64;
            }
            for &r in rows {
                row_handle[r] = h;
                row_dir[r] = conn.direction_of(b, r) as i8;
            }
            let events = conn.consume(b, rows);
            let now = b.ts_ns[rows[rows.len() - 1]];
            let facts = [conn.facts(0), conn.facts(1)];
            let mut rtt = [Vec::new(), Vec::new()];
            if run_stages {
                if stages.len() <= h {
                    stages.resize_with(h + 1, || None);
                }
                let st = stages[h].get_or_insert_with(|| {
                    Box::new(Stages {
                        rtt: [0, 1].map(|_| RttSampler::with_first_merge(first_merge)),
                        loss: [Dir::A2B, Dir::B2A].map(|d| LazyTracker::new(d, thin, horizon)),
                    })
                });
                // the stages behind the event boundary, per direction
                for d in 0..2 {
                    rtt[d] = st.rtt[d].feed(&events[d]);
                    st.loss[d].feed(&events[d], now, &facts[d], &rtt[d]);
                }
            }
            sink(&Touched { id: -1, now, events, facts, rtt });
            touched.push(h);
        });
        // ids number connections by their first packet; a later chunk only holds later records
        let mut new = std::mem::take(&mut self.table.new);
        new.sort_by_key(|&h| self.table.conn(h).first_index);
        for (k, &h) in new.iter().enumerate() {
            self.table.conn_mut(h).id = self.numbered + k as i64;
        }
        self.numbered += new.len() as i64;
        let touched: Vec<i64> = touched.iter().map(|&h| self.table.conn(h).id).collect();
        let wanted = touched.iter().map(|id| self.events_for.as_ref().is_none_or(|ids| ids.contains(id))).collect();
        let row_conn = row_handle.iter().map(|&h| self.table.conn(h).id).collect();
        let finished = if n > 0 { self.table.expire(b.ts_ns[n - 1]) } else { Vec::new() };
        let finished = finished.into_iter().map(|(h, c)| self.result(h, c)).collect();
        ChunkOut { touched, wanted, finished, row_conn, row_dir }
    }

    /// The end of the capture: every connection still live, to be frozen.
    pub fn finish(&mut self) -> Vec<Finishing> {
        let done = self.table.finish_all();
        let out = done.into_iter().map(|(h, c)| self.result(h, c)).collect();
        self.stages = Vec::new(); // every slot is empty now: its memory back
        out
    }

    fn result(&mut self, h: Handle, conn: Box<Connection>) -> Finishing {
        let stages = self.stages.get_mut(h).and_then(Option::take);
        Finishing { conn, stages }
    }
}
