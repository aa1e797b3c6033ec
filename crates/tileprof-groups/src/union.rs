//! The length of the union of a group's intervals [offset, offset + duration).

/// The union's length, the first start and the last end of the intervals of `rows`
/// (at least one row), as `(union, first, last)`, from their (start, end) pairs sorted into
/// `pairs`: for a group whose rows are not in start order (the row pass's `Sweep` takes
/// those that are, without a sort).
///
/// In start order, an interval that starts after every earlier one has ended leaves a gap
/// from their running maximum end to its start; the union is the span from the first start
/// to the last end less those gaps. How intervals that start together are ordered changes no
/// gap. Arithmetic wraps as polars' Int64 arithmetic does, so a frame whose ends overflow
/// gives the figures polars gave.
pub fn union_length(
    rows: &[u32],
    offset: &[i64],
    duration: &[i64],
    pairs: &mut Vec<(i64, i64)>,
) -> (i64, i64, i64) {
    pairs.clear();
    pairs.extend(rows.iter().map(|&row| {
        let row = row as usize;
        (offset[row], offset[row].wrapping_add(duration[row]))
    }));
    pairs.sort_unstable_by_key(|&(start, _)| start);
    sweep(pairs.iter().copied())
}

/// `(union, first start, last end)` of intervals given in start order (at least one).
fn sweep(intervals: impl Iterator<Item = (i64, i64)>) -> (i64, i64, i64) {
    let mut sweep = Sweep::new();
    intervals.for_each(|(start, end)| sweep.add(start, end));
    sweep.finish().expect("intervals in start order")
}

/// The union's sweep, an interval at a time, for a caller that reads each row once: `add`
/// the intervals in row order; `finish` gives `(union, first, last)` when they came in start
/// order, None when one did not (then `union_length` sorts them).
#[derive(Clone, Copy, Debug)]
pub struct Sweep {
    first: i64,
    last_start: i64,
    covered_until: i64,
    gaps: i64,
    seen: bool,
    in_order: bool,
}

impl Sweep {
    pub fn new() -> Self {
        Sweep {
            first: 0,
            last_start: 0,
            covered_until: 0,
            gaps: 0,
            seen: false,
            in_order: true,
        }
    }

    #[inline]
    pub fn add(&mut self, start: i64, end: i64) {
        if !self.seen {
            (self.first, self.covered_until, self.seen) = (start, end, true);
        } else {
            self.in_order &= start >= self.last_start;
            let gap = start.wrapping_sub(self.covered_until).max(0);
            self.gaps = self.gaps.wrapping_add(gap);
            self.covered_until = self.covered_until.max(end);
        }
        self.last_start = start;
    }

    pub fn finish(&self) -> Option<(i64, i64, i64)> {
        let union = self
            .covered_until
            .wrapping_sub(self.first)
            .wrapping_sub(self.gaps);
        (self.seen && self.in_order).then_some((union, self.first, self.covered_until))
    }
}

impl Default for Sweep {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The union by its definition: the cycles covered by at least one interval, counted one
    /// by one.
    fn covered_cycles(intervals: &[(i64, i64)]) -> i64 {
        let low = intervals.iter().map(|i| i.0).min().unwrap();
        let high = intervals.iter().map(|i| i.0 + i.1).max().unwrap();
        (low..high)
            .filter(|&c| intervals.iter().any(|&(s, d)| s <= c && c < s + d))
            .count() as i64
    }

    fn check(intervals: &[(i64, i64)]) {
        let offset: Vec<i64> = intervals.iter().map(|i| i.0).collect();
        let duration: Vec<i64> = intervals.iter().map(|i| i.1).collect();
        let rows: Vec<u32> = (0..intervals.len() as u32).collect();
        let (union, first, last) = union_length(&rows, &offset, &duration, &mut Vec::new());
        assert_eq!(union, covered_cycles(intervals), "{intervals:?}");
        // the row pass's sweep, where the intervals come in start order, agrees
        let mut in_order = intervals.to_vec();
        in_order.sort_by_key(|&(start, _)| start);
        let mut sweep = Sweep::new();
        in_order.iter().for_each(|&(s, d)| sweep.add(s, s + d));
        assert_eq!(sweep.finish(), Some((union, first, last)), "{intervals:?}");
        assert_eq!(first, *offset.iter().min().unwrap());
        let ends = intervals.iter().map(|i| i.0 + i.1);
        assert_eq!(last, ends.max().unwrap());
    }

    #[test]
    fn disjoint_nested_touching_and_instant_intervals() {
        check(&[(0, 10)]);
        check(&[(0, 10), (20, 5)]);
        check(&[(0, 10), (2, 3), (12, 1)]);
        check(&[(0, 10), (10, 10)]);
        check(&[(5, 0), (5, 3), (9, 0)]);
    }

    #[test]
    fn rows_out_of_start_order_are_sorted_first() {
        check(&[(20, 5), (0, 10), (3, 30)]);
        check(&[(7, 1), (7, 4), (0, 2), (7, 2)]);
    }

    #[test]
    fn random_intervals_in_and_out_of_order() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound) as i64
        };
        for case in 0..300 {
            let n = 1 + next(12) as usize;
            let mut intervals: Vec<(i64, i64)> = (0..n).map(|_| (next(60), next(15))).collect();
            if case % 2 == 0 {
                intervals.sort_unstable();
            }
            check(&intervals);
        }
    }

    #[test]
    fn only_the_group_rows_are_read() {
        let offset = [100, 0, 999, 20];
        let duration = [1, 10, 1, 5];
        assert_eq!(
            union_length(&[1, 3], &offset, &duration, &mut Vec::new()),
            (15, 0, 25)
        );
    }
}
