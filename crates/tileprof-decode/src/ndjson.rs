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
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use rayon::prelude::*;

use crate::columns::Columns;
use crate::error::{serde_message, DecodeError};
use crate::fast;
use crate::json::Release;
use crate::progress::Progress;
use crate::sample::decode_line;

/// Bytes of text held at once (the window; a line longer than this grows it).
pub const WINDOW_BYTES: usize = 32 << 20;

/// A decoded NDJSON dump: the columns, each sample's line, and the header line, if any.
#[derive(Debug, Default)]
pub struct NdjsonDump {
    pub columns: Columns,
    /// Each sample's line number.
    pub lines: LineRuns,
    /// The header line's number and text (the Python layer decodes it).
    pub header: Option<(u64, Vec<u8>)>,
}

/// Each sample's line number, kept as the runs of consecutive lines: run `k` starts at sample
/// `starts[k]`, on line `lines[k]`, and the samples after it up to the next run are on the lines
/// after that one. A dump with no blank line between its samples is one run, however long.
///
/// Measured: a line number per sample (an i64 column) was 160 MB at 20M samples, and the Python
/// layer only ever looked it up for an error's place.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LineRuns {
    pub starts: Vec<u64>,
    pub lines: Vec<u64>,
    samples: u64,
}

impl LineRuns {
    /// The number of samples whose lines these are.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// A run that starts at sample `start`, on `line` (`samples` is set once a part is done).
    /// Grown with `try_reserve`: blank lines between samples make a run a sample.
    fn begin(&mut self, start: u64, line: u64) -> Result<(), DecodeError> {
        self.starts.try_reserve(1)?;
        self.lines.try_reserve(1)?;
        self.starts.push(start);
        self.lines.push(line);
        Ok(())
    }

    /// Add the next sample, on `line` (the tests' one-sample-at-a-time reference).
    #[cfg(test)]
    fn push(&mut self, line: u64) {
        let last = self.starts.last().zip(self.lines.last());
        if last.map(|(&start, &on)| on + (self.samples - start)) != Some(line) {
            self.starts.push(self.samples);
            self.lines.push(line);
        }
        self.samples += 1;
    }

    /// Add `other`'s samples after these, each of its lines `shift` further on.
    fn append(&mut self, other: &LineRuns, shift: u64) -> Result<(), DecodeError> {
        self.starts.try_reserve(other.starts.len())?;
        self.lines.try_reserve(other.lines.len())?;
        for (&start, &line) in other.starts.iter().zip(&other.lines) {
            let (start, line) = (self.samples + start, line + shift);
            let last = self.starts.last().zip(self.lines.last());
            if last.map(|(&first, &on)| on + (start - first)) != Some(line) {
                self.starts.push(start);
                self.lines.push(line);
            }
        }
        self.samples += other.samples;
        Ok(())
    }

