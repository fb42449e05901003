//! Unwrapping 32-bit sequence numbers to 64-bit numbers (DOMAIN.md section 2; the core's
//! `seqspace.SeqSpace`, which goes): a sequence space is seen through two streams, the
//! sender's sequence numbers and the receiver's acknowledgment numbers, each unwrapped one
//! value relative to the previous (RFC 9293 section 3.4), from a common anchor: the ISN when
//! the SYN was seen, else the first value seen in either stream.

use crate::seq::signed_diff;

/// One stream of 32-bit values, unwrapped relative to its latest value.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unwrapper {
    last: Option<(i64, i64)>, // (raw, unwrapped)
}

impl Unwrapper {
    pub fn started(&self) -> bool {
        self.last.is_some()
    }

    fn start(&mut self, raw: i64, abs: i64) {
        self.last = Some((raw, abs));
    }

    /// The unwrapped number of `raw`, the stream moved along to it; the stream must be started.
    #[inline]
    pub fn unwrap(&mut self, raw: i64) -> i64 {
        let abs = self.near(raw);
        self.last = Some((raw, abs));
        abs
    }

    /// The unwrapped number of `raw` near the stream's latest value, without moving it along.
    #[inline]
    pub fn near(&self, raw: i64) -> i64 {
        let (last_raw, last_abs) = self.last.expect("stream started");
        last_abs + signed_diff(raw, last_raw)
    }
}

/// The sequence space of one direction: its anchor (the raw value whose unwrapped number is 0)
/// and its two streams.
#[derive(Clone, Copy, Debug, Default)]
pub struct SeqSpace {
    pub anchor: Option<i64>,
    pub seqs: Unwrapper,
    pub acks: Unwrapper,
}

impl SeqSpace {
    pub fn ensure_anchor(&mut self, raw: i64) {
        if self.anchor.is_none() {
            self.anchor = Some(raw);
        }
    }

    /// The SYN was seen: its ISN is relative 0. A space anchored before it (by a stray segment
    /// or an ACK number of an earlier attempt) starts again at the ISN unless data was already
    /// placed in it. Returns whether an earlier origin was given up.
    pub fn anchor_at_syn(&mut self, isn: i64, data_seen: bool) -> bool {
        let moved = matches!(self.anchor, Some(a) if a != isn) && !data_seen;
        if self.anchor.is_none() || moved {
            *self = SeqSpace { anchor: Some(isn), ..SeqSpace::default() };
        }
        moved
    }

    fn start(anchor: Option<i64>, stream: &mut Unwrapper, first_raw: i64) {
        let anchor = anchor.expect("anchored");
        stream.start(first_raw, signed_diff(first_raw, anchor));
    }

    /// Unwrapped sequence numbers of one batch of a direction's segments, in stream order:
    /// those with `follow` set move the stream along; the others (RSTs, whose number may be 0)
    /// are unwrapped near the stream's value after the whole batch (as `seqspace.py` does).
    pub fn unwrap_seqs(&mut self, raw: &[i64], follow: &[bool], out: &mut Vec<i64>) {
        out.clear();
        out.resize(raw.len(), 0);
        for (i, (&r, &f)) in raw.iter().zip(follow).enumerate() {
            if f {
                if !self.seqs.started() {
                    self.ensure_anchor(r);
                    Self::start(self.anchor, &mut self.seqs, r);
                }
                out[i] = self.seqs.unwrap(r);
            }
        }
        if let Some(first) = raw.iter().zip(follow).find(|(_, &f)| !f).map(|(&r, _)| r) {
            if !self.seqs.started() {
                self.ensure_anchor(first);
                let a = self.anchor.expect("anchored");
                Self::start(self.anchor, &mut self.seqs, a);
            }
            for (i, (&r, &f)) in raw.iter().zip(follow).enumerate() {
                if !f {
                    out[i] = self.seqs.near(r);
                }
            }
        }
    }

    /// The unwrapped number of an acknowledgment number of this space (the next in its stream).
    pub fn unwrap_ack(&mut self, raw: i64) -> i64 {
        if !self.acks.started() {
            // acknowledgment numbers point one past data: anchored so that the first is >= 0
            self.ensure_anchor(raw - 1);
            Self::start(self.anchor, &mut self.acks, raw);
        }
        self.acks.unwrap(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq::MOD;

    #[test]
    fn unwraps_across_the_wrap() {
        let mut s = SeqSpace::default();
        let mut out = Vec::new();
        s.unwrap_seqs(&[MOD - 10, MOD - 5, 3], &[true, true, true], &mut out);
        assert_eq!(out, vec![0, 5, 13]);
        assert_eq!(s.unwrap_ack(4), 14);
    }

    #[test]
    fn rst_near_the_latest_value() {
        let mut s = SeqSpace::default();
        let mut out = Vec::new();
        s.unwrap_seqs(&[100, 0, 200], &[true, false, true], &mut out);
        assert_eq!(out, vec![0, -100, 100]); // near 200 (after the batch), not moving it
        let mut t = SeqSpace::default();
        t.unwrap_seqs(&[7], &[false], &mut out);
        assert_eq!((out[0], t.anchor), (0, Some(7)));
    }

    #[test]
    fn syn_moves_an_anchor_without_data() {
        let mut s = SeqSpace::default();
        s.ensure_anchor(50);
        assert!(s.anchor_at_syn(1000, false));
        assert_eq!(s.anchor, Some(1000));
        assert!(!s.anchor_at_syn(5, true));
        assert_eq!(s.anchor, Some(1000));
    }
}
