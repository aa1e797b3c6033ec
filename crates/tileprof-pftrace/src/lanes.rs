//! Overlap lanes: which track of its tile (or stream) each interval goes on.
//!
//! The rule is tileprof's (`tileprof.model.trace.assign_lanes`), in one sweep over the
//! intervals ordered by start, then end, then input order, per key:
//! - lane 0 (the tile's own track) unless the interval starts before an earlier interval of
//!   its key ends (the data-quality check's overlap rule), so lane 0 holds exactly the
//!   samples that check does not count;
//! - the flagged ones go on the lowest-numbered overlap lane (1, 2, …) whose last interval has
//!   ended by the flagged one's start: greedy interval partitioning, which in start order
//!   uses as few lanes as the flagged intervals' deepest overlap. A tile whose six worker
//!   threads overlap all the time gets five or six overlap tracks, not one per level of a
//!   staircase.
//!
//! Slices in one lane never overlap (touching is allowed).

use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::ColumnError;

/// The lane of every interval (`keys[i]`, `starts[i]`, `ends[i]`), by the rule above.
pub fn assign_lanes(keys: &[i64], starts: &[i64], ends: &[i64]) -> Result<Vec<i64>, ColumnError> {
    let n = keys.len();
    if starts.len() != n || ends.len() != n {
        return Err(ColumnError(format!(
            "{} keys, {} starts and {} ends: one of each per interval",
            n,
            starts.len(),
            ends.len()
        )));
    }
    // Each key's intervals in (start, end, input) order are that key's part of the whole in
    // (start, end, input) order, so the sweep goes through all keys at once, a state each.
    // A trace's samples come sorted by time already: then there is nothing to sort.
    let sorted = (1..n).all(|i| (starts[i - 1], ends[i - 1]) <= (starts[i], ends[i]));
    let order: Vec<usize> = if sorted {
        (0..n).collect()
    } else {
        // contiguous tuples (measured: sorting indices by keys looked up in the columns cost
        // 4× as much, one cache miss per comparison)
        let mut by_time: Vec<(i64, i64, usize)> = (0..n).map(|i| (starts[i], ends[i], i)).collect();
        by_time.par_sort_unstable();
        by_time.into_iter().map(|(_, _, i)| i).collect()
    };
    let mut open = PerKey::for_keys(keys);
    let mut lanes = vec![0i64; n];
    for i in order {
        lanes[i] = open.of(keys[i]).place(starts[i], ends[i]);
    }
    Ok(lanes)
}

/// One key's state in the sweep: the largest end so far, and its overlap lanes.
#[derive(Clone, Default)]
struct Open {
    /// Largest end of the key's intervals so far (None before the first).
    covered_until: Option<i64>,
    /// Overlap lanes in use, as (end of their last interval, lane), soonest end on top.
    busy: BinaryHeap<Reverse<(i64, i64)>>,
    /// Overlap lanes whose last interval has ended, lowest on top.
    free: BinaryHeap<Reverse<i64>>,
    /// Overlap lanes made so far (they are 1 ..= made).
    made: i64,
}

impl Open {
    /// The lane of the next interval in sweep order.
    fn place(&mut self, start: i64, end: i64) -> i64 {
        let flagged = self.covered_until.is_some_and(|until| start < until);
        self.covered_until = Some(self.covered_until.map_or(end, |until| until.max(end)));
        if !flagged {
            return 0;
        }
        while let Some(&Reverse((until, lane))) = self.busy.peek() {
            if until > start {
                break;
            }
            self.busy.pop();
            self.free.push(Reverse(lane));
        }
        let lane = self.free.pop().map_or_else(
            || {
                self.made += 1;
                self.made
            },
            |Reverse(lane)| lane,
        );
        self.busy.push(Reverse((end, lane)));
        lane
    }
}

/// Each key's sweep state: by index when the keys are small (tiles), else hashed (a GPU's
/// device × stream keys).
enum PerKey {
    Dense(Vec<Open>),
    Sparse(HashMap<i64, Open>),
}

impl PerKey {
    /// Keys below this (or below the number of intervals) are indices.
    const DENSE_KEYS: i64 = 1 << 16;

    fn for_keys(keys: &[i64]) -> Self {
        let low = keys.iter().copied().min().unwrap_or(0);
        let high = keys.iter().copied().max().unwrap_or(0);
        if low >= 0 && high < Self::DENSE_KEYS.max(keys.len() as i64) {
            PerKey::Dense(vec![Open::default(); high as usize + 1])
        } else {
            PerKey::Sparse(HashMap::new())
        }
    }

