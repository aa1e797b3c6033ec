//! A PyTorch profiler (Kineto) trace: the complete events that tileprof reads, as columns.
//!
//! The rules are those of the Python reader (`tileprof/core/kineto.py`'s msgspec `Event` and
//! `Args`, `tileprof/inputs/gpu/kineto.py`'s checks). This decoder takes only documents it can
//! hold to them exactly; on anything else (a syntax error, a value of another type, a key given
//! twice, a GPU event the checks refuse, a lone surrogate escape, text that is not UTF-8) it
//! declines (`Declined`), and the Python reader reads the document the old way, which words
//! the error with its place or reads the odd but valid document. So it moves no answer and no
//! error: it is only faster where it says yes.
//!
//! The document is walked at the top level by hand (`traceEvents` may come after any other
//! key); each event is decoded by serde_json with borrowed text (escaped text is copied), and
//! the walk between events (commas, `]`) is done by hand, so each event's byte span is known:
//! the Python side decodes the spans of the few events whose free-form args it reads (NCCL
//! parameters, op inputs) with msgspec, as before. serde_json is the workspace's JSON crate
//! already (the dump decoder's); one pass at its speed is the measured cost
//! (docs/performance.md), so no hand tokenizer.

use std::borrow::Cow;
use std::fmt;

use hashbrown::HashMap;
use rayon::prelude::*;
use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;

use crate::skip_space;

/// Null in a text column.
pub const NONE: u32 = u32::MAX;
/// The largest |time| in µs that integer ns hold (the Python reader's `_PLACEABLE_US`).
pub const PLACEABLE_US: f64 = 9.2e15;

/// Why the decoder left a document to the Python reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declined(pub String);

impl fmt::Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub(crate) fn declined(reason: impl Into<String>) -> Declined {
    Declined(reason.into())
}

/// Distinct texts, each once, by code.
#[derive(Debug, Default)]
pub struct Texts {
    pub values: Vec<String>,
    codes: HashMap<String, u32>,
    /// Where `code_joined` writes a text before looking it up (kept, so an event's text
    /// costs no allocation unless it is new).
    scratch: String,
}

impl Texts {
    /// The code of `first`, `separator` and `second` written together (added when new): an
    /// event's `pid/tid` without a `format!` and its allocation per event.
    pub fn code_joined(&mut self, first: &str, separator: char, second: &str) -> u32 {
        let mut text = std::mem::take(&mut self.scratch);
        text.clear();
        text.push_str(first);
        text.push(separator);
        text.push_str(second);
        let code = self.code(&text);
        self.scratch = text;
        code
    }

    /// The code of `text` (added when new).
    pub fn code(&mut self, text: &str) -> u32 {
        if let Some(&code) = self.codes.get(text) {
            return code;
        }
        let code = self.values.len() as u32;
        self.values.push(text.to_owned());
        self.codes.insert(text.to_owned(), code);
        code
    }

    /// A closure that writes a column of `other`'s codes onto a column of these texts' codes
    /// (`other`'s texts added here when new; `NONE` stays `NONE`): how two parts' text
    /// columns are joined (`KinetoColumns::append`, the inventory's).
    pub(crate) fn absorb(&mut self, other: &Texts) -> impl Fn(&mut Vec<u32>, Vec<u32>) {
        let codes: Vec<u32> = other.values.iter().map(|t| self.code(t)).collect();
        move |into, from| {
            into.extend(from.into_iter().map(|code| {
                if code == NONE {
                    NONE
                } else {
                    codes[code as usize]
                }
            }))
        }
    }
}

/// A column of optional values laid out as Arrow lays one out: the values (the type's
/// default where null) and a validity flag per row, 9 bytes a row where a `Vec<Option<i64>>`
/// takes 16; `tileprof-native` hands the values to Arrow without a copy. Measured on the
/// issue 33 trace (2.56M events, seven such columns): the decoder's peak is what it holds.
#[derive(Debug, Default, Clone)]
pub struct Nullable<T> {
    pub values: Vec<T>,
    pub valid: Vec<bool>,
}

impl<T: Copy + Default> Nullable<T> {
    pub fn push(&mut self, value: Option<T>) {
        self.values.push(value.unwrap_or_default());
        self.valid.push(value.is_some());
    }

    /// `other`'s rows after these.
    pub fn extend(&mut self, other: Nullable<T>) {
        self.values.extend(other.values);
        self.valid.extend(other.valid);
    }

