//! RFC 6675 SACK scoreboard for one direction of a connection, sans-I/O: the one implementation
//! of IsLost, SetPipe (pipe), NextSeg and the SACKed octets, used by the loss tracker
//! (`loss::tracker`) and, through `tcpsack_analyze.scoreboard.Scoreboard` (PyO3), by the Python
//! sender models and plots.
//!
//! The scoreboard is the sender-side bookkeeping of RFC 6675: which octets are cumulatively
//! ACKed or SACKed (section 3, `Update()`), which are presumed lost (section 4, `IsLost()`), how
//! many are in the network (`SetPipe()`), what to send next (`NextSeg()` rules 1-4), and the loss
//! recovery state of section 5 (`DupAcks`, `RecoveryPoint`, `HighRxt`, `RescueRxt`). It reads no
//! clock and no capture: every event comes in as a call with its time `now`. Sequence numbers
//! are 64-bit unwrapped integers; ranges are half-open `[start, end)`. Congestion control is
//! the caller's business: [`AckResult`] says what an ACK delivered and whether loss recovery
//! should start, and [`Scoreboard::enter_recovery`] returns the fast retransmission of step (4.3).
//!
//! Cost: the SACKed octets are a [`RangeSet`]; nothing is done per octet or per segment. IsLost,
//! the loss boundary and NextSeg look at a window of SACKed ranges near the octet of interest,
//! widened fourfold until it holds enough of them.
//!
//! Conventions and interpretations (the full text is the Python module's docstring,
//! `tcpsack_analyze/scoreboard.py`, which is this type's API):
//!
//! * **Exclusive edges**: `high_ack` is snd_una (the RFC's HighACK + 1), `high_data` is snd_max
//!   (HighData + 1); `high_rxt`, `rescue_rxt` are one past the RFC's octet; recovery ends (step
//!   (A)) when the cumulative ACK reaches `recovery_point`.
//! * **IsLost**: each maximal SACKed range above `seq` counts as `ceil(length / SMSS)` segments;
//!   lost when at least DupThresh of them, or more than `(DupThresh - 1) * SMSS` SACKed octets,
//!   lie above it. IsLost is monotone, so the lost octets are the un-SACKed ones below one
//!   boundary, [`Scoreboard::lost_below`].
//! * **SetPipe** counts the un-SACKed octets not lost, plus those below `high_rxt` (which only
//!   moves inside recovery and is a maximum over retransmissions).
//! * **NextSeg** never returns SACKed octets; rule 4 (rescue) once per recovery, after the
//!   cumulative ACK passes RescueRxt.
//! * **Duplicate ACK** (section 2): an ACK that SACKs octets not SACKed before. DupAcks is reset
//!   by a cumulative advance, then counted; order within one ACK: Update(), exit (A), DupAcks.
//! * **D-SACK** (RFC 2883): judged by `acks::dsack_first_block`; needs no special handling in
//!   Update().
//! * **Data never seen sent**: an ACK or SACK beyond HighData moves HighData.
//! * **RTO** (section 5.1): ends recovery, RecoveryPoint = HighData, no new recovery until the
//!   cumulative ACK reaches it, HighRxt = HighACK, DupAcks = 0, SACK information expunged by
//!   default (RFC 2018).

use crate::acks::dsack_first_block;
use crate::rangeset::RangeSet;

/// What NextSeg() (RFC 6675 section 4) says to send: `[start, end)` and the rule (1-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextSegment {
    pub start: i64,
    pub end: i64,
    pub rule: u8,
}

/// What one ACK did to the scoreboard (RFC 6675 sections 2, 4 and 5; RFC 2883); the fields
/// are those of `tcpsack_analyze.scoreboard.AckResult`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckResult {
    pub high_ack: i64,
    pub newly_acked: i64,
    pub newly_sacked: i64,
    pub sacked_then_acked: i64,
    pub delivered: i64,
    pub cumulative: bool,
    pub duplicate: bool,
    pub dsack: Option<(i64, i64)>,
    pub dup_acks: i64,
    pub loss_detected: bool,
    pub exited_recovery: bool,
}

/// Why a call was refused (the Python API raises ValueError / RuntimeError with these words).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardError {
    Value(String),
    Runtime(String),
}

