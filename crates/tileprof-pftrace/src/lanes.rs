//! Overlap lanes: which track of its tile (or stream) each interval goes on.
//!
//! The rule is tileprof's (`tileprof.model.trace.assign_lanes`): per interval, its lane is 0
//! unless it starts before an earlier interval of the same key ends (intervals ordered by
//! start then end, ties in input order); the flagged ones are partitioned again into lane 1,
//! and so on. Slices in one lane never overlap.
//!
//! Level by level that takes one pass per lane, and a tile whose samples all overlap has
//! hundreds of lanes. The same lanes come out of one pass: an interval is flagged at level
//! `k` exactly when an earlier interval of its key with lane `k` or more is still open at its
//! start (ends after it), and then at every level below too; so its lane is one more than the
//! highest lane among the earlier intervals still open, or 0 when none is. Those form a stack:
//! each new lane is one more than the top's, so lanes rise from bottom to top, and an interval
//! that has ended stays ended (starts only grow), so it is popped when it reaches the top.

use std::collections::HashMap;

use rayon::prelude::*;

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
    // (start, end, input) order, so the sweep goes through all keys at once, a stack each.
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
    let mut stacks = Stacks::for_keys(keys);
    let mut lanes = vec![0i64; n];
    for i in order {
        let open = stacks.of(keys[i]); // (lane, end), lanes rising to the top
        while open.last().is_some_and(|&(_, end)| end <= starts[i]) {
            open.pop();
        }
        let lane = open.last().map_or(0, |&(lane, _)| lane + 1);
        lanes[i] = lane;
        open.push((lane, ends[i]));
    }
    Ok(lanes)
}

/// One stack of open intervals per key: by index when the keys are small (tiles), else hashed
/// (a GPU's device × stream keys).
enum Stacks {
    Dense(Vec<Vec<(i64, i64)>>),
    Sparse(HashMap<i64, Vec<(i64, i64)>>),
}

impl Stacks {
    /// Keys below this (or below the number of intervals) are indices.
    const DENSE_KEYS: i64 = 1 << 16;

    fn for_keys(keys: &[i64]) -> Self {
        let low = keys.iter().copied().min().unwrap_or(0);
        let high = keys.iter().copied().max().unwrap_or(0);
        if low >= 0 && high < Self::DENSE_KEYS.max(keys.len() as i64) {
            Stacks::Dense(vec![Vec::new(); high as usize + 1])
        } else {
            Stacks::Sparse(HashMap::new())
        }
    }

    #[inline]
    fn of(&mut self, key: i64) -> &mut Vec<(i64, i64)> {
        match self {
            Stacks::Dense(stacks) => &mut stacks[key as usize],
            Stacks::Sparse(stacks) => stacks.entry(key).or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule as the Python states it, level by level (the reference).
    fn by_levels(keys: &[i64], starts: &[i64], ends: &[i64]) -> Vec<i64> {
        let mut todo: Vec<usize> = (0..keys.len()).collect();
        todo.sort_by_key(|&i| (keys[i], starts[i], ends[i], i));
        let mut lanes = vec![0; keys.len()];
        let mut level = 0;
        while !todo.is_empty() {
            let mut flagged = Vec::new();
            let mut covered: Option<(i64, i64)> = None; // (key, running max end)
            for &i in &todo {
                match covered {
                    Some((k, max)) if k == keys[i] => {
                        if starts[i] < max {
                            flagged.push(i);
                        }
                        covered = Some((k, max.max(ends[i])));
                    }
                    _ => covered = Some((keys[i], ends[i])),
                }
            }
            level += 1;
            for &i in &flagged {
                lanes[i] = level;
            }
            todo = flagged;
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
            [0, 1, 2, 0, 0, 0, 3]
        );
    }

    #[test]
    fn one_pass_equals_the_levels_on_random_intervals() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m) as i64
        };
        for round in 0..50 {
            let n = 1 + round * 20;
            let keys: Vec<i64> = (0..n).map(|_| next(4)).collect();
            let starts: Vec<i64> = (0..n).map(|_| next(1000)).collect();
            let ends: Vec<i64> = starts.iter().map(|s| s + next(200) * (round % 3)).collect();
            assert_eq!(
                assign_lanes(&keys, &starts, &ends).unwrap(),
                by_levels(&keys, &starts, &ends),
                "round {round}"
            );
        }
    }

    #[test]
    fn sorted_input_and_wide_keys_give_the_same_lanes() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m) as i64
        };
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
        let expected = by_levels(&keys, &starts, &ends);
        assert_eq!(assign_lanes(&keys, &starts, &ends).unwrap(), expected);
        let small: Vec<i64> = keys.iter().map(|k| k >> 40).collect();
        assert_eq!(assign_lanes(&small, &starts, &ends).unwrap(), expected);
    }

    #[test]
    fn columns_of_other_lengths_are_an_error() {
        assert!(assign_lanes(&[0, 1], &[0], &[1, 2]).is_err());
    }
}