    pub fn get(&self, row: usize) -> Option<T> {
        self.valid[row].then(|| self.values[row])
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl<T: Copy + Default + PartialEq> PartialEq<Vec<Option<T>>> for Nullable<T> {
    fn eq(&self, other: &Vec<Option<T>>) -> bool {
        self.len() == other.len() && (0..self.len()).all(|row| self.get(row) == other[row])
    }
}

/// The complete events (`ph: "X"`) of the categories tileprof reads (GPU events, CPU ops,
/// runtime calls, step annotations), in file order. Text columns are codes into `texts`
/// (`NONE`: null); `None` is null.
#[derive(Debug, Default)]
pub struct KinetoColumns {
    /// Place in `traceEvents`.
    pub index: Vec<i64>,
    pub cat: Vec<u32>,
    pub name: Vec<u32>,
    pub ts: Nullable<f64>,
    pub dur: Nullable<f64>,
    /// `pid` when it is an integer that Int64 holds.
    pub pid: Nullable<i64>,
    /// `args.device`.
    pub device: Nullable<i64>,
    /// `args.stream` when it is an integer that Int64 holds.
    pub stream: Nullable<i64>,
    pub correlation: Nullable<i64>,
    pub external_id: Nullable<i64>,
    /// `args.grid`/`args.block` as `AxBxC` (null when absent or empty).
    pub grid: Vec<u32>,
    pub block: Vec<u32>,
    /// `args["Input type"]` as Python's `json.dumps` writes it (null when absent or empty).
    pub input_type: Vec<u32>,
    /// `pid/tid` as Python's `f"{pid}/{tid}"` writes them (each an integer, a string, a
    /// boolean or absent; any other kind declines the document).
    pub thread: Vec<u32>,
    /// The raw JSON text of `args.flops`, `args["Input Dims"]`, `args["Concrete Inputs"]`
    /// and `args["Input type"]`, as written (null when absent or null): the op rows decode
    /// each distinct text once.
    pub flops: Vec<u32>,
    pub input_dims: Vec<u32>,
    pub concrete_inputs: Vec<u32>,
    pub input_type_raw: Vec<u32>,
    /// The event's byte span in the document.
    pub start: Vec<u64>,
    pub end: Vec<u64>,
    pub texts: Texts,
    /// The rows filed; of `Rows::Timeline`, the columns `grid` to `input_type_raw` are left
    /// empty (`file_op_texts`).
    pub rows: Rows,
}

impl KinetoColumns {
    /// `part`'s rows after these, its `index` moved by `index_offset` and its text codes
    /// mapped into these columns' texts.
    pub(crate) fn append(&mut self, part: KinetoColumns, index_offset: i64) {
        // Every field named, so that a new column cannot be left out of the join.
        let KinetoColumns {
            index,
            cat,
            name,
            ts,
            dur,
            pid,
            device,
            stream,
            correlation,
            external_id,
            grid,
            block,
            input_type,
            thread,
            flops,
            input_dims,
            concrete_inputs,
            input_type_raw,
            start,
            end,
            texts,
            rows,
        } = part;
        debug_assert!(self.index.is_empty() || self.rows == rows);
        self.rows = rows;
        let texts_of = self.texts.absorb(&texts);
        self.index
            .extend(index.into_iter().map(|i| i + index_offset));
        texts_of(&mut self.cat, cat);
        texts_of(&mut self.name, name);
        self.ts.extend(ts);
        self.dur.extend(dur);
        self.pid.extend(pid);
        self.device.extend(device);
        self.stream.extend(stream);
        self.correlation.extend(correlation);
        self.external_id.extend(external_id);
        texts_of(&mut self.grid, grid);
        texts_of(&mut self.block, block);
        texts_of(&mut self.input_type, input_type);
        texts_of(&mut self.thread, thread);
        texts_of(&mut self.flops, flops);
        texts_of(&mut self.input_dims, input_dims);
        texts_of(&mut self.concrete_inputs, concrete_inputs);
        texts_of(&mut self.input_type_raw, input_type_raw);
        self.start.extend(start);
        self.end.extend(end);
    }
}

/// A decoded trace: the event columns and the byte spans of the top-level values the Python
/// side decodes itself (`deviceProperties`, `distributedInfo`, `baseTimeNanoseconds`; None
/// when absent).
#[derive(Debug, Default)]
pub struct KinetoTrace {
    pub columns: KinetoColumns,
    pub device_properties: Option<(usize, usize)>,
    pub distributed_info: Option<(usize, usize)>,
    pub base_time: Option<(usize, usize)>,
}

const GPU_CATEGORIES: [&str; 3] = ["kernel", "gpu_memcpy", "gpu_memset"];
const KEPT_CATEGORIES: [&str; 8] = [
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "cpu_op",
    "cuda_runtime",
    "cuda_driver",
    "user_annotation",
    "gpu_user_annotation",
];

/// Which of the kept events a decode files in its columns. Every event is read and checked
/// either way, so a document declines exactly as it would with every row filed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Rows {
    /// Every complete event of a kept category: the Kineto event frame.
    #[default]
    All,
    /// The rows a GPU timeline reads (`tileprof.inputs.gpu.kineto_timeline`): every kept
    /// event but the CPU ops, of which only `record_param_comms` (whose NCCL parameters
    /// stand for the kernels it launched). CPU ops are about half the rows of a trace.
    Timeline,
}

impl Rows {
    /// Whether an event of category `cat` named `name` is filed.
    fn files(self, cat: &str, name: Option<&str>) -> bool {
        self == Rows::All || cat != "cpu_op" || name == Some("record_param_comms")
    }
}

/// Decode a Kineto trace held in `data` on this thread.
pub fn decode(data: &[u8]) -> Result<KinetoTrace, Declined> {
    decode_split(data, None, Rows::All)
}

/// Decode a Kineto trace held in `data`, its events on `pool`'s threads in parts of
/// `part_bytes` (tests choose tiny parts to put part boundaries everywhere), filing `rows`.
pub fn decode_on(
    data: &[u8],
    pool: &rayon::ThreadPool,
    part_bytes: usize,
    rows: Rows,
) -> Result<KinetoTrace, Declined> {
    decode_split(data, Some((pool, part_bytes)), rows)
}

fn decode_split(
    data: &[u8],
    split: Option<(&rayon::ThreadPool, usize)>,
    rows: Rows,
) -> Result<KinetoTrace, Declined> {
    let mut columns = None;
    let top = walk_document(data, |open| {
        let (events, close) = trace_events(data, open, split, rows)?;
        columns = Some(events);
        Ok(close)
    })?;
    Ok(KinetoTrace {
        columns: columns.unwrap_or_default(),
        device_properties: top.device_properties,
        distributed_info: top.distributed_info,
        base_time: top.base_time,
    })
}

/// A byte span of the document: start and end.
pub type Span = (usize, usize);

/// The spans of the top-level values the Python side decodes itself (None when absent).
#[derive(Debug, Default)]
pub(crate) struct TopSpans {
    pub device_properties: Option<Span>,
    pub distributed_info: Option<Span>,
    pub base_time: Option<Span>,
}

/// Walk a trace document at the top level (any key order), checking every value as msgspec
/// would: `events` decodes the `traceEvents` array whose `[` it is given and returns the
/// position of its `]`. The spans of `deviceProperties`, `distributedInfo` and
/// `baseTimeNanoseconds`. Shared by the event decoder and the inventory (`kineto_inventory`).
pub(crate) fn walk_document(
    data: &[u8],
    mut events: impl FnMut(usize) -> Result<usize, Declined>,
) -> Result<TopSpans, Declined> {
    if std::str::from_utf8(data).is_err() {
        return Err(declined("not UTF-8"));
    }
    if has_lone_surrogate(data) {
        return Err(declined("a lone surrogate escape"));
    }
    let mut top = TopSpans::default();
    let mut seen_events = false;
    let mut position = skip_space(data, 0);
    if data.get(position) != Some(&b'{') {
        return Err(declined("not an object"));
    }
    position = skip_space(data, position + 1);
    if data.get(position) == Some(&b'}') {
        return Err(declined("no traceEvents"));
    }
    loop {
        let (key, after) = top_key(data, position)?;
        let start = skip_space(data, after);
        let end = match key.as_ref() {
            "traceEvents" => {
                if seen_events || data.get(start) != Some(&b'[') {
                    return Err(declined("traceEvents twice or not an array"));
                }
                seen_events = true;
                events(start)? + 1
            }
            other => {
                let end = value_end(data, start)?;
                let slot = match other {
                    "deviceProperties" => Some(&mut top.device_properties),
                    "distributedInfo" => Some(&mut top.distributed_info),
                    "baseTimeNanoseconds" => Some(&mut top.base_time),
                    _ => None,
                };
                if let Some(slot) = slot {
                    if slot.is_some() {
                        return Err(declined("a top-level key twice"));
                    }
                    *slot = Some((start, end));
                }
                end
            }
        };
        position = skip_space(data, end);
        match data.get(position) {
            Some(b',') => position = skip_space(data, position + 1),
            Some(b'}') => break,
            _ => return Err(declined("syntax")),
        }
    }
    if skip_space(data, position + 1) != data.len() {
        return Err(declined("trailing data"));
    }
    if !seen_events {
        return Err(declined("no traceEvents"));
    }
    Ok(top)
}

/// Whether a `\uD800`-`\uDFFF` escape stands alone (serde_json skips such text unchecked where
/// msgspec refuses it). A false alarm (`\\ud800`, an escaped backslash) only declines.
pub(crate) fn has_lone_surrogate(data: &[u8]) -> bool {
    let hex = |at: usize| -> Option<u32> {
        let digits = data.get(at..at + 4)?;
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let mut finder = memchr::memmem::find_iter(data, b"\\u").peekable();
    while let Some(at) = finder.next() {
        match hex(at + 2) {
            Some(0xD800..=0xDBFF) => {
                let low = data.get(at + 6..at + 8) == Some(b"\\u")
                    && matches!(hex(at + 8), Some(0xDC00..=0xDFFF));
                if !low {
                    return true;
                }
                finder.next(); // the low half
            }
            Some(0xDC00..=0xDFFF) => return true,
            _ => {}
        }
    }
    false
}

/// The key (unescaped) of the member at `position` and the position after its `:`.
pub(crate) fn top_key(data: &[u8], position: usize) -> Result<(Cow<'_, str>, usize), Declined> {
    let mut stream = serde_json::Deserializer::from_slice(&data[position..]).into_iter::<Text>();
    let key = match stream.next() {
        Some(Ok(Text(key))) => key,
        _ => return Err(declined("syntax")),
    };
    let colon = skip_space(data, position + stream.byte_offset());
    if data.get(colon) != Some(&b':') {
        return Err(declined("syntax"));
    }
    Ok((key, colon + 1))
}

/// The end of the JSON value that starts at `start` (checked by serde_json).
pub(crate) fn value_end(data: &[u8], start: usize) -> Result<usize, Declined> {
    let mut stream = serde_json::Deserializer::from_slice(&data[start..]).into_iter::<Checked>();
    match stream.next() {
        Some(Ok(_)) => Ok(start + stream.byte_offset()),
        _ => Err(declined("syntax")),
    }
}

/// Bytes of `traceEvents` each thread takes (below it, one thread decodes the whole array).
pub const PART_BYTES: usize = 16 << 20;

/// The events of the array whose `[` is at `open`, and the position of its `]`: on `split`'s
/// pool in parts of its byte count when the array is longer than one part, else on this thread.
fn trace_events(
    data: &[u8],
    open: usize,
    split: Option<(&rayon::ThreadPool, usize)>,
    rows: Rows,
) -> Result<(KinetoColumns, usize), Declined> {
    let start = skip_space(data, open + 1);
    if data.get(start) == Some(&b']') {
        return Ok((KinetoColumns::default(), start));
    }
    match events_from(data, start, data.len(), split, rows)? {
        (columns, _, Next::End(close)) => Ok((columns, close)),
        (_, _, Next::Event(_)) => Err(declined("truncated")),
    }
}

/// The events from the one starting at `start` until the array ends or an event starts at or
/// past `limit` (those of them `rows` names filed in the columns), the number of events read
/// (kept or not) and where they stopped: on `split`'s pool in parts of its byte count when
/// `start..limit` is longer than one part. The streaming
/// reader (`kineto_stream`) calls it once a window.
///
/// The parts are those of the tile dump's JSON decoder (`json.rs`, `speculative_samples`):
/// each thread guesses where the first event of its byte range starts and decodes from there
/// until an event starts past the range; a part is kept only when the run before it ended
/// exactly where it began, and a range whose guess was wrong is decoded again from there. So
/// every kept event was decoded from a true event start, and the columns are one thread's.
pub(crate) fn events_from(
    data: &[u8],
    start: usize,
    limit: usize,
    split: Option<(&rayon::ThreadPool, usize)>,
    rows: Rows,
) -> Result<(KinetoColumns, i64, Next), Declined> {
    let split = split.filter(|&(pool, part)| {
        pool.current_num_threads() > 1 && limit.saturating_sub(start) > part.max(1)
    });
    let Some((pool, part_bytes)) = split else {
        let run = run_from(data, start, limit, rows)?;
        return Ok((run.columns, run.events, run.next));
    };
    let part_bytes =
        crate::balanced_part_bytes(limit - start, part_bytes, pool.current_num_threads());
    let ranges = crate::part_ranges(start, limit, part_bytes);
    let parts: Vec<Option<(usize, Result<Run, Declined>)>> = pool.install(|| {
        ranges
            .par_iter()
            .enumerate()
            .map(|(index, &(from, to))| {
                let first = if index == 0 {
                    Some(start)
                } else {
                    crate::guess_start(data, from, to, |at| event_at(data, at))
                };
                first.map(|first| (first, run_from(data, first, to, rows)))
            })
            .collect()
    });
    join_parts(data, start, parts, &ranges, rows)
}

/// The parts chained from the first event (`events_from`).
fn join_parts(
    data: &[u8],
    start: usize,
    parts: Vec<Option<(usize, Result<Run, Declined>)>>,
    ranges: &[(usize, usize)],
    rows: Rows,
) -> Result<(KinetoColumns, i64, Next), Declined> {
    let mut expected = start;
    let mut joined: Option<KinetoColumns> = None;
    let mut events = 0i64;
    for (part, &(_, to)) in parts.into_iter().zip(ranges) {
        let run = match part {
            Some((first, outcome)) if first == expected => {
                outcome.map_err(|why| declined(format!("from byte {first}: {why}")))?
            }
            _ if expected >= to => continue, // the run before went past this whole range
            _ => run_from(data, expected, to, rows)
                .map_err(|why| declined(format!("from byte {expected}: {why}")))?,
        };
        match joined.as_mut() {
            None => joined = Some(run.columns),
            Some(columns) => columns.append(run.columns, events),
        }
        events += run.events;
        match run.next {
            Next::End(close) => return Ok((joined.unwrap_or_default(), events, Next::End(close))),
            Next::Event(next) => expected = next,
        }
    }
    Ok((joined.unwrap_or_default(), events, Next::Event(expected)))
}

/// Whether an object that serde_json reads starts at `at` (a guessed event start).
fn event_at(data: &[u8], at: usize) -> bool {
    let mut stream = serde_json::Deserializer::from_slice(&data[at..]).into_iter::<IgnoredAny>();
    matches!(stream.next(), Some(Ok(_)))
}

/// Where a run of events stopped.
pub enum Next {
    /// The next event starts here, at or past the run's range.
    Event(usize),
    /// The array's `]` is here.
    End(usize),
}

/// The events decoded from one start, numbered from 0 in `index`.
struct Run {
    columns: KinetoColumns,
    events: i64,
    next: Next,
}

/// The events from the one starting at `first`, until the array ends or an event starts at or
/// past `to`, filing `rows`.
fn run_from(data: &[u8], first: usize, to: usize, rows: Rows) -> Result<Run, Declined> {
    let mut columns = KinetoColumns {
        rows,
        ..KinetoColumns::default()
    };
    let mut position = first;
    let mut index = 0i64;
    loop {
        let mut event = Event::default();
        let end = match crate::kineto_fast::read_event(data, position, &mut event) {
            Some(end) => end,
            None => {
                let (read, end) = serde_event(data, position, index)?;
                event = read;
                end
            }
        };
        keep(&mut columns, &event, index, (position, end))?;
        index += 1;
        let after = skip_space(data, end);
        let stop = match data.get(after) {
            Some(b',') => {
                position = skip_space(data, after + 1);
                (position >= to).then_some(Next::Event(position))
            }
            Some(b']') => Some(Next::End(after)),
            _ => return Err(declined("syntax")),
        };
        if let Some(next) = stop {
            return Ok(Run {
                columns,
                events: index,
                next,
            });
        }
    }
}

/// The event at `position` read by serde_json (what `kineto_fast` does not take), and the
/// position after it.
fn serde_event(data: &[u8], position: usize, index: i64) -> Result<(Event<'_>, usize), Declined> {
    let mut stream = serde_json::Deserializer::from_slice(&data[position..]).into_iter::<Event>();
    match stream.next() {
        Some(Ok(event)) => Ok((event, position + stream.byte_offset())),
        Some(Err(error)) => Err(declined(format!("event {index}: {error}"))),
        None => Err(declined("truncated")),
    }
}

fn placeable(us: f64) -> bool {
    us.is_finite() && us.abs() < PLACEABLE_US
}

/// File one event in the columns when it is a complete event of a kept category that the
/// columns' `rows` names, checking it as the Python reader does (a check it fails declines
/// the document, whether or not the event is filed).
fn keep(
    columns: &mut KinetoColumns,
    event: &Event<'_>,
    index: i64,
    span: (usize, usize),
) -> Result<(), Declined> {
    if event.ph.as_deref() != Some("X") {
        return Ok(());
    }
    if event.dur.is_some_and(|dur| dur < 0.0) {
        return Err(declined(format!("event {index}: negative duration")));
    }
    let Some(cat) = event.cat.as_deref().filter(|c| KEPT_CATEGORIES.contains(c)) else {
        return Ok(());
    };
    let args = event.args.as_ref();
    let stream = args.map_or(Stream::None, |a| a.stream);
    if GPU_CATEGORIES.contains(&cat) {
        let (Some(ts), Some(dur)) = (event.ts, event.dur) else {
            return Err(declined(format!(
                "event {index}: GPU event without ts or dur"
            )));
        };
        if event.name.is_none() || !(placeable(ts) && placeable(ts + dur)) {
            return Err(declined(format!(
                "event {index}: GPU event unnamed or unplaceable"
            )));
        }
        if matches!(stream, Stream::Other) {
            return Err(declined(format!("event {index}: stream not an integer")));
        }
    }
    let Some(thread) = event.pid.python.as_deref().zip(event.tid.python.as_deref()) else {
        return Err(declined(format!(
            "event {index}: pid or tid of a kind Python's text of it cannot be held to"
        )));
    };
    if !columns.rows.files(cat, event.name.as_deref()) {
        return Ok(());
    }
    let texts = &mut columns.texts;
    columns.index.push(index);
    columns.cat.push(texts.code(cat));
    columns
        .name
        .push(event.name.as_deref().map_or(NONE, |n| texts.code(n)));
    columns.ts.push(event.ts);
    columns.dur.push(event.dur);
    columns.pid.push(event.pid.int);
    columns.device.push(args.and_then(|a| a.device));
    columns.stream.push(match stream {
        Stream::Int(value) => Some(value),
        _ => None,
    });
    columns.correlation.push(args.and_then(|a| a.correlation));
    columns.external_id.push(args.and_then(|a| a.external_id));
    columns.start.push(span.0 as u64);
    columns.end.push(span.1 as u64);
    if columns.rows == Rows::All {
        file_op_texts(columns, args, thread);
    }
    Ok(())
}

/// File an event's texts that only the op rows and the run table read (`grid`, `block`,
/// `input_type`, `thread` and the op arguments' JSON): a read for a timeline
/// (`Rows::Timeline`) leaves these columns empty.
fn file_op_texts(columns: &mut KinetoColumns, args: Option<&Args<'_>>, thread: (&str, &str)) {
    let texts = &mut columns.texts;
    let dims = |values: Option<&Vec<i64>>, texts: &mut Texts| match values {
        Some(values) if !values.is_empty() => {
            let text: Vec<String> = values.iter().map(i64::to_string).collect();
            texts.code(&text.join("x"))
        }
        _ => NONE,
    };
    columns
        .grid
        .push(dims(args.and_then(|a| a.grid.as_ref()), texts));
    columns
        .block
        .push(dims(args.and_then(|a| a.block.as_ref()), texts));
    columns
        .input_type
        .push(match args.and_then(|a| a.input_type.as_ref()) {
            Some(types) if !types.is_empty() => texts.code(&python_json_list(types)),
            _ => NONE,
        });
    columns
        .thread
        .push(texts.code_joined(thread.0, '/', thread.1));
    let raw = |text: Option<&str>, texts: &mut Texts| text.map_or(NONE, |t| texts.code(t));
    columns.flops.push(raw(args.and_then(|a| a.flops), texts));
    columns
        .input_dims
        .push(raw(args.and_then(|a| a.input_dims), texts));
    columns
        .concrete_inputs
        .push(raw(args.and_then(|a| a.concrete_inputs), texts));
    columns
        .input_type_raw
        .push(raw(args.and_then(|a| a.input_type_raw), texts));
}

/// A list of strings as Python's `json.dumps` writes it: `["a", "b"]`, non-ASCII as `\uXXXX`
/// (surrogate pairs above U+FFFF).
pub fn python_json_list(items: &[Text<'_>]) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        for c in item.0.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                ' '..='~' => out.push(c),
                _ => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
        }
        out.push('"');
    }
    out.push(']');
    out
}

/// A string that borrows from the input when it can.
#[derive(Debug)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// Any JSON value, read through as msgspec reads a field typed `Any`: a number too large for a
/// float (`1e400`) is refused (skipping with `IgnoredAny` would pass it). The integer it is,
/// when it is one that Int64 holds.
#[derive(Debug, Default)]
pub(crate) struct Checked(pub(crate) Option<i64>);

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked(None))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Checked, E> {
        Ok(Checked(Some(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Checked, E> {
        Ok(Checked(i64::try_from(v).ok()))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked(None))
    }
    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value::<Checked>()?;
        }
        Ok(Checked(None))
    }
}

