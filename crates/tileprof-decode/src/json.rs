//! A JSON dump: `{"clockHz": …, "tileCount": …, "samples": [ … ], …}`.
//!
//! The usual way (default blocks), without the structural scan:
//! 1. The top level is walked (values skipped with the scan's 64-byte masks) to the samples
//!    array; the rest of the document, with the array replaced by `[]`, is decoded by
//!    serde_json, which checks every byte of it and gives the header values.
//! 2. One thread decodes the array from its `[` sample after sample (`fast`, else serde_json),
//!    which finds its `]`. Several threads each take a range of the array, guess where its
//!    first sample starts, and decode from there until a sample starts past the range.
//! 3. The parts join in order, and a part is kept only when the one before ended exactly where
//!    it began; a range whose guess was wrong is decoded again from there. So the chain of
//!    decoded samples and commas covers the whole array, and a frame is only ever made of
//!    samples decoded from true sample starts, whatever the guesses.
//!
//! On anything else (an error, an odd document, or block sizes chosen by a test), the block
//! path: the structural scan summarises blocks of the document on threads (`scan`), a prefix
//! gives the exact state at each block's start, the top level is walked skipping whole blocks,
//! each block of the array is decoded from its first sample start (a container opened at the
//! array's depth), and the parts are chained the same way. It says exactly where a document
//! that does not decode fails.

use std::borrow::Cow;
use std::fmt;

use rayon::prelude::*;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::columns::Columns;
use crate::error::{serde_message, DecodeError};
use crate::fast;
use crate::progress::Progress;
use crate::sample::decode_at;
use crate::scan::{self, Blocks, State};
use crate::skip_space;

/// Most bytes a block holds (the unit of the scan; a thread's task is a run of blocks).
///
/// Measured on a 453 MB mapped dump (2 threads): with 1 MiB blocks the mapping's resident
/// pages peaked at the file's size, with 4 MiB at 220 MB, with 16 MiB at 86 MB. Handing back a
/// small range does not last: the next touch nearby maps the whole page-cache folio again,
/// released pages included. Large ranges outrun that.
pub const BLOCK_BYTES: usize = 16 << 20;
/// How much of a part is decoded before its pages are handed back (as large, for the same reason).
const RELEASE_BYTES: usize = 16 << 20;
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Hands decoded byte ranges back (a mapped file drops their resident pages); no-op by default.
pub trait Release: Sync {
    fn release(&self, _start: usize, _end: usize) {}
}

/// Releases nothing (data held in memory).
pub struct Keep;
impl Release for Keep {}

/// A decoded JSON dump: the columns and the raw text of the header values (None: absent).
#[derive(Debug, Default)]
pub struct JsonDump {
    pub columns: Columns,
    pub clock_hz: Option<String>,
    pub tile_count: Option<String>,
}

/// Decode a JSON dump held in `data` on `pool`'s threads, in blocks of `block` bytes (None:
/// several blocks a thread, at most `BLOCK_BYTES`; tests choose tiny blocks to put block
/// boundaries everywhere).
pub fn decode(
    data: &[u8],
    pool: &rayon::ThreadPool,
    release: &dyn Release,
    block: Option<usize>,
    progress: &Progress,
) -> Result<JsonDump, DecodeError> {
    let skip = if data.starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    };
    let data = &data[skip..];
    let shift = |start: usize, end: usize| release.release(start + skip, end + skip);
    pool.install(|| {
        let jobs = pool.current_num_threads();
        if block.is_none() {
            let found = if jobs == 1 {
                decode_serial(data, &shift, progress)
            } else {
                decode_without_scan(data, &|open| {
                    let part_bytes = (data.len() - open) / (jobs * 4);
                    speculative_samples(data, open, part_bytes, &shift, progress)
                })
            };
            if let Some(dump) = found {
                return Ok(dump);
            }
        }
        let size = block.unwrap_or_else(|| block_size(data.len(), jobs));
        let blocks = scan_blocks(data, size, &shift);
        let (open, close) = samples_span(data, &blocks)?;
        let (clock_hz, tile_count) = header(data, open, close)?;
        let columns = decode_samples(data, &blocks, (open, close), &shift, progress)?;
        Ok(JsonDump {
            columns,
            clock_hz,
            tile_count,
        })
    })
}

fn block_size(len: usize, jobs: usize) -> usize {
    // Several blocks a thread, so the load evens out.
    (len / (jobs * 8).max(1)).clamp(1, BLOCK_BYTES)
}

/// The blocks.
///
/// Each task finds its own block's bounds (`scan::block_start` of its nominal start and of the
/// next one's), so no pass touches the file before the scan. Measured: finding every start first
/// touched a byte per block, and on this kernel each touch maps a whole page-cache folio, so most
/// of a mapped file was resident (peak RSS the file's size) before any block was released.
fn scan_blocks(data: &[u8], size: usize, release: &(dyn Fn(usize, usize) + Sync)) -> Blocks {
    let size = size.max(1);
    let nominal: Vec<usize> = (0..data.len().max(1)).step_by(size).collect();
    let scanned: Vec<(usize, scan::BlockSummary)> = nominal
        .par_iter()
        .filter_map(|&from| {
            let start = scan::block_start(data, from);
            let end = scan::block_start(data, from + size);
            if start >= end && !(start == 0 && data.is_empty()) {
                return None; // a long run of backslashes swallowed this block
            }
            let summary = scan::summarise(&data[start..end]);
            release(start, end);
            Some((start, summary))
        })
        .collect();
    let starts = scanned.iter().map(|block| block.0).collect();
    let summaries: Vec<_> = scanned.iter().map(|block| block.1).collect();
    let states = scan::block_states(&summaries, State::default());
    Blocks {
        starts,
        summaries,
        states,
        len: data.len(),
    }
}

