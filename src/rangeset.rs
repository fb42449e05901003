//! A set of integers kept as sorted, disjoint, half-open ranges `[start, end)`, merged when they
//! touch (the core's `tcpsack_analyze/rangeset.py`): the holes below the highest byte a
//! direction sent (the flow stage's placement rule).

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    ranges: Vec<(i64, i64)>,
}

impl RangeSet {
    pub fn new() -> RangeSet {
        RangeSet::default()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The first range whose end is after `value` (those before it lie wholly at or below it).
    fn first_ending_after(&self, value: i64) -> usize {
        self.ranges.partition_point(|&(_, e)| e <= value)
    }

    pub fn contains(&self, value: i64) -> bool {
        let i = self.first_ending_after(value);
        i < self.ranges.len() && self.ranges[i].0 <= value
    }

    /// Number of integers of `[start, end)` in the set.
    pub fn overlap(&self, start: i64, end: i64) -> i64 {
        if end <= start {
            return 0;
        }
        let mut total = 0;
        for &(s, e) in &self.ranges[self.first_ending_after(start)..] {
            if s >= end {
                break;
            }
            total += e.min(end) - s.max(start);
        }
        total
    }

    /// Add `[start, end)`, merging the ranges it overlaps or touches.
    pub fn add(&mut self, start: i64, end: i64) {
        if end <= start {
            return;
        }
        let lo = self.ranges.partition_point(|&(_, e)| e < start); // first that ends at or after start
        let hi = self.ranges.partition_point(|&(s, _)| s <= end); // past the last that starts at or before end
        if lo >= hi {
            self.ranges.insert(lo, (start, end));
            return;
        }
        let merged = (start.min(self.ranges[lo].0), end.max(self.ranges[hi - 1].1));
        self.ranges.splice(lo..hi, [merged]);
    }

    /// Remove `[start, end)`.
    pub fn remove(&mut self, start: i64, end: i64) {
        if end <= start {
            return;
        }
        let lo = self.first_ending_after(start);
        let hi = self.ranges.partition_point(|&(s, _)| s < end);
        if lo >= hi {
            return;
        }
        let mut keep = Vec::with_capacity(2);
        let (s, e) = (self.ranges[lo].0, self.ranges[hi - 1].1);
        if s < start {
            keep.push((s, start));
        }
        if e > end {
            keep.push((end, e));
        }
        self.ranges.splice(lo..hi, keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_merge_remove() {
        let mut r = RangeSet::new();
        r.add(10, 20);
        r.add(30, 40);
        r.add(20, 25); // touches: merged
        assert_eq!(r.ranges, vec![(10, 25), (30, 40)]);
        assert_eq!(r.overlap(0, 100), 25);
        assert_eq!(r.overlap(24, 31), 2);
        assert!(r.contains(10) && !r.contains(25) && r.contains(39) && !r.contains(40));
        r.remove(12, 35);
        assert_eq!(r.ranges, vec![(10, 12), (35, 40)]);
        r.add(0, 50);
        assert_eq!(r.ranges, vec![(0, 50)]);
        r.remove(0, 50);
        assert!(r.is_empty());
        r.add(5, 5);
        assert!(r.is_empty());
    }
}
