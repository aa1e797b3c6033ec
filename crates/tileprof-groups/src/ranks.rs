//! Nearest-rank percentiles: the value at 1-based rank ⌈p·n/100⌉ of the ascending values.

/// The 0-based index of rank ⌈percent·n/100⌉ among `n` values (integer arithmetic; `n` ≥ 1,
/// `percent` in 1..=100).
pub fn rank_index(n: usize, percent: u32) -> usize {
    ((n as u64 * u64::from(percent)).div_ceil(100) - 1) as usize
}

/// The nearest-rank value of each of `percents` (ascending, each in 1..=100) among `values`
/// (at least one), in `percents`' order, onto `out`. `values` is reordered: each pick is a
/// selection in the part the previous one left above it, so no full sort is made.
pub fn nearest_ranks(values: &mut [i64], percents: &[u32], out: &mut Vec<i64>) {
    let n = values.len();
    let mut low = 0;
    for &percent in percents {
        let index = rank_index(n, percent);
        if index >= low {
            let (_, value, _) = values[low..].select_nth_unstable(index - low);
            out.push(*value);
            low = index + 1;
        } else {
            // the same rank as the previous percentile (small n)
            out.push(values[index]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_sorting(values: &[i64], percent: u32) -> i64 {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let rank = (sorted.len() as f64 * f64::from(percent) / 100.0).ceil() as usize;
        sorted[rank.max(1) - 1]
    }

    #[test]
    fn rank_index_is_the_ceiling_rank() {
        assert_eq!(rank_index(1, 50), 0);
        assert_eq!(rank_index(1, 95), 0);
        assert_eq!(rank_index(2, 50), 0);
        assert_eq!(rank_index(10, 95), 9);
        assert_eq!(rank_index(20, 95), 18);
        assert_eq!(rank_index(100, 100), 99);
    }

    #[test]
    fn ranks_equal_a_full_sort() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound) as i64
        };
        let percents = [1, 50, 51, 95, 100];
        for _ in 0..500 {
            let n = 1 + next(40) as usize;
            let values: Vec<i64> = (0..n).map(|_| next(30) - 5).collect();
            let mut scratch = values.clone();
            let mut out = Vec::new();
            nearest_ranks(&mut scratch, &percents, &mut out);
            let expected: Vec<i64> = percents.iter().map(|&p| by_sorting(&values, p)).collect();
            assert_eq!(out, expected, "{values:?}");
        }
    }
}
