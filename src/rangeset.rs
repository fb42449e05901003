//! A set of integers kept as sorted, disjoint, half-open ranges `[start, end)`.
//!
//! The building block of the RFC 6675 scoreboard's SACKed octets (`scoreboard.rs`, RFC 6675
//! section 3). Ranges that touch are merged, so the representation of a set is unique.
//! Operations are O(log n + k) where k is the number of ranges touched.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    starts: Vec<i64>,
    ends: Vec<i64>,
}

#[inline]
fn bisect_left(v: &[i64], x: i64) -> usize {
    v.partition_point(|&y| y < x)
}

#[inline]
fn bisect_right(v: &[i64], x: i64) -> usize {
    v.partition_point(|&y| y <= x)
}

impl RangeSet {
    pub fn new() -> RangeSet {
        RangeSet::default()
    }

    /// Number of disjoint ranges (not the number of integers).
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The ranges, in order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.starts.iter().copied().zip(self.ends.iter().copied())
    }

    pub fn contains(&self, value: i64) -> bool {
        let i = bisect_right(&self.starts, value);
        i > 0 && value < self.ends[i - 1]
    }

    /// One past the largest member, or None when empty.
    pub fn high(&self) -> Option<i64> {
        self.ends.last().copied()
    }

    /// Number of integers of `[start, end)` that are in the set.
    pub fn overlap(&self, start: i64, end: i64) -> i64 {
        if end <= start {
            return 0;
        }
        let mut i = bisect_right(&self.starts, start).saturating_sub(1);
        let mut total = 0;
        while i < self.starts.len() && self.starts[i] < end {
            let lo = self.starts[i].max(start);
            let hi = self.ends[i].min(end);
            if hi > lo {
                total += hi - lo;
            }
            i += 1;
        }
        total
    }

    /// Add `[start, end)`; return how many integers were not in the set before.
    pub fn add(&mut self, start: i64, end: i64) -> i64 {
        if end <= start {
            return 0;
        }
        let n = self.starts.len();
        let lo = bisect_left(&self.ends, start);
        if lo < n && self.starts[lo] <= start && (lo + 1 == n || self.starts[lo + 1] > end) {
            // the common case of a growing SACK block: inside one range, or extending its end
            let grown = end - self.ends[lo];
            if grown <= 0 {
                return 0;
            }
            self.ends[lo] = end;
            return grown;
        }
        let hi = bisect_right(&self.starts, end);
        if lo == hi {
            self.starts.insert(lo, start);
            self.ends.insert(lo, end);
            return end - start;
        }
        let mut covered = 0;
        for k in lo..hi {
            covered += (self.ends[k].min(end) - self.starts[k].max(start)).max(0);
        }
        let new_start = start.min(self.starts[lo]);
        let new_end = end.max(self.ends[hi - 1]);
        self.starts.splice(lo..hi, [new_start]);
        self.ends.splice(lo..hi, [new_end]);
        (end - start) - covered
    }

    /// Remove `[start, end)`; return how many integers were removed.
    pub fn remove(&mut self, start: i64, end: i64) -> i64 {
        if end <= start {
            return 0;
        }
        let lo = bisect_right(&self.ends, start);
        let hi = bisect_left(&self.starts, end);
        if lo >= hi {
            return 0;
        }
        let mut removed = 0;
        let mut new_s = Vec::with_capacity(2);
        let mut new_e = Vec::with_capacity(2);
        for k in lo..hi {
            let (s, e) = (self.starts[k], self.ends[k]);
            removed += e.min(end) - s.max(start);
            if s < start {
                new_s.push(s);
                new_e.push(start);
            }
            if e > end {
                new_s.push(end);
                new_e.push(e);
            }
        }
        self.starts.splice(lo..hi, new_s);
        self.ends.splice(lo..hi, new_e);
        removed
    }

    /// The members' ranges that overlap `[start, end)`, clipped to it.
    pub fn intersecting(&self, start: i64, end: i64) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        if end <= start {
            return out;
        }
        let mut i = bisect_right(&self.starts, start).saturating_sub(1);
        while i < self.starts.len() && self.starts[i] < end {
            let (lo, hi) = (self.starts[i].max(start), self.ends[i].min(end));
            if hi > lo {
                out.push((lo, hi));
            }
            i += 1;
        }
        out
    }

    /// The sub-ranges of `[start, end)` that are not in the set, in order.
    pub fn gaps(&self, start: i64, end: i64) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        let mut cur = start;
        for (s, e) in self.intersecting(start, end) {
            if s > cur {
                out.push((cur, s));
            }
            cur = cur.max(e);
        }
        if cur < end {
            out.push((cur, end));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Against a brute-force set of integers over a small universe (as tests/test_rangeset.py).
    #[test]
    fn matches_a_set_of_integers() {
        let mut seed = 12345u64;
        let mut next = |m: i64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) % m as u64) as i64
        };
        for _ in 0..300 {
            let mut rs = RangeSet::new();
            let mut truth = BTreeSet::new();
            for _ in 0..30 {
                let (a, b) = (next(60), next(60));
                let (s, e) = (a.min(b), a.max(b));
                if next(3) == 0 {
                    let had = (s..e).filter(|x| truth.contains(x)).count() as i64;
                    assert_eq!(rs.remove(s, e), had);
                    (s..e).for_each(|x| {
                        truth.remove(&x);
                    });
                } else {
                    let new = (s..e).filter(|x| !truth.contains(x)).count() as i64;
                    assert_eq!(rs.add(s, e), new);
                    truth.extend(s..e);
                }
                let (q0, q1) = (next(60), next(60));
                let (q0, q1) = (q0.min(q1), q0.max(q1));
                assert_eq!(rs.overlap(q0, q1), (q0..q1).filter(|x| truth.contains(x)).count() as i64);
                let gap_total: i64 = rs.gaps(q0, q1).iter().map(|(s, e)| e - s).sum();
                assert_eq!(gap_total, (q1 - q0) - rs.overlap(q0, q1));
                for x in 0..60 {
                    assert_eq!(rs.contains(x), truth.contains(&x));
                }
                // disjoint, sorted, not touching
                let v: Vec<_> = rs.iter().collect();
                assert!(v.windows(2).all(|w| w[0].1 < w[1].0) && v.iter().all(|(s, e)| s < e));
                assert_eq!(rs.high(), truth.iter().next_back().map(|x| x + 1));
            }
        }
    }
}