#[inline]
fn ceil_div(a: i64, b: i64) -> i64 {
    -((-a).div_euclid(b))
}

#[derive(Clone, Debug)]
pub struct Scoreboard {
    smss: i64,
    pub dup_thresh: i64,
    sacked: RangeSet, // SACKed octets, always within [high_ack, high_data)
    sacked_bytes: i64,
    high_ack: i64,
    high_data: i64,
    high_rxt: i64,
    rescue_rxt: Option<i64>,
    recovery_point: Option<i64>,
    in_recovery: bool,
    rto_recovery_point: Option<i64>,
    dup_acks: i64,
    lost_below: Option<i64>, // cache of the IsLost boundary, None = stale
    sacked_below_lost: i64,  // SACKed octets below it (valid with the cache)
    pub recovery_start_time: Option<f64>,
    pub last_ack_time: Option<f64>,
    pub last_send_time: Option<f64>,
}

impl Scoreboard {
    pub fn new(smss: i64, dup_thresh: i64, start: i64) -> Result<Scoreboard, BoardError> {
        if smss <= 0 {
            return Err(BoardError::Value(format!("smss must be positive, got {smss}")));
        }
        if dup_thresh <= 0 {
            return Err(BoardError::Value(format!("dup_thresh must be positive, got {dup_thresh}")));
        }
        Ok(Scoreboard {
            smss,
            dup_thresh,
            sacked: RangeSet::new(),
            sacked_bytes: 0,
            high_ack: start,
            high_data: start,
            high_rxt: start,
            rescue_rxt: None,
            recovery_point: None,
            in_recovery: false,
            rto_recovery_point: None,
            dup_acks: 0,
            lost_below: None,
            sacked_below_lost: 0,
            recovery_start_time: None,
            last_ack_time: None,
            last_send_time: None,
        })
    }

    pub fn smss(&self) -> i64 {
        self.smss
    }

    /// A capture may learn the SMSS late (no MSS option: the largest segment seen so far).
    pub fn set_smss(&mut self, value: i64) -> Result<(), BoardError> {
        if value <= 0 {
            return Err(BoardError::Value(format!("smss must be positive, got {value}")));
        }
        if value != self.smss {
            self.smss = value;
            self.lost_below = None;
        }
        Ok(())
    }

