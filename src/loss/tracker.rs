//! Loss forensics of one direction, fed batch by batch by its connection (DOMAIN.md s. 4-7).
//!
//! The connection hands over, for each batch, the direction's events (`events::Event`): the
//! data segments already placed in the sequence space (new, retransmitted, filling a hole, or
//! past a gap) and the receiver's ACKs already unwrapped, with their duplicate-ACK and D-SACK
//! marks, plus the batch's data/ACK RTT samples. The tracker steps through them one event at a
//! time. While nothing is open (no episode, no resend awaiting its ACK, no resent segment
//! uncovered) a stretch of events with nothing to judge (in-order data, ACKs without a dupACK
//! mark or SACK block) only moves scalars, and it moves them as one step for the stretch: the
//! time of the stretch's last ACK is the time of its advance (the Python tracker this replaces
//! took such stretches in numpy; the figures stay those it gave). A stretch ends at an event
//! that needs judgement or at the end of the batch.
//!
//! Each retransmission is classified when it is seen, from what the capture showed up to then,
//! as the sender itself had to decide (DOMAIN.md section 4):
//!
//! - *ACK-clocked or timer*: an ACK-clocked resend follows an ACK by the capture point's local
//!   turnaround (about 0 near the sender, about one RTT near the receiver; taken from the
//!   handshake); a resend that comes later than that by more than half an SRTT was sent by a
//!   timer.
//! - ACK-clocked with duplicate ACKs or SACK blocks above it, outside an episode: *fast*
//!   retransmit when DupThresh (3) dupACKs or RFC 6675 IsLost say so, else *early*.
//! - Inside an episode (until snd_una passes the recovery point): *recovery*, unless the head
//!   of the window (snd_una) is resent and not ACK-clocked (later than the turnaround by more
//!   than 1 ms after the last ACK, and more than 1 ms after the sender's previous packet):
//!   *rto*, which ends the episode and starts a timeout episode (RFC 6298 section 5; its
//!   go-back-N resends are that episode's *recovery*). No RTO's worth of silence is asked for:
//!   RFC 6582 section 4's Impatient variant re-arms the timer at the first partial ACK, so the
//!   timer can fire long before an RTO after the head's last copy, and the estimate here has no
//!   200 ms / 1 s floor.
//! - A timer outside an episode: *tlp* when it resends the highest outstanding segment, is not
//!   the second timer firing on the same data, and no earlier probe is still open, else *rto*.
//!   A probe stays open until an ACK acknowledges beyond the snd_max it was sent at, or a
//!   duplicate ACK or D-SACK at that point shows both copies arrived (RFC 8985 sections
//!   7.3-7.4, Linux's tlp_high_seq): new data sent meanwhile does not allow a second probe.
//! - ACK-clocked, outside any episode, with no dupACK or SACK block: *other*, sent in Open for
//!   a reason the capture does not show. Two exceptions read the sender's state from what
//!   follows an episode judged spurious (undone): a go-back-N resend below snd_max after an
//!   undone timeout episode, and a resend of the head below the recovery point after an undone
//!   fast recovery (NewReno's answer to a partial ACK, RFC 6582 section 3.2 step 5), show a
//!   sender that did not undo; the episode comes back and the resend is its *recovery*.
//! - Nothing to go on (no ACK seen, no RTT yet): *ambiguous*.
//!
//! A resend is later marked spurious (DOMAIN.md section 4) by a D-SACK for its bytes (RFC
//! 2883), by an ACK covering it that echoes an older TSval (Eifel, RFC 3522), or when the ACK
//! that first covers it was caused by an earlier resend: that ACK also first covered an
//! earlier-sent resend below it, while the receiver had never reported these bytes missing (no
//! ACK stopped inside them and no SACK left them as a hole after they were first sent).
//!
//! Lost transmissions (DOMAIN.md section 7) are placed relative to the capture point: a
//! transmission seen here and then resent (not spuriously) was lost *downstream*; bytes first
//! seen filling a hole, later than reordering explains, had their original lost *upstream*,
//! and the copy that filled the hole is a resend that may itself be lost downstream. At a
//! mid-path capture both kinds occur. A resend lost upstream leaves no trace here (its bytes
//! are a hole already, or were seen before), so an upstream loss is counted once per hole
//! filled.
//!
//! Records are kept as objects only while something can still change them, then moved into
//! column tables (`records::Table`), so memory follows what is open, not the length of the
//! capture: a resend once the ACKs have covered it (or it was judged spurious) and it is past
//! the D-SACK horizon (a D-SACK is matched only to one of the latest [`DSACK_WINDOW`] resends
//! sent within 8 times the largest SRTT seen, at least 200 ms; on the captures in tests/data
//! every D-SACK came about one SRTT after its resend); an episode once none of the live resends
//! belongs to it; a resent segment once it is covered, its resends have moved and its last
//! transmission is past the same horizon, when its incident, lost transmissions and RTD samples
//! are derived. The horizon comes from the RTT samples taken before the moment it is asked for,
//! so what moves does not depend on where batches end, except that a resend of bytes whose last
//! transmission is further back than the horizon (rare) may start a new segment record.
//!
//! The receiver's SACK information is kept in the RFC 6675 scoreboard (`scoreboard.rs`, its
//! Update() alone: the sender's recovery is what this tracker infers, not what it assumes) and
//! the RTT in the RFC 6298 estimator (`rfc6298.rs`).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::events::{Dir, Event, Placement, StreamFacts};
use crate::loss::records::{Cause, Episode, Rexmit, Table, Where};
use crate::loss::states::{episode_state, transition, CaState, EpisodeEnd, Event as StateEvent, Input, Spurious, Trigger};
use crate::rfc6298::Rfc6298;
use crate::scoreboard::Scoreboard;
use crate::seq::wire_add;

pub const DUP_THRESH: i64 = 3; // RFC 5681 section 3.2, RFC 6675 section 2
pub const THIN_PACKETS: i64 = 4; // DOMAIN.md section 6
pub const MIN_TIMER_GAP_NS: i64 = 5_000_000; // a timer is told apart from ACK clocking by at least 5 ms
pub const CLOCK_TOLERANCE_NS: i64 = 1_000_000; // an ACK-clocked resend leaves within 1 ms of its ACK or of the send before it
/// a timer interval this much longer than the one before it was backed off (`timer_interval`)
pub const DOUBLED: f64 = std::f64::consts::SQRT_2;
pub const TOO_SOON: f64 = 0.8; // an ACK within 0.8 x the minimum local RTT of a resend was not caused by it
pub const DSACK_WINDOW: usize = 512; // a D-SACK is matched against the latest this many resends...
pub const DSACK_RTTS: i64 = 8; // ...sent at most this many times the largest SRTT seen before it...
pub const DSACK_MIN_HORIZON_NS: i64 = 200_000_000; // ...or 200 ms (Linux's minimum RTO), if longer...
pub const DSACK_NO_RTT_HORIZON_NS: i64 = 1_000_000_000; // ...or 1 s before any RTT sample
pub const RTO_MAX_NS: i64 = 120_000_000_000; // Linux TCP_RTO_MAX; RFC 6298 (2.5) allows a maximum of 60 s or more

/// The D-SACK horizon's parameters (module doc); tests shorten it to see records move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Horizon {
    pub rtts: i64,
    pub min_ns: i64,
}

impl Default for Horizon {
    fn default() -> Horizon {
        Horizon { rtts: DSACK_RTTS, min_ns: DSACK_MIN_HORIZON_NS }
    }
}

/// What the capture tells of this direction's round trip, as known when it is asked.
#[derive(Clone, Debug, Default)]
pub struct Timing {
    /// smallest data/ACK RTT at the capture point
    pub min_local_ns: Option<i64>,
    /// largest SRTT so far (the D-SACK horizon's scale)
    pub srtt_max_ns: Option<f64>,
    /// capture point -> sender -> capture point (handshake)
    pub turnaround_ns: Option<i64>,
    estimator: Rfc6298,
    queue: VecDeque<(i64, i64)>, // (time, sample), not yet applied
}

impl Timing {
    /// RFC 6298 smoothed RTT of the data/ACK pairs at the capture point.
    pub fn srtt_ns(&self) -> Option<f64> {
        self.estimator.srtt
    }

    /// The sender's RTT: the local data/ACK RTT plus the sender-side turnaround.
    pub fn srtt_full_ns(&self) -> Option<f64> {
        self.estimator.srtt.map(|s| s + self.turnaround_ns.unwrap_or(0) as f64)
    }

    /// RFC 6298 section 2 RTO, without the 1 s floor (Linux uses 200 ms), at most RTO_MAX_NS.
    pub fn rto_ns(&self) -> Option<i64> {
        let (srtt, var) = (self.estimator.srtt?, self.estimator.rttvar?);
        let rto = srtt + f64::max(1_000_000.0, 4.0 * var) + self.turnaround_ns.unwrap_or(0) as f64;
        Some(RTO_MAX_NS.min(rto as i64))
    }

    /// Start from the handshake's sample at this capture point (RFC 6298 section 2.2).
    fn seed(&mut self, sample_ns: Option<i64>) {
        if let Some(s) = sample_ns {
            if s > 0 && self.estimator.srtt.is_none() && self.queue.is_empty() {
                self.apply(&[s]);
            }
        }
    }

    /// Queue RTT samples (time order); `catch_up` applies them.
    fn add(&mut self, samples: &[(i64, i64)]) {
        self.queue.extend(samples.iter().copied());
    }

    /// Apply the queued samples taken before `t` (all of them when `t` is None).
    fn catch_up(&mut self, t: Option<i64>) {
        if self.queue.is_empty() {
            return;
        }
        let k = match t {
            None => self.queue.len(),
            Some(t) => self.queue.partition_point(|&(at, _)| at < t),
        };
        if k > 0 {
            let v: Vec<i64> = self.queue.drain(..k).map(|(_, s)| s).collect();
            self.apply(&v);
            if self.queue.is_empty() {
                self.queue.shrink_to_fit();
            }
        }
    }

