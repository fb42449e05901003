//! The analysis clock: capture timestamps made non-decreasing and bounded, and what was wrong
//! with them. The policy is stated in `tcpsack_analyze/reader/clock.py` (and docs/report.md,
//! "Time that goes backwards"); this is its one implementation.
//!
//! Analysis runs in capture order; each record gets an analysis time from a clock that never
//! moves backwards:
//!
//! - a record earlier than the clock *goes backwards*: counted (with the largest step back) and
//!   analysed at the clock's time; for a step back shorter than [`JUMP_NS`] the clock waits for
//!   the capture's time to catch up;
//! - a step back of [`JUMP_NS`] or more is followed, not waited for: the clock's offset grows by
//!   the step, so the records after it keep their differences;
//! - a timestamp outside [0, [`PLAUSIBLE_NS`]) is *absurd*, and so is a lone timestamp a year or
//!   more away from both its plausible neighbours in the batch while they are less than a year
//!   apart: counted and ignored (the record gets the clock's time; before the first plausible
//!   timestamp, that of the first plausible one in its batch, or 0 when its batch has none);
//! - a forward step of [`JUMP_NS`] or more is a *clock jump*: counted and kept.
//!
//! The clock is sans-I/O: batches of raw timestamps in, analysis times out.

/// Raw timestamps at or beyond 2**62 ns (2116-02-20), or below 0, are absurd.
pub const PLAUSIBLE_NS: i64 = 1 << 62;
/// A step of a year or more is a clock jump (forward) or a clock stepped back (backward).
pub const JUMP_NS: i64 = 365 * 24 * 3600 * 1_000_000_000;

/// What the clock found in a capture's timestamps (all records, TCP or not).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeCounts {
    /// Records earlier than the clock.
    pub backwards: u64,
    pub largest_backward_ns: i64,
    /// Records before 1970, at/after PLAUSIBLE_NS, or lone ones years off.
    pub absurd: u64,
    /// Forward steps of JUMP_NS or more.
    pub jumps: u64,
    pub largest_jump_ns: i64,
}

/// Turns raw record timestamps into analysis times, batch after batch.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    pub counts: TimeCounts,
    /// The last analysis time; None before the first plausible timestamp.
    now: Option<i64>,
    /// Added to raw timestamps since the clock last followed a step back of a year or more.
    offset: i64,
    /// Positions in the latest batch of the records counted as going backwards, so that each
    /// connection can count its own (ConnectionReport.out_of_order_timestamps).
    pub marks: Vec<i64>,
}

fn is_plausible(t: i64) -> bool {
    (0..PLAUSIBLE_NS).contains(&t)
}

/// Which records of the batch have a plausible timestamp, lone stray ones excluded: a lone
/// record is a year or more away from both plausible neighbours (in the batch), which are less
/// than a year apart; so the first and last plausible records of a batch are never lone.
fn plausible_in_batch(raw: &[i64]) -> Vec<bool> {
    let mut plausible: Vec<bool> = raw.iter().map(|&t| is_plausible(t)).collect();
    let at: Vec<usize> = (0..raw.len()).filter(|&i| plausible[i]).collect();
    for w in at.windows(3) {
        let (before, this, after) = (raw[w[0]], raw[w[1]], raw[w[2]]); // all in [0, 2**62): no overflow
        if (this - before).abs() >= JUMP_NS && (after - this).abs() >= JUMP_NS && (after - before).abs() < JUMP_NS {
            plausible[w[1]] = false;
        }
    }
    plausible
}

impl Clock {
    pub fn new() -> Clock {
        Clock::default()
    }

