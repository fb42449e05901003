//! RTT samples of one direction, from its events (the core's `rtt.RttSampler`; DOMAIN.md
//! section 6):
//!
//! - *data/ACK pairs* (tcptrace's rule with Karn's algorithm, RFC 6298 section 3): a first
//!   transmission is timed by the first ACK after it whose cumulative value covers its end, when
//!   that ACK acknowledges exactly its last byte and no retransmission of this direction was
//!   sent between the two;
//! - *timestamps* (RFC 7323 section 4.3): an ACK that advances the cumulative ACK and echoes
//!   (TSecr) the TSval of a first transmission is timed from that transmission.
//!
//! It is fed a direction's events a batch (one chunk of the capture) at a time and applies each
//! rule over the batch as the Python stage did, so that the samples are the same: the TSvals and
//! first transmissions of the whole batch are candidates for its ACKs (a pair needs its ACK after
//! the segment; a TSval is taken from its first transmission), and what can no longer be matched
//! is dropped at the end of the batch.

use std::collections::HashMap;

use crate::events::{Event, Placement};
use crate::seq::signed_diff;

#[derive(Clone, Copy, Debug)]
struct Pending {
    end: i64,
    ts: i64,
    rexmits: i64, // resends of the direction before it (Karn's rule)
    index: i64,
}

#[derive(Clone, Debug, Default)]
pub struct RttSampler {
    pending: Vec<Pending>,
    rexmits: i64,
    rexmit_index: Vec<i64>,  // record numbers of the resends still relevant, ascending
    tsvals: Vec<(i64, i64)>, // TSvals of first transmissions and their times, in order
    snd_una: Option<i64>,
    /// every data/ACK sample (ns)
    pub samples: SampleBag,
    /// every timestamp sample (ns)
    pub ts_samples: SampleBag,
}

/// Non-negative integer samples (RTTs in ns), kept until the end for exact summaries, in memory
/// that stops growing when the values repeat (`stats.SampleBag`'s policy): every time the loose
/// samples reach a threshold (doubling from 4096) they are merged into sorted distinct values
/// with counts, if that at least halves them. The order of the samples is not kept.
#[derive(Clone, Debug)]
pub struct SampleBag {
    values: Vec<i64>,
    counts: Vec<i64>,
    loose: Vec<i64>,
    merge_at: usize,
}

impl Default for SampleBag {
    fn default() -> SampleBag {
        SampleBag { values: Vec::new(), counts: Vec::new(), loose: Vec::new(), merge_at: SampleBag::FIRST_MERGE }
    }
}

impl SampleBag {
    /// loose samples before the first merge
    pub const FIRST_MERGE: usize = 4096;

    pub fn add(&mut self, samples: &[i64]) {
        self.loose.extend_from_slice(samples);
        if self.loose.len() >= self.merge_at {
            self.merge();
        }
    }

    fn merge(&mut self) {
        let mut sorted = self.loose.clone();
        sorted.sort_unstable();
        let mut values: Vec<i64> = Vec::new();
        let mut counts: Vec<i64> = Vec::new();
        for x in sorted {
            if values.last() == Some(&x) {
                *counts.last_mut().expect("a count") += 1;
            } else {
                values.push(x);
                counts.push(1);
            }
        }
        if 2 * values.len() > self.loose.len() {
            // mostly distinct: counting would not save memory
            self.merge_at = 2 * self.loose.len();
            return;
        }
        let (mut v, mut c) = (Vec::with_capacity(values.len() + self.values.len()), Vec::new());
        let (mut i, mut j) = (0, 0);
        while i < self.values.len() || j < values.len() {
            let take_old = j >= values.len() || (i < self.values.len() && self.values[i] <= values[j]);
            let (x, n) = if take_old {
                i += 1;
                (self.values[i - 1], self.counts[i - 1])
            } else {
                j += 1;
                (values[j - 1], counts[j - 1])
            };
            if v.last() == Some(&x) {
                *c.last_mut().expect("a count") += n;
            } else {
                v.push(x);
                c.push(n);
            }
        }
        self.values = v;
        self.counts = c;
        self.loose = Vec::new();
    }