    /// RFC 6298 section 2.2/2.3 over new samples, every one of them in order: the result then
    /// does not depend on how the samples were grouped (batches, resends in between).
    fn apply(&mut self, samples: &[i64]) {
        let m = *samples.iter().min().expect("samples");
        self.min_local_ns = Some(self.min_local_ns.map_or(m, |x| x.min(m)));
        let top = self.estimator.update_all(samples.iter().map(|&s| s as f64));
        if self.srtt_max_ns.is_none_or(|x| top > x) {
            self.srtt_max_ns = Some(top);
        }
    }
}

/// A live record that several lists refer to (a resend is in `recent`, `pending` and its
/// segments' lists). Behind a mutex, never contended (one tracker is stepped by one thread), so
/// that a tracker may move between threads (a pipeline run by a thread pool, as dask runs it).
type Shared<T> = Arc<Mutex<T>>;
type RxRef = Shared<Rexmit>;
type SegRef = Shared<Seg>;
type EpRef = Shared<Episode>;

fn shared<T>(x: T) -> Shared<T> {
    Arc::new(Mutex::new(x))
}

/// Access to a shared record (a panic while one was held cannot leave it half-changed in a way
/// that matters more than the panic itself, so a poisoned lock is taken as is).
trait Get<T> {
    fn get(&self) -> MutexGuard<'_, T>;
}

