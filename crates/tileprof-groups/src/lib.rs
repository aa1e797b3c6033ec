//! The group table's per-group statistics that polars can only compute by gathering every
//! group's columns: the union of its intervals, its nearest-rank percentiles, its distinct
//! tiles and phases, and the sums, minima and maxima beside them.
//!
//! Measured on a 20M-sample dump: polars' group aggregation gathered each group's offsets,
//! ends and durations for the union and the percentiles, about 1.8 GB on top of a 1.38 GB
//! frame, and each float column again for its sum. Here each group is read in place through
//! its row list (the rows polars grouped, in frame order), on rayon threads, with a few
//! per-thread buffers. Floats are added one by one in row order (docs/metrics.md), so no
//! figure depends on the threads. No Python and no Arrow arrays here: `tileprof-native` hands
//! the columns over. Definitions: docs/metrics.md.

pub mod distinct;
pub mod nesting;
pub mod ranks;
pub mod rows;
pub mod table;
pub mod union;

pub use table::{group_statistics, GroupRows, GroupTable, Samples};

/// A column whose length or contents the statistics cannot take (said in one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnError(pub String);

impl std::fmt::Display for ColumnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ColumnError {}

#[cfg(test)]
mod tests {
    use super::ColumnError;

    #[test]
    fn a_column_error_displays_its_line() {
        // what `?` into a boxed error, or a log line, prints
        let error = ColumnError("row 2 is not in the frame of 2 rows".into());
        assert_eq!(error.to_string(), "row 2 is not in the frame of 2 rows");
    }
}