/// A float field (msgspec's `float | None`): a number, or null.
fn float_field<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<f64>, A::Error> {
    let raw: &RawValue = map.next_value()?;
    let text = raw.get();
    if text == "null" {
        return Ok(None);
    }
    match text.as_bytes()[0] {
        b'-' | b'0'..=b'9' => {}
        _ => return Err(de::Error::custom("expected a number")),
    }
    // Rust's parse rounds correctly, as msgspec's does (serde_json's own may be an ulp off).
    let value: f64 = text.parse().map_err(de::Error::custom)?;
    if !value.is_finite() {
        return Err(de::Error::custom("number out of range"));
    }
    Ok(Some(value))
}

/// An Int64 field (`Int64 | None`): an integer literal that Int64 holds, or null.
fn int_field<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<i64>, A::Error> {
    let raw: &RawValue = map.next_value()?;
    let text = raw.get();
    if text == "null" {
        return Ok(None);
    }
    text.parse()
        .map(Some)
        .map_err(|_| de::Error::custom("expected a 64-bit integer"))
}

/// `args.stream` (any JSON): absent or null, an integer that Int64 holds, or anything else.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) enum Stream {
    #[default]
    None,
    Int(i64),
    Other,
}

#[derive(Debug, Default)]
pub(crate) struct Args<'a> {
    pub(crate) device: Option<i64>,
    pub(crate) stream: Stream,
    pub(crate) correlation: Option<i64>,
    pub(crate) external_id: Option<i64>,
    pub(crate) grid: Option<Vec<i64>>,
    pub(crate) block: Option<Vec<i64>>,
    pub(crate) input_type: Option<Vec<Text<'a>>>,
    pub(crate) input_type_raw: Option<&'a str>,
    pub(crate) flops: Option<&'a str>,
    pub(crate) input_dims: Option<&'a str>,
    pub(crate) concrete_inputs: Option<&'a str>,
}