    #[inline]
    fn of(&mut self, key: i64) -> &mut Open {
        match self {
            PerKey::Dense(states) => &mut states[key as usize],
            PerKey::Sparse(states) => states.entry(key).or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule as the Python states it, plainly (the reference): in (key, start, end, input)
    /// order, lane 0 unless the start is below the key's largest end so far; else the lowest
    /// overlap lane whose last end is at or before the start, found by a scan.
    fn plainly(keys: &[i64], starts: &[i64], ends: &[i64]) -> Vec<i64> {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by_key(|&i| (keys[i], starts[i], ends[i], i));
        let mut lanes = vec![0; keys.len()];
        let mut state: Option<(i64, i64, Vec<i64>)> = None; // (key, largest end, lane ends)
        for i in order {
            let (_, until, lane_ends) = match state.as_mut() {
                Some(s) if s.0 == keys[i] => s,
                _ => state.insert((keys[i], i64::MIN, Vec::new())),
            };
            let flagged = starts[i] < *until;
            *until = (*until).max(ends[i]);
            if flagged {
                let free = lane_ends.iter().position(|&end| end <= starts[i]);
                let slot = free.unwrap_or_else(|| {
                    lane_ends.push(0);
                    lane_ends.len() - 1
                });
                lane_ends[slot] = ends[i];
                lanes[i] = slot as i64 + 1;
            }
        }
        lanes
    }

    #[test]
    fn the_documented_example() {
        let keys = [0, 0, 0, 0, 1, 1, 0];
        let starts = [0, 1, 2, 10, 0, 5, 3];
        let ends = [5, 3, 4, 12, 5, 6, 3];
        assert_eq!(
            assign_lanes(&keys, &starts, &ends).unwrap(),
            [0, 1, 2, 0, 0, 0, 1]
        );
    }

    /// A seeded xorshift: each call gives a value in 0..m.
    fn xorshift(mut state: u64) -> impl FnMut(u64) -> i64 {
        move |m| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m) as i64
        }
    }

    #[test]
    fn the_sweep_equals_the_plain_rule_on_random_intervals() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        for round in 0..50 {
            let n = 1 + round * 20;
            let keys: Vec<i64> = (0..n).map(|_| next(4)).collect();
            let starts: Vec<i64> = (0..n).map(|_| next(1000)).collect();
            let ends: Vec<i64> = starts.iter().map(|s| s + next(200) * (round % 3)).collect();
            assert_eq!(
                assign_lanes(&keys, &starts, &ends).unwrap(),
                plainly(&keys, &starts, &ends),
                "round {round}"
            );
        }
    }

    #[test]
    fn sorted_input_and_wide_keys_give_the_same_lanes() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let n = 2000;
        let mut rows: Vec<(i64, i64, i64)> = (0..n)
            .map(|_| {
                let start = next(5000);
                (start, start + next(300), next(3) << 40)
            })
            .collect();
        rows.sort_by_key(|&(s, e, _)| (s, e));
        let starts: Vec<i64> = rows.iter().map(|r| r.0).collect();
        let ends: Vec<i64> = rows.iter().map(|r| r.1).collect();
        let keys: Vec<i64> = rows.iter().map(|r| r.2).collect();
        let expected = plainly(&keys, &starts, &ends);
        assert_eq!(assign_lanes(&keys, &starts, &ends).unwrap(), expected);
        let small: Vec<i64> = keys.iter().map(|k| k >> 40).collect();
        assert_eq!(assign_lanes(&small, &starts, &ends).unwrap(), expected);
    }

    #[test]
    fn rows_out_of_order_are_swept_in_start_then_end_order() {
        // (starts, ends, lanes) of one key: descending; ends ascending but starts not; equal
        // starts with descending ends; equal starts; starts strictly ascending (sorted already)
        let cases: [(&[i64], &[i64], &[i64]); 5] = [
            (&[5, 0], &[10, 8], &[1, 0]),
            (&[5, 0], &[8, 10], &[1, 0]),
            (&[0, 0], &[5, 3], &[1, 0]),
            (&[0, 0, 0], &[1, 2, 3], &[0, 1, 2]),
            (&[0, 1, 2], &[3, 4, 5], &[0, 1, 2]),
        ];
        for (starts, ends, lanes) in cases {
            let keys = vec![0; starts.len()];
            assert_eq!(assign_lanes(&keys, starts, ends).unwrap(), lanes);
            assert_eq!(plainly(&keys, starts, ends), lanes);
        }
    }

    #[test]
    fn small_keys_are_indices_and_the_rest_hashed() {
        let dense = |keys: &[i64]| matches!(PerKey::for_keys(keys), PerKey::Dense(_));
        assert!(dense(&[0, (1 << 16) - 1]));
        assert!(!dense(&[0, 1 << 16]));
        assert!(!dense(&[-1, 3]));
        // as many intervals as keys: indices however high
        let many: Vec<i64> = (0..(1 << 17)).collect();
        assert!(dense(&many));
        assert!(!dense(&many[1..]));
        // negative keys are hashed and placed as any others
        let (keys, starts, ends) = ([-5, -5, 2], [0, 1, 0], [4, 2, 1]);
        assert_eq!(assign_lanes(&keys, &starts, &ends).unwrap(), [0, 1, 0]);
    }

    #[test]
    fn columns_of_other_lengths_are_an_error() {
        assert!(assign_lanes(&[0, 1], &[0], &[1, 2]).is_err());
    }
}

#[cfg(test)]
mod depth {
    use super::assign_lanes;

    #[test]
    fn six_workers_need_at_most_six_lanes_whatever_their_staircase() {
        // Six workers on one tile, each running back to back, staggered: every sample but
        // the first of each round overlaps; the lanes stay within the concurrency.
        let mut rows = Vec::new();
        for worker in 0..6i64 {
            let mut at = worker;
            for round in 0..200i64 {
                let length = 7 + (worker * 5 + round * 3) % 11;
                rows.push((at, at + length));
                at += length;
            }
        }
        rows.sort();
        let starts: Vec<i64> = rows.iter().map(|r| r.0).collect();
        let ends: Vec<i64> = rows.iter().map(|r| r.1).collect();
        let lanes = assign_lanes(&vec![0; rows.len()], &starts, &ends).unwrap();
        assert!(*lanes.iter().max().unwrap() <= 6);
        assert!(lanes.iter().filter(|&&lane| lane > 0).count() > 1000);
    }
}