impl<T> Get<T> for Shared<T> {
    fn get(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The transmissions of one original segment (or of bytes first seen filling a hole). Kept
/// for every segment ever resent, until it settles.
#[derive(Debug)]
struct Seg {
    start: i64,
    end: i64,
    /// (ns, record, TSval, position) of the first copy seen; None: not seen
    first: Option<(i64, i64, i64, i64)>,
    rexmits: Vec<RxRef>, // its resends, in order
    rexmit_pos: Vec<i64>,
    upstream: bool, // first seen filling a hole: the original never passed here
    opened_ns: Option<i64>,
    opened_pos: i64,
    covered_ns: Option<i64>,
    reported_missing: bool, // an ACK stopped inside it or SACK left it a hole
    sacked: bool,           // a SACK block covered it after it was first sent
}

/// One transmission of a segment as seen here.
struct Tx {
    ns: i64,
    record: i64,
    pos: i64,
    rexmit: Option<RxRef>,
}

impl Seg {
    fn new(start: i64, end: i64, first: Option<(i64, i64, i64, i64)>) -> Seg {
        Seg {
            start,
            end,
            first,
            rexmits: Vec::new(),
            rexmit_pos: Vec::new(),
            upstream: false,
            opened_ns: None,
            opened_pos: -1,
            covered_ns: None,
            reported_missing: false,
            sacked: false,
        }
    }

    /// Transmissions seen.
    fn count(&self) -> i64 {
        self.rexmits.len() as i64 + self.first.is_some() as i64
    }

    /// (send time, TSval) of the latest transmission seen.
    fn last(&self) -> Option<(i64, i64)> {
        if let Some(r) = self.rexmits.last() {
            let r = r.get();
            return Some((r.time_ns, r.tsval));
        }
        self.first.map(|f| (f.0, f.2))
    }

    /// Every transmission seen, in order.
    fn transmissions(&self) -> Vec<Tx> {
        let mut out: Vec<Tx> = self.first.iter().map(|f| Tx { ns: f.0, record: f.1, pos: f.3, rexmit: None }).collect();
        for (r, &p) in self.rexmits.iter().zip(&self.rexmit_pos) {
            let (ns, record) = {
                let b = r.get();
                (b.time_ns, b.index)
            };
            out.push(Tx { ns, record, pos: p, rexmit: Some(r.clone()) });
        }
        out
    }
}

/// The resent segments by their first byte, in the order they were made (a key set again
/// keeps its place, as a Python dict does): the order they settle in.
#[derive(Default)]
struct Segs {
    slots: Vec<Option<SegRef>>,
    at: HashMap<i64, usize>,
}

impl Segs {
    fn get(&self, start: i64) -> Option<SegRef> {
        self.at.get(&start).map(|&i| self.slots[i].clone().expect("live slot"))
    }

    fn set(&mut self, start: i64, seg: SegRef) {
        match self.at.get(&start) {
            Some(&i) => self.slots[i] = Some(seg),
            None => {
                self.at.insert(start, self.slots.len());
                self.slots.push(Some(seg));
            }
        }
    }

    fn remove(&mut self, start: i64) {
        if let Some(i) = self.at.remove(&start) {
            self.slots[i] = None;
        }
        if self.slots.len() > 64 && self.at.len() * 2 < self.slots.len() {
            self.slots.retain(|s| s.is_some());
            for (i, s) in self.slots.iter().enumerate() {
                let k = s.as_ref().expect("kept").get().start;
                self.at.insert(k, i);
            }
        }
    }

    fn values(&self) -> impl Iterator<Item = &SegRef> {
        self.slots.iter().flatten()
    }

    fn len(&self) -> usize {
        self.at.len()
    }
}

/// Everything the tracker found in one direction (the Python `LossResult`).
#[derive(Clone, Debug)]
pub struct LossResult {
    pub dir: Dir,
    pub retransmissions: Table, // in the order sent
    pub fills: Table,           // in the order seen
    pub episodes: Table,        // by id
    pub incidents: Table,       // by start
    pub lost: Table,            // by start, then transmission
    /// data segment transmissions seen (originals and resends)
    pub transmissions: i64,
    /// per data transmission of the sender in send order (those lost upstream included): did it not arrive
    pub lost_flags: Vec<bool>,
    /// send time of each transmission flagged in `lost_flags`, in send order
    pub lost_times: Vec<i64>,
    /// record number of each, -1 for an original lost upstream (not seen)
    pub lost_records: Vec<i64>,
    pub thin_ns: i64,
    pub busy_ns: i64,
    pub network_duplicates: i64,
    pub reorderings: i64,
    pub srtt_full_ns: Option<f64>,
    /// per original segment, between its consecutive transmissions
    pub rtd_samples_ns: Vec<i64>,
    /// the same, ending in a timeout resend
    pub rto_rtd_samples_ns: Vec<i64>,
}

/// Loss forensics of the data one side sends, seen with the other side's ACKs.
pub struct LossTracker {
    dir: Dir,
    thin_packets: i64,
    horizon: Horizon,
    pub timing: Timing,
    mss: i64,
    seq_anchor: i64,
    // first transmissions not yet pruned (sorted by start: new data goes out in order)
    o_start: Vec<i64>,
    o_end: Vec<i64>,
    o_ts: Vec<i64>,
    o_index: Vec<i64>,
    o_tsval: Vec<i64>,
    o_pos: Vec<i64>,
    prune_mark: Option<i64>,
    o_dropped: i64,
    o_total: i64,
    // what the sender knows
    snd_una: Option<i64>,
    snd_max: i64,
    dup_run: i64,
    last_ack_ns: Option<i64>,
    last_advance_ns: Option<i64>,
    last_send_ns: Option<i64>,
    board: Scoreboard,
    last_blocks: Vec<(i64, i64)>,
    holes: BTreeMap<i64, (i64, i64, i64, i64)>, // gap start -> (end, opened ns, TSval above, position above)
    segs: Segs,
    recent: VecDeque<RxRef>,   // resends not yet moved to the table, in order
    episodes: VecDeque<EpRef>, // episodes not yet moved, by id
    episode: Option<EpRef>,
    rx_table: Table,
    fill_table: Table,
    episode_table: Table,
    incident_table: Table,
    lost_table: Table,
    rtd: Vec<i64>,
    rto_rtd: Vec<i64>,
    lost_pos: Vec<i64>,
    lost_ns: Vec<i64>,
    lost_rec: Vec<i64>,
    up_pos: Vec<i64>,
    up_ns: Vec<i64>,
    up_start: Vec<i64>,
    pending: Vec<(RxRef, Vec<SegRef>)>, // resends not yet covered
    open: Vec<SegRef>,                  // resent segments not yet covered by an ACK
    sack_seen: bool,
    rto_run: i64,
    rto_prev: Option<(i64, i64)>,
    rto_doublings: i64,
    tlp_end: Option<i64>,
    undone: Option<EpRef>,
    network_duplicates: i64,
    reorderings: i64,
    tx_count: i64,
    thin_ns: i64,
    busy_ns: i64,
    flight_last: Option<(i64, i64)>,
}

/// What a tracker reads from every batch of its direction, events or not (the first lines of
/// [`LossTracker::feed`]): the stream facts, and the RTT samples into the estimator (seeded with
/// the receiver's turnaround while it has no sample).
fn absorb(mss: &mut i64, seq_anchor: &mut i64, timing: &mut Timing, facts: &StreamFacts, rtt: &[(i64, i64)]) {
    *mss = facts.mss;
    *seq_anchor = facts.seq_anchor;
    timing.turnaround_ns = facts.turnaround_ns;
    timing.seed(facts.receiver_turnaround_ns); // capture point -> receiver -> back
    timing.add(rtt);
}

/// An ACK the tracker reads (one below the space's origin acknowledges nothing seen).
fn is_ack(e: &Event) -> bool {
    e.is_ack() && e.ack >= 0
}

/// An event the tracker steps through: data or such an ACK (a batch without one only moves
/// what [`absorb`] keeps).
fn counts(e: &Event) -> bool {
    e.is_data() || is_ack(e)
}

/// The loss tracker of one direction of a connection the core's flow pipeline runs, made when
/// the direction first has data or an ACK ([`counts`]): until then only what every batch moves
/// ([`absorb`]) is kept, a couple of hundred bytes instead of the tracker's 1.5 KB and more (the
/// directions of a SYN scan's connections never have either). The results are the tracker's
/// own: the one it is made into is the one that absorbed the same batches.
pub enum LazyTracker {
    Waiting(Box<Waiting>),
    Running(Box<LossTracker>),
}

/// A [`LazyTracker`] before its direction's first data or ACK.
pub struct Waiting {
    dir: Dir,
    thin_packets: i64,
    horizon: Horizon,
    mss: i64,
    seq_anchor: i64,
    timing: Timing,
}

impl LazyTracker {
    pub fn new(dir: Dir, thin_packets: i64, horizon: Horizon) -> LazyTracker {
        LazyTracker::Waiting(Box::new(Waiting { dir, thin_packets, horizon, mss: 0, seq_anchor: 0, timing: Timing::default() }))
    }

    /// [`LossTracker::feed`], the tracker made first if the batch has data or an ACK.
    pub fn feed(&mut self, events: &[Event], now: i64, facts: &StreamFacts, rtt: &[(i64, i64)]) {
        if let LazyTracker::Waiting(w) = self {
            if !events.iter().any(counts) {
                absorb(&mut w.mss, &mut w.seq_anchor, &mut w.timing, facts, rtt);
                return;
            }
            *self = LazyTracker::Running(Box::new(w.tracker()));
        }
        if let LazyTracker::Running(t) = self {
            t.feed(events, now, facts, rtt);
        }
    }

    /// The bytes of its box (the tracker's own, or what it waits with), for the memory-bound
    /// figures; what grows in a tracker is [`LossTracker::held_bytes`].
    pub fn boxed_bytes(&self) -> usize {
        match self {
            LazyTracker::Running(_) => size_of::<LossTracker>(),
            LazyTracker::Waiting(_) => size_of::<Waiting>(),
        }
    }

    /// The tracker, if made.
    pub fn running(&self) -> Option<&LossTracker> {
        match self {
            LazyTracker::Running(t) => Some(t),
            LazyTracker::Waiting(_) => None,
        }
    }

    /// [`LossTracker::finish`] (of a tracker made now if the direction never had data or an ACK).
    pub fn finish(self) -> LossResult {
        match self {
            LazyTracker::Running(t) => t.finish(),
            LazyTracker::Waiting(mut w) => w.tracker().finish(),
        }
    }
}

impl Waiting {
    /// The tracker that would have absorbed the same batches.
    fn tracker(&mut self) -> LossTracker {
        let mut t = LossTracker::with_horizon(self.dir, self.thin_packets, self.horizon);
        t.mss = self.mss;
        t.seq_anchor = self.seq_anchor;
        t.timing = std::mem::take(&mut self.timing);
        t
    }
}

/// Python's `a / 1e6:.1f` of an integer or float count of ns: ms with one decimal.
fn ms(x: f64) -> String {
    format!("{:.1}", x / 1e6)
}

impl LossTracker {
    pub fn new(dir: Dir, thin_packets: i64) -> LossTracker {
        LossTracker::with_horizon(dir, thin_packets, Horizon::default())
    }

    pub fn with_horizon(dir: Dir, thin_packets: i64, horizon: Horizon) -> LossTracker {
        LossTracker {
            dir,
            thin_packets,
            horizon,
            timing: Timing::default(),
            mss: 0,
            seq_anchor: 0,
            o_start: Vec::new(),
            o_end: Vec::new(),
            o_ts: Vec::new(),
            o_index: Vec::new(),
            o_tsval: Vec::new(),
            o_pos: Vec::new(),
            prune_mark: None,
            o_dropped: 0,
            o_total: 0,
            snd_una: None,
            snd_max: 0,
            dup_run: 0,
            last_ack_ns: None,
            last_advance_ns: None,
            last_send_ns: None,
            board: Scoreboard::new(1, DUP_THRESH, 0).expect("valid board"),
            last_blocks: Vec::new(),
            holes: BTreeMap::new(),
            segs: Segs::default(),
            recent: VecDeque::new(),
            episodes: VecDeque::new(),
            episode: None,
            rx_table: Table::retransmissions(),
            fill_table: Table::fills(),
            episode_table: Table::episodes(),
            incident_table: Table::incidents(),
            lost_table: Table::lost(),
            rtd: Vec::new(),
            rto_rtd: Vec::new(),
            lost_pos: Vec::new(),
            lost_ns: Vec::new(),
            lost_rec: Vec::new(),
            up_pos: Vec::new(),
            up_ns: Vec::new(),
            up_start: Vec::new(),
            pending: Vec::new(),
            open: Vec::new(),
            sack_seen: false,
            rto_run: 0,
            rto_prev: None,
            rto_doublings: 0,
            tlp_end: None,
            undone: None,
            network_duplicates: 0,
            reorderings: 0,
            tx_count: 0,
            thin_ns: 0,
            busy_ns: 0,
            flight_last: None,
        }
    }

    /// Records still held as objects: (resends, resent segments, episodes), what can change.
    pub fn live_records(&self) -> (usize, usize, usize) {
        (self.recent.len(), self.segs.len(), self.episodes.len())
    }

    /// Bytes of the per-transmission state that grows with the data outstanding (the first
    /// transmissions kept for look-ups, the RTT samples not yet applied), as allocated.
    pub fn held_bytes(&self) -> usize {
        let firsts = [&self.o_start, &self.o_end, &self.o_ts, &self.o_index, &self.o_tsval, &self.o_pos];
        firsts.iter().map(|v| v.capacity() * 8).sum::<usize>() + self.timing.queue.capacity() * 16
    }

    /// Resends moved into the table so far.
    pub fn moved_retransmissions(&self) -> usize {
        self.rx_table.len
    }

    // ------------------------------------------------------------------ feed

    /// Account one batch of the direction's events.
    ///
    /// `now` is the time of the connection's last packet in the batch (time with packets in
    /// flight is counted up to it; records older than the D-SACK horizon before it move to the
    /// tables); `facts` what the flow stage knows of the direction; `rtt` the batch's data/ACK
    /// RTT samples as (ACK time, sample), in time order.
    pub fn feed(&mut self, events: &[Event], now: i64, facts: &StreamFacts, rtt: &[(i64, i64)]) {
        absorb(&mut self.mss, &mut self.seq_anchor, &mut self.timing, facts, rtt);
        if !events.iter().any(counts) {
            return;
        }
        let data: Vec<bool> = events.iter().map(|e| e.is_data()).collect();
        let acks: Vec<bool> = events.iter().map(is_ack).collect();
        let first_tx: Vec<bool> = events.iter().zip(&data).map(|(e, &d)| d && matches!(e.placement, Placement::New | Placement::Gap)).collect();
        let mut pos_of_row = vec![-1i64; events.len()];
        for (i, _) in data.iter().enumerate().filter(|(_, &d)| d) {
            pos_of_row[i] = self.tx_count;
            self.tx_count += 1;
        }
        let n_first = first_tx.iter().filter(|&&x| x).count() as i64;
        for (i, e) in events.iter().enumerate() {
            if first_tx[i] {
                self.o_pos.push(pos_of_row[i]);
                self.o_start.push(e.start);
                self.o_end.push(e.end);
                self.o_ts.push(e.time_ns);
                self.o_index.push(e.index);
                self.o_tsval.push(e.tsval);
            }
        }
        self.o_total += n_first;
        let flight = self.account_flight(events, &first_tx, &acks, n_first, now);
        self.walk(events, &data, &acks, &pos_of_row, &flight);
        self.timing.catch_up(None);
        self.prune();
        self.settle(Some(now));
    }

    /// Forget first transmissions acknowledged before this batch (their resends are rare).
    fn prune(&mut self) {
        if self.snd_una.is_none() || self.o_end.is_empty() {
            return;
        }
        let keep_from = match self.prune_mark {
            None => 0,
            Some(m) => self.o_end.partition_point(|&x| x <= m),
        };
        // the entries pruned are freed now, not kept as spare capacity: memory follows the
        // data outstanding, not the largest batch
        for v in [&mut self.o_pos, &mut self.o_start, &mut self.o_end, &mut self.o_ts, &mut self.o_index, &mut self.o_tsval] {
            v.drain(..keep_from);
            if v.capacity() > v.len() + v.len() / 4 + 4 {
                v.shrink_to_fit();
            }
        }
        self.o_dropped += keep_from as i64;
        self.prune_mark = self.snd_una;
    }

    /// Time with packets in flight, and with at most `thin_packets` of them (DOMAIN.md 6).
    /// Packets in flight after each row: first transmissions sent so far minus those whose end
    /// the cumulative ACK has passed (resends are not counted again).
    fn account_flight(&mut self, events: &[Event], first_tx: &[bool], acks: &[bool], n_first: i64, now: i64) -> Vec<i64> {
        let n = events.len();
        let mut una = self.snd_una.unwrap_or(-1);
        let mut sent = self.o_total - n_first;
        let mut flight = Vec::with_capacity(n);
        for i in 0..n {
            if acks[i] {
                una = una.max(events[i].ack);
            }
            sent += first_tx[i] as i64;
            let acked = self.o_dropped + self.o_end.partition_point(|&x| x <= una) as i64;
            flight.push((sent - acked).max(0));
        }
        let (mut prev_t, mut prev_f) = self.flight_last.unwrap_or((events[0].time_ns, 0));
        for i in 0..=n {
            let t = if i < n { events[i].time_ns } else { now };
            let dt = t - prev_t;
            if prev_f > 0 {
                self.busy_ns += dt;
                if prev_f <= self.thin_packets {
                    self.thin_ns += dt;
                }
            }
            prev_t = t;
            if i < n {
                prev_f = flight[i];
            }
        }
        self.flight_last = Some((now, flight[n - 1]));
        flight
    }

    /// Something is open that a quiet row could change: an episode, uncovered resends.
    fn busy(&self) -> bool {
        self.episode.is_some() || !self.pending.is_empty() || !self.open.is_empty()
    }

    /// Step through the batch: a quiet stretch (module doc) as one step, the other rows one by one.
    fn walk(&mut self, ev: &[Event], data: &[bool], acks: &[bool], pos: &[i64], flight: &[i64]) {
        let n = ev.len();
        let loud = |i: usize| (data[i] && ev[i].placement != Placement::New) || (acks[i] && (ev[i].dup || ev[i].nsack > 0));
        let mut i = 0;
        while i < n {
            if !self.busy() {
                let mut j = i;
                while j < n && !loud(j) {
                    j += 1;
                }
                if j > i {
                    self.quiet(&ev[i..j], &data[i..j], &acks[i..j]);
                    i = j;
                    continue;
                }
            }
            // rows from i one by one until nothing is open any more
            while i < n {
                self.row(&ev[i], data[i], acks[i], pos[i], flight[i]);
                i += 1;
                if !self.busy() {
                    break;
                }
            }
        }
    }

    /// A stretch of rows with nothing to judge: move the scalars.
    fn quiet(&mut self, ev: &[Event], data: &[bool], acks: &[bool]) {
        let mut top_ack: Option<i64> = None;
        let mut t_ack = 0;
        for (k, e) in ev.iter().enumerate() {
            if data[k] {
                self.snd_max = self.snd_max.max(e.end);
                self.last_send_ns = Some(e.time_ns);
            }
            if acks[k] {
                top_ack = Some(top_ack.map_or(e.ack, |a| a.max(e.ack)));
                t_ack = e.time_ns;
            }
        }
        if let Some(a) = top_ack {
            if self.snd_una.is_none_or(|u| a > u) {
                self.advance(a, t_ack, -1);
            }
            self.last_ack_ns = Some(t_ack);
        }
    }

    fn row(&mut self, e: &Event, data: bool, ack: bool, pos: i64, flight: i64) {
        if data {
            let t = e.time_ns;
            match e.placement {
                Placement::Rexmit => {
                    self.timing.catch_up(Some(t));
                    self.on_rexmit(e.start, e.end, t, e.index, e.tsval, pos, flight);
                }
                Placement::Fill => {
                    self.timing.catch_up(Some(t));
                    self.on_fill(e.start, e.end, t, e.index, e.tsval, pos);
                }
                p => {
                    if p == Placement::Gap && e.start > self.snd_max {
                        self.holes.insert(self.snd_max, (e.start, t, e.tsval, pos));
                    }
                }
            }
            if e.end > self.snd_max {
                self.snd_max = e.end;
            }
            self.last_send_ns = Some(t);
        } else if ack {
            self.on_ack(e.ack, e.time_ns, e.dup, e.dsack, e.blocks(), e.tsecr);
        }
    }

    fn advance(&mut self, a: i64, t: i64, tsecr: i64) {
        self.snd_una = Some(a);
        self.last_advance_ns = Some(t);
        self.dup_run = 0;
        self.rto_run = 0;
        if self.tlp_end.is_some_and(|x| a > x) {
            self.tlp_end = None;
        }
        if self.board.sacked_bytes() != 0 {
            // else the next SACK block brings the board up to snd_una
            self.board.update(a, &[]);
        }
        if !self.pending.is_empty() {
            let (covered, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending).into_iter().partition(|p| p.0.get().end <= a);
            self.pending = rest;
            if !covered.is_empty() {
                self.covered(&covered, t, tsecr);
            }
        }
        if !self.open.is_empty() {
            for sg in &self.open {
                let mut s = sg.get();
                if s.end <= a {
                    s.covered_ns = Some(t);
                }
            }
            self.open.retain(|sg| sg.get().end > a);
        }
        if let Some(ep) = &self.episode {
            if a >= ep.get().recovery_point {
                self.end_episode(Input::Event(StateEvent::FullAck), Some(t));
            }
        }
    }

    /// The open episode ends as `states::TRANSITIONS` says.
    fn end_episode(&mut self, what: Input, t: Option<i64>) {
        let ep = self.episode.take().expect("an open episode");
        let trigger = ep.get().trigger;
        let (_, ended) = transition(episode_state(Some(trigger)), what).expect("a transition of the contract");
        let ended = ended.expect("the transition ends the episode");
        {
            let mut e = ep.get();
            e.end_ns = t;
            e.ended = ended;
        }
        self.undone = if ended == EpisodeEnd::Undone { Some(ep) } else { None };
    }

    /// Resends whose end the ACK at `t` covered for the first time (in send order).
    fn covered(&mut self, covered: &[(RxRef, Vec<SegRef>)], t: i64, tsecr: i64) {
        for (j, (r, segs)) in covered.iter().enumerate() {
            r.get().covered_ns = Some(t);
            let (spurious, tsval, start, index) = {
                let b = r.get();
                (b.spurious, b.tsval, b.start, b.index)
            };
            if spurious.is_some() {
                continue;
            }
            if tsecr >= 0 && tsval >= 0 && tsecr < tsval {
                self.spurious(r, Spurious::Eifel, None);
                continue;
            }
            let missing = segs.iter().any(|sg| sg.get().reported_missing);
            // with SACK in use, a receiver that had these bytes said so: without such a block the
            // ACK may be a delayed one for two resends that both were needed
            let had = !self.sack_seen || segs.iter().any(|sg| sg.get().sacked);
            let by_earlier = || {
                covered[..j].iter().any(|(p, _)| {
                    let p = p.get();
                    p.end <= start && p.index < index
                })
            };
            if self.too_soon(r, t) || (had && !missing && by_earlier()) {
                self.spurious(r, Spurious::EarlyAck, None);
            }
        }
    }

    /// An ACK (cumulative or SACK) of `r`'s bytes at `t` came back sooner than the resend's own
    /// ACK could: an earlier copy caused it (DOMAIN.md section 4, spurious).
    fn too_soon(&self, r: &RxRef, t: i64) -> bool {
        self.timing.min_local_ns.is_some_and(|m| ((t - r.get().time_ns) as f64) < TOO_SOON * m as f64)
    }

    /// Resends whose bytes a SACK block at `t` reported held for the first time, sooner than
    /// their own ACK could come back: the SACK was for an earlier copy (a tail-loss probe sent
    /// just before the original's SACK arrived).
    fn sacked_too_soon(&mut self, t: i64) {
        for k in 0..self.pending.len() {
            let (r, hit) = {
                let (r, segs) = &self.pending[k];
                let open = r.get().spurious.is_none();
                let hit = open && segs.iter().all(|sg| sg.get().sacked) && self.too_soon(r, t);
                (r.clone(), hit)
            };
            if hit {
                self.spurious(&r, Spurious::EarlyAck, Some(t));
            }
        }
    }

    /// Mark a resend unnecessary, shown at `t` (default: when it was covered); an open episode
    /// that it began is undone (RFC 3522 s. 2).
    fn spurious(&mut self, r: &RxRef, why: Spurious, t: Option<i64>) {
        r.get().spurious = Some(why);
        let (episode, index, covered_ns) = {
            let b = r.get();
            (b.episode, b.index, b.covered_ns)
        };
        let Some(id) = episode else {
            return;
        };
        // a live resend's episode is live (settle moves an episode only after its resends)
        let k = id - self.episode_table.len as i64;
        let Some(ep) = usize::try_from(k).ok().and_then(|k| self.episodes.get(k)).cloned() else {
            debug_assert!(false, "the episode of a live resend has moved");
            return;
        };
        ep.get().spurious += 1;
        let current = self.episode.as_ref().is_some_and(|e| Arc::ptr_eq(e, &ep));
        if current && ep.get().start_index == index {
            self.end_episode(Input::Event(StateEvent::Undone), if t.is_none() { covered_ns } else { t });
        }
    }

    fn on_ack(&mut self, a: i64, t: i64, dup: bool, dsack: bool, blocks: &[(i64, i64)], tsecr: i64) {
        if self.snd_una.is_none_or(|u| a > u) {
            self.advance(a, t, tsecr);
        } else if dup {
            self.dup_run += 1;
        }
        if (dup || dsack) && self.tlp_end.is_some_and(|x| a >= x) {
            self.tlp_end = None; // a duplicate at the probe's end: the probe and its original both arrived
        }
        let una = self.snd_una.expect("set by the first ACK");
        // an ACK stopping inside a resent segment reports it missing
        for sg in &self.open {
            let mut s = sg.get();
            if s.start <= a && a < s.end {
                s.reported_missing = true;
            }
        }
        if !blocks.is_empty() {
            self.sack_seen = true;
            if let Some(ep) = &self.episode {
                ep.get().sack_in_use = true;
            }
            let mut first = 0;
            if dsack {
                self.on_dsack(blocks[0].0, blocks[0].1, t);
                first = 1;
            }
            // receivers repeat most blocks: only those not in the previous ACK can add anything
            let new: Vec<(i64, i64)> = blocks[first..].iter().copied().filter(|&(_, hi)| hi > una).filter(|b| !self.last_blocks.contains(b)).collect();
            if !new.is_empty() {
                self.board.update(una, &new);
            }
            self.last_blocks = blocks.to_vec();
            // holes below the highest SACK are reported missing; what the blocks cover, held
            if let Some(top) = self.board.high_sack() {
                let mut newly = false;
                for sg in &self.open {
                    let mut s = sg.get();
                    let whole = self.board.sacked_within(s.start, s.end) >= s.end - s.start;
                    newly |= whole && !s.sacked;
                    s.sacked |= whole;
                    if !s.reported_missing && una <= s.start && s.start < top && !whole {
                        s.reported_missing = true;
                    }
                }
                if newly && !self.pending.is_empty() {
                    self.sacked_too_soon(t);
                }
            }
        }
        self.last_ack_ns = Some(t);
    }

    /// A D-SACK: the latest resend of these bytes arrived twice (RFC 2883 section 4).
    fn on_dsack(&mut self, lo: i64, hi: i64, t: i64) {
        self.timing.catch_up(Some(t));
        let horizon = t - self.dsack_horizon();
        let skip = self.recent.len().saturating_sub(DSACK_WINDOW);
        let cand = self.recent.iter().skip(skip).rev().find(|r| {
            let r = r.get();
            r.start < hi && lo < r.end && horizon <= r.time_ns && r.time_ns <= t
        });
        let Some(c) = cand.cloned() else {
            return;
        };
        let spurious = c.get().spurious;
        match spurious {
            None => self.spurious(&c, Spurious::Dsack, None),
            // the receiver's own word outranks timing
            Some(Spurious::EarlyAck) => c.get().spurious = Some(Spurious::Dsack),
            Some(_) => {}
        }
    }

    // ------------------------------------------------------------ segments

    /// The segments a resend of `[s, e)` covers, created from the first transmissions.
    fn segs_of(&mut self, s: i64, e: i64) -> Vec<SegRef> {
        let mut out = Vec::new();
        let mut i = self.o_start.partition_point(|&x| x <= s).saturating_sub(1);
        while i < self.o_start.len() && self.o_start[i] < e {
            let (a, b) = (self.o_start[i], self.o_end[i]);
            if b > s {
                let seg = match self.segs.get(a) {
                    Some(seg) => seg,
                    None => {
                        let seg = shared(Seg::new(a, b, Some((self.o_ts[i], self.o_index[i], self.o_tsval[i], self.o_pos[i]))));
                        self.segs.set(a, seg.clone());
                        seg
                    }
                };
                out.push(seg);
            }
            i += 1;
        }
        if out.is_empty() {
            // first seen filling a hole, or first sent before the capture or the store
            let found = self
                .segs
                .values()
                .find(|sg| {
                    let g = sg.get();
                    g.start <= s && s < g.end
                })
                .cloned();
            if let Some(sg) = found {
                out.push(sg);
            } else {
                let seg = shared(Seg::new(s, e, None));
                self.segs.set(s, seg.clone());
                out.push(seg);
            }
        }
        out
    }

    /// Bytes below snd_max seen for the first time: reordering or a loss upstream.
    fn on_fill(&mut self, s: i64, e: i64, t: i64, index: i64, tsval: i64, pos: i64) {
        let key = self.holes.range(..=s).next_back().map(|(&k, &v)| (k, v));
        let (mut opened_ns, mut above_tsval, mut opened_pos) = (t, -1, pos);
        if let Some((key, (hole_end, o_ns, a_tsval, o_pos))) = key {
            (opened_ns, above_tsval, opened_pos) = (o_ns, a_tsval, o_pos);
            if e >= hole_end && s <= key {
                self.holes.remove(&key);
            } else if s <= key {
                self.holes.insert(e, (hole_end, opened_ns, above_tsval, opened_pos));
                self.holes.remove(&key);
            } else if e >= hole_end {
                self.holes.insert(key, (s, opened_ns, above_tsval, opened_pos));
            }
        }
        let late = t - opened_ns;
        let srtt = self.timing.srtt_full_ns();
        let (cause, why) = if tsval >= 0 && above_tsval >= 0 && tsval != above_tsval {
            let after = tsval > above_tsval;
            (
                if after { Cause::Retransmission } else { Cause::Reordering },
                format!("TSval {tsval} {} {above_tsval} of the data above the hole", if after { "after" } else { "before" }),
            )
        } else if let Some(srtt) = srtt {
            (
                if late as f64 > srtt / 2.0 { Cause::Retransmission } else { Cause::Reordering },
                format!("filled {} ms after the hole opened (SRTT {} ms)", ms(late as f64), ms(srtt)),
            )
        } else {
            (Cause::Ambiguous, "no timestamps and no RTT estimate".to_string())
        };
        let seq = self.seq32(s);
        self.fill_table.row().int(index).int(t).int(seq).int(s).int(e).int(opened_ns).code(Some(cause as u8)).text(&why);
        if cause == Cause::Reordering {
            self.reorderings += 1;
            return;
        }
        let mut seg = Seg::new(s, e, Some((t, index, tsval, pos)));
        seg.upstream = true;
        seg.opened_ns = Some(opened_ns);
        seg.opened_pos = opened_pos;
        let seg = shared(seg);
        self.segs.set(s, seg.clone());
        self.open.push(seg);
    }

    fn seq32(&self, rel: i64) -> i64 {
        wire_add(self.seq_anchor, rel)
    }

    #[allow(clippy::too_many_arguments)]
    fn on_rexmit(&mut self, s: i64, e: i64, t: i64, index: i64, tsval: i64, pos: i64, flight: i64) {
        let segs = self.segs_of(s, e);
        let lasts: Vec<(i64, i64)> = segs.iter().filter_map(|sg| sg.get().last()).collect();
        let prev_ns = lasts.iter().map(|x| x.0).max();
        let prev_tsval = lasts.iter().map(|x| x.1).max().unwrap_or(-1);
        // a network duplicate: the same bytes with the same TSval, moments apart
        if tsval >= 0 && tsval == prev_tsval {
            if let Some(p) = prev_ns {
                if t - p < 1_000_000i64.max(self.timing.min_local_ns.unwrap_or(0).div_euclid(2)) {
                    self.network_duplicates += 1;
                    return;
                }
            }
        }
        let nth = segs.iter().map(|sg| sg.get().count()).max().expect("at least one segment");
        let una = self.snd_una.unwrap_or(0);
        let since_ack = self.last_ack_ns.map(|a| t - a);
        let last = [self.last_ack_ns, self.last_send_ns, prev_ns].into_iter().flatten().max().unwrap_or(t);
        let silence = t - last;
        let high_sack = self.board.high_sack().filter(|&h| h != 0).unwrap_or(s);
        let sacked_bytes = self.board.sacked_within(s, high_sack);
        for sg in &segs {
            // SACKed before this resend: the receiver had a copy
            let mut g = sg.get();
            g.sacked |= self.board.sacked_within(g.start, g.end) >= g.end - g.start;
        }
        let smss = if self.mss != 0 { self.mss } else { (e - s).max(1) };
        self.board.set_smss(smss).expect("a positive SMSS");
        let sacked_segs = (sacked_bytes + smss - 1).div_euclid(smss);
        let is_lost = self.board.is_lost(s);
        let highest = e >= self.snd_max;
        let head = s <= una;
        // DOMAIN.md section 5: each byte range's RTD is from its own previous transmission; a
        // resend that merges queued messages is timed from the previous copy of its first byte
        // (segs[0] holds it), not from a later copy of its tail (a probe, say)
        let first_last = {
            let g = segs[0].get();
            if g.start <= s && s < g.end {
                g.last()
            } else {
                None
            }
        };
        let rtd_from = first_last.map(|x| x.0).or(prev_ns);
        let rtd = rtd_from.map(|x| t - x);
        let (trigger, evidence) = self.classify(&segs, rtd, since_ack, sacked_segs, is_lost, highest, head, flight, silence);
        let mut ep = self.episode.clone();
        let mut interval = None;
        if trigger == Trigger::Rto {
            self.rto_run += 1;
            interval = Some(self.timer_interval(t, rtd, silence));
        } else if trigger == Trigger::Tlp {
            self.tlp_end = Some(self.snd_max);
        }
        let ep_trigger = ep.as_ref().map(|x| x.get().trigger);
        let backoff = trigger == Trigger::Rto && ep_trigger == Some(Trigger::Rto) && self.rto_run > 1;
        let resume = ep.is_none() && trigger == Trigger::Recovery; // classify: the sender did not undo an undone episode
        let resumed = if self.undone.as_ref().is_some_and(|u| u.get().trigger == Trigger::Rto) { StateEvent::Resume } else { StateEvent::ResumeRecovery };
        let what = if backoff {
            Input::Event(StateEvent::Backoff)
        } else if resume {
            Input::Event(resumed)
        } else {
            Input::Resend(trigger)
        };
        let (state, ended) = transition(episode_state(ep_trigger), what).expect("a transition of the contract");
        if resume {
            let u = self.undone.take().expect("an undone episode to resume");
            {
                let mut b = u.get();
                b.end_ns = None; // open again, as when it began
                b.ended = EpisodeEnd::EndOfCapture;
            }
            self.episode = Some(u.clone());
            ep = Some(u);
        }
        if backoff {
            ep.as_ref().expect("a timeout episode").get().recovery_point = self.snd_max;
            // the same timeout episode goes on
        }
        if ended.is_some() {
            self.end_episode(Input::Resend(trigger), Some(t));
            ep = None;
        }
        if ep.is_none() && state != CaState::Open {
            let id = (self.episode_table.len + self.episodes.len()) as i64;
            let new = shared(Episode {
                id,
                trigger,
                start_ns: t,
                start_index: index,
                recovery_point: self.snd_max,
                end_ns: None,
                ended: EpisodeEnd::EndOfCapture,
                retransmissions: 0,
                holes: 0,
                rtos: 0,
                sack_in_use: false,
                spurious: 0,
            });
            self.episodes.push_back(new.clone());
            self.episode = Some(new.clone());
            ep = Some(new);
        }
        let (ep_id, ep_trig) = match &ep {
            Some(x) => {
                let b = x.get();
                (Some(b.id), Some(b.trigger))
            }
            None => (None, None),
        };
        let is_rto = trigger == Trigger::Rto;
        let r = Rexmit {
            index,
            time_ns: t,
            seq: self.seq32(s),
            start: s,
            end: e,
            nth,
            trigger,
            episode: ep_id,
            rtd_ns: rtd,
            dupacks: self.dup_run,
            sacked_segments: sacked_segs,
            silence_ns: silence,
            since_ack_ns: since_ack,
            flight_segments: flight,
            backoff: if is_rto { self.rto_doublings } else { 0 },
            rto_estimate_ns: self.timing.rto_ns(),
            srtt_ns: self.timing.srtt_full_ns().map(|x| x as i64),
            highest,
            thin: flight <= self.thin_packets,
            tsval,
            rto_run: if is_rto { self.rto_run } else { 0 },
            rto_interval_ns: interval,
            episode_trigger: ep_trig,
            spurious: if e <= una { Some(Spurious::Acked) } else { None },
            covered_ns: None,
            evidence,
        };
        if let (Some(x), Some(id)) = (&ep, ep_id) {
            let holes = segs.iter().filter(|sg| !sg.get().rexmits.iter().any(|r| r.get().episode == Some(id))).count() as i64;
            let mut b = x.get();
            b.retransmissions += 1;
            b.holes += holes;
            if is_rto {
                b.rtos += 1;
            }
        }
        let spurious = r.spurious;
        let r = shared(r);
        for sg in &segs {
            let fresh = {
                let mut g = sg.get();
                let fresh = g.rexmits.is_empty() && !g.upstream;
                g.rexmits.push(r.clone());
                g.rexmit_pos.push(pos);
                fresh
            };
            if fresh {
                self.open.push(sg.clone());
            }
        }
        self.recent.push_back(r.clone());
        if spurious.is_none() {
            self.pending.push((r, segs));
        }
    }

    /// The retransmission timer's interval behind the timer resend at `t` (the `rto_run`-th of
    /// its run), and the run's backoff so far in `rto_doublings`.
    ///
    /// The first of a run: the timer ran from the later of the last ACK of new data (RFC 6298
    /// section 5.3 restarts it there) and the previous copy of the resent bytes (5.1 starts it
    /// with the send; Linux also re-arms it relative to the head's send after a probe), so the
    /// interval is the shorter of the two times, or the direction's silence when neither is
    /// known. A later one: the time since the previous timer resend (5.5-5.6 restart the timer
    /// with it). An interval that grew over the one before by more than sqrt(2) (nearer to 2x
    /// than to 1x) is one doubling (RFC 6298 5.5: each expiry backs the timer off once; a larger
    /// step, as when a timer resend is missing from the capture, still counts once); a flat
    /// step is not, as with Linux's thin-stream linear timeouts (paper 001 section 4.1.2). The
    /// doublings are `backoff`, as Linux's `icsk_backoff` counts them; at RFC 6298 2.5's upper
    /// bound the intervals stop growing, and so does the count.
    fn timer_interval(&mut self, t: i64, rtd: Option<i64>, silence: i64) -> i64 {
        let interval = match self.rto_prev {
            Some((prev_t, prev_interval)) if self.rto_run != 1 => {
                let interval = t - prev_t;
                if interval as f64 > DOUBLED * prev_interval as f64 {
                    self.rto_doublings += 1;
                }
                interval
            }
            _ => {
                self.rto_doublings = 0;
                [rtd, self.last_advance_ns.map(|x| t - x)].into_iter().flatten().min().unwrap_or(silence)
            }
        };
        self.rto_prev = Some((t, interval));
        interval
    }

    /// The trigger of a resend, with its evidence (module doc).
    #[allow(clippy::too_many_arguments)]
    fn classify(
        &self,
        segs: &[SegRef],
        rtd: Option<i64>,
        since_ack: Option<i64>,
        sacked_segs: i64,
        is_lost: bool,
        highest: bool,
        head: bool,
        flight: i64,
        silence: i64,
    ) -> (Trigger, String) {
        let tm = &self.timing;
        let (Some(since_ack), Some(srtt)) = (since_ack, tm.srtt_full_ns()) else {
            return (Trigger::Ambiguous, "no ACK or no RTT sample yet: cannot tell a timer from ACK clocking".to_string());
        };
        let turnaround = tm.turnaround_ns.unwrap_or(0);
        let rto = tm.rto_ns().unwrap_or(0);
        let lag = since_ack - turnaround;
        let timer = lag as f64 > f64::max(srtt / 2.0, MIN_TIMER_GAP_NS as f64);
        let clock = format!("{} ms after the last ACK (turnaround {} ms, SRTT {} ms)", ms(since_ack as f64), ms(turnaround as f64), ms(srtt));
        let dup = format!("{} dupACKs, {} segments SACKed above", self.dup_run, sacked_segs);
        if let Some(ep) = &self.episode {
            let (ep_id, ep_trigger) = {
                let b = ep.get();
                (b.id, b.trigger)
            };
            let again = segs.iter().any(|sg| sg.get().rexmits.iter().any(|r| r.get().episode == Some(ep_id)));
            if timer && head && (again || ep_trigger == Trigger::Rto || lag > rto) {
                return (Trigger::Rto, format!("timer: head resent {clock}"));
            }
            // a resend of the head inside an episode that no ACK clocked out (it left neither at
            // an ACK's turnaround nor right behind the sender's previous packet) is the timer's:
            // the dupACKs of a stalled recovery do not restart it (RFC 6298 section 5), and RFC
            // 6582 section 4's Impatient variant re-armed it at the first partial ACK, so it may
            // fire well before an RTO after the head's last copy
            if head && lag > CLOCK_TOLERANCE_NS && silence > CLOCK_TOLERANCE_NS {
                return (
                    Trigger::Rto,
                    format!("timer: head resent inside the episode, not ACK-clocked: {clock}, {} ms after the previous send", ms(silence as f64)),
                );
            }
            // dupACKs do not restart the retransmission timer (RFC 6298 section 5): a head resent
            // again long after its last resend, not right after an ACK, is the timer's
            if let Some(rtd) = rtd {
                if head && again && rtd as f64 > f64::max(2.0 * srtt, rto as f64) && lag > MIN_TIMER_GAP_NS {
                    return (Trigger::Rto, format!("timer: head resent again {} ms after its last resend, {clock}", ms(rtd as f64)));
                }
            }
            return (Trigger::Recovery, format!("in episode {ep_id} ({}); {dup}", ep_trigger.name()));
        }
        if !timer && (self.dup_run != 0 || sacked_segs != 0) {
            if self.dup_run >= DUP_THRESH || is_lost {
                return (Trigger::Fast, format!("{dup}; {clock}"));
            }
            return (Trigger::Early, format!("{dup} (< {DUP_THRESH}); {clock}"));
        }
        if let Some(undone) = &self.undone {
            let live = self.episodes.iter().any(|x| Arc::ptr_eq(x, undone));
            if !timer && live {
                let u = undone.get();
                if u.trigger == Trigger::Rto && !highest {
                    // ACK-clocked, no dupACKs, below snd_max, right after a timeout episode judged
                    // spurious: go-back-N (RFC 6298 section 5) of a sender that did not undo the timeout
                    return (Trigger::Recovery, format!("go-back-N after timeout episode {}, which the sender did not undo; {dup}; {clock}", u.id));
                }
                if u.trigger != Trigger::Rto && head && self.snd_una.is_some_and(|x| x < u.recovery_point) {
                    // ACK-clocked resend of the head below the recovery point of a fast recovery
                    // judged spurious: NewReno's answer to a partial ACK (RFC 6582 section 3.2
                    // step 5) from a sender that did not undo the recovery (no Eifel response)
                    return (
                        Trigger::Recovery,
                        format!("partial ACK: head resent below the recovery point of episode {}, which the sender did not undo; {dup}; {clock}", u.id),
                    );
                }
            }
        }
        if timer && (lag as f64) < srtt && rtd.is_none_or(|r| (r as f64) < 2.0 * srtt) {
            // sooner than any RTO (> SRTT, RFC 6298 s. 2) after an ACK, and about an RTT after the
            // segment was last sent: RACK's reordering timer (RFC 8985 s. 6.2) or a probe
            if self.dup_run != 0 || sacked_segs != 0 {
                return (Trigger::Early, format!("timer sooner than an RTO, {dup} (RACK reordering timer); {clock}"));
            }
            if highest {
                return (Trigger::Tlp, format!("timer: highest segment resent {clock}"));
            }
        }
        if timer {
            if highest && self.tlp_end.is_none() && self.rto_run == 0 && (!head || flight <= 1) {
                return (Trigger::Tlp, format!("timer: highest segment resent {clock}"));
            }
            return (Trigger::Rto, format!("timer: {} resent {clock}", if head { "head" } else { "segment" }));
        }
        // no episode, no dupACK or SACK block, no timer: the sender was in Open and resent for a
        // reason the capture does not show (loss marks kept from an earlier timeout, as ns-3's
        // scoreboard keeps them, resent as soon as the window allows)
        (Trigger::Other, format!("ACK-clocked in Open: {dup}, outside any episode; {clock}"))
    }

    // -------------------------------------------------------------- settle

    /// How long after a resend a D-SACK can still name it (module doc), ns. From the RTT
    /// samples taken before the moment asked about (the caller catches up), so it does not
    /// depend on where batches end.
    fn dsack_horizon(&self) -> i64 {
        match self.timing.srtt_max_ns {
            None => DSACK_NO_RTT_HORIZON_NS,
            Some(m) => {
                let scaled = (self.horizon.rtts as f64 * (m + self.timing.turnaround_ns.unwrap_or(0) as f64)) as i64;
                self.horizon.min_ns.max(scaled)
            }
        }
    }

    /// Move what can no longer change from objects into the tables (module doc). `now`: the
    /// time of the batch's last row; None at the end of the capture (all moves).
    fn settle(&mut self, now: Option<i64>) {
        let final_ = now.is_none();
        let old = now.map(|n| n - self.dsack_horizon());
        let mut k = if final_ { self.recent.len() } else { 0 };
        if let Some(old) = old {
            let beyond = self.recent.len() as i64 - DSACK_WINDOW as i64; // these are out of the D-SACK window anyway
            while k < self.recent.len() {
                let r = self.recent[k].get();
                if (r.covered_ns.is_some() || r.spurious.is_some()) && ((k as i64) < beyond || r.time_ns < old) {
                    k += 1;
                } else {
                    break;
                }
            }
        }
        let moved = k;
        for r in self.recent.drain(..k) {
            self.rx_table.push_rexmit(&r.get());
        }
        // episode ids only grow, so the first live resend with an episode has the oldest live one
        let mut first_live = self.recent.iter().find_map(|r| r.get().episode);
        if let Some(ep) = &self.episode {
            let id = ep.get().id;
            if first_live.is_none_or(|f| id < f) {
                first_live = Some(id);
            }
        }
        while let Some(ep) = self.episodes.front() {
            if final_ || first_live.is_none_or(|f| ep.get().id < f) {
                self.episode_table.push_episode(&ep.get());
                self.episodes.pop_front();
            } else {
                break;
            }
        }
        if !(final_ || moved > 0 || self.recent.is_empty()) {
            return; // a resent segment waits for its resends to move
        }
        let oldest = self.recent.front().map(|r| r.get().index);
        let una = self.snd_una.unwrap_or(0);
        // a segment also waits out the horizon after its last transmission, so that a late
        // resend of its bytes (of acknowledged bytes, say) still finds it, whatever the batches
        let mut done: Vec<SegRef> = self
            .segs
            .values()
            .filter(|sg| {
                let Some(old) = old else {
                    return true;
                };
                let g = sg.get();
                (g.covered_ns.is_some() || (g.rexmits.is_empty() && !g.upstream && g.end <= una))
                    && (oldest.is_none() || g.rexmits.is_empty() || g.rexmits.last().expect("resent").get().index < oldest.expect("some"))
                    && g.last().is_none_or(|l| l.0 < old)
            })
            .cloned()
            .collect();
        if final_ {
            done.sort_by_key(|sg| sg.get().start);
        }
        for sg in done {
            self.close(&sg.get());
            let start = sg.get().start;
            self.segs.remove(start);
        }
    }

    /// Derive a settled segment's incident, lost transmissions and RTD samples (DOMAIN.md 5, 7).
    fn close(&mut self, seg: &Seg) {
        let tx = seg.transmissions();
        for w in tx.windows(2) {
            // DOMAIN.md 5: consecutive transmissions of one segment
            if let Some(r) = &w[1].rexmit {
                self.rtd.push(w[1].ns - w[0].ns);
                if r.get().trigger == Trigger::Rto {
                    self.rto_rtd.push(w[1].ns - w[0].ns);
                }
            }
        }
        if seg.rexmits.is_empty() && !seg.upstream {
            return;
        }
        // transmission i did not arrive when resend i+1 was needed (not spurious)
        let mut lost_tx: Vec<i64> = if seg.upstream { vec![-1] } else { vec![] }; // upstream: the unseen original
        for i in 0..tx.len().saturating_sub(1) {
            if let Some(nxt) = &tx[i + 1].rexmit {
                if nxt.get().spurious.is_none() {
                    lost_tx.push(i as i64);
                }
            }
        }
        let first_ns = seg.opened_ns.unwrap_or(tx[0].ns);
        let seq = self.seq32(seg.start);
        for &i in &lost_tx {
            if i < 0 {
                self.lost_table.row().opt(None).int(first_ns).int(seq).int(seg.start).int(seg.end).flag(true).code(Some(Where::Upstream as u8));
                if seg.opened_pos >= 0 {
                    self.up_pos.push(seg.opened_pos);
                    self.up_ns.push(first_ns);
                    self.up_start.push(seg.start);
                }
                continue;
            }
            let x = &tx[i as usize];
            // the first copy seen here is the original unless it filled a hole (upstream: a resend)
            let original = i == 0 && !seg.upstream;
            self.lost_table.row().int(x.record).int(x.ns).int(seq).int(seg.start).int(seg.end).flag(original).code(Some(Where::Downstream as u8));
            if x.pos >= 0 {
                self.lost_pos.push(x.pos);
                self.lost_ns.push(x.ns);
                self.lost_rec.push(x.record);
            }
        }
        let where_ = if seg.upstream { Where::Upstream } else { Where::Downstream };
        let triggers: Vec<u8> = seg.rexmits.iter().map(|r| r.get().trigger as u8).collect();
        let thin = seg.rexmits.iter().any(|r| r.get().thin);
        self.incident_table
            .row()
            .int(seg.start)
            .int(seg.end)
            .int(seq)
            .opt(if seg.upstream { None } else { Some(tx[0].record) })
            .int(first_ns)
            .int(seg.rexmits.len() as i64 + seg.upstream as i64)
            .int(tx[tx.len() - 1].ns)
            .opt(seg.covered_ns)
            .code(Some(where_ as u8))
            .flag(!lost_tx.is_empty())
            .int(lost_tx.len() as i64)
            .codes(triggers.into_iter())
            .flag(thin);
    }

    /// The sender's data transmissions in send order as lost flags, with the send time and
    /// record number (-1: not seen here) of each lost one (DOMAIN.md section 7).
    ///
    /// Transmissions seen here are lost when a needed resend followed them (downstream); a
    /// resend of several segments is one transmission, counted once. An original lost upstream
    /// never passed here: it is placed just before the transmission that showed its hole (the
    /// sender sent it before that one), holes of one transmission in the order of their bytes,
    /// and timed when the hole showed. So a receiver-side capture's holes give the loss pattern
    /// (P, bursts, Gilbert-Elliott) over every transmission the sender made, lost or not.
    fn loss_sequence(&self) -> (Vec<bool>, Vec<i64>, Vec<i64>) {
        if self.lost_pos.is_empty() && self.up_pos.is_empty() {
            return (vec![false; self.tx_count as usize], Vec::new(), Vec::new());
        }
        // each lost position once, with its first occurrence (np.unique's return_index)
        let mut first: BTreeMap<i64, usize> = BTreeMap::new();
        for (k, &p) in self.lost_pos.iter().enumerate() {
            first.entry(p).or_insert(k);
        }
        // the unseen ones by position, then first byte (stable)
        let mut order: Vec<usize> = (0..self.up_pos.len()).collect();
        order.sort_by_key(|&k| (self.up_pos[k], self.up_start[k]));
        let up_sorted: Vec<i64> = order.iter().map(|&k| self.up_pos[k]).collect();
        // a seen transmission moves up by the unseen ones before it; the k-th unseen one by k
        let mut at: Vec<(i64, i64, i64)> = Vec::with_capacity(first.len() + order.len()); // (position, time, record)
        for (&p, &k) in &first {
            let shift = up_sorted.partition_point(|&u| u <= p) as i64;
            at.push((p + shift, self.lost_ns[k], self.lost_rec[k]));
        }
        for (j, &k) in order.iter().enumerate() {
            at.push((up_sorted[j] + j as i64, self.up_ns[k], -1));
        }
        let mut flags = vec![false; self.tx_count as usize + order.len()];
        for x in &at {
            flags[x.0 as usize] = true;
        }
        at.sort_by_key(|x| x.0); // stable
        (flags, at.iter().map(|x| x.1).collect(), at.iter().map(|x| x.2).collect())
    }

    // -------------------------------------------------------------- finish

    /// Close what is open, settle every record and return the tables (DOMAIN.md s. 5, 7).
    pub fn finish(mut self) -> LossResult {
        self.timing.catch_up(None);
        if let Some(ep) = &self.episode {
            let end = ep.get().end_ns;
            self.end_episode(Input::Event(StateEvent::End), end);
        }
        self.settle(None);
        // incidents and lost transmissions by start; segments settled in the order they closed
        for table in [&mut self.incident_table, &mut self.lost_table] {
            let starts = table.ints("start");
            let mut order: Vec<usize> = (0..table.len).collect();
            order.sort_by_key(|&i| starts[i]);
            table.reorder(&order);
        }
        let (lost_flags, lost_times, lost_records) = self.loss_sequence();
        LossResult {
            dir: self.dir,
            transmissions: self.tx_count,
            lost_flags,
            lost_times,
            lost_records,
            thin_ns: self.thin_ns,
            busy_ns: self.busy_ns,
            network_duplicates: self.network_duplicates,
            reorderings: self.reorderings,
            srtt_full_ns: self.timing.srtt_full_ns(),
            rtd_samples_ns: std::mem::take(&mut self.rtd),
            rto_rtd_samples_ns: std::mem::take(&mut self.rto_rtd),
            retransmissions: std::mem::replace(&mut self.rx_table, Table::retransmissions()),
            fills: std::mem::replace(&mut self.fill_table, Table::fills()),
            episodes: std::mem::replace(&mut self.episode_table, Table::episodes()),
            incidents: std::mem::replace(&mut self.incident_table, Table::incidents()),
            lost: std::mem::replace(&mut self.lost_table, Table::lost()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::flags::ACK;
    use crate::loss::records::{Column, NONE};

    const MS: i64 = 1_000_000;

    fn facts() -> StreamFacts {
        StreamFacts { mss: 100, seq_anchor: 1000, turnaround_ns: Some(0), receiver_turnaround_ns: None }
    }

    fn send(t: i64, i: i64, s: i64, p: Placement) -> Event {
        Event::send(t, i, s, s + 100, ACK, -1, p)
    }

    fn ack(t: i64, i: i64, a: i64, blocks: &[(i64, i64)], dup: bool, dsack: bool) -> Event {
        Event::ack(t, i, a, blocks, dsack, dup, 65535, -1, ACK)
    }

    fn codes(t: &Table, name: &str) -> Vec<i8> {
        let i = t.names.iter().position(|n| *n == name).unwrap();
        match &t.columns[i] {
            Column::Code(_, v) => v.clone(),
            _ => panic!("{name} is not a code column"),
        }
    }

    /// Ten segments, the first lost: an ACK, three dupACKs with SACK blocks, the resend.
    fn fast_recovery(last_ack: Event) -> LossResult {
        let mut ev: Vec<Event> = (0..10).map(|k| send(k * MS / 10, k, 1 + 100 * k, Placement::New)).collect();
        ev.push(ack(10 * MS, 10, 101, &[], false, false));
        ev.push(ack(11 * MS, 11, 101, &[(201, 301)], true, false));
        ev.push(ack(11 * MS + 100_000, 12, 101, &[(201, 401)], true, false));
        ev.push(ack(11 * MS + 200_000, 13, 101, &[(201, 501)], true, false));
        ev.push(send(11 * MS + 300_000, 14, 101, Placement::Rexmit));
        ev.push(last_ack);
        let mut t = LossTracker::new(Dir::A2B, THIN_PACKETS);
        t.feed(&ev, last_ack.time_ns, &facts(), &[(10 * MS, 10 * MS)]);
        t.finish()
    }

    /// A LazyTracker and an eager LossTracker fed the same batches: batches without data or
    /// ACKs (facts that change, a receiver turnaround to seed the estimator, RTT samples) first,
    /// then the fast recovery's; and a direction that never has data or ACKs.
    #[test]
    fn a_lazy_tracker_gives_the_eager_trackers_results() {
        let syn = Event::send(0, 0, 0, 1, crate::events::flags::SYN, -1, Placement::None);
        let early = [
            (vec![syn], StreamFacts { mss: 0, seq_anchor: 999, turnaround_ns: None, receiver_turnaround_ns: Some(3 * MS) }, vec![]),
            (vec![], StreamFacts { mss: 100, seq_anchor: 1000, turnaround_ns: Some(MS), receiver_turnaround_ns: Some(5 * MS) }, vec![(MS / 2, 2 * MS)]),
            (vec![ack(MS, 1, -5, &[], false, false)], facts(), vec![(MS, 4 * MS)]),
        ];
        let mut ev: Vec<Event> = (0..10).map(|k| send(2 * MS + k * MS / 10, k + 2, 1 + 100 * k, Placement::New)).collect();
        ev.push(ack(12 * MS, 12, 101, &[], false, false));
        ev.push(ack(13 * MS, 13, 101, &[(201, 301)], true, false));
        ev.push(ack(13 * MS + 100_000, 14, 101, &[(201, 401)], true, false));
        ev.push(ack(13 * MS + 200_000, 15, 101, &[(201, 501)], true, false));
        ev.push(send(13 * MS + 300_000, 16, 101, Placement::Rexmit));
        ev.push(ack(23 * MS, 17, 1001, &[], false, false));
        for with_data in [false, true] {
            let mut eager = LossTracker::new(Dir::A2B, THIN_PACKETS);
            let mut lazy = LazyTracker::new(Dir::A2B, THIN_PACKETS, Horizon::default());
            for (events, f, rtt) in &early {
                let now = events.last().map_or(MS, |e| e.time_ns);
                eager.feed(events, now, f, rtt);
                lazy.feed(events, now, f, rtt);
            }
            assert!(lazy.running().is_none(), "no data or ACK yet: no tracker");
            if with_data {
                eager.feed(&ev, 23 * MS, &facts(), &[(12 * MS, 10 * MS)]);
                lazy.feed(&ev, 23 * MS, &facts(), &[(12 * MS, 10 * MS)]);
                assert!(lazy.running().is_some());
            }
            let (e, l) = (eager.finish(), lazy.finish());
            assert_eq!(format!("{e:?}"), format!("{l:?}"));
            assert!(e.srtt_full_ns.is_some());
            assert_eq!(e.retransmissions.len, usize::from(with_data));
        }
    }

    #[test]
    fn a_tracker_may_move_between_threads() {
        fn send<T: Send>(_: &T) {}
        let t = LossTracker::new(Dir::A2B, THIN_PACKETS);
        send(&t);
        let r = std::thread::spawn(move || t.finish()).join().expect("finished on another thread");
        assert_eq!(r.transmissions, 0);
    }

    #[test]
    fn fast_retransmit_after_three_dupacks_ends_with_a_full_ack() {
        let r = fast_recovery(ack(21 * MS + 300_000, 15, 1001, &[], false, false));
        assert_eq!(r.retransmissions.len, 1);
        assert_eq!(codes(&r.retransmissions, "trigger"), vec![Trigger::Fast as i8]);
        assert_eq!(r.retransmissions.ints("dupacks"), &[3]);
        assert_eq!(r.retransmissions.ints("seq"), &[1101]);
        assert_eq!(r.retransmissions.ints("rtd_ns"), &[11 * MS + 200_000]); // since the original, sent at 0.1 ms
        assert_eq!(codes(&r.retransmissions, "spurious"), vec![-1]);
        assert_eq!(r.episodes.len, 1);
        assert_eq!(codes(&r.episodes, "ended"), vec![EpisodeEnd::FullAck as i8]);
        assert_eq!(r.episodes.ints("recovery_point"), &[1001]);
        assert_eq!(r.incidents.len, 1);
        assert_eq!(r.lost.len, 1);
        assert_eq!(codes(&r.lost, "where"), vec![Where::Downstream as i8]);
        // the original (the second transmission) is the one lost
        assert_eq!(r.transmissions, 11);
        assert_eq!(r.lost_flags.iter().filter(|&&x| x).count(), 1);
        assert!(r.lost_flags[1]);
        assert_eq!(r.lost_records, vec![1]);
        assert_eq!(r.rtd_samples_ns, vec![11 * MS + 200_000]);
    }

    #[test]
    fn a_dsack_for_the_resend_marks_it_spurious_and_nothing_lost() {
        let r = fast_recovery(ack(21 * MS + 300_000, 15, 1001, &[(101, 201)], false, true));
        assert_eq!(codes(&r.retransmissions, "spurious"), vec![Spurious::Dsack as i8]);
        assert_eq!(r.lost.len, 0);
        assert_eq!(r.incidents.len, 1);
        assert_eq!(r.incidents.ints("lost_transmissions"), &[0]);
        assert!(r.lost_flags.iter().all(|&x| !x));
    }

    #[test]
    fn a_hole_filled_late_is_an_upstream_loss_placed_before_the_send_that_showed_it() {
        let ev = vec![
            send(0, 0, 1, Placement::New),
            ack(10 * MS, 1, 101, &[], false, false),
            send(11 * MS, 2, 201, Placement::Gap),
            send(60 * MS, 3, 101, Placement::Fill),
            ack(70 * MS, 4, 301, &[], false, false),
        ];
        let mut t = LossTracker::new(Dir::B2A, THIN_PACKETS);
        t.feed(&ev, 70 * MS, &facts(), &[(10 * MS, 10 * MS)]);
        let r = t.finish();
        assert_eq!(codes(&r.fills, "cause"), vec![Cause::Retransmission as i8]);
        assert_eq!(r.fills.ints("opened_ns"), &[11 * MS]);
        assert_eq!(codes(&r.lost, "where"), vec![Where::Upstream as i8]);
        assert_eq!(r.lost.ints("index"), &[NONE]);
        assert_eq!(r.lost_flags, vec![false, true, false, false]);
        assert_eq!((r.lost_times.clone(), r.lost_records.clone()), (vec![11 * MS], vec![-1]));
        assert_eq!(r.incidents.ints("first_index"), &[NONE]);
    }

    #[test]
    fn a_timer_resend_without_an_rtt_is_ambiguous_and_time_in_flight_is_counted() {
        let ev = vec![send(0, 0, 1, Placement::New), send(300 * MS, 1, 1, Placement::Rexmit), ack(310 * MS, 2, 101, &[], false, false)];
        let mut t = LossTracker::new(Dir::A2B, THIN_PACKETS);
        t.feed(&ev, 400 * MS, &facts(), &[]);
        let r = t.finish();
        assert_eq!(codes(&r.retransmissions, "trigger"), vec![Trigger::Ambiguous as i8]);
        assert_eq!(r.episodes.len, 0);
        // one packet in flight from the send to the ACK: busy and thin
        assert_eq!((r.busy_ns, r.thin_ns), (310 * MS, 310 * MS));
    }

    #[test]
    fn results_do_not_depend_on_where_batches_end() {
        let mut ev: Vec<Event> = (0..10).map(|k| send(k * MS / 10, k, 1 + 100 * k, Placement::New)).collect();
        ev.push(ack(10 * MS, 10, 101, &[], false, false));
        ev.push(ack(11 * MS, 11, 101, &[(201, 301)], true, false));
        ev.push(ack(12 * MS, 12, 101, &[(201, 401)], true, false));
        ev.push(send(13 * MS, 13, 101, Placement::Rexmit));
        ev.push(ack(14 * MS, 14, 101, &[(201, 501)], true, false));
        ev.push(send(300 * MS, 15, 101, Placement::Rexmit));
        ev.push(ack(310 * MS, 16, 1001, &[], false, false));
        let run = |cut: usize| {
            let mut t = LossTracker::new(Dir::A2B, THIN_PACKETS);
            let (a, b) = ev.split_at(cut);
            let rtt = [(10 * MS, 10 * MS)];
            if !a.is_empty() {
                t.feed(a, a[a.len() - 1].time_ns, &facts(), if cut > 10 { &rtt } else { &[] });
            }
            t.feed(b, b[b.len() - 1].time_ns, &facts(), if cut > 10 { &[] } else { &rtt });
            t.finish()
        };
        let whole = run(0);
        assert_eq!(codes(&whole.retransmissions, "trigger"), vec![Trigger::Early as i8, Trigger::Rto as i8]);
        for cut in 1..ev.len() {
            let r = run(cut);
            assert_eq!(r.retransmissions, whole.retransmissions, "cut at {cut}");
            assert_eq!(r.episodes, whole.episodes, "cut at {cut}");
            assert_eq!((r.busy_ns, r.thin_ns, r.lost_flags.clone()), (whole.busy_ns, whole.thin_ns, whole.lost_flags.clone()));
        }
    }
}