/// `pid` or `tid`: the integer it is (when Int64 holds it) and Python's `str()` of the value
/// msgspec decodes (None when it is of a kind whose text this decoder does not write: a
/// float, a list, an object, an integer beyond 64 bits).
#[derive(Debug)]
pub(crate) struct Process<'a> {
    pub(crate) int: Option<i64>,
    pub(crate) python: Option<Cow<'a, str>>,
}

impl Default for Process<'_> {
    fn default() -> Self {
        Process {
            int: None,
            python: Some(Cow::Borrowed("None")),
        }
    }
}

/// A `pid` or `tid` from its raw text (checked as msgspec's `Any`). An integer's JSON text is
/// Python's `str()` of it (no sign but `-`, no leading zero) but for `-0`.
fn process_of(raw: &RawValue) -> Result<Process<'_>, serde_json::Error> {
    let text = raw.get();
    let python = match text.as_bytes()[0] {
        b'n' => Cow::Borrowed("None"),
        b't' => Cow::Borrowed("True"),
        b'f' => Cow::Borrowed("False"),
        b'"' if !text.contains('\\') => Cow::Borrowed(&text[1..text.len() - 1]),
        b'"' => serde_json::from_str::<Text<'_>>(text)?.0,
        _ => {
            if let Ok(value) = text.parse::<i64>() {
                let python = Cow::Borrowed(if text == "-0" { "0" } else { text });
                return Ok(Process {
                    int: Some(value),
                    python: Some(python),
                });
            }
            let int = serde_json::from_str::<Checked>(text)?.0;
            let python = text.parse::<u64>().is_ok().then_some(Cow::Borrowed(text));
            return Ok(Process { int, python });
        }
    };
    Ok(Process {
        int: None,
        python: Some(python),
    })
}

