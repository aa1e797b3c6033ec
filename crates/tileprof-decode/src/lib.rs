//! Decoding tile dumps (JSON and NDJSON, plain or gzip) into typed columns, on threads.
//!
//! This crate is the hot loop and nothing else: no Python, no Arrow. `tileprof-native` wraps
//! it for Python and hands the columns over as Arrow arrays.
//!
//! - `scan`: the structural scan that finds strings and containers in blocks, on threads;
//! - `sample`: one sample decoded by serde_json, text borrowed from the input;
//! - `fast`: one sample read by hand, each distinct value checked once (serde_json judges the rest);
//! - `columns`: the typed columns and the dictionaries that intern text and metadata;
//! - `json`: a JSON dump document, its samples decoded by byte range on threads;
//! - `kineto`: a PyTorch profiler (Kineto) trace's complete events as columns, on threads;
//! - `kineto_fast`: one plain Kineto event read by hand (serde_json judges the rest);
//! - `kineto_inventory`: every complete Kineto event, odd values as nulls, for the capture checks;
//! - `kineto_stream`: a Kineto trace read from a stream (plain or gzip) through a bounded window;
//! - `ndjson`: an NDJSON dump streamed through a bounded window, lines decoded on threads;
//! - `progress`: the bytes decoded so far, for a progress bar.

pub mod columns;
pub mod error;
pub mod fast;
pub mod json;
pub mod kineto;
mod kineto_fast;
pub mod kineto_inventory;
pub mod kineto_stream;
pub mod ndjson;
pub mod progress;
pub mod read_ahead;
pub mod sample;
pub mod scan;

pub use columns::{Columns, NONE};
pub use error::DecodeError;
pub use progress::Progress;

/// The name every decoding thread's name starts with.
pub const THREAD_PREFIX: &str = "tileprof-decode-";

/// A pool of `jobs` threads (at least one) to decode on.
pub fn pool(jobs: usize) -> Result<rayon::ThreadPool, DecodeError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .thread_name(|index| format!("{THREAD_PREFIX}{index}"))
        .build()
        .map_err(|error| DecodeError::Io(format!("cannot start decoding threads: {error}")))
}

/// JSON white space.
#[inline]
pub fn is_json_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first position from `from` that is not JSON white space (or `data.len()`).
#[inline]
pub fn skip_space(data: &[u8], from: usize) -> usize {
    let mut position = from;
    while position < data.len() && is_json_space(data[position]) {
        position += 1;
    }
    position
}

/// A likely start of an array's next element in `from..to`: a `{` after a `}` and a `,`
/// (white space between) where `decodes` says an element starts. Only a guess (it may be
/// inside a string or a nested value): the speculative decoders (`json`, `kineto`) keep what
/// starts there only once the run before it ends exactly there.
pub fn guess_start(
    data: &[u8],
    from: usize,
    to: usize,
    decodes: impl Fn(usize) -> bool,
) -> Option<usize> {
    let before = |mut position: usize| {
        while position > 0 && is_json_space(data[position - 1]) {
            position -= 1;
        }
        position
    };
    let mut position = from;
    while position < to {
        position += memchr::memchr(b'{', &data[position..to])?;
        let comma = before(position);
        let follows = comma > 1 && data[comma - 1] == b',' && {
            let close = before(comma - 1);
            close > 0 && data[close - 1] == b'}'
        };
        if follows && decodes(position) {
            return Some(position);
        }
        position += 1;
    }
    None
}

/// `start..len` cut into ranges of `part_bytes` (the last one shorter): the byte ranges the
/// speculative decoders (`json`, `kineto`) hand to their threads.
pub fn part_ranges(start: usize, len: usize, part_bytes: usize) -> Vec<(usize, usize)> {
    let bounds: Vec<usize> = (start..len).step_by(part_bytes.max(1)).collect();
    bounds
        .iter()
        .zip(bounds.iter().skip(1).chain([&len]))
        .map(|(&from, &to)| (from, to))
        .collect()
}