    pub fn len(&self) -> usize {
        self.counts.iter().sum::<i64>() as usize + self.loose.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every sample: the counted values first (ascending), then the loose ones in the order added.
    pub fn to_vec(&self) -> Vec<i64> {
        let mut out = Vec::with_capacity(self.len());
        for (&x, &n) in self.values.iter().zip(&self.counts) {
            out.extend(std::iter::repeat_n(x, n as usize));
        }
        out.extend_from_slice(&self.loose);
        out
    }

    /// Bytes of heap it holds.
    pub fn heap_bytes(&self) -> usize {
        8 * (self.values.capacity() + self.counts.capacity() + self.loose.capacity())
    }
}

impl RttSampler {
    pub fn new() -> RttSampler {
        RttSampler::default()
    }

    /// A sampler whose bags first merge at `first_merge` loose samples (tests of the memory
    /// bound use small captures).
    pub fn with_first_merge(first_merge: usize) -> RttSampler {
        let bag = SampleBag { merge_at: first_merge, ..SampleBag::default() };
        RttSampler { samples: bag.clone(), ts_samples: bag, ..RttSampler::default() }
    }

    /// Bytes of heap it holds.
    pub fn heap_bytes(&self) -> usize {
        size_of::<Pending>() * self.pending.capacity()
            + 8 * self.rexmit_index.capacity()
            + 16 * self.tsvals.capacity()
            + self.samples.heap_bytes()
            + self.ts_samples.heap_bytes()
    }

    /// Account one batch of events; returns its data/ACK samples as (ACK time, sample), by time.
    pub fn feed(&mut self, events: &[Event]) -> Vec<(i64, i64)> {
        let mut acks: Vec<&Event> = Vec::new();
        for e in events {
            if e.is_data() {
                if e.placement == Placement::Rexmit {
                    self.rexmit_index.push(e.index);
                    self.rexmits += 1;
                } else {
                    self.pending.push(Pending { end: e.end, ts: e.time_ns, rexmits: self.rexmits, index: e.index });
                    if e.tsval >= 0 {
                        self.tsvals.push((e.tsval, e.time_ns));
                    }
                }
            } else if e.is_ack() {
                acks.push(e);
            }
        }
        if acks.is_empty() {
            return Vec::new();
        }
        let prev_una = self.snd_una;
        let mut cum = Vec::with_capacity(acks.len());
        let mut top = prev_una.unwrap_or(i64::MIN);
        for a in &acks {
            top = top.max(a.ack);
            cum.push(top);
        }
        self.snd_una = Some(top);
        self.timestamps(&acks, &cum, prev_una);
        let out = self.pairs(&acks);
        // what is kept is what can still be matched: give back what the batch needed beyond it
        self.pending.shrink_to(2 * self.pending.len());
        self.tsvals.shrink_to(2 * self.tsvals.len());
        self.rexmit_index.shrink_to(2 * self.rexmit_index.len());
        out
    }

    /// RFC 7323 section 4.3: an ACK that advances snd_una echoes the TSval of the data it
    /// acknowledges.
    fn timestamps(&mut self, acks: &[&Event], cum: &[i64], prev_una: Option<i64>) {
        if self.tsvals.is_empty() {
            return;
        }
        let adv: Vec<usize> = (0..acks.len())
            .filter(|&i| {
                let advances = if i == 0 { prev_una.is_none_or(|u| acks[0].ack > u) } else { cum[i] > cum[i - 1] };
                advances && acks[i].tsecr >= 0
            })
            .collect();
        if adv.is_empty() {
            return;
        }
        let mut first: HashMap<i64, i64> = HashMap::with_capacity(self.tsvals.len());
        for &(key, ts) in &self.tsvals {
            first.entry(key).or_insert(ts);
        }
        let mut newest = i64::MIN;
        let mut samples = Vec::new();
        for &i in &adv {
            let a = acks[i];
            if let Some(&ts) = first.get(&a.tsecr) {
                let sample = a.time_ns - ts;
                if sample >= 0 {
                    samples.push(sample);
                }
            }
            newest = newest.max(a.tsecr);
        }
        self.ts_samples.add(&samples);
        // keep only what a later ACK can still echo (TSvals compare modulo 2**32)
        self.tsvals.retain(|&(key, _)| signed_diff(key, newest) >= 0);
    }

