//! An NDJSON dump: an optional header line, then one sample object per line.
//!
//! The text streams through a window of bounded size: the reader fills it, the part up to its
//! last newline is cut into ranges of whole lines that threads decode, and the rest is carried
//! into the next window. Memory is the columns plus the window, whatever the file's size. A
//! line longer than the window grows the window to hold it.
//!
//! The rules are those of the Python reader it replaces: lines are split at `\n`; a line that is
//! only white space (Python's `bytes.strip`) is skipped; the first other line is the header when
//! it names `clockHz` or `tileCount` and not `physicalTile`. Errors name the first bad line.

use std::io::{ErrorKind, Read};

use rayon::prelude::*;

use crate::columns::Columns;
use crate::error::{serde_message, DecodeError};
use crate::fast;
use crate::sample::decode_line;

/// Bytes of text held at once (the window; a line longer than this grows it).
pub const WINDOW_BYTES: usize = 32 << 20;

/// A decoded NDJSON dump: the columns (with each sample's line) and the header line, if any.
#[derive(Debug, Default)]
pub struct NdjsonDump {
    pub columns: Columns,
    /// The header line's number and text (the Python layer decodes it).
    pub header: Option<(u64, Vec<u8>)>,
}

/// Blank as Python's `bytes.strip()` sees it.
fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// A first line without `physicalTile` that names device facts is the header.
pub fn is_header(line: &[u8]) -> bool {
    !contains(line, b"\"physicalTile\"")
        && (contains(line, b"\"clockHz\"") || contains(line, b"\"tileCount\""))
}

/// Decode the whole lines of `text`, the first of which is line `first_line`.
fn decode_lines(text: &[u8], first_line: u64) -> Result<Columns, DecodeError> {
    let mut columns = Columns::default();
    for (index, line) in text.split(|&b| b == b'\n').enumerate() {
        if is_blank(line) {
            continue;
        }
        let number = first_line + index as u64;
        columns.line.push(number as i64);
        if let Some(sample) = fast::line(line) {
            if columns.push_raw(&sample) {
                continue;
            }
        }
        let sample = decode_line(line).map_err(|error| DecodeError::Line {
            line: number,
            text: line.to_vec(),
            message: serde_message(&error),
        })?;
        columns.push(&sample);
    }
    Ok(columns)
}

/// Ranges of whole lines of `text` (which ends at a line end, or at the end of the input) of
/// about `size` bytes, each with the number of its first line.
fn line_ranges(text: &[u8], size: usize, first_line: u64) -> Vec<(usize, usize, u64)> {
    let mut ranges = Vec::new();
    let (mut start, mut line) = (0, first_line);
    while start < text.len() {
        let end = match memchr::memchr(b'\n', &text[(start + size).min(text.len())..]) {
            Some(found) => (start + size).min(text.len()) + found + 1,
            None => text.len(),
        };
        ranges.push((start, end, line));
        line += memchr::memchr_iter(b'\n', &text[start..end]).count() as u64;
        start = end;
    }
    ranges
}

/// The streaming state: columns so far, the header decision, the next line's number.
struct Stream {
    dump: NdjsonDump,
    seen_first: bool,
    next_line: u64,
    jobs: usize,
}

impl Stream {
    /// Take whole lines (ending at a newline, or at the input's end).
    fn take(&mut self, mut text: &[u8]) -> Result<(), DecodeError> {
        if !self.seen_first {
            text = self.header(text);
        }
        let size = text.len().div_ceil(self.jobs * 4).max(1);
        let ranges = line_ranges(text, size, self.next_line);
        let parts: Vec<Result<Columns, DecodeError>> = ranges
            .par_iter()
            .map(|&(start, end, line)| decode_lines(&text[start..end], line))
            .collect();
        self.next_line += memchr::memchr_iter(b'\n', text).count() as u64;
        for part in parts {
            self.dump.columns.append(part?);
        }
        Ok(())
    }

    /// Skip blank lines up to the first other one; take it as the header when it is one.
    /// Returns the text still to decode.
    fn header<'t>(&mut self, text: &'t [u8]) -> &'t [u8] {
        let mut rest = text;
        while !rest.is_empty() {
            let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |found| found + 1);
            let line = &rest[..end];
            if !is_blank(line) {
                self.seen_first = true;
                if !is_header(line) {
                    return rest;
                }
                let text = line.strip_suffix(b"\n").unwrap_or(line);
                self.dump.header = Some((self.next_line, text.to_vec()));
                self.next_line += 1;
                return &rest[end..];
            }
            self.next_line += u64::from(line.ends_with(b"\n"));
            rest = &rest[end..];
        }
        rest
    }
}