    /// The analysis times of one batch of raw timestamps (ns), in capture order.
    pub fn advance(&mut self, raw: &[i64]) -> Vec<i64> {
        self.marks.clear();
        let plausible = plausible_in_batch(raw);
        let first = plausible.iter().position(|&p| p);
        self.counts.absurd += plausible.iter().filter(|&&p| !p).count() as u64;
        let Some(first) = first else {
            // nothing to go by: the clock stands (at 0 before any plausible timestamp)
            return vec![self.now.unwrap_or(0); raw.len()];
        };
        let mut now = *self.now.get_or_insert(raw[first]); // the first plausible timestamp starts the clock
        let mut out = Vec::with_capacity(raw.len());
        for (i, (&t, &ok)) in raw.iter().zip(&plausible).enumerate() {
            if !ok {
                out.push(now); // an absurd timestamp holds the clock
                continue;
            }
            let shifted = (t + self.offset).min(PLAUSIBLE_NS - 1); // < 2**63: no overflow
            let back = now - shifted;
            if back >= JUMP_NS {
                // a clock stepped back by years (or the end of a lone record far ahead): follow it
                self.offset = (self.offset + back).min(PLAUSIBLE_NS - 1);
                self.count_backward(back, i);
                out.push(now);
                continue;
            }
            if back > 0 {
                self.count_backward(back, i);
            } else {
                let step = shifted - now;
                if step >= JUMP_NS {
                    self.counts.jumps += 1;
                    self.counts.largest_jump_ns = self.counts.largest_jump_ns.max(step);
                }
                now = shifted;
            }
            out.push(now);
        }
        self.now = Some(now);
        out
    }

    fn count_backward(&mut self, back: i64, position: usize) {
        self.marks.push(position as i64);
        self.counts.backwards += 1;
        self.counts.largest_backward_ns = self.counts.largest_backward_ns.max(back);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_name_the_records_counted_in_the_latest_batch() {
        let mut c = Clock::new();
        c.advance(&[T0 + 10 * S, T0 + 9 * S, T0 + 11 * S, T0 + 10 * S]);
        assert_eq!((c.marks.clone(), c.counts.backwards), (vec![1, 3], 2));
        c.advance(&[T0 + 12 * S, -1, T0 + 13 * S]); // an absurd timestamp is not a step back
        assert!(c.marks.is_empty());
        c.advance(&[T0 + 13 * S, T0 + 13 * S - 2 * JUMP_NS]); // a step back by years: followed, counted
        assert_eq!((c.marks.clone(), c.counts.backwards), (vec![1], 3));
    }

    const S: i64 = 1_000_000_000;
    const T0: i64 = 1_700_000_000 * S;

    #[test]
    fn forward_time_is_kept_and_steps_back_wait() {
        let mut c = Clock::new();
        assert_eq!(c.advance(&[T0, T0 + 10, T0 + 4, T0 + 8, T0 + 12]), vec![T0, T0 + 10, T0 + 10, T0 + 10, T0 + 12]);
        assert_eq!((c.counts.backwards, c.counts.largest_backward_ns), (2, 6));
    }

    #[test]
    fn absurd_lone_and_jumps() {
        let mut c = Clock::new();
        assert_eq!(c.advance(&[-5 * S, T0, i64::MIN, T0 + 1, PLAUSIBLE_NS, T0 + 2]), vec![T0, T0, T0, T0 + 1, T0 + 1, T0 + 2]);
        assert_eq!(c.counts.absurd, 3);
        let mut c = Clock::new();
        assert_eq!(c.advance(&[T0, T0 + 46 * JUMP_NS, T0 + 1, T0 + 2]), vec![T0, T0, T0 + 1, T0 + 2]);
        assert_eq!(c.counts.absurd, 1);
        let mut c = Clock::new();
        assert_eq!(c.advance(&[T0, T0 + 30 * JUMP_NS]), vec![T0, T0 + 30 * JUMP_NS]);
        assert_eq!((c.counts.jumps, c.counts.largest_jump_ns), (1, 30 * JUMP_NS));
        assert_eq!(Clock::new().advance(&[-1, i64::MAX]), vec![0, 0]);
    }

    #[test]
    fn a_clock_stepped_back_by_years_is_followed() {
        let mut c = Clock::new();
        assert_eq!(c.advance(&[T0, T0 + 5, T0 - 2 * JUMP_NS, T0 - 2 * JUMP_NS + 7]), vec![T0, T0 + 5, T0 + 5, T0 + 12]);
        assert_eq!((c.counts.backwards, c.counts.largest_backward_ns), (1, 2 * JUMP_NS + 5));
    }
}