    /// Data/ACK pairs (tcptrace's rule with Karn's algorithm, module doc).
    fn pairs(&mut self, acks: &[&Event]) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        if self.pending.is_empty() {
            return out;
        }
        let mut cum = Vec::with_capacity(acks.len());
        let mut top = i64::MIN;
        for a in acks {
            top = top.max(a.ack);
            cum.push(top);
        }
        let n = acks.len();
        let rexmits = self.rexmits;
        let resent = &self.rexmit_index;
        let mut samples = Vec::new();
        self.pending.retain(|p| {
            // first ACK (after the segment) whose cumulative value covers its end
            let by_ack = cum.partition_point(|&c| c < p.end);
            let after = acks.partition_point(|a| a.index <= p.index);
            let k = by_ack.max(after);
            if k >= n {
                return true;
            }
            let a = acks[k];
            let resent_after = resent.len() - resent.partition_point(|&o| o <= a.index);
            let clean = a.ack == p.end && rexmits - resent_after as i64 == p.rexmits;
            let sample = a.time_ns - p.ts;
            if clean && sample >= 0 {
                samples.push(sample);
                out.push((a.time_ns, sample));
            }
            false
        });
        self.samples.add(&samples);
        out.sort_by_key(|&(at, _)| at); // stable
        let oldest = self.pending.iter().map(|p| p.index).min().unwrap_or(acks[n - 1].index);
        self.rexmit_index.retain(|&o| o > oldest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::flags::ACK;

    fn send(t: i64, i: i64, s: i64, e: i64, p: Placement, tsval: i64) -> Event {
        Event::send(t, i, s, e, ACK, tsval, p)
    }

    fn ack(t: i64, i: i64, a: i64, tsecr: i64) -> Event {
        Event::ack(t, i, a, &[], false, false, 65535, tsecr, ACK)
    }

    #[test]
    fn karn_pairs_and_timestamps() {
        let mut r = RttSampler::new();
        let got = r.feed(&[send(0, 0, 1, 101, Placement::New, 10), send(5, 1, 101, 201, Placement::New, 11), ack(30, 2, 101, 10)]);
        assert_eq!(got, vec![(30, 30)]);
        assert_eq!(r.ts_samples.to_vec(), vec![30]);
        // a resend of 101..201 before its ACK: Karn's rule takes no pair sample
        let got = r.feed(&[send(40, 3, 101, 201, Placement::Rexmit, 12), ack(70, 4, 201, 12)]);
        assert!(got.is_empty());
        assert_eq!(r.samples.to_vec(), vec![30]);
        // an ACK past a segment's end does not time it (not exact); the last one it does
        let got = r.feed(&[send(80, 5, 201, 301, Placement::New, -1), send(81, 6, 301, 401, Placement::New, -1), ack(90, 7, 401, -1)]);
        assert_eq!(got, vec![(90, 9)]);
        assert!(r.pending.is_empty() && r.rexmit_index.is_empty());
        assert_eq!(r.feed(&[ack(95, 8, 401, -1)]), vec![]);
    }

    #[test]
    fn bag_counts_repeated_values() {
        let mut b = SampleBag::default();
        b.add(&vec![5; 5000]);
        b.add(&[3, 7]);
        assert_eq!((b.values.clone(), b.counts.clone(), b.loose.clone()), (vec![5], vec![5000], vec![3, 7]));
        b.add(&vec![3; 4094]);
        assert_eq!((b.values.clone(), b.counts.clone()), (vec![3, 5, 7], vec![4095, 5000, 1]));
        assert_eq!(b.len(), 9096);
        let mut d = SampleBag::default();
        d.add(&(0..5000).collect::<Vec<_>>());
        assert_eq!((d.values.len(), d.loose.len(), d.merge_at), (0, 5000, 10000));
        // distinct: left loose
    }
}
