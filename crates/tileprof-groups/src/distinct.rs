//! Distinct values of a group: a bitmap over the column's range, reused group after group.

/// Counts the distinct values of groups of one column, a group at a time: `add` each value,
/// then `take_count`. Tile and phase numbers are small and dense, so a bitmap over the
/// column's range [low, high] (one bit a value) counts a value when its bit is first set and
/// is cleared through the list of bits it set; a column spread wider than `MAX_BITS` values
/// falls back to sorting the group's values.
#[derive(Clone, Debug)]
pub struct DistinctCounter {
    low: i64,
    bits: Vec<u64>,
    /// The words set in this group (bitmap), or the group's values (sorting).
    touched: Vec<i64>,
    count: i64,
}

/// The widest range counted by bitmap: 2^26 values, 8 MB a thread.
pub const MAX_BITS: u64 = 1 << 26;

impl DistinctCounter {
    /// A counter for values in [low, high] (None: the column has no value).
    pub fn new(range: Option<(i64, i64)>) -> Self {
        let (low, width) = match range {
            Some((low, high)) => (low, high.abs_diff(low).saturating_add(1)),
            None => (0, 0),
        };
        let words = if width <= MAX_BITS {
            width.div_ceil(64) as usize
        } else {
            0
        };
        DistinctCounter {
            low,
            bits: vec![0; words],
            touched: Vec::new(),
            count: 0,
        }
    }

    /// Count `value` (inside the counter's range) in the current group.
    #[inline]
    pub fn add(&mut self, value: i64) {
        if self.bits.is_empty() {
            self.touched.push(value);
            return;
        }
        let at = value.abs_diff(self.low);
        let (word, bit) = ((at >> 6) as usize, 1u64 << (at & 63));
        let held = self.bits[word];
        if held & bit == 0 {
            if held == 0 {
                self.touched.push(word as i64);
            }
            self.bits[word] = held | bit;
            self.count += 1;
        }
    }

    /// The number of distinct values added since the last call; the counter is left empty.
    pub fn take_count(&mut self) -> i64 {
        if self.bits.is_empty() {
            self.touched.sort_unstable();
            self.touched.dedup();
            self.count = self.touched.len() as i64;
        } else {
            for &word in &self.touched {
                self.bits[word as usize] = 0;
            }
        }
        self.touched.clear();
        std::mem::take(&mut self.count)
    }

    /// The number of distinct values among `values`.
    pub fn count(&mut self, values: impl Iterator<Item = i64>) -> i64 {
        values.for_each(|value| self.add(value));
        self.take_count()
    }
}

/// The smallest and largest of `values` (None when there are none).
pub fn range_of(values: impl Iterator<Item = i64>) -> Option<(i64, i64)> {
    values.fold(None, |range, v| match range {
        None => Some((v, v)),
        Some((low, high)) => Some((low.min(v), high.max(v))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_sorting(values: &[i64]) -> i64 {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        sorted.len() as i64
    }

    #[test]
    fn bitmap_and_sorting_agree_with_a_plain_count() {
        let groups: [&[i64]; 5] = [&[3], &[5, 5, 5], &[0, 64, 63, 64, 1], &[-7, 7, -7], &[]];
        let all: Vec<i64> = groups.iter().flat_map(|g| g.iter().copied()).collect();
        let mut bitmap = DistinctCounter::new(range_of(all.iter().copied()));
        let mut wide = DistinctCounter::new(Some((i64::MIN, i64::MAX)));
        for _ in 0..2 {
            // twice: the bitmap is left clear after every group
            for group in groups {
                assert_eq!(bitmap.count(group.iter().copied()), by_sorting(group));
                assert_eq!(wide.count(group.iter().copied()), by_sorting(group));
            }
        }
        assert!(wide.bits.is_empty());
        assert!(bitmap.bits.iter().all(|&word| word == 0));
    }

    #[test]
    fn a_value_alone_in_its_word_is_cleared_for_the_next_group() {
        // each group's one value is the first bit set in its word: the word must be listed
        let mut counter = DistinctCounter::new(Some((0, 200)));
        for group in [[3], [3], [130], [130]] {
            assert_eq!(counter.count(group.into_iter()), 1);
        }
        assert!(counter.bits.iter().all(|&word| word == 0));
    }

    #[test]
    fn ranges_up_to_max_bits_wide_take_the_bitmap() {
        // 2^26 values: 2^20 words of 64 bits; one value more: sorting
        let widest = DistinctCounter::new(Some((-1, (1 << 26) - 2)));
        assert_eq!(widest.bits.len(), 1 << 20);
        assert_eq!(DistinctCounter::new(Some((5, 5))).bits.len(), 1);
        assert!(DistinctCounter::new(Some((-1, 1 << 26))).bits.is_empty());
        assert!(DistinctCounter::new(None).bits.is_empty());
    }

    #[test]
    fn extreme_ranges_do_not_overflow() {
        let mut counter = DistinctCounter::new(Some((i64::MAX - 3, i64::MAX)));
        assert_eq!(
            counter.count([i64::MAX, i64::MAX - 3, i64::MAX].into_iter()),
            2
        );
        assert_eq!(range_of([4, -2, 9].into_iter()), Some((-2, 9)));
        assert_eq!(range_of(std::iter::empty()), None);
    }
}