    pub fn high_ack(&self) -> i64 {
        self.high_ack
    }
    pub fn high_data(&self) -> i64 {
        self.high_data
    }
    pub fn high_rxt(&self) -> i64 {
        self.high_rxt
    }
    pub fn rescue_rxt(&self) -> Option<i64> {
        self.rescue_rxt
    }
    pub fn recovery_point(&self) -> Option<i64> {
        self.recovery_point
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    pub fn dup_acks(&self) -> i64 {
        self.dup_acks
    }
    /// One past the highest SACKed octet above the cumulative ACK, or None.
    pub fn high_sack(&self) -> Option<i64> {
        self.sacked.high()
    }
    /// Number of SACKed octets above the cumulative ACK.
    pub fn sacked_bytes(&self) -> i64 {
        self.sacked_bytes
    }
    /// Octets sent and not cumulatively ACKed (FlightSize before SACK).
    pub fn outstanding(&self) -> i64 {
        self.high_data - self.high_ack
    }
    /// SACKed octets in `[start, end)`.
    pub fn sacked_within(&self, start: i64, end: i64) -> i64 {
        self.sacked.overlap(start, end)
    }
    /// The SACKed ranges above the cumulative ACK, in order.
    pub fn sacked_ranges(&self) -> Vec<(i64, i64)> {
        self.sacked.iter().collect()
    }
    /// The un-SACKed ranges of `[high_ack, high_data)`, in order.
    pub fn holes(&self) -> Vec<(i64, i64)> {
        self.sacked.gaps(self.high_ack, self.high_data)
    }
    /// False while in recovery, or after an RTO until HighACK reaches its RecoveryPoint.
    pub fn can_enter_recovery(&self) -> bool {
        if self.in_recovery {
            return false;
        }
        self.rto_recovery_point.is_none_or(|p| self.high_ack >= p)
    }

    // ------------------------------------------------------------------ IsLost

    /// Every un-SACKed octet in `[high_ack, lost_below)` is lost (IsLost), none above; cached
    /// until the SACKed set changes.
    pub fn lost_below(&mut self) -> i64 {
        match self.lost_below {
            Some(v) => v,
            None => {
                let (v, above) = self.find_lost_below();
                self.lost_below = Some(v);
                self.sacked_below_lost = self.sacked_bytes - above;
                v
            }
        }
    }

    /// (lost_below, SACKed octets at or above it): from the top down, in a window below the
    /// highest SACK that grows fourfold until it holds enough ranges.
    fn find_lost_below(&self) -> (i64, i64) {
        let Some(high) = self.sacked.high() else {
            return (self.high_ack, 0);
        };
        let limit = (self.dup_thresh - 1) * self.smss;
        let mut width = 2 * self.dup_thresh * self.smss;
        loop {
            let lo = self.high_ack.max(high - width);
            let ranges = self.sacked.intersecting(lo, high);
            let mut count = 0;
            let mut nbytes = 0;
            let mut widen = false;
            for (i, &(start, end)) in ranges.iter().enumerate().rev() {
                if i == 0 && start == lo && lo > self.high_ack {
                    widen = true; // may be clipped by the window: widen it
                    break;
                }
                count += ceil_div(end - start, self.smss);
                nbytes += end - start;
                if count >= self.dup_thresh || nbytes > limit {
                    return (start, nbytes);
                }
            }
            if !widen && lo == self.high_ack {
                return (self.high_ack, self.sacked_bytes); // nothing is lost
            }
            width *= 4;
        }
    }

    /// IsLost(seq), RFC 6675 section 4 (module doc).
    pub fn is_lost(&mut self, seq: i64) -> bool {
        if seq >= self.high_ack && !self.sacked.contains(seq) {
            // an un-SACKed octet: the ranges above it are those above its hole
            return seq < self.lost_below();
        }
        let Some(high) = self.sacked.high() else {
            return false;
        };
        let limit = (self.dup_thresh - 1) * self.smss;
        let (mut count, mut nbytes) = (0, 0);
        for (start, end) in self.sacked.intersecting(seq + 1, high) {
            count += ceil_div(end - start, self.smss);
            nbytes += end - start;
        }
        count >= self.dup_thresh || nbytes > limit
    }

    // ------------------------------------------------------------------ SetPipe

    /// SetPipe(), RFC 6675 section 4: octets estimated in the network. `lost_below` replaces
    /// the IsLost boundary for a sender with another loss detection (RACK, RFC 8985 6.2).
    pub fn pipe(&mut self, lost_below: Option<i64>) -> i64 {
        let (lo, hi) = (self.high_ack, self.high_data);
        let unsacked = (hi - lo) - self.sacked_bytes;
        let lost = match lost_below {
            None => {
                let lost_end = self.lost_below();
                (lost_end - lo) - self.sacked_below_lost
            }
            Some(b) => {
                let lost_end = b.max(lo).min(hi);
                if lost_end > lo {
                    (lost_end - lo) - self.sacked.overlap(lo, lost_end)
                } else {
                    0
                }
            }
        };
        let rxt_end = self.high_rxt.max(lo).min(hi);
        let rxt = if rxt_end > lo { (rxt_end - lo) - self.sacked.overlap(lo, rxt_end) } else { 0 };
        unsacked - lost + rxt
    }

    /// SetPipe() counted in segments: per hole, ceil(not lost / SMSS) + ceil(below HighRxt / SMSS).
    pub fn pipe_segments(&mut self) -> i64 {
        let lost_end = self.lost_below();
        let rxt_end = self.high_rxt;
        let mut total = 0;
        for (a, b) in self.holes() {
            let not_lost = b - a.max(b.min(lost_end));
            let rxt = (b.min(rxt_end) - a).max(0);
            total += ceil_div(not_lost, self.smss) + ceil_div(rxt, self.smss);
        }
        total
    }

    // ------------------------------------------------------------------ NextSeg

    /// Up to SMSS octets from the lowest un-SACKed octet of `[seq, high_data)` to the end of its
    /// hole, or None (windowed).
    fn first_hole_segment(&self, seq: i64) -> Option<(i64, i64)> {
        let mut width = 2 * self.smss;
        let start = loop {
            let hi = self.high_data.min(seq + width);
            let gaps = self.sacked.gaps(seq, hi);
            if let Some(g) = gaps.first() {
                break g.0;
            }
            if hi == self.high_data {
                return None;
            }
            width *= 4;
        };
        self.sacked.gaps(start, self.high_data.min(start + self.smss)).first().copied()
    }

    /// Up to SMSS octets ending with the highest un-SACKed octet of `[high_ack, high_data)` and
    /// starting in its hole, or None (windowed).
    fn last_hole_segment(&self) -> Option<(i64, i64)> {
        let mut width = 2 * self.smss;
        let end = loop {
            let lo = self.high_ack.max(self.high_data - width);
            let gaps = self.sacked.gaps(lo, self.high_data);
            if let Some(g) = gaps.last() {
                break g.1;
            }
            if lo == self.high_ack {
                return None;
            }
            width *= 4;
        };
        self.sacked.gaps(self.high_ack.max(end - self.smss), end).last().copied()
    }

    /// NextSeg(), RFC 6675 section 4: the next range to send and the rule that chose it. A
    /// query only: nothing changes until the segment is passed to [`Scoreboard::on_send`].
    pub fn next_seg(&mut self, available_new_data: i64, send_window_end: Option<i64>) -> Option<NextSegment> {
        let first = self.high_ack.max(self.high_rxt); // rule (1.a): S2 > HighRxt
        let mut candidate = None;
        if let Some(high_sack) = self.sacked.high() {
            if first < high_sack {
                candidate = self.first_hole_segment(first).filter(|c| c.0 < high_sack);
                // rule (1.b)
            }
        }
        // rule 1: lowest lost octet not yet retransmitted, below the highest SACK
        if let Some((s, e)) = candidate {
            if s < self.lost_below() {
                return Some(NextSegment { start: s, end: e, rule: 1 });
            }
        }
        // rule 2: new data, if the application has some and the receiver window allows
        let mut n = self.smss.min(available_new_data);
        if let Some(w) = send_window_end {
            n = n.min(w - self.high_data);
        }
        if n > 0 {
            return Some(NextSegment { start: self.high_data, end: self.high_data + n, rule: 2 });
        }
        // rule 3: lowest un-SACKed octet not yet retransmitted, below the highest SACK
        if let Some((s, e)) = candidate {
            return Some(NextSegment { start: s, end: e, rule: 3 });
        }
        // rule 4: one rescue retransmission per recovery, ending at the highest un-SACKed octet
        if self.in_recovery && self.rescue_rxt.is_none_or(|r| self.high_ack > r) {
            if let Some((s, e)) = self.last_hole_segment() {
                return Some(NextSegment { start: s, end: e, rule: 4 });
            }
        }
        None
    }

    // ------------------------------------------------------------------ events

    /// A data segment `[seq, end)` was sent at `now` (steps C.2, C.3; rule 4 with `rescue`).
    /// `retransmission`: None infers it (`seq < high_data`); a contradicting value is an error.
    pub fn on_send(&mut self, seq: i64, end: i64, now: f64, retransmission: Option<bool>, rescue: bool) -> Result<(), BoardError> {
        if end <= seq {
            return Err(BoardError::Value(format!("empty or inverted segment [{seq}, {end})")));
        }
        if seq > self.high_data {
            return Err(BoardError::Value(format!("segment [{seq}, {end}) leaves a gap after HighData {}", self.high_data)));
        }
        let is_rxt = seq < self.high_data;
        if let Some(r) = retransmission {
            if r != is_rxt {
                let r = if r { "True" } else { "False" };
                return Err(BoardError::Value(format!(
                    "segment [{seq}, {end}) with HighData {}: retransmission={r} contradicts the sequence numbers",
                    self.high_data
                )));
            }
        }
        if rescue && !is_rxt {
            return Err(BoardError::Value("a rescue retransmission must repeat sent data".into()));
        }
        self.last_send_time = Some(now);
        if is_rxt && self.in_recovery {
            if rescue {
                self.rescue_rxt = self.recovery_point;
            } else {
                self.high_rxt = self.high_rxt.max(end.min(self.high_data));
            }
        }
        self.high_data = self.high_data.max(end);
        Ok(())
    }

    /// An ACK arrived at `now`: Update() and the section 5 ACK rules (module doc).
    pub fn on_ack(&mut self, cum_ack: i64, sack_blocks: &[(i64, i64)], now: f64) -> AckResult {
        self.last_ack_time = Some(now);
        // RFC 2883 D-SACK, judged against this ACK's own cumulative ACK field
        let dsack = if dsack_first_block(cum_ack, sack_blocks) { Some(sack_blocks[0]) } else { None };
        let cumulative = cum_ack > self.high_ack;
        let newly_acked = if cumulative { cum_ack - self.high_ack } else { 0 };
        let (sacked_then_acked, newly_sacked) = self.update(cum_ack, sack_blocks);
        let mut exited = false;
        if self.in_recovery && self.recovery_point.is_some_and(|p| self.high_ack >= p) {
            self.in_recovery = false;
            exited = true;
        }
        let duplicate = newly_sacked > 0;
        if cumulative {
            self.dup_acks = 0;
        }
        let mut loss_detected = false;
        if duplicate && !self.in_recovery {
            self.dup_acks += 1;
            if self.can_enter_recovery() && (self.dup_acks >= self.dup_thresh || self.is_lost(self.high_ack)) {
                loss_detected = true;
            }
        }
        AckResult {
            high_ack: self.high_ack,
            newly_acked,
            newly_sacked,
            sacked_then_acked,
            delivered: newly_acked + newly_sacked - sacked_then_acked,
            cumulative,
            duplicate,
            dsack,
            dup_acks: self.dup_acks,
            loss_detected,
            exited_recovery: exited,
        }
    }

    /// Update() of RFC 6675 section 3 alone (no DupAcks, no recovery): for code that keeps the
    /// receiver's SACK information without playing the sender (the loss tracker). Returns
    /// (SACKed octets the cumulative ACK now covers, octets newly SACKed).
    pub fn update(&mut self, cum_ack: i64, sack_blocks: &[(i64, i64)]) -> (i64, i64) {
        // data acknowledged but never seen sent (the capture missed the send) moves HighData
        if cum_ack > self.high_data {
            self.high_data = cum_ack;
        }
        let mut sacked_then_acked = 0;
        let mut high_ack = self.high_ack;
        if cum_ack > high_ack {
            sacked_then_acked = self.sacked.remove(high_ack, cum_ack);
            self.sacked_bytes -= sacked_then_acked;
            self.high_ack = cum_ack;
            high_ack = cum_ack;
            self.lost_below = None;
        }
        let mut newly_sacked = 0;
        for &(s, e) in sack_blocks {
            if e > self.high_data {
                self.high_data = e;
            }
            let s = s.max(high_ack);
            if e > s {
                newly_sacked += self.sacked.add(s, e);
            }
        }
        if newly_sacked != 0 {
            self.sacked_bytes += newly_sacked;
            self.lost_below = None;
        }
        (sacked_then_acked, newly_sacked)
    }

    /// Lay the SACKed octets above the cumulative ACK out again as one range from `start` (at
    /// most up to HighData), keeping their number: for a sender that emulates SACK from
    /// duplicate ACKs (Linux's `tcp_add_reno_sack`). Never called on a real receiver's SACKs.
    pub fn relay_sacked(&mut self, start: i64) {
        if self.sacked_bytes == 0 {
            return;
        }
        let start = start.max(self.high_ack);
        let end = (start + self.sacked_bytes).min(self.high_data);
        self.sacked = RangeSet::new();
        self.sacked_bytes = 0;
        if end > start {
            self.sacked_bytes = self.sacked.add(start, end);
        }
        self.lost_below = None;
    }

    /// Enter loss recovery (section 5 step (4)); return the fast retransmission (4.3).
    pub fn enter_recovery(&mut self, now: f64) -> Result<Option<(i64, i64)>, BoardError> {
        if !self.can_enter_recovery() {
            return Err(BoardError::Runtime("cannot enter loss recovery now (in recovery, or after an RTO)".into()));
        }
        self.in_recovery = true;
        self.recovery_point = Some(self.high_data);
        self.rto_recovery_point = None;
        self.recovery_start_time = Some(now);
        let fast = self.first_hole_segment(self.high_ack);
        match fast {
            None => {
                self.high_rxt = self.high_ack;
                self.rescue_rxt = Some(self.high_ack);
            }
            Some((_, e)) => {
                self.high_rxt = e;
                self.rescue_rxt = Some(e);
            }
        }
        Ok(fast)
    }

    /// A retransmission timeout (section 5.1), SACK information expunged with `expunge_sack`.
    pub fn on_rto(&mut self, _now: f64, expunge_sack: bool) {
        self.in_recovery = false;
        self.recovery_point = Some(self.high_data);
        self.rto_recovery_point = Some(self.high_data);
        self.high_rxt = self.high_ack;
        self.dup_acks = 0;
        if expunge_sack {
            self.sacked = RangeSet::new();
            self.sacked_bytes = 0;
            self.lost_below = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 100;

    fn board() -> Scoreboard {
        Scoreboard::new(S, 3, 0).unwrap()
    }

    #[test]
    fn three_sacked_segments_make_the_hole_lost() {
        let mut sb = board();
        sb.on_send(0, 10 * S, 0.0, None, false).unwrap();
        let r = sb.on_ack(S, &[(2 * S, 3 * S)], 1.0);
        assert!(r.cumulative && r.duplicate && !r.loss_detected && r.dup_acks == 1);
        assert!(!sb.is_lost(S));
        sb.on_ack(S, &[(4 * S, 5 * S), (2 * S, 3 * S)], 2.0);
        assert!(!sb.is_lost(S));
        let r = sb.on_ack(S, &[(6 * S, 7 * S), (4 * S, 5 * S), (2 * S, 3 * S)], 3.0);
        assert!(r.loss_detected && r.dup_acks == 3);
        // three SACKed segments lie above the first hole only
        assert!(sb.is_lost(S) && !sb.is_lost(3 * S) && !sb.is_lost(5 * S));
        assert_eq!(sb.lost_below(), 2 * S);
        // pipe: 6 un-SACKed segments, 1 of them lost, none retransmitted
        assert_eq!(sb.pipe(None), 5 * S);
        assert_eq!(sb.holes(), vec![(S, 2 * S), (3 * S, 4 * S), (5 * S, 6 * S), (7 * S, 10 * S)]);
        assert_eq!(sb.enter_recovery(4.0).unwrap(), Some((S, 2 * S)));
        assert_eq!(sb.high_rxt(), 2 * S);
        assert_eq!(sb.pipe(None), 6 * S);
        assert_eq!(sb.next_seg(S, None), Some(NextSegment { start: 10 * S, end: 11 * S, rule: 2 }));
        assert_eq!(sb.next_seg(0, None), Some(NextSegment { start: 3 * S, end: 4 * S, rule: 3 }));
        sb.on_send(3 * S, 4 * S, 5.0, Some(true), false).unwrap();
        assert_eq!(sb.high_rxt(), 4 * S);
        let r = sb.on_ack(10 * S, &[], 6.0);
        assert!(r.exited_recovery && !sb.in_recovery() && r.sacked_then_acked == 3 * S);
        assert_eq!(r.delivered, 9 * S - 3 * S);
    }

    #[test]
    fn dsack_rto_and_errors() {
        let mut sb = board();
        sb.on_send(0, 5 * S, 0.0, None, false).unwrap();
        let r = sb.on_ack(2 * S, &[(0, S)], 1.0);
        assert_eq!(r.dsack, Some((0, S)));
        assert!(!r.duplicate);
        assert!(sb.on_send(7 * S, 8 * S, 1.0, None, false).is_err());
        assert!(sb.on_send(S, 2 * S, 1.0, Some(false), false).is_err());
        assert!(Scoreboard::new(0, 3, 0).is_err());
        sb.on_ack(2 * S, &[(3 * S, 4 * S)], 2.0);
        sb.on_rto(3.0, true);
        assert_eq!(sb.sacked_bytes(), 0);
        assert!(!sb.can_enter_recovery());
        assert!(sb.enter_recovery(3.0).is_err());
        sb.on_ack(5 * S, &[], 4.0);
        assert!(sb.can_enter_recovery());
    }

    #[test]
    fn relay_keeps_the_count() {
        let mut sb = board();
        sb.on_send(0, 10 * S, 0.0, None, false).unwrap();
        sb.on_ack(0, &[(2 * S, 3 * S), (5 * S, 6 * S)], 1.0);
        sb.relay_sacked(4 * S);
        assert_eq!(sb.sacked_ranges(), vec![(4 * S, 6 * S)]);
        assert_eq!(sb.sacked_bytes(), 2 * S);
    }
}