/// A free-form argument's raw text (checked as msgspec's `Any`; None when null). serde_json
/// has checked its syntax; what `Checked` adds is the refusal of a number beyond a float,
/// which needs an exponent or 309 digits, so only such text is decoded again.
fn raw_field<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<&'de str>, A::Error> {
    let raw: &'de RawValue = map.next_value()?;
    let text = raw.get();
    let exponent = text.as_bytes().windows(2).any(|pair| {
        matches!(pair[1], b'e' | b'E') && (pair[0].is_ascii_digit() || pair[0] == b'.')
    });
    if exponent || text.len() > 300 {
        serde_json::from_str::<Checked>(text).map_err(de::Error::custom)?;
    }
    Ok((text != "null").then_some(text))
}

#[derive(Debug, Default)]
pub(crate) struct Event<'a> {
    pub(crate) ph: Option<Cow<'a, str>>,
    pub(crate) cat: Option<Cow<'a, str>>,
    pub(crate) name: Option<Cow<'a, str>>,
    pub(crate) ts: Option<f64>,
    pub(crate) dur: Option<f64>,
    pub(crate) pid: Process<'a>,
    pub(crate) tid: Process<'a>,
    pub(crate) args: Option<Args<'a>>,
}

/// Marks a key as seen; a key given twice is refused (msgspec keeps the last; the Python
/// reader reads such a document).
pub(crate) fn once<E: de::Error>(seen: &mut u32, bit: u32) -> Result<(), E> {
    if *seen & (1 << bit) != 0 {
        return Err(E::custom("a key given twice"));
    }
    *seen |= 1 << bit;
    Ok(())
}