fn syntax(message: &str) -> DecodeError {
    DecodeError::json(None, message)
}

/// The position of the quote that ends the string whose opening quote is at `open`.
fn string_end(data: &[u8], open: usize) -> Option<usize> {
    let mut position = open + 1;
    loop {
        position += memchr::memchr2(b'"', b'\\', data.get(position..)?)?;
        if data[position] == b'"' {
            return Some(position);
        }
        position += 2;
    }
}

/// One thread: the same document decoded without the structural scan, which only serves to
/// split the work (measured with callgrind on a 45 MB dump: a fifth of a one-thread decode).
/// The samples array is decoded from its `[`, sample after sample, which finds its `]`; the
/// values before it are skipped with the scan's masks. None (nothing decoded is kept) on
/// anything but a plain well-formed dump with one samples array: the block path then decodes
/// the document and words its error as always.
fn decode_serial(
    data: &[u8],
    release: &(dyn Fn(usize, usize) + Sync),
    progress: &Progress,
) -> Option<JsonDump> {
    decode_without_scan(data, &|open| serial_samples(data, open, release, progress))
}

/// The document walked at the top level (values before and after the samples array skipped
/// with the scan's masks), its samples array decoded by `samples` (given the `[`'s position:
/// the columns and the `]`'s position). None on anything but one plain samples array.
fn decode_without_scan(
    data: &[u8],
    samples: &dyn Fn(usize) -> Option<(Columns, usize)>,
) -> Option<JsonDump> {
    let mut position = skip_space(data, 0);
    if data.get(position) != Some(&b'{') {
        return None;
    }
    let mut found = None;
    position = skip_space(data, position + 1);
    while data.get(position) == Some(&b'"') {
        let key_end = string_end(data, position)?;
        let key = &data[position + 1..key_end];
        position = skip_space(data, key_end + 1);
        if data.get(position) != Some(&b':') {
            return None;
        }
        let start = skip_space(data, position + 1);
        let end = if is_samples_key(key) {
            if found.is_some() || data.get(start) != Some(&b'[') {
                return None;
            }
            let (columns, close) = samples(start)?;
            found = Some((start, close, columns));
            close + 1
        } else {
            value_end(data, None, start)?
        };
        position = skip_space(data, end);
        if data.get(position) != Some(&b',') {
            break;
        }
        position = skip_space(data, position + 1);
    }
    let (open, close, mut columns) = found?;
    let (clock_hz, tile_count) = header(data, open, close).ok()?;
    columns.shrink_to_fit();
    Some(JsonDump {
        columns,
        clock_hz,
        tile_count,
    })
}

/// Several threads without the scan: the array is cut into `part_bytes` ranges, and each thread
/// guesses where the first sample of its range starts (`guess`) and decodes from there, as the
/// block path does from a start the scan found. The guesses are then checked in order: a part
/// is kept only when the run before it ended exactly where it started (the chain of the block
/// path), so every kept sample was decoded from a true sample start; a range whose guess was
/// wrong is decoded again, here, from where the run before it ended. So the columns are the
/// serial path's, whatever the guesses. Measured with callgrind on a 45 MB dump, two threads:
/// the scan was a fifth of the instructions, and its pass touched every page a second time.
/// None (nothing kept) on an error or an array that does not end.
fn speculative_samples(
    data: &[u8],
    open: usize,
    part_bytes: usize,
    release: &(dyn Fn(usize, usize) + Sync),
    progress: &Progress,
) -> Option<(Columns, usize)> {
    let start = skip_space(data, open + 1);
    if data.get(start) == Some(&b']') {
        return Some((Columns::default(), start));
    }
    let ranges = crate::part_ranges(start, data.len(), part_bytes);
    let parts: Vec<Option<(usize, Result<Part, PartError>)>> = ranges
        .par_iter()
        .enumerate()
        .map(|(index, &(from, to))| {
            let first = if index == 0 {
                Some(start)
            } else {
                guess(data, from, to)
            };
            let mut counted = from;
            let mut decoded = |position: usize| {
                let upto = position.min(to);
                progress.add((upto - counted.min(upto)) as u64);
                counted = counted.max(upto);
            };
            let part = first.map(|first| (first, run_from(data, first, to, release, &mut decoded)));
            release(from, to);
            part
        })
        .collect();
    let mut expected = start;
    let mut joined = Vec::with_capacity(parts.len());
    for (part, &(_, to)) in parts.into_iter().zip(&ranges) {
        let part = match part {
            Some((first, Ok(part))) if first == expected => part,
            Some((first, Err(_))) if first == expected => return None,
            _ if expected >= to => continue, // the run before went past this whole range
            _ => run_from(data, expected, to, release, &mut |_| {}).ok()?,
        };
        joined.push(part.columns);
        match part.next {
            Next::End(close) => return Some((Columns::join(joined).ok()?, close)),
            Next::Sample(next) => expected = next,
        }
    }
    None
}