/// Read until `buffer` holds `want` bytes or the input ends; true at the end.
fn fill(reader: &mut impl Read, buffer: &mut Vec<u8>, want: usize) -> Result<bool, std::io::Error> {
    let mut filled = buffer.len();
    buffer.resize(want.max(filled), 0);
    let result = loop {
        if filled >= want {
            break Ok(false);
        }
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break Ok(true),
            Ok(count) => filled += count,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => break Err(error),
        }
    };
    buffer.truncate(filled);
    result
}

/// Decode NDJSON from `reader` on `pool`'s threads, `window` bytes of text at a time. `gzip`
/// says whether a read error is the gzip stream's (corrupt data) or the file's.
pub fn decode(
    mut reader: impl Read,
    pool: &rayon::ThreadPool,
    window: usize,
    gzip: bool,
) -> Result<NdjsonDump, DecodeError> {
    let mut stream = Stream {
        dump: NdjsonDump::default(),
        seen_first: false,
        next_line: 1,
        jobs: pool.current_num_threads(),
    };
    let mut buffer: Vec<u8> = Vec::with_capacity(window.min(1 << 24));
    let mut want = window.max(1);
    loop {
        let at_end = fill(&mut reader, &mut buffer, want).map_err(|error| {
            let message = error.to_string();
            if gzip {
                DecodeError::Gzip(message)
            } else {
                DecodeError::Io(message)
            }
        })?;
        let cut = if at_end {
            Some(buffer.len())
        } else {
            memchr::memrchr(b'\n', &buffer).map(|i| i + 1)
        };
        match cut {
            Some(cut) => {
                pool.install(|| stream.take(&buffer[..cut]))?;
                buffer.drain(..cut);
                want = window.max(buffer.len() + 1);
            }
            None => want = buffer.len() * 2, // one line longer than the window
        }
        if at_end {
            return Ok(stream.dump);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(text: &[u8], window: usize, jobs: usize) -> Result<NdjsonDump, DecodeError> {
        decode(text, &crate::pool(jobs).unwrap(), window, false)
    }

    const TEXT: &[u8] = b"\n{\"clockHz\": 1.5e9}\r\n{\"physicalTile\":0,\"offset\":0,\"duration\":1,\"kernel\":\"a\\n\"}\n \t\n{\"physicalTile\":1,\"offset\":2,\"duration\":1,\"kernel\":\"b\"}\r\n\x0b\n{\"physicalTile\":2,\"offset\":3,\"duration\":1}";

    #[test]
    fn header_blank_lines_and_numbers() {
        let dump = decoded(TEXT, 1 << 20, 2).unwrap();
        assert_eq!(dump.header, Some((2, b"{\"clockHz\": 1.5e9}\r".to_vec())));
        assert_eq!(dump.columns.line, vec![3, 5, 7]);
        assert_eq!(dump.columns.tile, vec![0, 1, 2]);
    }

    #[test]
    fn every_window_gives_the_same_columns() {
        let whole = decoded(TEXT, 1 << 20, 1).unwrap();
        for window in 1..TEXT.len() + 2 {
            let dump = decoded(TEXT, window, 2).unwrap();
            assert_eq!(dump.columns.line, whole.columns.line, "window {window}");
            assert_eq!(dump.columns.kernel.ids, whole.columns.kernel.ids);
            assert_eq!(dump.header, whole.header);
        }
    }

    #[test]
    fn the_first_bad_line_is_named() {
        let mut text = TEXT.to_vec();
        text.extend_from_slice(b"\n{\"physicalTile\":\"x\"}\n{]");
        for window in [5, 1 << 20] {
            match decoded(&text, window, 2) {
                Err(DecodeError::Line { line, text, .. }) => {
                    assert_eq!(line, 8);
                    assert_eq!(text, b"{\"physicalTile\":\"x\"}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_header_later_than_the_first_line_is_a_sample() {
        let text = b"{\"physicalTile\":0,\"offset\":0,\"duration\":1}\n{\"clockHz\": 1}\n";
        assert!(matches!(
            decoded(text, 1 << 20, 1),
            Err(DecodeError::Line { line: 2, .. })
        ));
    }
}