fn optional_text<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
    Ok(map.next_value::<Option<Text<'de>>>()?.map(|t| t.0))
}

impl<'de> Deserialize<'de> for Args<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ArgsVisitor;
        impl<'de> Visitor<'de> for ArgsVisitor {
            type Value = Args<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an args object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Args<'de>, A::Error> {
                let mut args = Args::default();
                let mut seen = 0u32;
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    let bit = match key.as_ref() {
                        "device" => 0,
                        "stream" => 1,
                        "correlation" => 2,
                        "External id" => 3,
                        "grid" => 4,
                        "block" => 5,
                        "Input type" => 6,
                        "Input Dims" => 7,
                        "Concrete Inputs" => 8,
                        "flops" => 9,
                        "Collective name" | "In msg nelems" | "Out msg nelems" | "Group size"
                        | "dtype" | "Process Group Name" | "pg_id" | "Seq" => {
                            map.next_value::<Checked>()?;
                            continue; // read from the event's span on the Python side
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    once(&mut seen, bit)?;
                    match bit {
                        0 => args.device = int_field(&mut map)?,
                        1 => {
                            let raw: &RawValue = map.next_value()?;
                            args.stream = stream_of(raw).map_err(de::Error::custom)?;
                        }
                        2 => args.correlation = int_field(&mut map)?,
                        3 => args.external_id = int_field(&mut map)?,
                        4 => args.grid = map.next_value()?,
                        5 => args.block = map.next_value()?,
                        6 => {
                            let raw: &'de RawValue = map.next_value()?;
                            let text = raw.get();
                            args.input_type =
                                serde_json::from_str(text).map_err(de::Error::custom)?;
                            args.input_type_raw = (text != "null").then_some(text);
                        }
                        7 => args.input_dims = raw_field(&mut map)?,
                        8 => args.concrete_inputs = raw_field(&mut map)?,
                        _ => args.flops = raw_field(&mut map)?,
                    }
                }
                Ok(args)
            }
        }
        deserializer.deserialize_map(ArgsVisitor)
    }
}

/// `args.stream` from its raw text (checked as msgspec's `Any`).
fn stream_of(raw: &RawValue) -> Result<Stream, serde_json::Error> {
    let text = raw.get();
    if text == "null" {
        return Ok(Stream::None);
    }
    if let Ok(value) = text.parse::<i64>() {
        return Ok(Stream::Int(value));
    }
    serde_json::from_str::<Checked>(text)?;
    Ok(Stream::Other)
}

impl<'de> Deserialize<'de> for Event<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event<'de>, A::Error> {
        let mut event = Event::default();
        let mut seen = 0u32;
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let bit = match key.as_ref() {
                "ph" => 0,
                "cat" => 1,
                "name" => 2,
                "ts" => 3,
                "dur" => 4,
                "pid" => 5,
                "tid" => 6,
                "args" => 7,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            once(&mut seen, bit)?;
            match bit {
                0 => event.ph = optional_text(&mut map)?,
                1 => event.cat = optional_text(&mut map)?,
                2 => event.name = optional_text(&mut map)?,
                3 => event.ts = float_field(&mut map)?,
                4 => event.dur = float_field(&mut map)?,
                5 | 6 => {
                    let raw: &'de RawValue = map.next_value()?;
                    let process = process_of(raw).map_err(de::Error::custom)?;
                    if bit == 5 {
                        event.pid = process;
                    } else {
                        event.tid = process;
                    }
                }
                _ => event.args = map.next_value_seed(OptionalArgs)?,
            }
        }
        Ok(event)
    }
}

/// `args`: an object, or null.
struct OptionalArgs;