/// A likely sample start in `from..to` (`guess_start`, where a sample decodes).
fn guess(data: &[u8], from: usize, to: usize) -> Option<usize> {
    crate::guess_start(data, from, to, |at| fast::sample_at(data, at).is_some())
}

/// The samples of the array whose `[` is at `open`, and the position of its `]`.
fn serial_samples(
    data: &[u8],
    open: usize,
    release: &(dyn Fn(usize, usize) + Sync),
    progress: &Progress,
) -> Option<(Columns, usize)> {
    let mut columns = Columns::default();
    let mut position = skip_space(data, open + 1);
    let mut released = open;
    if data.get(position) == Some(&b']') {
        return Some((columns, position));
    }
    loop {
        let end = decode_one(data, position, &mut columns).ok()?;
        let after = skip_space(data, end);
        match data.get(after) {
            Some(b',') => position = skip_space(data, after + 1),
            Some(b']') => {
                progress.add((after - released) as u64);
                return Some((columns, after));
            }
            _ => return None,
        }
        if position - released >= RELEASE_BYTES {
            release(released, position);
            progress.add((position - released) as u64);
            released = position;
        }
    }
}

/// The position after the top-level value that starts at `start` (containers skipped with the
/// blocks' summaries when there are blocks, else with the masks from `start` on).
fn value_end(data: &[u8], blocks: Option<&Blocks>, start: usize) -> Option<usize> {
    match data.get(start)? {
        b'"' => string_end(data, start).map(|end| end + 1),
        b'{' | b'[' => {
            let inside = State {
                in_string: false,
                depth: 2,
            };
            match blocks {
                Some(blocks) => blocks.close_of(data, start + 1, inside),
                None => scan::close_in(data, start + 1, data.len(), inside, 1),
            }
            .map(|end| end + 1)
        }
        _ => {
            let rest = &data[start..];
            let length = rest
                .iter()
                .position(|&b| matches!(b, b',' | b'}' | b']') || crate::is_json_space(b));
            Some(start + length.unwrap_or(rest.len()))
        }
    }
}

