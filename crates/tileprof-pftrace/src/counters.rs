//! The tile device's counter tracks, per time bin: the cycles samples spend in each bin, and
//! their useful cycles spread evenly over their length (docs/metrics.md, "Trace").
//!
//! The same arithmetic as `tileprof.analyses.timeline.binned_cycles` (one key) and the
//! trace's spread of useful cycles, in one pass each instead of a dozen numpy temporaries;
//! sums are taken in the same order, so the values are the same floats.

/// `count` bins of `width` cycles from cycle `start` (intervals beyond the ends count in the
/// first or last bin, as in `binned_cycles`).
#[derive(Clone, Copy, Debug)]
pub struct Bins {
    pub start: i64,
    pub width: i64,
    pub count: usize,
}

impl Bins {
    #[inline]
    fn of(&self, relative: i64) -> usize {
        relative
            .div_euclid(self.width)
            .clamp(0, self.count as i64 - 1) as usize
    }
}

/// Cycles of the intervals [start, end) in each bin: a partial first and last bin directly,
/// the full bins between through a difference array.
pub fn binned_cycles(starts: &[i64], ends: &[i64], bins: Bins) -> Vec<f64> {
    let (n, w) = (bins.count, bins.width);
    let mut direct = vec![0i64; n];
    let mut diff = vec![0i64; n + 1];
    for (&start, &end) in starts.iter().zip(ends) {
        let (rel_start, rel_end) = (start - bins.start, end - bins.start);
        let b0 = bins.of(rel_start);
        let b1 = bins.of((rel_end - 1).max(rel_start));
        if b0 == b1 {
            direct[b0] += rel_end - rel_start;
        } else {
            direct[b0] += (b0 as i64 + 1) * w - rel_start;
            direct[b1] += rel_end - b1 as i64 * w;
            diff[b0 + 1] += w;
            diff[b1] -= w;
        }
    }
    let mut full = 0i64;
    (0..n)
        .map(|b| {
            full += diff[b];
            (direct[b] + full) as f64
        })
        .collect()
}

/// Σ over intervals of amount × (cycles of the interval in the bin / its length), for the
/// intervals of non-zero length whose amount is known (not NaN).
pub fn spread(starts: &[i64], ends: &[i64], amounts: &[f64], bins: Bins) -> Vec<f64> {
    let (n, w) = (bins.count, bins.width);
    let mut head = vec![0f64; n];
    let mut tail = vec![0f64; n];
    let mut diff = vec![0f64; n + 1];
    let known = |i: usize| !amounts[i].is_nan() && ends[i] > starts[i];
    let parts = |i: usize| {
        let (rel_start, rel_end) = (starts[i] - bins.start, ends[i] - bins.start);
        let rate = amounts[i] / (ends[i] - starts[i]) as f64;
        (
            rel_start,
            rel_end,
            rate,
            bins.of(rel_start),
            bins.of(rel_end - 1),
        )
    };
    for i in (0..starts.len()).filter(|&i| known(i)) {
        let (rel_start, rel_end, rate, b0, b1) = parts(i);
        let head_end = if b0 == b1 {
            rel_end
        } else {
            (b0 as i64 + 1) * w
        };
        head[b0] += rate * (head_end - rel_start) as f64;
        if b0 != b1 {
            tail[b1] += rate * (rel_end - b1 as i64 * w) as f64;
            diff[b0 + 1] += rate * w as f64;
        }
    }
    for i in (0..starts.len()).filter(|&i| known(i)) {
        let (_, _, rate, b0, b1) = parts(i);
        if b0 != b1 {
            diff[b1] += -(rate * w as f64);
        }
    }
    let mut full = 0f64;
    (0..n)
        .map(|b| {
            full += diff[b];
            (head[b] + tail[b]) + full
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per bin, by walking every cycle of every interval (a cycle before the first bin counts
    /// in it, one after the last in the last).
    fn brute(starts: &[i64], ends: &[i64], amounts: &[f64], bins: Bins) -> (Vec<f64>, Vec<f64>) {
        let mut cycles = vec![0f64; bins.count];
        let mut useful = vec![0f64; bins.count];
        let last = bins.count as i64 - 1;
        for i in 0..starts.len() {
            for c in starts[i]..ends[i] {
                let b = ((c - bins.start).max(0) / bins.width).min(last) as usize;
                cycles[b] += 1.0;
                if !amounts[i].is_nan() {
                    useful[b] += amounts[i] / (ends[i] - starts[i]) as f64;
                }
            }
        }
        (cycles, useful)
    }

    #[test]
    fn equal_to_walking_every_cycle() {
        // intervals inside, across, before and after the bins, one of length 0, one NaN
        let starts = [0, 3, 7, 10, 10, 25, 2, -20, 40, 1];
        let ends = [5, 3, 29, 11, 30, 29, 9, -10, 50, 45];
        let amounts = [5.0, 1.0, 11.0, f64::NAN, 4.0, 2.0, 7.0, 3.0, 6.0, 9.0];
        for (start, width, count) in [(0, 4, 8), (5, 4, 6), (-7, 3, 5), (2, 100, 1)] {
            let bins = Bins {
                start,
                width,
                count,
            };
            let (cycles, useful) = brute(&starts, &ends, &amounts, bins);
            assert_eq!(binned_cycles(&starts, &ends, bins), cycles, "{bins:?}");
            let got = spread(&starts, &ends, &amounts, bins);
            assert_eq!(got.len(), count);
            for (a, b) in got.iter().zip(&useful) {
                assert!((a - b).abs() < 1e-9, "{got:?} against {useful:?}");
            }
        }
    }

    #[test]
    fn an_interval_ending_on_a_bin_edge_stays_out_of_the_running_sum() {
        // the large interval [0, 4) fills bin 0 only; were it carried through the difference
        // array, bin 1's one cycle of [2, 12) would be lost to its rounding
        let bins = Bins {
            start: 0,
            width: 4,
            count: 3,
        };
        let got = spread(&[0, 2], &[4, 12], &[1e17, 2.5], bins);
        assert_eq!(got, [1e17 + 0.5, 1.0, 1.0]);
    }
}