impl<'de> DeserializeSeed<'de> for OptionalArgs {
    type Value = Option<Args<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        Option::<Args<'de>>::deserialize(deserializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(trace: &KinetoTrace, code: u32) -> Option<&str> {
        (code != NONE).then(|| trace.columns.texts.values[code as usize].as_str())
    }

    #[test]
    fn kept_events_and_their_fields() {
        let data = br#"{"other": [1, {"a": "]"}], "traceEvents": [
          {"ph": "X", "cat": "kernel", "name": "k\u00e9", "ts": 1.5, "dur": 2, "pid": 0, "tid": 7,
           "args": {"device": 0, "stream": 7, "correlation": 3, "grid": [1, 2, 3], "block": [],
                    "Input Dims": [[1]], "x": 1e400}},
          {"ph": "i", "cat": "kernel"},
          {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 3, "pid": "p",
           "args": {"External id": 9, "Input type": ["float", "", "\u00e9\ud83d\ude00"]}},
          {"ph": "X", "cat": "python_function", "name": "f", "ts": 0, "dur": 1}
        ], "deviceProperties": [{"id": 0, "name": "G"}]}"#;
        let trace = decode(data).unwrap();
        let c = &trace.columns;
        assert_eq!(c.index, vec![0, 2]);
        assert_eq!(text(&trace, c.name[0]), Some("ké"));
        assert_eq!(c.ts, vec![Some(1.5), Some(0.0)]);
        assert_eq!(c.pid, vec![Some(0), None]);
        assert_eq!(c.stream, vec![Some(7), None]);
        assert_eq!(text(&trace, c.grid[0]), Some("1x2x3"));
        assert_eq!(c.block[0], NONE);
        assert_eq!(
            text(&trace, c.input_type[1]),
            Some(r#"["float", "", "\u00e9\ud83d\ude00"]"#)
        );
        assert_eq!(text(&trace, c.thread[0]), Some("0/7"));
        assert_eq!(text(&trace, c.thread[1]), Some("p/None"));
        assert_eq!(text(&trace, c.input_dims[0]), Some("[[1]]"));
        assert_eq!(
            (c.input_dims[1], c.flops[0], c.concrete_inputs[0]),
            (NONE, NONE, NONE)
        );
        assert_eq!(
            text(&trace, c.input_type_raw[1]),
            Some(r#"["float", "", "\u00e9\ud83d\ude00"]"#)
        );
        let (start, end) = (c.start[1] as usize, c.end[1] as usize);
        assert!(data[start..end].starts_with(b"{\"ph\": \"X\", \"cat\": \"cpu_op\""));
        assert!(data[start..end].ends_with(b"]}}"));
        let (start, end) = trace.device_properties.unwrap();
        assert_eq!(&data[start..end], br#"[{"id": 0, "name": "G"}]"#);
    }

    #[test]
    fn what_msgspec_would_refuse_or_read_otherwise_declines() {
        for data in [
            &br#"{"traceEvents": [{"ts": "1"}]}"#[..],
            br#"{"traceEvents": [{"ph": "X", "ph": "X"}]}"#,
            br#"{"traceEvents": [{"args": {"device": 1.0}}]}"#,
            br#"{"traceEvents": [{"args": {"Input Dims": 1e400}}]}"#,
            br#"{"traceEvents": [{"name": "\ud800"}]}"#,
            br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1}]}"#,
            br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1,
                 "args": {"stream": "0x0"}}]}"#,
            br#"{"traceEvents": [{"ph": "X", "dur": -1}]}"#,
            br#"{"traceEvents": [{}, ]}"#,
            br#"{"traceEvents": [{}]"#,
            br#"{"deviceProperties": []}"#,
            br#"{"traceEvents": []} x"#,
            b"{\"traceEvents\": [{\"name\": \"\xff\"}]}",
            br#"{"traceEvents": [{"ts": 1, "ts": 2}]}"#,
            br#"{"traceEvents": [{"args": {"stream": 1, "stream": 2}}]}"#,
            br#"{"traceEvents": [], "traceEvents": []}"#,
            br#"{"traceEvents": {"a": 1}}"#,
            br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e16, "dur": 1,
                 "args": {"stream": 1}}]}"#,
            // lone surrogates in text serde_json skips unread (msgspec refuses them)
            br#"{"traceEvents": [{"x": "\ud800"}]}"#,
            br#"{"traceEvents": [{"x": "\udc00"}]}"#,
            br#"{"traceEvents": [{"x": "\ud800\u0041"}]}"#,
            br#"{"traceEvents": [{"x": "\ud83d\ude00\udc00"}]}"#,
            br#"{"traceEvents": [{"x": "a\ud800"}]}"#,
        ] {
            assert!(decode(data).is_err(), "{}", String::from_utf8_lossy(data));
        }
        assert_eq!(decode(b"[]").unwrap_err().to_string(), "not an object");
    }

    #[test]
    fn surrogate_pairs_and_the_rank_are_read() {
        for data in [
            &br#"{"traceEvents": [{"x": "\ud83d\ude00"}]}"#[..],
            br#"{"traceEvents": [{"x": "\ud83d\ude00\ud83d\ude00 \u0041"}]}"#,
        ] {
            assert!(decode(data).is_ok(), "{}", String::from_utf8_lossy(data));
        }
        let data = br#"{"traceEvents": [], "distributedInfo": {"rank": 0}}"#;
        let (start, end) = decode(data).unwrap().distributed_info.unwrap();
        assert_eq!(&data[start..end], br#"{"rank": 0}"#);
    }

    /// Every column of a decode, text codes resolved.
    fn resolved(trace: &KinetoTrace) -> Vec<String> {
        let c = &trace.columns;
        (0..c.index.len())
            .map(|row| {
                let text = |codes: &[u32]| text(trace, codes[row]).map(str::to_owned);
                format!(
                    "{} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {}",
                    c.index[row],
                    text(&c.cat),
                    text(&c.name),
                    c.ts.get(row),
                    c.dur.get(row),
                    c.pid.get(row),
                    c.device.get(row),
                    c.stream.get(row),
                    c.correlation.get(row),
                    c.external_id.get(row),
                    text(&c.grid),
                    text(&c.block),
                    text(&c.input_type),
                    text(&c.thread),
                    text(&c.flops),
                    text(&c.input_dims),
                    text(&c.concrete_inputs),
                    text(&c.input_type_raw),
                    c.start[row],
                    c.end[row]
                )
            })
            .collect()
    }

    #[test]
    fn parts_on_threads_give_one_threads_columns_whatever_the_guesses() {
        // Names that look like event boundaries ("}, {") inside strings, a nested object after
        // a comma, events of every kept kind and some not kept.
        let mut data = String::from(r#"{"traceEvents": ["#);
        for i in 0..60 {
            if i > 0 {
                data.push_str(",\n  ");
            }
            let (cat, ph) = match i % 4 {
                0 => ("kernel", "X"),
                1 => ("cpu_op", "X"),
                2 => ("python_function", "X"),
                _ => ("cuda_runtime", "i"),
            };
            data.push_str(&format!(
                r#"{{"ph": "{ph}", "cat": "{cat}", "name": "n{} }}, {{\"x\": 1}}", "ts": {i}, "dur": 1, "pid": {}, "tid": "t{i}", "args": {{"stream": 7, "correlation": {i}, "nested": [{{"a": 1}}, {{"b": {{}}}}], "grid": [{i}, 1, 1], "Input Dims": [[{i}], []], "Input type": ["f", ""]}}}}"#,
                i % 7,
                i % 3
            ));
        }
        data.push_str(r#"], "deviceProperties": [{"id": 0, "name": "G"}]}"#);
        let serial = decode(data.as_bytes()).unwrap();
        assert_eq!(serial.columns.index.len(), 30);
        for jobs in [2, 3] {
            let pool = crate::pool(jobs).unwrap();
            for part in [1, 7, 50, 333, 10_000] {
                let parted = decode_on(data.as_bytes(), &pool, part, Rows::All).unwrap();
                assert_eq!(
                    resolved(&parted),
                    resolved(&serial),
                    "{jobs} threads, {part} bytes"
                );
                assert_eq!(parted.device_properties, serial.device_properties);
            }
        }
        // A part that declines declines the document; a bad event anywhere is found.
        let bad = data.replacen(r#""dur": 1, "pid": 2"#, r#""dur": -1, "pid": 2"#, 1);
        let pool = crate::pool(2).unwrap();
        for part in [1, 50, 10_000] {
            assert!(decode_on(bad.as_bytes(), &pool, part, Rows::All).is_err());
        }
        assert!(decode(bad.as_bytes()).is_err());
    }

    #[test]
    fn a_nullable_column_is_values_and_validity_and_equals_its_options() {
        let mut column = Nullable::<i64>::default();
        assert!(column.is_empty());
        column.push(Some(5));
        column.push(None);
        let mut more = Nullable::default();
        more.push(Some(-3));
        column.extend(more);
        assert!(!column.is_empty());
        assert_eq!(column.len(), 3);
        assert_eq!(column.values, [5, 0, -3]);
        assert_eq!(column.valid, [true, false, true]);
        assert_eq!(
            (column.get(0), column.get(1), column.get(2)),
            (Some(5), None, Some(-3))
        );
        assert!(column == vec![Some(5), None, Some(-3)]);
        // a null is not its stored default, and every row and the length count
        assert!(column != vec![Some(5), Some(0), Some(-3)]);
        assert!(column != vec![Some(5), None, Some(3)]);
        assert!(column != vec![Some(5), None, Some(-3), None]);
    }

    #[test]
    fn a_thread_is_written_as_python_writes_it() {
        let data = br#"{"traceEvents": [
          {"ph": "X", "cat": "cpu_op", "pid": -0, "tid": "a\"b", "args": {"flops": null}},
          {"ph": "X", "cat": "cpu_op", "pid": 18446744073709551615, "tid": true,
           "args": {"flops": 1e3, "Concrete Inputs": ["", "1"]}},
          {"ph": "i", "cat": "cpu_op", "pid": 1.5, "tid": [1]}
        ]}"#;
        let trace = decode(data).unwrap();
        let c = &trace.columns;
        assert_eq!(text(&trace, c.thread[0]), Some("0/a\"b"));
        assert_eq!(text(&trace, c.thread[1]), Some("18446744073709551615/True"));
        assert_eq!(c.flops[0], NONE);
        assert_eq!(text(&trace, c.flops[1]), Some("1e3"));
        assert_eq!(text(&trace, c.concrete_inputs[1]), Some(r#"["", "1"]"#));
        let float_pid = br#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "pid": 1.5}]}"#;
        assert!(decode(float_pid).is_err());
    }

    /// `Input type` with every character Python's `json.dumps` escapes by name: the column
    /// holds the text `json.dumps` writes (here the document's own text, which is that).
    #[test]
    fn input_types_are_written_as_json_dumps_writes_them() {
        let types =
            r#"["a\"b", "c\\d", "e\nf", "g\rh", "i\tj", "k\bl", "m\fn", "\u0001", "\u00e9"]"#;
        let data = format!(
            r#"{{"traceEvents": [{{"ph": "X", "cat": "cpu_op", "args": {{"Input type": {types}}}}},
                {{"ph": "X", "cat": "cpu_op", "args": {{"Input type": []}}}}]}}"#
        );
        let trace = decode(data.as_bytes()).unwrap();
        assert_eq!(text(&trace, trace.columns.input_type[0]), Some(types));
        assert_eq!(trace.columns.input_type[1], NONE, "an empty list is null");
        assert_eq!(text(&trace, trace.columns.input_type_raw[1]), Some("[]"));
    }

    /// The bounds of a GPU event's place on the integer-ns clock, as the Python reader's
    /// `_placeable` (`abs(us) < 9.2e15`) draws them, for its start and its end.
    #[test]
    fn a_gpu_event_must_start_and_end_on_the_clock() {
        let event = |ts: &str, dur: &str| {
            format!(
                r#"{{"traceEvents": [{{"ph": "X", "cat": "kernel", "name": "k", "ts": {ts},
                    "dur": {dur}, "args": {{"stream": 1}}}}]}}"#
            )
        };
        let placed = |ts: &str, dur: &str| decode(event(ts, dur).as_bytes()).is_ok();
        assert!(!placed("9.2e15", "0"), "a start at the bound");
        assert!(placed("9199999999999998", "0"), "a start just inside");
        assert!(!placed("9.1e15", "2e14"), "an end past the bound");
        assert!(
            !placed("0.5", "9.2e15"),
            "an end at the bound, from a small start"
        );
        assert!(placed("1", "0"), "a zero duration is kept");
        let zero = decode(event("1", "0").as_bytes()).unwrap();
        assert_eq!(zero.columns.dur, vec![Some(0.0)]);
    }

    /// A number beyond a float in a free-form argument is refused as msgspec refuses it, with
    /// or without an exponent; one within range is kept as written.
    #[test]
    fn a_free_form_number_beyond_a_float_declines() {
        let args = |value: &str| {
            format!(
                r#"{{"traceEvents": [{{"ph": "X", "cat": "cpu_op", "args": {{"flops": {value}}}}}]}}"#
            )
        };
        let huge = format!("1{}.0", "0".repeat(400));
        assert!(decode(args(&huge).as_bytes()).is_err());
        assert!(decode(args("1E400").as_bytes()).is_err());
        let big = format!("1{}", "0".repeat(300));
        let trace = decode(args(&big).as_bytes()).unwrap();
        assert_eq!(text(&trace, trace.columns.flops[0]), Some(big.as_str()));
    }

    /// An event the hand reader leaves to serde_json (an escape in its name) reads the same
    /// arguments: its External id, and an NCCL parameter checked as msgspec checks `Any`.
    #[test]
    fn the_serde_path_reads_the_same_arguments() {
        let data = br#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "nA",
            "args": {"External id": 5, "Collective name": "allreduce", "Seq": 3}}]}"#;
        let trace = decode(data).unwrap();
        assert_eq!(text(&trace, trace.columns.name[0]), Some("nA"));
        assert_eq!(trace.columns.external_id, vec![Some(5)]);
        for key in ["Collective name", "Seq", "pg_id", "dtype"] {
            let data = format!(
                r#"{{"traceEvents": [{{"ph": "X", "cat": "cpu_op", "name": "nA",
                    "args": {{"{key}": 1e400}}}}]}}"#
            );
            assert!(decode(data.as_bytes()).is_err(), "{key}");
        }
    }

    #[test]
    fn a_runtime_call_may_write_its_stream_as_text() {
        let data = br#"{"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "l", "ts": 1,
            "dur": 1, "args": {"stream": "0x0", "correlation": 4}}]}"#;
        let trace = decode(data).unwrap();
        assert_eq!(trace.columns.stream, vec![None]);
        assert_eq!(trace.columns.correlation, vec![Some(4)]);
    }
}