/// The top-level keys of a JSON object document, in order, each value skipped with the scan's
/// masks (nothing inside a value is checked: the reader the keys choose checks it and says
/// where it breaks). None when the document is not one object with a plain top level.
pub fn top_level_keys(data: &[u8]) -> Option<Vec<String>> {
    let data = data.strip_prefix(UTF8_BOM).unwrap_or(data);
    let mut keys = Vec::new();
    let mut position = skip_space(data, 0);
    if data.get(position) != Some(&b'{') {
        return None;
    }
    position = skip_space(data, position + 1);
    if data.get(position) == Some(&b'}') {
        return (skip_space(data, position + 1) == data.len()).then_some(keys);
    }
    loop {
        if data.get(position) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(data, position)?;
        keys.push(serde_json::from_slice::<String>(&data[position..=key_end]).ok()?);
        position = skip_space(data, key_end + 1);
        if data.get(position) != Some(&b':') {
            return None;
        }
        let end = value_end(data, None, skip_space(data, position + 1))?;
        position = skip_space(data, end);
        match data.get(position) {
            Some(b',') => position = skip_space(data, position + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    (skip_space(data, position + 1) == data.len()).then_some(keys)
}

fn is_samples_key(key: &[u8]) -> bool {
    if key == b"samples" {
        return true;
    }
    // A key written with escapes ("sampl\u0065s") is still that key.
    key.contains(&b'\\')
        && serde_json::from_slice::<String>(&[b"\"", key, b"\""].concat())
            .is_ok_and(|k| k == "samples")
}

/// (position of the `[`, position of the `]`) of the top-level `samples` array.
fn samples_span(data: &[u8], blocks: &Blocks) -> Result<(usize, usize), DecodeError> {
    let not_found = || syntax("no samples array at the top level");
    let mut position = skip_space(data, 0);
    if data.get(position) != Some(&b'{') {
        return Err(syntax("the document is not a JSON object"));
    }
    let mut found = None;
    position = skip_space(data, position + 1);
    while data.get(position) == Some(&b'"') {
        let key_end = string_end(data, position).ok_or_else(not_found)?;
        let key = &data[position + 1..key_end];
        position = skip_space(data, key_end + 1);
        if data.get(position) != Some(&b':') {
            return Err(not_found());
        }
        let start = skip_space(data, position + 1);
        let end = value_end(data, Some(blocks), start).ok_or_else(not_found)?;
        if is_samples_key(key) {
            found = (data[start] == b'[').then_some((start, end - 1));
        }
        position = skip_space(data, end);
        if data.get(position) != Some(&b',') {
            break;
        }
        position = skip_space(data, position + 1);
    }
    found.ok_or_else(not_found)
}

/// The top level's header values, as raw JSON text.
struct Top {
    clock_hz: Option<String>,
    tile_count: Option<String>,
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TopVisitor;
        impl<'de> Visitor<'de> for TopVisitor {
            type Value = Top;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a dump document")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
                let mut top = Top {
                    clock_hz: None,
                    tile_count: None,
                };
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "clockHz" => {
                            top.clock_hz = Some(map.next_value::<&RawValue>()?.get().to_owned())
                        }
                        "tileCount" => {
                            top.tile_count = Some(map.next_value::<&RawValue>()?.get().to_owned())
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(top)
            }
        }
        deserializer.deserialize_map(TopVisitor)
    }
}

/// Decode everything but the samples array (replaced by `[]`): checks its syntax, and gives the
/// raw text of `clockHz` and `tileCount`. The text around the array is copied fallibly: it may
/// be most of the file (a hostile one is), and a copy that did not fit aborted.
fn header(
    data: &[u8],
    open: usize,
    close: usize,
) -> Result<(Option<String>, Option<String>), DecodeError> {
    let pieces = [&data[..open], b"[]", &data[close + 1..]];
    let mut rest: Vec<u8> = Vec::new();
    rest.try_reserve_exact(pieces.iter().map(|piece| piece.len()).sum())
        .map_err(|_| DecodeError::Memory("the text around the samples"))?;
    for piece in pieces {
        rest.extend_from_slice(piece);
    }
    let top: Top = serde_json::from_slice(&rest).map_err(|e| syntax(&serde_message(&e)))?;
    Ok((top.clock_hz, top.tile_count))
}

/// Where one part's run of samples ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// The next sample starts here (in a later part).
    Sample(usize),
    /// The array's `]` is here.
    End(usize),
}

/// One part of the samples array, decoded.
struct Part {
    /// Where its first sample starts (None: no sample starts in it).
    first: Option<usize>,
    next: Next,
    columns: Columns,
}

/// A failure inside a part: the sample's index in the part and the message (`OUT_OF_MEMORY`:
/// the columns could not grow, `DecodeError::Memory`).
type PartError = (usize, Cow<'static, str>);

/// The message of a `PartError` whose columns could not grow.
const OUT_OF_MEMORY: &str = "\0out of memory";

fn part_error(index: usize, error: DecodeError) -> PartError {
    match error {
        DecodeError::Memory(_) => (index, Cow::Borrowed(OUT_OF_MEMORY)),
        other => (index, Cow::Owned(other.to_string())),
    }
}

/// Add the sample at `position` to `columns` (the fast path, else serde_json); returns where it
/// ends.
#[inline]
fn decode_one(data: &[u8], position: usize, columns: &mut Columns) -> Result<usize, PartError> {
    if let Some((sample, end)) = fast::sample_at(data, position) {
        let pushed = columns.push_raw(&sample, None);
        if pushed.map_err(|e| part_error(columns.len(), e))? {
            return Ok(end);
        }
    }
    let (sample, length) =
        decode_at(&data[position..]).map_err(|e| (columns.len(), serde_message(&e).into()))?;
    let pushed = columns.push(&sample);
    pushed.map_err(|e| part_error(columns.len(), e))?;
    Ok(position + length)
}

/// `decode_run` of a part, its bytes counted as decoded as it goes (each time pages are handed
/// back) and in full at its end.
fn decode_part(
    data: &[u8],
    (from, to): (usize, usize),
    state: State,
    release: &(dyn Fn(usize, usize) + Sync),
    progress: &Progress,
) -> Result<Part, PartError> {
    let mut counted = from;
    let mut decoded = |position: usize| {
        let upto = position.min(to);
        progress.add((upto - counted.min(upto)) as u64);
        counted = counted.max(upto);
    };
    let part = decode_run(data, (from, to), state, release, &mut decoded);
    decoded(to);
    part
}

fn decode_run(
    data: &[u8],
    (from, to): (usize, usize),
    state: State,
    release: &(dyn Fn(usize, usize) + Sync),
    decoded: &mut dyn FnMut(usize),
) -> Result<Part, PartError> {
    let Some(first) = scan::first_open_at(data, from, to, state, 2) else {
        return Ok(Part {
            first: None,
            next: Next::Sample(to),
            columns: Columns::default(),
        });
    };
    run_from(data, first, to, release, decoded)
}

/// Decode sample after sample from the sample start `first` until a sample starts at or after
/// `to` (or the array ends), handing pages back as it goes.
fn run_from(
    data: &[u8],
    first: usize,
    to: usize,
    release: &(dyn Fn(usize, usize) + Sync),
    decoded: &mut dyn FnMut(usize),
) -> Result<Part, PartError> {
    let mut released = first;
    let mut columns = Columns::default();
    let mut position = first;
    loop {
        let end = decode_one(data, position, &mut columns)?;
        let after = skip_space(data, end);
        match data.get(after) {
            Some(b',') => {}
            Some(b']') => {
                return Ok(Part {
                    first: Some(first),
                    next: Next::End(after),
                    columns,
                })
            }
            _ => return Err((columns.len(), "expected `,` or `]` after a sample".into())),
        }
        position = skip_space(data, after + 1);
        if position - released >= RELEASE_BYTES {
            release(released, position); // nothing before `position` is read again
            decoded(position);
            released = position;
        }
        if position >= to {
            return Ok(Part {
                first: Some(first),
                next: Next::Sample(position),
                columns,
            });
        }
    }
}

fn decode_samples(
    data: &[u8],
    blocks: &Blocks,
    (open, close): (usize, usize),
    release: &(dyn Fn(usize, usize) + Sync),
    progress: &Progress,
) -> Result<Columns, DecodeError> {
    let first_block = blocks.block_of(open);
    let last_block = blocks.block_of(close);
    let array = State {
        in_string: false,
        depth: 2,
    };
    let groups = part_groups(blocks, first_block, last_block, close - open);
    let parts: Vec<Result<Part, PartError>> = groups
        .into_par_iter()
        .map(|(block, after)| {
            let (from, state) = if block == first_block {
                (open + 1, array)
            } else {
                (blocks.starts[block], blocks.states[block])
            };
            let to = blocks
                .starts
                .get(after)
                .map_or(close, |&end| end.min(close));
            let part = decode_part(data, (from, to), state, release, progress);
            release(from, to);
            part.map(|mut part| {
                part.columns.shrink_to_fit();
                part
            })
        })
        .collect();
    chain(data, open, close, parts)
}

/// The parts of the array: runs of whole blocks `(first, after last)`, about four a thread.
/// Few large parts keep the per-part dictionaries (hundreds of metadata texts each) few;
/// `decode_part` hands pages back as it goes, so a large part holds no more of the file.
fn part_groups(blocks: &Blocks, first: usize, last: usize, bytes: usize) -> Vec<(usize, usize)> {
    let jobs = rayon::current_num_threads().max(1);
    let target = (bytes / (jobs * 4)).max(1);
    let mut groups = Vec::new();
    let mut start = first;
    while start <= last {
        let mut after = start + 1;
        while after <= last && blocks.starts[after] - blocks.starts[start] < target {
            after += 1;
        }
        groups.push((start, after));
        start = after;
    }
    groups
}

/// Join the parts, checking that each begins where the one before ended.
fn chain(
    data: &[u8],
    open: usize,
    close: usize,
    parts: Vec<Result<Part, PartError>>,
) -> Result<Columns, DecodeError> {
    let start = skip_space(data, open + 1);
    let mut expected = if start == close {
        Next::End(close)
    } else {
        Next::Sample(start)
    };
    let mut joined: Vec<Columns> = Vec::with_capacity(parts.len());
    let mut count = 0;
    for part in parts {
        let broken =
            || DecodeError::json(Some(count), "not a sample object where one should start");
        match part {
            Err((_, message)) if message == OUT_OF_MEMORY => {
                return Err(DecodeError::Memory("the sample columns could not grow"))
            }
            Err((index, message)) => return Err(DecodeError::json(Some(count + index), message)),
            Ok(Part { first: None, .. }) => continue,
            Ok(Part {
                first: Some(first),
                next,
                columns,
            }) => {
                if expected != Next::Sample(first) {
                    return Err(broken());
                }
                count += columns.len();
                expected = next;
                joined.push(columns);
            }
        }
    }
    if expected != Next::End(close) {
        return Err(DecodeError::json(
            Some(count),
            "not a sample object where one should start",
        ));
    }
    Columns::join(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_keys_skip_values_and_refuse_what_is_not_one_object() {
        let keys = |text: &str| top_level_keys(text.as_bytes());
        assert_eq!(
            keys(" {\"a\": [1, {\"b\": \"}\"}], \"tr\\u0061ceEvents\": {}, \"c\": -1.5e3 }\n"),
            Some(vec!["a".into(), "traceEvents".into(), "c".into()])
        );
        assert_eq!(keys("{}"), Some(vec![]));
        for text in [
            "[]",
            "{\"a\": 1} {}",
            "{\"a\": 1",
            "{\"a\" 1}",
            "{a: 1}",
            "{\"a\": [}",
            "",
        ] {
            assert_eq!(keys(text), None, "{text}");
        }
    }

    fn decoded(text: &str, jobs: usize) -> Result<JsonDump, DecodeError> {
        decode(
            text.as_bytes(),
            &crate::pool(jobs).unwrap(),
            &Keep,
            None,
            &Progress::default(),
        )
    }

    const DUMP: &str = r#"{"clockHz": 1.5e9, "note": "\"samples\": [", "samples": [
        {"physicalTile": 0, "offset": 0, "duration": 5, "kernel": "a},{\"b"},
        {"physicalTile": 1, "offset": 5, "duration": 5, "metadata": [{"name": "x", "value": 1}]}
      ], "tileCount": 4, "groups": [{"physicalTile": 9}]}"#;

    #[test]
    fn header_and_samples_decode() {
        let dump = decoded(DUMP, 2).unwrap();
        assert_eq!(dump.clock_hz.as_deref(), Some("1.5e9"));
        assert_eq!(dump.tile_count.as_deref(), Some("4"));
        assert_eq!(dump.columns.tile, vec![0, 1]);
        assert_eq!(
            dump.columns.kernel.dictionary.values[0].as_ref(),
            b"a},{\"b"
        );
    }

    /// The byte ranges a decode hands back, sorted.
    #[derive(Default)]
    struct Recorded(std::sync::Mutex<Vec<(usize, usize)>>);

    impl Release for Recorded {
        fn release(&self, start: usize, end: usize) {
            self.0.lock().unwrap().push((start, end));
        }
    }

    #[test]
    fn a_byte_order_mark_moves_the_released_ranges_by_its_length() {
        let with_bom = [UTF8_BOM, DUMP.as_bytes()].concat();
        for jobs in [1, 2] {
            let released = |data: &[u8]| {
                let recorded = Recorded::default();
                let pool = crate::pool(jobs).unwrap();
                // blocks of 8 bytes: each is handed back once scanned
                decode(data, &pool, &recorded, Some(8), &Progress::default()).unwrap();
                let mut ranges = recorded.0.into_inner().unwrap();
                ranges.sort_unstable();
                ranges
            };
            let plain = released(DUMP.as_bytes());
            assert!(!plain.is_empty());
            let moved: Vec<(usize, usize)> = plain.iter().map(|&(s, e)| (s + 3, e + 3)).collect();
            assert_eq!(released(&with_bom), moved, "{jobs} jobs");
        }
    }

    #[test]
    fn parts_guessed_inside_a_nested_value_are_not_taken_as_samples() {
        // each sample holds objects that decode as samples: a part may start at one of them
        let sample = |i: usize| {
            format!(
                r#"{{"physicalTile": {i}, "extra": [{{"a": 1}}, {{"physicalTile": 99, "offset": 7, "duration": 1}}, {{"physicalTile": 98, "offset": 8, "duration": 1}}], "offset": {i}, "duration": 2}}"#
            )
        };
        let samples: Vec<String> = (0..60).map(sample).collect();
        let text = format!(r#"{{"samples": [{}]}}"#, samples.join(", "));
        let tiles: Vec<i64> = (0..60).collect();
        for jobs in [1, 2, 3, 4] {
            let pool = crate::pool(jobs).unwrap();
            let dump = decode(text.as_bytes(), &pool, &Keep, None, &Progress::default()).unwrap();
            assert_eq!(dump.columns.tile, tiles, "{jobs} jobs");
            assert_eq!(dump.columns.offset, tiles, "{jobs} jobs");
        }
    }

    #[test]
    fn an_escaped_key_is_the_samples_key_only_when_it_says_samples() {
        let text = r#"{"no\u0074e": [{"physicalTile": 9, "offset": 0, "duration": 1}],
            "sampl\u0065s": [{"physicalTile": 2, "offset": 0, "duration": 1}]}"#;
        for (jobs, block) in [(1, None), (2, None), (1, Some(8)), (2, Some(8))] {
            let pool = crate::pool(jobs).unwrap();
            let dump = decode(text.as_bytes(), &pool, &Keep, block, &Progress::default());
            assert_eq!(
                dump.unwrap().columns.tile,
                [2],
                "{jobs} jobs, blocks {block:?}"
            );
        }
    }

    #[test]
    fn a_part_out_of_memory_is_the_memory_error() {
        let data = br#"[{"physicalTile": 0, "offset": 0, "duration": 1}]"#;
        let parts = vec![Err((0, Cow::Borrowed(OUT_OF_MEMORY)))];
        assert_eq!(
            chain(data, 0, data.len() - 1, parts).unwrap_err(),
            DecodeError::Memory("the sample columns could not grow")
        );
    }

    #[test]
    fn every_block_size_gives_the_same_columns() {
        let whole = decoded(DUMP, 1).unwrap().columns;
        let data = DUMP.as_bytes();
        for size in 1..data.len() + 2 {
            let starts = scan::block_starts(data, size);
            let ends: Vec<usize> = starts.iter().skip(1).copied().chain([data.len()]).collect();
            let summaries = starts
                .iter()
                .zip(&ends)
                .map(|(&s, &e)| scan::summarise(&data[s..e]))
                .collect::<Vec<_>>();
            let states = scan::block_states(&summaries, State::default());
            let blocks = Blocks {
                starts,
                summaries,
                states,
                len: data.len(),
            };
            let (open, close) = samples_span(data, &blocks).unwrap();
            let span = (open, close);
            let progress = Progress::default();
            let columns = decode_samples(data, &blocks, span, &|_, _| {}, &progress).unwrap();
            assert_eq!(
                progress.done() as usize,
                span.1 - span.0 - 1,
                "block size {size}"
            );
            assert_eq!(columns.offset, whole.offset, "block size {size}");
            assert_eq!(columns.metadata_ids, whole.metadata_ids);
            assert_eq!(
                columns.kernel.dictionary.values,
                whole.kernel.dictionary.values
            );
        }
    }

    /// What a decode gave, in comparable form.
    fn outcome(result: Result<JsonDump, DecodeError>) -> String {
        match result {
            Err(error) => format!("error {error:?}"),
            Ok(dump) => {
                let c = dump.columns;
                format!(
                    "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                    dump.clock_hz,
                    dump.tile_count,
                    c.tile,
                    c.offset,
                    c.phase.values,
                    c.kernel.ids,
                    c.kernel.dictionary.values,
                    c.kind.ids,
                    c.metadata_ids,
                    c.metadata.values
                )
            }
        }
    }

    #[test]
    fn one_thread_without_the_scan_equals_the_block_path() {
        let sample = r#"{"physicalTile": 1, "offset": 5, "duration": 5, "kind": "k"}"#;
        for text in [
            DUMP.to_owned(),
            format!(r#"{{"a": [[{{"b": "]"}}]], "samples": [{sample}], "z": {{}}}}"#),
            format!(r#"{{"samples": [{sample}], "samples": [{sample}, {sample}]}}"#),
            format!(r#"{{"samples": [ {sample} , {sample} ] }}"#),
            format!(r#"{{"samples": [{sample}, ]}}"#),
            format!(r#"{{"samples": [{sample}, 1]}}"#),
            format!(r#"{{"samples": [{sample}], "x": [}}"#),
            format!(r#"{{"samples": [{sample}] "x": 1}}"#),
            r#"{"samples": [ ]}"#.to_owned(),
            r#"{"samples": {}}"#.to_owned(),
            r#"{"sampl\u0065s": []}"#.to_owned(),
            DUMP.replace(r#""offset": 5"#, r#""offset": "5""#),
            DUMP[..DUMP.len() - 3].to_owned(),
        ] {
            let pool = crate::pool(1).unwrap();
            let progress = Progress::default();
            let serial = decode(text.as_bytes(), &pool, &Keep, None, &progress);
            let blocks = decode(text.as_bytes(), &pool, &Keep, Some(7), &progress);
            let two = decode(
                text.as_bytes(),
                &crate::pool(2).unwrap(),
                &Keep,
                None,
                &progress,
            );
            let serial = outcome(serial);
            assert_eq!(serial, outcome(blocks), "{text}");
            assert_eq!(serial, outcome(two), "{text}");
        }
    }

    #[test]
    fn guessed_parts_give_the_serial_columns_for_every_part_size() {
        let awkward = [
            r#"{"physicalTile": 1, "offset": 1, "duration": 1, "kernel": "a},{\"physicalTile\": 2, \"offset\": 1, \"duration\": 1}"}"#,
            r#"{"physicalTile": 2, "offset": 2, "duration": 1, "x": [{"physicalTile": 9, "offset": 9, "duration": 9}, {"physicalTile": 9, "offset": 9, "duration": 9}]}"#,
            r#"{"physicalTile": 3, "offset": 3, "duration": 1, "metadata": [{"name": "a", "value": "}, {"}, {"name": "b", "value": 1}]}"#,
            r#"{"physicalTile": 4, "offset": 4, "duration": 1, "kind": "\\"}"#,
        ];
        let samples: Vec<&str> = awkward.iter().cycle().take(12).copied().collect();
        let good = format!(
            r#"{{"clockHz": 1, "samples": [ {} ], "z": [{{"physicalTile": 1}}, {{"a": 1}}]}}"#,
            samples.join(" ,\n ")
        );
        let bad = good.replace(r#""offset": 3"#, r#""offset": "3""#);
        let cut = &good[..good.len() / 2];
        let pool = crate::pool(2).unwrap();
        for text in [good.as_str(), bad.as_str(), cut] {
            let data = text.as_bytes();
            let progress = Progress::default();
            let serial = decode_serial(data, &|_, _| {}, &progress).map(|d| outcome(Ok(d)));
            for part_bytes in 1..data.len() + 2 {
                let speculative = pool.install(|| {
                    decode_without_scan(data, &|open| {
                        speculative_samples(data, open, part_bytes, &|_, _| {}, &progress)
                    })
                });
                assert_eq!(
                    speculative.map(|d| outcome(Ok(d))),
                    serial,
                    "{part_bytes}: {text}"
                );
            }
        }
        assert!(decode_serial(good.as_bytes(), &|_, _| {}, &Progress::default()).is_some());
    }

    #[test]
    fn a_guessed_part_counts_its_progress_as_it_releases() {
        // A part tells the progress bar how far it got each time it lets go of 16 MiB
        // (RELEASE_BYTES): one part over 18 MiB of samples counts once, from its first
        // sample to the start of the sample at or past 16 MiB from it.
        let sample = r#"{"physicalTile": 1, "offset": 2, "duration": 3}"#;
        let step = sample.len() + 2; // and ", "
        let count = (18 << 20) / step;
        let text = format!(r#"{{"samples": [{}]}}"#, vec![sample; count].join(", "));
        let data = text.as_bytes();
        let open = text.find('[').unwrap();
        let progress = Progress::default();
        let (columns, _) =
            speculative_samples(data, open, data.len(), &|_, _| {}, &progress).unwrap();
        assert_eq!(columns.len(), count);
        let counted = progress.done() as usize;
        assert_eq!(counted, RELEASE_BYTES.div_ceil(step) * step);
    }

    const PLAIN_SAMPLE: &str = r#"{"physicalTile": 1, "offset": 2, "duration": 3}"#;

    /// `count` samples in a samples array after a clock, its text's length less the `[`'s
    /// position made a multiple of 8 by white space before the `]`.
    fn plain_dump(count: usize) -> (String, usize) {
        let samples = vec![PLAIN_SAMPLE; count].join(", ");
        let mut text = format!(r#"{{"clockHz": 1, "samples": [{samples}"#);
        let open = text.find('[').unwrap();
        while (text.len() + 2 - open) % 8 != 0 {
            text.push(' ');
        }
        text.push_str("]}");
        (text, open)
    }

    #[test]
    fn a_plain_dump_on_two_threads_is_decoded_in_eight_parts() {
        // The plan of the speculative path (four parts a thread, so that the load evens out),
        // seen in the ranges it hands back as each part ends: the text after the `[` in eighths,
        // from the first sample, the last eighth a byte short (it starts after the `[`).
        let (text, open) = plain_dump(2000);
        let recorded = Recorded::default();
        let pool = crate::pool(2).unwrap();
        let dump = decode(
            text.as_bytes(),
            &pool,
            &recorded,
            None,
            &Progress::default(),
        )
        .unwrap();
        assert_eq!(dump.columns.len(), 2000);
        let mut ranges = recorded.0.into_inner().unwrap();
        ranges.sort_unstable();
        let eighth = (text.len() - open) / 8;
        let want: Vec<(usize, usize)> = (0..8)
            .map(|i| {
                (
                    open + 1 + i * eighth,
                    (open + 1 + (i + 1) * eighth).min(text.len()),
                )
            })
            .collect();
        assert_eq!(ranges, want);
    }

    #[test]
    fn blocks_are_an_eighth_of_a_thread_s_share_and_at_most_block_bytes() {
        assert_eq!(block_size(1600, 2), 100);
        assert_eq!(block_size(1600, 1), 200);
        assert_eq!(block_size(3, 2), 1);
        assert_eq!(block_size(1 << 40, 2), BLOCK_BYTES);
    }

    #[test]
    fn the_scan_s_blocks_are_grouped_into_about_four_parts_a_thread() {
        // 16 blocks of 50 bytes, 800 bytes of samples, two threads: parts of at least 100
        // bytes (an eighth), each of whole blocks: two blocks a part.
        let blocks = crate::scan::Blocks {
            starts: (0..16).map(|i| i * 50).collect(),
            summaries: Vec::new(),
            states: Vec::new(),
            len: 800,
        };
        let groups = crate::pool(2)
            .unwrap()
            .install(|| part_groups(&blocks, 0, 15, 800));
        let want: Vec<(usize, usize)> = (0..8).map(|i| (2 * i, 2 * i + 2)).collect();
        assert_eq!(groups, want);
        let from_the_fifth = crate::pool(2)
            .unwrap()
            .install(|| part_groups(&blocks, 5, 15, 550));
        assert_eq!(from_the_fifth[..2], [(5, 7), (7, 9)]);
        assert_eq!(from_the_fifth.last(), Some(&(15, 16)));
    }

    #[test]
    fn a_run_hands_back_its_pages_every_16_mib() {
        // The serial path and a speculative part each hand back what they decoded once it is
        // 16 MiB (RELEASE_BYTES) or more, at the start of the next sample: over 34 MiB of
        // samples, two ranges of 16 MiB and less than a sample more, one after the other.
        let step = PLAIN_SAMPLE.len() + 2; // and ", "
        let (text, open) = plain_dump((34 << 20) / step);
        let data = text.as_bytes();
        let runs_of = |recorded: Recorded, from: usize| {
            let mut ranges = recorded.0.into_inner().unwrap();
            ranges.sort_unstable();
            ranges.retain(|&(start, end)| (start, end) != (open + 1, data.len()));
            assert_eq!(ranges.len(), 2, "{ranges:?}");
            assert_eq!(ranges[0].0, from);
            assert_eq!(ranges[0].1, ranges[1].0);
            for (start, end) in ranges {
                assert!((RELEASE_BYTES..RELEASE_BYTES + step).contains(&(end - start)));
            }
        };
        let serial = Recorded::default();
        let progress = Progress::default();
        serial_samples(data, open, &|s, e| serial.release(s, e), &progress).unwrap();
        runs_of(serial, open);
        let part = Recorded::default();
        speculative_samples(
            data,
            open,
            data.len(),
            &|s, e| part.release(s, e),
            &progress,
        )
        .unwrap();
        runs_of(part, open + 1);
    }

    #[test]
    fn bad_documents_are_errors_naming_the_sample() {
        let bad = DUMP.replace(r#""offset": 5"#, r#""offset": "5""#);
        assert!(matches!(
            decoded(&bad, 2),
            Err(DecodeError::Json {
                sample: Some(1),
                ..
            })
        ));
        let scalar = DUMP.replace("samples\": [", "samples\": [1, ");
        assert!(matches!(
            decoded(&scalar, 2),
            Err(DecodeError::Json {
                sample: Some(0),
                ..
            })
        ));
        for text in [
            "",
            "[]",
            "{}",
            r#"{"samples": {}}"#,
            r#"{"samples": [}"#,
            &DUMP[..DUMP.len() - 3],
        ] {
            assert!(decoded(text, 2).is_err(), "{text}");
        }
        assert!(decoded(r#"{"samples": []}"#, 2).unwrap().columns.is_empty());
    }
}
