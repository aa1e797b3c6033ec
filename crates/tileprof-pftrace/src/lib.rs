//! Perfetto `.pftrace` encoding for tileprof: the per-slice bulk of a trace file.
//!
//! Python keeps the few packets that open a file (interned strings, the processes and tile
//! tracks); this crate writes the packets there are one or two of per sample: every slice as a
//! SLICE_BEGIN/SLICE_END pair (`slices`) and the track of each overlap lane (`tracks`), from
//! typed columns, batch by batch on rayon threads, each batch zlib-compressed into one
//! `TracePacket.compressed_packets` (`batches`). It also places samples on overlap lanes
//! (`lanes`) and bins the device's counter tracks (`counters`). No Python and no Arrow here:
//! `tileprof-native` hands the columns over.

pub mod batches;
pub mod columns;
pub mod counters;
pub mod lanes;
pub mod proto;
pub mod slices;
pub mod tracks;

pub use batches::Encoded;
pub use columns::{Arg, Bits, Column};
pub use slices::{Lists, Slices};
pub use tracks::Tracks;

/// A column whose length or contents the encoder cannot take (said in one line).
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
        let error = ColumnError("begin is negative at row 1".into());
        assert_eq!(error.to_string(), "begin is negative at row 1");
    }
}