    /// The line of sample `index` (< `samples()`).
    pub fn line(&self, index: u64) -> u64 {
        let run = self.starts.partition_point(|&start| start <= index) - 1;
        self.lines[run] + (index - self.starts[run])
    }
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

/// Whole lines decoded: the columns, each sample's line, the number of newlines.
type Part = (Columns, LineRuns, u64);

/// Decode the whole lines of `text`, the first of which is line `first_line`, into columns with
/// room for `rows` samples; returns the columns, their lines and the number of newlines in
/// `text`. Values already in `known` (the columns of the windows before) are not checked again.
fn decode_lines(
    text: &[u8],
    first_line: u64,
    known: &Columns,
    rows: usize,
) -> Result<Part, DecodeError> {
    let mut columns = Columns::default();
    columns.try_reserve_rows(rows)?;
    let mut lines = LineRuns::default();
    let mut start = 0;
    let mut newlines = 0;
    // Lines after a blank one are not consecutive: only then does a sample start a run.
    // Measured with callgrind (200k-sample NDJSON load): a run check per sample
    // (`LineRuns::push`) changed the hot loop's inlining, +19M instructions.
    let mut after_blank = true;
    // Lines as Python's `split(b"\n")` gives them (the piece after the last newline included),
    // found with memchr: a byte-at-a-time split was a third of a one-thread NDJSON decode.
    let ends = memchr::memchr_iter(b'\n', text).chain([text.len()]);
    for (index, end) in ends.enumerate() {
        newlines = index as u64;
        let line = &text[start..end];
        start = end + 1;
        if is_blank(line) {
            after_blank = true;
            continue;
        }
        let number = first_line + index as u64;
        if after_blank {
            lines.begin(columns.len() as u64, number)?;
            after_blank = false;
        }
        // A metadata value found here is not looked up again when the sample is added.
        let found = std::cell::Cell::new(None);
        let checked = |raw: &[u8]| match columns.metadata.get(raw) {
            Some(id) => {
                found.set(Some(id));
                true
            }
            None => known.metadata.get(raw).is_some(),
        };
        if let Some(sample) = fast::line_with(line, Some(&checked)) {
            if columns.push_raw_with_id(&sample, Some(known), found.get())? {
                continue;
            }
        }
        let sample = decode_line(line).map_err(|error| DecodeError::Line {
            line: number,
            text: line.to_vec(),
            message: serde_message(&error),
        })?;
        columns.push(&sample)?;
    }
    lines.samples = columns.len() as u64;
    Ok((columns, lines, newlines))
}

/// Ranges of whole lines of `text` (which ends at a line end, or at the end of the input) of
/// about `size` bytes.
fn line_ranges(text: &[u8], size: usize) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = match memchr::memchr(b'\n', &text[(start + size).min(text.len())..]) {
            Some(found) => (start + size).min(text.len()) + found + 1,
            None => text.len(),
        };
        ranges.push((start, end));
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
    /// Bytes of text taken so far (to estimate a range's samples from the lines before).
    taken: usize,
}

impl Stream {
    /// Nothing taken yet; the first line is line 1.
    fn new(jobs: usize) -> Self {
        Stream {
            dump: NdjsonDump::default(),
            seen_first: false,
            next_line: 1,
            jobs,
            taken: 0,
        }
    }