/// The part size, at most `part_bytes`, that cuts `len` bytes into a whole number of parts
/// for each of `threads` threads: a window cut in three parts on two threads took as long as
/// two parts in a row, one thread idle while the other decoded the third.
pub fn balanced_part_bytes(len: usize, part_bytes: usize, threads: usize) -> usize {
    let threads = threads.max(1);
    let parts = len.div_ceil(part_bytes.max(1)).div_ceil(threads) * threads;
    len.div_ceil(parts.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guess_is_a_brace_after_a_close_and_a_comma_where_an_element_decodes() {
        let data = br#"[{"a": 1}, {"b": "}, {x"} ,	{"c": 3},{"d": 4}]"#;
        let at = |text: &str| data.windows(text.len()).position(|w| w == text.as_bytes());
        let (b, x, c, d) = (at(r#"{"b""#), at("{x"), at(r#"{"c""#), at(r#"{"d""#));
        let every = |_: usize| true;
        let len = data.len();
        // the first `{` follows `[`, not `},`: not a guess
        assert_eq!(guess_start(data, 0, len, every), b);
        // inside a string, after "}, ": a guess all the same, unless it does not decode
        assert_eq!(guess_start(data, b.unwrap() + 1, len, every), x);
        assert_eq!(guess_start(data, b.unwrap() + 1, len, |p| Some(p) != x), c);
        // white space either side of the comma, or none
        assert_eq!(guess_start(data, c.unwrap(), len, every), c);
        assert_eq!(guess_start(data, c.unwrap() + 1, len, every), d);
        assert_eq!(guess_start(data, d.unwrap() + 1, len, every), None);
        // the range ends before the next start: none in it
        assert_eq!(guess_start(data, 0, b.unwrap(), every), None);
        assert_eq!(guess_start(data, 0, len, |_| false), None);
        // a comma or a brace at the very start has nothing before it
        assert_eq!(guess_start(b",{", 0, 2, every), None);
        assert_eq!(guess_start(b"  ,{", 0, 4, every), None);
        assert_eq!(guess_start(b"},{", 0, 3, every), Some(2));
        assert_eq!(guess_start(b"} , {", 0, 5, every), Some(4));
        assert_eq!(guess_start(b"{", 0, 1, every), None);
    }

    #[test]
    fn parts_cut_the_range_into_pieces_of_the_size_asked_the_last_shorter() {
        assert_eq!(part_ranges(3, 10, 3), vec![(3, 6), (6, 9), (9, 10)]);
        assert_eq!(part_ranges(3, 9, 3), vec![(3, 6), (6, 9)]);
        assert_eq!(part_ranges(0, 2, 0), vec![(0, 1), (1, 2)]);
        assert_eq!(part_ranges(5, 5, 4), vec![]);
        assert_eq!(part_ranges(0, 4, 100), vec![(0, 4)]);
    }

    #[test]
    fn a_balanced_part_gives_each_thread_as_many_parts() {
        // 48 bytes in parts of at most 16 on two threads: four of 12, not three of 16
        assert_eq!(balanced_part_bytes(48, 16, 2), 12);
        assert_eq!(part_ranges(0, 48, balanced_part_bytes(48, 16, 2)).len(), 4);
        assert_eq!(balanced_part_bytes(64, 16, 2), 16);
        assert_eq!(balanced_part_bytes(50, 16, 2), 13); // four parts, the last of 11
        assert_eq!(part_ranges(0, 50, 13).len(), 4);
        assert_eq!(balanced_part_bytes(48, 16, 1), 16);
        assert_eq!(balanced_part_bytes(48, 16, 0), 16);
        assert_eq!(balanced_part_bytes(10, 16, 4), 3); // four parts of 3, the last of 1
        assert_eq!(balanced_part_bytes(0, 16, 2), 1);
        assert_eq!(balanced_part_bytes(7, 0, 2), 1);
    }
}