    /// Take whole lines (ending at a newline, or at the input's end).
    fn take(&mut self, mut text: &[u8]) -> Result<(), DecodeError> {
        if !self.seen_first {
            text = self.header(text);
        }
        let size = text.len().div_ceil(self.jobs * 4).max(1);
        // Each range numbers its lines from 0 and counts them, on its thread; the numbers are
        // shifted here, in order (measured: counting every range's newlines first was a serial
        // pass over the whole text).
        let known = &self.dump.columns;
        // Each part's columns sized from the bytes a sample took so far (an eighth more, since
        // lines vary), so that they do not grow by copying. Measured with callgrind on a
        // 200k-sample load: growing them was ~11M instructions of copies.
        let per_sample = self.taken.checked_div(known.len()).unwrap_or(0);
        let rows = |bytes: usize| bytes.checked_div(per_sample).map_or(0, |n| n + n / 8 + 16);
        let parts: Vec<Result<Part, DecodeError>> = line_ranges(text, size)
            .par_iter()
            .map(|&(start, end)| decode_lines(&text[start..end], 0, known, rows(end - start)))
            .collect();
        self.taken += text.len();
        for part in parts {
            let (columns, runs, lines) = part.map_err(|error| match error {
                DecodeError::Line {
                    line,
                    text,
                    message,
                } => DecodeError::Line {
                    line: line + self.next_line,
                    text,
                    message,
                },
                other => other,
            })?;
            self.dump.lines.append(&runs, self.next_line)?;
            self.dump.columns.append(columns)?;
            self.next_line += lines;
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

/// Decode NDJSON held in `data` (a mapped file, or bytes) on `pool`'s threads, `window` bytes
/// of whole lines at a time (a line longer than that is one window), `release` handing each
/// decoded window back (a mapped file drops its pages, so memory stays the columns plus about a
/// window). Same result as `decode` over the same bytes.
///
/// Measured on the 1M-sample dump (453 MB): reading through `decode`'s window buffers cost a
/// kernel copy of every byte and a page fault per fresh page, about a fifth of the CPU time of a
/// two-thread decode; a mapping, as for JSON, costs neither.
pub fn decode_slice(
    data: &[u8],
    pool: &rayon::ThreadPool,
    window: usize,
    release: &dyn Release,
    progress: &Progress,
) -> Result<NdjsonDump, DecodeError> {
    let mut stream = Stream::new(pool.current_num_threads());
    let mut start = 0;
    while start < data.len() {
        let want = start.saturating_add(window.max(1)).min(data.len());
        let end = if want == data.len() {
            want
        } else {
            match memchr::memrchr(b'\n', &data[start..want]) {
                Some(found) => start + found + 1,
                None => memchr::memchr(b'\n', &data[want..]).map_or(data.len(), |f| want + f + 1),
            }
        };
        pool.install(|| stream.take(&data[start..end]))?;
        release.release(start, end);
        progress.add((end - start) as u64);
        start = end;
    }
    Ok(stream.dump)
}

/// One window of text read: `buffer[..cut]` is whole lines; `buffer` goes back to the reader.
struct Window {
    buffer: Vec<u8>,
    cut: usize,
}

/// Read until `buffer[..*filled]` holds `want` bytes or the input ends; true at the end. The
/// buffer only grows (zeroed once), so reading into a recycled one writes no zeros first.
fn fill(
    reader: &mut impl Read,
    buffer: &mut Vec<u8>,
    filled: &mut usize,
    want: usize,
) -> Result<bool, std::io::Error> {
    if buffer.len() < want {
        buffer.resize(want, 0);
    }
    while *filled < want {
        match reader.read(&mut buffer[*filled..want]) {
            Ok(0) => return Ok(true),
            Ok(count) => *filled += count,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        }
    }
    Ok(false)
}

/// The reading thread: fills windows (the partial line at the end of one carried to the start
/// of the next) and hands them over, taking used buffers back to fill again.
fn read_windows(
    mut reader: impl Read,
    window: usize,
    gzip: bool,
    full: &SyncSender<Result<Window, DecodeError>>,
    empty: &Receiver<Vec<u8>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buffer = empty.try_recv().unwrap_or_default();
        if buffer.len() < carry.len() {
            buffer.resize(carry.len(), 0);
        }
        buffer[..carry.len()].copy_from_slice(&carry);
        let mut filled = carry.len();
        let mut want = window.max(1).max(filled + 1);
        let (cut, at_end) = loop {
            let at_end = match fill(&mut reader, &mut buffer, &mut filled, want) {
                Ok(at_end) => at_end,
                Err(error) => {
                    let message = error.to_string();
                    let _ = full.send(Err(if gzip {
                        DecodeError::Gzip(message)
                    } else {
                        DecodeError::Io(message)
                    }));
                    return;
                }
            };
            if at_end {
                break (filled, true);
            }
            match memchr::memrchr(b'\n', &buffer[..filled]) {
                Some(found) => break (found + 1, false),
                None => want = filled * 2, // one line longer than the window
            }
        };
        carry.clear();
        carry.extend_from_slice(&buffer[cut..filled]);
        if full.send(Ok(Window { buffer, cut })).is_err() || at_end {
            return; // the decoder stopped (an error), or the input is done
        }
    }
}

/// Decode NDJSON from `reader` on `pool`'s threads, `window` bytes of text at a time. `gzip`
/// says whether a read error is the gzip stream's (corrupt data) or the file's. `progress` counts the bytes of text decoded, as each window finishes.
///
/// A thread of its own reads (and decompresses) the next window while the pool decodes this
/// one, so memory is two windows. Measured: reading in turn with decoding left the decoding
/// threads idle for the read, a tenth of a two-thread decode from the page cache.
pub fn decode(
    reader: impl Read + Send,
    pool: &rayon::ThreadPool,
    window: usize,
    gzip: bool,
    progress: &Progress,
) -> Result<NdjsonDump, DecodeError> {
    let mut stream = Stream::new(pool.current_num_threads());
    let (full_sender, full) = sync_channel::<Result<Window, DecodeError>>(0);
    let (empty, empty_receiver) = sync_channel::<Vec<u8>>(2);
    std::thread::scope(|scope| {
        scope.spawn(move || read_windows(reader, window, gzip, &full_sender, &empty_receiver));
        // Owned here, so that an early return drops it and the reader, blocked handing over a
        // window, stops before the scope waits for it.
        let full = full;
        for received in &full {
            let Window { buffer, cut } = received?;
            pool.install(|| stream.take(&buffer[..cut]))?;
            progress.add(cut as u64);
            let _ = empty.try_send(buffer);
        }
        Ok::<(), DecodeError>(())
    })?;
    Ok(stream.dump)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(text: &[u8], window: usize, jobs: usize) -> Result<NdjsonDump, DecodeError> {
        decode(
            text,
            &crate::pool(jobs).unwrap(),
            window,
            false,
            &Progress::default(),
        )
    }

    const TEXT: &[u8] = b"\n{\"clockHz\": 1.5e9}\r\n{\"physicalTile\":0,\"offset\":0,\"duration\":1,\"kernel\":\"a\\n\"}\n \t\n{\"physicalTile\":1,\"offset\":2,\"duration\":1,\"kernel\":\"b\"}\r\n\x0b\n{\"physicalTile\":2,\"offset\":3,\"duration\":1}";

    #[test]
    fn header_blank_lines_and_numbers() {
        let dump = decoded(TEXT, 1 << 20, 2).unwrap();
        assert_eq!(dump.header, Some((2, b"{\"clockHz\": 1.5e9}\r".to_vec())));
        let lines: Vec<u64> = (0..3).map(|index| dump.lines.line(index)).collect();
        assert_eq!(lines, vec![3, 5, 7]);
        assert_eq!(dump.lines.samples(), 3);
        assert_eq!(dump.columns.tile, vec![0, 1, 2]);
    }

    #[test]
    fn every_window_gives_the_same_columns() {
        let whole = decoded(TEXT, 1 << 20, 1).unwrap();
        for window in 1..TEXT.len() + 2 {
            let dump = decoded(TEXT, window, 2).unwrap();
            assert_eq!(dump.lines, whole.lines, "window {window}");
            assert_eq!(dump.columns.kernel.ids, whole.columns.kernel.ids);
            assert_eq!(dump.header, whole.header);
        }
    }

    #[test]
    fn a_slice_decodes_as_the_stream_for_every_window() {
        let whole = decoded(TEXT, 1 << 20, 1).unwrap();
        let pool = crate::pool(2).unwrap();
        for window in 1..TEXT.len() + 2 {
            let progress = Progress::default();
            let dump = decode_slice(TEXT, &pool, window, &crate::json::Keep, &progress).unwrap();
            assert_eq!(dump.lines, whole.lines, "window {window}");
            assert_eq!(dump.columns.kernel.ids, whole.columns.kernel.ids);
            assert_eq!(dump.columns.tile, whole.columns.tile);
            assert_eq!(dump.header, whole.header);
            assert_eq!(progress.done() as usize, TEXT.len());
        }
        let mut bad = TEXT.to_vec();
        bad.extend_from_slice(b"\n{\"physicalTile\":\"x\"}\n{]");
        for window in [5, 1 << 20] {
            let outcome = decode_slice(
                &bad,
                &pool,
                window,
                &crate::json::Keep,
                &Progress::default(),
            );
            assert!(
                matches!(outcome, Err(DecodeError::Line { line: 8, .. })),
                "{window}"
            );
        }
        let empty = decode_slice(b"", &pool, 4, &crate::json::Keep, &Progress::default()).unwrap();
        assert!(empty.columns.is_empty() && empty.header.is_none());
    }

    /// Hands out its reads in order (an empty read after the last).
    struct Reads(Vec<std::io::Result<&'static [u8]>>);

    impl Read for Reads {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let bytes = self.0.remove(0)?;
            buffer[..bytes.len()].copy_from_slice(bytes);
            Ok(bytes.len())
        }
    }

    #[test]
    fn fill_retries_an_interrupted_read_and_passes_other_errors_on() {
        let interrupted = || Err(ErrorKind::Interrupted.into());
        let mut reads = Reads(vec![Ok(b"ab"), interrupted(), Ok(b"cd")]);
        let (mut buffer, mut filled) = (Vec::new(), 0);
        assert!(!fill(&mut reads, &mut buffer, &mut filled, 4).unwrap());
        assert_eq!(&buffer[..filled], b"abcd");
        let mut broken = Reads(vec![Err(ErrorKind::InvalidData.into())]);
        let error = fill(&mut broken, &mut buffer, &mut 0, 4).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidData);
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
    fn each_line_of_a_part_is_its_own_text() {
        // Past the first line of a part, a line starts after the newline that ends the one
        // before: the bad line's text is quoted as it is, and a blank line between samples
        // starts a new run of consecutive lines.
        let text = b"{\"physicalTile\":0,\"offset\":0,\"duration\":1}\n\n{\"physicalTile\":1,\"offset\":1,\"duration\":1}\n{]";
        match decode_lines(text, 0, &Columns::default(), 4) {
            Err(DecodeError::Line { line, text, .. }) => {
                assert_eq!((line, text), (3, b"{]".to_vec()))
            }
            other => panic!("{other:?}"),
        }
        let good = &text[..text.len() - 3];
        let (columns, lines, newlines) = decode_lines(good, 0, &Columns::default(), 4).unwrap();
        assert_eq!((columns.tile, newlines), (vec![0, 1], 2));
        assert_eq!((lines.line(0), lines.line(1)), (0, 2));
    }

    #[test]
    fn line_runs_appended_in_parts_equal_one_pass() {
        // Lines 1-3, a gap, 6-7, a gap, 20 (samples 0-5).
        let every = [1, 2, 3, 6, 7, 20];
        let mut whole = LineRuns::default();
        every.iter().for_each(|&line| whole.push(line));
        assert_eq!(
            (whole.starts.clone(), whole.lines.clone()),
            (vec![0, 3, 5], vec![1, 6, 20])
        );
        let found: Vec<u64> = (0..6).map(|index| whole.line(index)).collect();
        assert_eq!(found, every);
        for cut in 0..=every.len() {
            // Each part numbers its lines from its own start, as a range of a window does.
            let (mut joined, mut first, mut second) = Default::default();
            every[..cut]
                .iter()
                .for_each(|&line| LineRuns::push(&mut first, line));
            every[cut..]
                .iter()
                .for_each(|&line| LineRuns::push(&mut second, line - 1));
            LineRuns::append(&mut joined, &first, 0).unwrap();
            LineRuns::append(&mut joined, &LineRuns::default(), 9).unwrap();
            LineRuns::append(&mut joined, &second, 1).unwrap();
            assert_eq!(joined, whole, "cut {cut}");
        }
    }

    #[test]
    fn a_dump_without_blank_lines_is_one_run() {
        let text: Vec<u8> = (0..500)
            .flat_map(|tile| {
                format!("{{\"physicalTile\":{tile},\"offset\":0,\"duration\":1}}\n").into_bytes()
            })
            .collect();
        let dump = decoded(&text, 700, 2).unwrap();
        assert_eq!(dump.lines.samples(), 500);
        assert_eq!((dump.lines.starts, dump.lines.lines), (vec![0], vec![1]));
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
