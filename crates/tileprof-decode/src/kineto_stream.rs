//! A Kineto trace read from a stream (a file, plain or gzip) through a window of bounded size,
//! so that the trace's text is never held whole: memory is the columns and the window.
//!
//! The document is walked at the top level as `kineto::walk_document` walks it (the same
//! checks, any key order); `traceEvents` is decoded a window at a time by the event decoder of
//! `kineto` (`events_from`, on threads): the events that start in the first three quarters of
//! the window are decoded, the rest of the window is carried into the next one. An event that
//! the window cuts (one longer than a quarter of it) fails where the window ends, in any of
//! the ways a cut text fails (serde_json does not always say "EOF": a number cut after its
//! `.` is "invalid number"), so any failure short of the text's end grows the window to twice
//! its length and decodes it again; only at the text's end does a failure decline the
//! document, as the in-memory decoder would. A document that is declined is so read to its
//! end, at most twice over: the Python side then reads it whole anyway.
//!
//! While a window is decoded, the text after it is read on a thread of its own into a second
//! buffer, after room for the quarter carried over, which is copied there once the window is
//! decoded (`Window::decode_reading`, `Window::take_ahead`): the read, a copy out of the page
//! cache as long as a third of the decode, no longer leaves the decoding threads idle, and
//! the decoded text is never moved. The text held is the window and the next one's.
//!
//! The trace's bytes are gone once decoded, so the spans of the events whose free-form `args`
//! the Python side reads (the NCCL parameters of the communication kernels and of the
//! `record_param_comms` ops) are copied into `kept`, and those events' spans point there; the
//! other events have no span (`NO_SPAN`).
//!
//! The capture checks' inventory (`kineto_inventory`) streams the same way, into its own
//! columns (`WindowColumns` says how a window is decoded and joined).

use std::io::{ErrorKind, Read};

use hashbrown::HashMap;

use crate::kineto::{
    declined, events_from, has_lone_surrogate, top_key, value_end, Declined, KinetoColumns, Next,
    Rows, NONE,
};
use crate::skip_space;

/// Bytes of text decoded at once (an event longer than a quarter of it grows it); as much
/// again is held while it is decoded, the text after it read ahead.
pub const WINDOW_BYTES: usize = 64 << 20;
/// The span of an event whose bytes were not kept.
pub const NO_SPAN: u64 = u64::MAX;
/// The most a read asks for (the window is zero-filled up to it first).
const READ_BYTES: usize = 4 << 20;

/// Columns that a stream's events are decoded into, a window at a time.
pub trait WindowColumns: Default {
    /// The events of `data` from its first byte (an event's start) until the array ends or an
    /// event starts at or past `limit`, the number of events read (kept or not) and where they
    /// stopped.
    fn decode_window(
        data: &[u8],
        limit: usize,
        split: Option<(&rayon::ThreadPool, usize)>,
    ) -> Result<(Self, i64, Next), Declined>;

    /// `part`'s rows after these, its indices moved by `index_offset` (`data`: the window
    /// its spans point into; `kept`: where the bytes kept past the window go).
    fn take(&mut self, part: Self, index_offset: i64, data: &[u8], kept: &mut Vec<u8>);
}

impl WindowColumns for KinetoColumns {
    fn decode_window(
        data: &[u8],
        limit: usize,
        split: Option<(&rayon::ThreadPool, usize)>,
    ) -> Result<(Self, i64, Next), Declined> {
        events_from(data, 0, limit, split, Rows::All)
    }

    fn take(&mut self, mut part: Self, index_offset: i64, data: &[u8], kept: &mut Vec<u8>) {
        keep_comm_spans(&mut part, data, kept);
        self.append(part, index_offset);
    }
}

/// The Kineto event columns of the rows a GPU timeline reads (`Rows::Timeline`).
#[derive(Debug, Default)]
pub struct TimelineColumns(pub KinetoColumns);

impl WindowColumns for TimelineColumns {
    fn decode_window(
        data: &[u8],
        limit: usize,
        split: Option<(&rayon::ThreadPool, usize)>,
    ) -> Result<(Self, i64, Next), Declined> {
        let (columns, events, next) = events_from(data, 0, limit, split, Rows::Timeline)?;
        Ok((Self(columns), events, next))
    }

    fn take(&mut self, part: Self, index_offset: i64, data: &[u8], kept: &mut Vec<u8>) {
        self.0.take(part.0, index_offset, data, kept);
    }
}

impl From<StreamedTrace<TimelineColumns>> for StreamedTrace {
    fn from(trace: StreamedTrace<TimelineColumns>) -> Self {
        StreamedTrace {
            columns: trace.columns.0,
            kept: trace.kept,
            device_properties: trace.device_properties,
            distributed_info: trace.distributed_info,
            base_time: trace.base_time,
            keys: trace.keys,
        }
    }
}

/// A trace decoded from a stream: the event columns (for `KinetoColumns`, spans into `kept`),
/// the raw text of `deviceProperties`, `distributedInfo` and `baseTimeNanoseconds` (None when
/// absent), and the top-level keys in document order (the Python side tells the file's kind from them).
#[derive(Debug, Default)]
pub struct StreamedTrace<C = KinetoColumns> {
    pub columns: C,
    pub kept: Vec<u8>,
    pub device_properties: Option<Vec<u8>>,
    pub distributed_info: Option<Vec<u8>>,
    pub base_time: Option<Vec<u8>>,
    pub keys: Vec<String>,
}

/// Decode the Kineto trace that `reader` yields, `traceEvents` through a window of `window`
/// bytes (decoded on `split`'s pool in parts of its byte count); more than `limit` bytes of
/// text (a gzip bomb) declines it, as does anything `kineto::decode` declines.
pub fn decode_stream<C: WindowColumns>(
    reader: impl Read + Send,
    split: Option<(&rayon::ThreadPool, usize)>,
    window: usize,
    limit: u64,
) -> Result<StreamedTrace<C>, Declined> {
    let mut text = Window::new(reader, limit);
    let mut trace = StreamedTrace::default();
    let mut position = text.space_from(0)?;
    if text.byte_at(position)? != Some(b'{') {
        return Err(declined("not an object")); // a byte-order mark too: the Python reader drops it
    }
    position = text.space_from(position + 1)?;
    if text.byte_at(position)? == Some(b'}') {
        return Err(declined("no traceEvents"));
    }
    let mut seen_events = false;
    loop {
        text.consume(position)?;
        let (key, after) = text.complete(0, |data, at| {
            top_key(data, at).map(|(key, after)| (key.into_owned(), after))
        })?;
        let start = text.space_from(after)?;
        let end = if key == "traceEvents" {
            if seen_events || text.byte_at(start)? != Some(b'[') {
                return Err(declined("traceEvents twice or not an array"));
            }
            seen_events = true;
            stream_events(&mut text, start, split, window, &mut trace)? + 1
        } else {
            let ((), end) =
                text.complete(start, |data, at| value_end(data, at).map(|e| ((), e)))?;
            let slot = match key.as_str() {
                "deviceProperties" => Some(&mut trace.device_properties),
                "distributedInfo" => Some(&mut trace.distributed_info),
                "baseTimeNanoseconds" => Some(&mut trace.base_time),
                _ => None,
            };
            if let Some(slot) = slot {
                if slot.is_some() {
                    return Err(declined("a top-level key twice"));
                }
                *slot = Some(text.text()[start..end].to_vec());
            }
            end
        };
        trace.keys.push(key);
        position = text.space_from(end)?;
        match text.byte_at(position)? {
            Some(b',') => position = text.space_from(position + 1)?,
            Some(b'}') => break,
            _ => return Err(declined("syntax")),
        }
    }
    if text.space_from(position + 1)? != text.text().len() {
        return Err(declined("trailing data"));
    }
    if !seen_events {
        return Err(declined("no traceEvents"));
    }
    text.consume(text.text().len())?;
    Ok(trace)
}

/// Decode `traceEvents`, whose `[` is at `open` in the window, into `trace`, a window at a
/// time; the position of its `]` in the window.
fn stream_events<C: WindowColumns>(
    text: &mut Window<impl Read + Send>,
    open: usize,
    split: Option<(&rayon::ThreadPool, usize)>,
    window: usize,
    trace: &mut StreamedTrace<C>,
) -> Result<usize, Declined> {
    let mut position = text.space_from(open + 1)?;
    if text.byte_at(position)? == Some(b']') {
        return Ok(position);
    }
    let mut events = 0i64;
    loop {
        text.consume(position)?;
        text.fill_to(window)?;
        let held = text.whole_characters()?;
        let limit = if text.eof { held } else { held - held / 4 };
        // what the next window reads past the quarter carried over: read while this one is
        // decoded
        let ahead_len = window.saturating_sub(held / 4);
        let (decoded, ahead) = text.decode_reading(held, held / 4, ahead_len, |data| {
            C::decode_window(data, limit, split)
        });
        match decoded {
            Ok((part, count, next)) => {
                trace
                    .columns
                    .take(part, events, &text.text()[..held], &mut trace.kept);
                events += count;
                // the text read ahead follows what is not decoded, the array's end too
                let (done, end) = match next {
                    Next::End(close) => (close, true),
                    Next::Event(next) => (next, false),
                };
                text.consume(done)?;
                text.take_ahead(ahead)?;
                if end {
                    return Ok(0);
                }
                position = 0;
            }
            Err(_) if !text.eof => {
                // maybe an event the window cut: decode the window again, twice as long
                text.take_ahead(ahead)?;
                text.fill_to(held * 2)?;
                position = 0;
            }
            Err(why) => return Err(why),
        }
    }
}

/// How much of `data` is whole UTF-8 characters: all of it, or up to a character that its
/// end cuts (the rest is still to be read, unless `eof`). Text that is not UTF-8 declines, as
/// the whole text's check does.
fn whole_characters(data: &[u8], eof: bool) -> Result<usize, Declined> {
    match std::str::from_utf8(data) {
        Ok(_) => Ok(data.len()),
        Err(error) if error.error_len().is_none() && !eof => Ok(error.valid_up_to()),
        Err(_) => Err(declined("not UTF-8")),
    }
}

/// Whether an event of category `cat` named `name` may be one whose `args` the Python side
/// reads (`tileprof.core.kineto.comm_events`, which makes the final choice: this keeps a
/// superset). The kernel names match `COMM_NAME` (`(?i)nccl|rccl`): no character other than
/// the ASCII letters of "nccl" and "rccl" folds to one of them.
fn maybe_comm(cat: &str, name: &str) -> bool {
    let named_like = |pattern: &[u8]| {
        name.as_bytes()
            .windows(pattern.len())
            .any(|w| w.eq_ignore_ascii_case(pattern))
    };
    match cat {
        "kernel" => named_like(b"nccl") || named_like(b"rccl"),
        "cpu_op" => name == "record_param_comms",
        _ => false,
    }
}

/// Copy the bytes of `part`'s communication events out of `data` (the window its spans point
/// into) onto `kept`, their spans moved there; every other span becomes `NO_SPAN`.
fn keep_comm_spans(part: &mut KinetoColumns, data: &[u8], kept: &mut Vec<u8>) {
    let texts = &part.texts.values;
    let text = |code: u32| (code != NONE).then(|| texts[code as usize].as_str());
    // by (cat, name) code: each distinct pair is matched once (kernel names are long, and
    // matching every row's was 4% of the streamed decode)
    let mut known: HashMap<(u32, u32), bool> = HashMap::new();
    for row in 0..part.start.len() {
        let (cat, name) = (part.cat[row], part.name[row]);
        let comm = *known
            .entry((cat, name))
            .or_insert_with(|| match (text(cat), text(name)) {
                (Some(cat), Some(name)) => maybe_comm(cat, name),
                _ => false,
            });
        if comm {
            let (start, end) = (part.start[row] as usize, part.end[row] as usize);
            part.start[row] = kept.len() as u64;
            kept.extend_from_slice(&data[start..end]);
            part.end[row] = kept.len() as u64;
        } else {
            part.start[row] = NO_SPAN;
            part.end[row] = NO_SPAN;
        }
    }
}

/// The text not yet decoded, read from `reader` as needed.
struct Window<R> {
    reader: R,
    /// The window's text is `buf[start..]`; the bytes before `start` are decoded.
    buf: Vec<u8>,
    start: usize,
    /// The other buffer, which the text after the window is read into while the window is
    /// decoded (`decode_reading`), then swapped in (`take_ahead`).
    spare: Vec<u8>,
    /// The window's first bytes known to be whole UTF-8 characters: each byte is checked once
    /// (checking the window again each time was 5% of a streamed decode, perf).
    checked: usize,
    /// Whether `reader` has no more.
    eof: bool,
    /// Bytes read so far, at most `limit`.
    read: u64,
    limit: u64,
}

/// What `Window::decode_reading` read past the window: where in `spare` it starts (the room
/// left before it for the text carried over), how many bytes, and whether the text ended.
struct Ahead(Result<(usize, usize, bool), Declined>);

impl<R: Read + Send> Window<R> {
    /// An empty window over `reader`, which may yield at most `limit` bytes.
    fn new(reader: R, limit: u64) -> Self {
        Window {
            reader,
            buf: Vec::new(),
            start: 0,
            spare: Vec::new(),
            checked: 0,
            eof: false,
            read: 0,
            limit,
        }
    }

    /// The window's text: positions are counted from its first byte.
    fn text(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// How much of the window is whole UTF-8 characters (`whole_characters`). The event
    /// decoder's hand reader (`kineto_fast`) takes its texts unchecked, so it must only ever
    /// see text checked so.
    fn whole_characters(&mut self) -> Result<usize, Declined> {
        let unchecked = &self.buf[self.start + self.checked..];
        self.checked += whole_characters(unchecked, self.eof)?;
        Ok(self.checked)
    }

    /// Read until the window holds `len` bytes or the text ends.
    fn fill_to(&mut self, len: usize) -> Result<(), Declined> {
        while self.text().len() < len && !self.eof {
            let want = (len - self.text().len()).min(READ_BYTES);
            if self.buf.capacity() - self.buf.len() < want && self.start > 0 {
                self.buf.drain(..self.start); // room for the read before growing
                self.start = 0;
            }
            let old = self.buf.len();
            self.buf
                .try_reserve(want)
                .map_err(|_| declined("the window could not grow"))?;
            self.buf.resize(old + want, 0);
            let outcome = self.reader.read(&mut self.buf[old..]);
            self.buf.truncate(old + *outcome.as_ref().unwrap_or(&0));
            match outcome {
                Ok(0) => self.eof = true,
                Ok(n) => self.count_read(n)?,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(declined(format!("cannot read: {error}"))),
            }
        }
        Ok(())
    }

    fn count_read(&mut self, n: usize) -> Result<(), Declined> {
        self.read += n as u64;
        if self.read > self.limit {
            return Err(declined("more text than the limit"));
        }
        Ok(())
    }

    /// `decode` of the window's first `held` bytes, while up to `len` bytes of the text after
    /// the window are read into the spare buffer, after `room` bytes left for the text that
    /// the next window carries over (nothing is read once the text has ended). The read is a
    /// copy out of the page cache as long as a third of the decode: done on a thread of its
    /// own, it no longer leaves the decoding threads idle.
    fn decode_reading<T>(
        &mut self,
        held: usize,
        room: usize,
        len: usize,
        decode: impl FnOnce(&[u8]) -> T,
    ) -> (T, Ahead) {
        let data = &self.buf[self.start..self.start + held];
        if self.eof || len == 0 {
            return (decode(data), Ahead(Ok((room, 0, self.eof))));
        }
        let (reader, spare) = (&mut self.reader, &mut self.spare);
        std::thread::scope(|scope| {
            let reading = std::thread::Builder::new()
                .spawn_scoped(scope, move || read_ahead(reader, spare, room, len));
            let decoded = decode(data);
            let ahead = match reading {
                Ok(reading) => reading
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(_) => Ok((room, 0, false)), // no thread (no memory for its stack): read after
            };
            (decoded, Ahead(ahead))
        })
    }

    /// Put what `decode_reading` read after the window's text (the text now carried over),
    /// its read counted; a read that failed declines the document.
    fn take_ahead(&mut self, ahead: Ahead) -> Result<(), Declined> {
        let (room, len, eof) = ahead.0?;
        self.count_read(len)?;
        self.eof |= eof;
        if len == 0 {
            return Ok(());
        }
        let carried = self.buf.len() - self.start;
        if carried <= room {
            let at = room - carried;
            self.spare[at..room].copy_from_slice(&self.buf[self.start..]);
            self.spare.truncate(room + len);
            std::mem::swap(&mut self.buf, &mut self.spare);
            self.start = at;
        } else {
            // more carried over than the room kept (a window grown for a long event): joined
            let from = self.buf.len();
            self.buf
                .try_reserve(len)
                .map_err(|_| declined("the window could not grow"))?;
            self.buf.extend_from_slice(&self.spare[room..room + len]);
            debug_assert_eq!(self.buf.len(), from + len);
        }
        Ok(())
    }

    /// Read as much again as the window holds (a byte at least); false when the text had
    /// ended.
    fn more(&mut self) -> Result<bool, Declined> {
        if self.eof {
            return Ok(false);
        }
        let len = self.text().len();
        self.fill_to((len * 2).max(len + 1))?;
        Ok(true)
    }

    /// The first position from `at` that is not white space (the window's length only at the
    /// end of the text).
    fn space_from(&mut self, mut at: usize) -> Result<usize, Declined> {
        loop {
            let found = skip_space(self.text(), at);
            if found < self.text().len() || !self.more()? {
                return Ok(found);
            }
            at = found;
        }
    }

    /// The byte at `at` (None past the end of the text).
    fn byte_at(&mut self, at: usize) -> Result<Option<u8>, Declined> {
        while at >= self.text().len() && self.more()? {}
        Ok(self.text().get(at).copied())
    }

    /// What `read` reads at `at` and where it ends, the window grown until what it reads ends
    /// before the window does (a number at the window's end may go on past it).
    fn complete<T>(
        &mut self,
        at: usize,
        read: impl Fn(&[u8], usize) -> Result<(T, usize), Declined>,
    ) -> Result<(T, usize), Declined> {
        loop {
            match read(self.text(), at) {
                Ok((value, end)) if end < self.text().len() || self.eof => return Ok((value, end)),
                Err(why) if self.eof => return Err(why),
                _ => {
                    self.more()?;
                }
            }
        }
    }

    /// Drop the window's first `len` bytes, decoded: they end between two values, so they are
    /// checked as the in-memory decoder checks the whole text (UTF-8, no lone surrogate).
    fn consume(&mut self, len: usize) -> Result<(), Declined> {
        let done = &self.text()[..len];
        if len > self.checked && std::str::from_utf8(&done[self.checked..]).is_err() {
            return Err(declined("not UTF-8"));
        }
        if has_lone_surrogate(done) {
            return Err(declined("a lone surrogate escape"));
        }
        self.start += len;
        self.checked = self.checked.saturating_sub(len);
        Ok(())
    }
}

/// Read into `spare` after its first `room` bytes until `len` bytes are read or the text ends
/// (`Window::decode_reading`): where they start, how many, and whether the text ended. The
/// buffer is zero-filled only where it has not held text before.
fn read_ahead(
    reader: &mut impl Read,
    spare: &mut Vec<u8>,
    room: usize,
    len: usize,
) -> Result<(usize, usize, bool), Declined> {
    // READ_BYTES more: the next window tops itself up to its length without moving its text
    spare
        .try_reserve((room + len + READ_BYTES).saturating_sub(spare.len()))
        .map_err(|_| declined("the window could not grow"))?;
    spare.resize(room + len, 0);
    let mut done = 0;
    while done < len {
        match reader.read(&mut spare[room + done..]) {
            Ok(0) => return Ok((room, done, true)),
            Ok(n) => done += n,
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(declined(format!("cannot read: {error}"))),
        }
    }
    Ok((room, done, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kineto;

    /// A reader that hands out at most `step` bytes a read, as a pipe or gzip may.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn streamed(data: &[u8], window: usize, step: usize) -> Result<StreamedTrace, Declined> {
        decode_stream(Trickle { data, step }, None, window, u64::MAX)
    }

    /// Each case is declined, whatever the window (one byte, eight, 1 MiB).
    fn assert_declined_at_every_window(cases: &[&[u8]]) {
        for case in cases {
            for window in [1, 8, 1 << 20] {
                assert!(
                    streamed(case, window, 3).is_err(),
                    "{}",
                    String::from_utf8_lossy(case)
                );
            }
        }
    }

    const TRACE: &str = r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "A100"}],
      "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 7,
         "ts": 10.5, "dur": 2.0, "args": {"device": 0, "stream": 7, "correlation": 3}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 4,
         "args": {"Input Dims": [[2, 3], [3, 4]], "External id": 9}},
        {"ph": "i", "name": "marker", "ts": 3},
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
         "ts": 2, "dur": 1, "args": {"External id": 10, "Collective name": "allreduce"}},
        {"ph": "X", "cat": "kernel", "name": "sm80_gemm \u00e9", "pid": 0, "tid": 7, "ts": 20,
         "dur": 3, "args": {"device": 0, "stream": 7, "grid": [1, 2, 3]}}
      ],
      "distributedInfo": {"rank": 1, "world_size": 2}, "traceName": "x",
      "baseTimeNanoseconds": 1711964646000000000}"#;

    /// The columns `timeline_rows` compares, then `grid`, `thread` and `input_dims`, with the
    /// texts looked up.
    fn rows(columns: &KinetoColumns) -> Vec<String> {
        let text = |code: u32| (code != NONE).then(|| columns.texts.values[code as usize].clone());
        let op_texts = |row: usize| {
            let codes = [
                columns.grid[row],
                columns.thread[row],
                columns.input_dims[row],
            ];
            format!("{:?}", codes.map(text))
        };
        let rows = timeline_rows(columns).into_iter().enumerate();
        rows.map(|(row, head)| format!("{head} {}", op_texts(row)))
            .collect()
    }

    /// The columns a read for a timeline files, with the texts looked up.
    fn timeline_rows(columns: &KinetoColumns) -> Vec<String> {
        let text = |code: u32| (code != NONE).then(|| columns.texts.values[code as usize].clone());
        (0..columns.index.len())
            .map(|row| {
                format!(
                    "{} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                    columns.index[row],
                    text(columns.cat[row]),
                    text(columns.name[row]),
                    columns.ts.get(row),
                    columns.dur.get(row),
                    columns.pid.get(row),
                    columns.device.get(row),
                    columns.stream.get(row),
                    columns.correlation.get(row),
                    columns.external_id.get(row),
                )
            })
            .collect()
    }

    #[test]
    fn a_timeline_read_files_every_row_but_the_cpu_ops_other_than_record_param_comms() {
        let whole = timeline_rows(&kineto::decode(TRACE.as_bytes()).unwrap().columns);
        let expected: Vec<&String> = whole
            .iter()
            .filter(|row| !row.contains("aten::mm"))
            .collect();
        assert_eq!(expected.len(), 3);
        let pool = crate::pool(2).unwrap();
        for window in [1, 64, 1 << 20] {
            for part in [1, 50, 4096] {
                let trace: StreamedTrace<TimelineColumns> =
                    decode_stream(TRACE.as_bytes(), Some((&pool, part)), window, u64::MAX).unwrap();
                let columns = &trace.columns.0;
                let timeline = timeline_rows(columns);
                assert_eq!(
                    timeline.iter().collect::<Vec<_>>(),
                    expected,
                    "{window} {part}"
                );
                // the op rows' texts are left out, the spans kept
                assert_eq!(columns.rows, Rows::Timeline);
                assert!(columns.thread.is_empty() && columns.grid.is_empty());
                assert!(columns.input_dims.is_empty() && columns.input_type_raw.is_empty());
                assert_eq!(columns.start.len(), timeline.len());
                let parted =
                    kineto::decode_on(TRACE.as_bytes(), &pool, part, Rows::Timeline).unwrap();
                assert_eq!(timeline_rows(&parted.columns), timeline);
            }
        }
        // An event left unfiled is still checked: a bad one declines the document as before.
        let bad = TRACE.replacen(r#""tid": 1, "ts": 1"#, r#""tid": [1], "ts": 1"#, 1);
        assert!(kineto::decode(bad.as_bytes()).is_err());
        let declined: Result<StreamedTrace<TimelineColumns>, _> =
            decode_stream(bad.as_bytes(), None, 1 << 20, u64::MAX);
        assert!(declined.is_err());
        let negative = TRACE.replacen(r#""ts": 1, "dur": 4"#, r#""ts": 1, "dur": -4"#, 1);
        assert!(kineto::decode_on(negative.as_bytes(), &pool, 1, Rows::Timeline).is_err());
    }

    #[test]
    fn windows_of_every_size_read_what_the_whole_text_reads() {
        let whole = kineto::decode(TRACE.as_bytes()).unwrap();
        for window in [1, 2, 7, 64, 300, 1 << 20] {
            for step in [1, 3, 4096] {
                let trace = streamed(TRACE.as_bytes(), window, step).unwrap();
                assert_eq!(
                    rows(&trace.columns),
                    rows(&whole.columns),
                    "{window} {step}"
                );
                assert_eq!(
                    trace.keys,
                    [
                        "schemaVersion",
                        "deviceProperties",
                        "traceEvents",
                        "distributedInfo",
                        "traceName",
                        "baseTimeNanoseconds"
                    ]
                );
                let (start, end) = whole.base_time.unwrap();
                assert_eq!(&TRACE.as_bytes()[start..end], b"1711964646000000000");
                assert_eq!(
                    trace.base_time.as_deref(),
                    Some(&b"1711964646000000000"[..])
                );
                let (start, end) = whole.device_properties.unwrap();
                assert_eq!(
                    trace.device_properties.as_deref(),
                    Some(&TRACE.as_bytes()[start..end])
                );
                assert_eq!(
                    trace.distributed_info.as_deref(),
                    Some(&br#"{"rank": 1, "world_size": 2}"#[..])
                );
            }
        }
    }

    #[test]
    fn only_the_communication_events_keep_their_bytes() {
        let whole = kineto::decode(TRACE.as_bytes()).unwrap();
        let trace = streamed(TRACE.as_bytes(), 5, 2).unwrap();
        let columns = &trace.columns;
        let bytes_of =
            |row: usize| &trace.kept[columns.start[row] as usize..columns.end[row] as usize];
        let whole_bytes = |row: usize| {
            &TRACE.as_bytes()[whole.columns.start[row] as usize..whole.columns.end[row] as usize]
        };
        // rows: the NCCL kernel, aten::mm, record_param_comms, the gemm
        assert_eq!(bytes_of(0), whole_bytes(0));
        assert_eq!(bytes_of(2), whole_bytes(2));
        assert!(
            bytes_of(0).starts_with(b"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDev")
        );
        assert_eq!((columns.start[1], columns.end[1]), (NO_SPAN, NO_SPAN));
        assert_eq!((columns.start[3], columns.end[3]), (NO_SPAN, NO_SPAN));
        assert_eq!(trace.kept.len(), bytes_of(0).len() + bytes_of(2).len());
    }

    #[test]
    fn the_comm_names_are_matched_in_any_case() {
        assert!(maybe_comm("kernel", "xNcClKernel"));
        assert!(maybe_comm("kernel", "RCCL"));
        assert!(!maybe_comm("kernel", "ncl_rcl"));
        assert!(!maybe_comm("cpu_op", "nccl:all_reduce"));
        assert!(maybe_comm("cpu_op", "record_param_comms"));
        assert!(!maybe_comm("cuda_runtime", "record_param_comms"));
    }

    #[test]
    fn what_the_whole_text_declines_the_stream_declines() {
        let cases: [&[u8]; 9] = [
            br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}"#,
            br#"{"traceEvents": [{"ph": "X"}, ]}"#,
            br#"{"traceEvents": [{"ph": "X"}]} x"#,
            br#"{"traceEvents": [{"ph": "X"}]"#,
            br#"{"traceEvents": [{"ph": "X"}], "traceEvents": []}"#,
            br#"{"a": 1}"#,
            b"{\"traceEvents\": [{\"name\": \"\\ud800\"}]}",
            b"{\"traceEvents\": [{\"name\": \"\xff\"}]}",
            b"\xef\xbb\xbf{\"traceEvents\": []}",
        ];
        assert_declined_at_every_window(&cases);
        let number_at_window_end = br#"{"schemaVersion": 12345, "traceEvents": []}"#;
        for window in 1..number_at_window_end.len() {
            let trace = streamed(number_at_window_end, window, window).unwrap();
            assert_eq!(trace.keys, ["schemaVersion", "traceEvents"]);
        }
    }

    #[test]
    fn characters_that_a_window_cuts_are_read_whole_and_bad_bytes_decline() {
        let name = "\u{e9}\u{4e2d}\u{1f600}"; // two, three and four bytes in UTF-8
        let event = format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": 1, "dur": 1}}"#
        );
        let text = format!(r#"{{"traceEvents": [{event}, {event}, {event}]}}"#);
        let whole = kineto::decode(text.as_bytes()).unwrap();
        for window in 1..text.len() {
            let trace = streamed(text.as_bytes(), window, 7).unwrap();
            assert_eq!(rows(&trace.columns), rows(&whole.columns), "{window}");
        }
        let mut bad = text.clone().into_bytes();
        let last = text.rfind(name).unwrap();
        bad[last] = 0xff; // in the third event, past the first windows

        // Declined where the window first holds the bad byte, as the whole text's check
        // declines it (not read on to the text's end, where the cut text fails otherwise);
        // a text that ends inside a character (the third name's first byte) too.
        let cut = &text.as_bytes()[..last + 1];
        for bad in [&bad[..], cut] {
            assert_eq!(kineto::decode(bad).unwrap_err().0, "not UTF-8");
            for window in [1, 16, 100, 1 << 20] {
                let outcome = streamed(bad, window, 5);
                assert_eq!(outcome.unwrap_err().0, "not UTF-8", "{window}");
            }
        }
    }

    #[test]
    fn more_text_than_the_limit_declines() {
        let outcome = decode_stream::<KinetoColumns>(TRACE.as_bytes(), None, 1 << 20, 100);
        assert_eq!(outcome.unwrap_err().0, "more text than the limit");
        let whole =
            decode_stream::<KinetoColumns>(TRACE.as_bytes(), None, 1 << 20, TRACE.len() as u64);
        assert!(whole.is_ok());
    }

    #[test]
    fn threads_over_each_window_read_what_one_thread_reads() {
        let event = |i: usize| {
            format!(
                r#"{{"ph": "X", "cat": "{}", "name": "k{i}", "pid": 0, "tid": 1, "ts": {i}, "dur": 1, "args": {{"device": 0, "stream": 7}}}}"#,
                if i.is_multiple_of(5) {
                    "kernel"
                } else {
                    "cpu_op"
                }
            )
        };
        let events: Vec<String> = (0..2000).map(event).collect();
        let text = format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"));
        let whole = kineto::decode(text.as_bytes()).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for (window, part) in [(4096, 300), (20_000, 1000), (1 << 20, 64)] {
            let trace =
                decode_stream(text.as_bytes(), Some((&pool, part)), window, u64::MAX).unwrap();
            assert_eq!(
                rows(&trace.columns),
                rows(&whole.columns),
                "{window} {part}"
            );
        }
    }

    thread_local! {
        /// What `Recorded::decode_window` was given and read: the window's length, the limit,
        /// and the number of events read (-1: the window declined).
        static WINDOWS: std::cell::RefCell<Vec<(usize, usize, i64)>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    /// Columns of `C`, each window that `decode_stream` decodes recorded in `WINDOWS`.
    #[derive(Default)]
    struct Recorded<C>(C);

    impl<C: WindowColumns> WindowColumns for Recorded<C> {
        fn decode_window(
            data: &[u8],
            limit: usize,
            split: Option<(&rayon::ThreadPool, usize)>,
        ) -> Result<(Self, i64, Next), Declined> {
            let outcome = C::decode_window(data, limit, split);
            let count = outcome.as_ref().map_or(-1, |(_, count, _)| *count);
            WINDOWS.with(|w| w.borrow_mut().push((data.len(), limit, count)));
            outcome.map(|(columns, count, next)| (Recorded(columns), count, next))
        }

        fn take(&mut self, part: Self, index_offset: i64, data: &[u8], kept: &mut Vec<u8>) {
            self.0.take(part.0, index_offset, data, kept);
        }
    }

    /// The windows that `decode_stream` decodes `text` in, read from a reader that gives all
    /// that is asked, and the columns it read.
    fn windows_of<C: WindowColumns>(text: &[u8], window: usize) -> (Vec<(usize, usize, i64)>, C) {
        WINDOWS.with(|w| w.borrow_mut().clear());
        let trace: StreamedTrace<Recorded<C>> =
            decode_stream(text, None, window, u64::MAX).unwrap();
        (WINDOWS.with(|w| w.take()), trace.columns.0)
    }

    #[test]
    fn a_window_holds_its_length_and_decodes_the_events_of_its_first_three_quarters() {
        // 20 events of 53 bytes, 55 with the ", " after each: a window of 440 bytes (eight
        // strides) decodes the six that start in its first 330; the next starts at 330.
        let event =
            |i: usize| format!(r#"{{"ph": "X", "cat": "cpu_op", "name": "op{i:02}", "ts": 1}}"#);
        assert_eq!(event(0).len(), 53);
        let events: Vec<String> = (0..20).map(event).collect();
        let text = format!(r#"{{"traceEvents": [{}]}}"#, events.join(", "));
        // the events' text: 20 * 55 - 2 bytes, then "]}": 1,100 bytes, read 0..440,
        // 330..770, 660..1100 (the reader not yet at its end), then the last 110 bytes
        // (events 18 and 19 and "]}") at the end
        let expected = [(440, 330, 6), (440, 330, 6), (440, 330, 6), (110, 110, 2)];
        let (windows, columns) = windows_of::<KinetoColumns>(text.as_bytes(), 440);
        assert_eq!(windows, expected);
        assert_eq!(columns.index, (0..20).collect::<Vec<i64>>());
        // the inventory's windows are the same
        let (windows, inventory) =
            windows_of::<crate::kineto_inventory::InventoryColumns>(text.as_bytes(), 440);
        assert_eq!(windows, expected);
        assert_eq!(inventory.index, (0..20).collect::<Vec<i64>>());
    }

    #[test]
    fn an_event_longer_than_the_window_doubles_it_until_the_event_ends() {
        // one event of 200 bytes; a window of 64: 64 and 128 bytes cut it, then the text's
        // 202 bytes from the event on (with "]}") are all there is
        let event = format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{}"}}"#,
            "a".repeat(160)
        );
        assert_eq!(event.len(), 200);
        let text = format!(r#"{{"traceEvents": [{event}]}}"#);
        let (windows, columns) = windows_of::<KinetoColumns>(text.as_bytes(), 64);
        assert_eq!(windows, [(64, 48, -1), (128, 96, -1), (202, 202, 1)]);
        assert_eq!(columns.index, [0]);
    }

    #[test]
    fn a_trace_shorter_than_the_default_window_is_one_window() {
        let text = br#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "mm"}, {"ph": "i"}]}"#;
        // the events from the first, with "]}": 42 + 2 + 11 + 2 = 57 bytes, read whole
        let (windows, columns) = windows_of::<KinetoColumns>(text, WINDOW_BYTES);
        assert_eq!(windows, [(57, 57, 2)]);
        assert_eq!(columns.index, [0]);
    }

    #[test]
    fn top_level_values_and_white_space_that_the_reads_cut_are_read_whole() {
        // the top level is read in reads that double from one byte, so the leading spaces
        // put the ends of the reads at every place in what follows: inside the number, the
        // runs of spaces, right after the closing brace
        let document = r#"{  "schemaVersion":   12345  ,  "traceEvents":   [   ]   }"#;
        for pad in 0..70 {
            let text = format!("{}{document}", " ".repeat(pad));
            let trace = streamed(text.as_bytes(), 1, 1).unwrap();
            assert_eq!(trace.keys, ["schemaVersion", "traceEvents"], "{pad}");
            let trailing = format!("{text}   x");
            let outcome = streamed(trailing.as_bytes(), 1, 1);
            assert_eq!(outcome.unwrap_err().0, "trailing data", "{pad}");
        }
    }

    /// A reader that gives `data` 4 bytes a read, and on its second read fails with `kind`.
    struct FailsOnce<'a> {
        data: &'a [u8],
        reads: usize,
        kind: ErrorKind,
    }

    impl Read for FailsOnce<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.reads += 1;
            if self.reads == 2 {
                return Err(std::io::Error::new(self.kind, "disk"));
            }
            let n = out.len().min(4).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn an_interrupted_read_is_retried_and_another_read_error_declines() {
        let text = br#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "mm", "ts": 2}]}"#;
        let read = |kind| {
            let reader = FailsOnce {
                data: text,
                reads: 0,
                kind,
            };
            decode_stream::<KinetoColumns>(reader, None, 1 << 20, u64::MAX)
        };
        let trace = read(ErrorKind::Interrupted).unwrap();
        let name = trace.columns.name[0];
        assert_eq!(trace.columns.texts.values[name as usize], "mm");
        assert_eq!(trace.columns.ts.get(0), Some(2.0));
        assert_eq!(read(ErrorKind::Other).unwrap_err().0, "cannot read: disk");
    }

    /// A reader that hands out `step` bytes a read, notes the thread of each read and how
    /// many found the text's end, and fails its read number `fail_at` (from 1) with `kind`.
    struct Noted<'a> {
        data: &'a [u8],
        step: usize,
        threads: Vec<std::thread::ThreadId>,
        ends: usize,
        fail_at: Option<(usize, ErrorKind)>,
    }

    impl Read for Noted<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            assert!(!out.is_empty(), "a read of nothing");
            self.threads.push(std::thread::current().id());
            if let Some((at, kind)) = self.fail_at {
                if self.threads.len() == at {
                    return Err(std::io::Error::new(kind, "disk"));
                }
            }
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            self.ends += usize::from(n == 0);
            Ok(n)
        }
    }

    fn many_events(count: usize) -> String {
        let events: Vec<String> = (0..count)
            .map(|i| {
                format!(
                    r#"{{"ph": "X", "cat": "kernel", "name": "k{i}", "pid": 0, "tid": 7,
                    "ts": {i}, "dur": 1, "args": {{"device": 0, "stream": 7, "correlation": {i}}}}}"#
                )
            })
            .collect();
        format!(
            r#"{{"traceEvents": [{}], "traceName": "t"}}"#,
            events.join(", ")
        )
    }

    #[test]
    fn the_text_after_a_window_is_read_on_another_thread_while_the_window_is_decoded() {
        let text = many_events(200);
        let whole = kineto::decode(text.as_bytes()).unwrap();
        let mut reader = Noted {
            data: text.as_bytes(),
            step: 100,
            threads: Vec::new(),
            ends: 0,
            fail_at: None,
        };
        let trace = decode_stream::<KinetoColumns>(&mut reader, None, 1000, u64::MAX).unwrap();
        assert_eq!(rows(&trace.columns), rows(&whole.columns));
        assert_eq!(trace.keys, ["traceEvents", "traceName"]);
        let here = std::thread::current().id();
        let ahead = reader.threads.iter().filter(|&&id| id != here).count();
        // the first window is read before anything is decoded; most of the rest read ahead
        assert_eq!(reader.threads[0], here);
        assert!(
            ahead * 2 > reader.threads.len(),
            "{ahead} of {}",
            reader.threads.len()
        );
        assert_eq!(
            reader.ends, 1,
            "the text's end is read once, by either thread"
        );
    }

    #[test]
    fn a_read_ahead_holds_its_room_the_text_read_and_one_reads_slack() {
        let text = many_events(20);
        let mut spare = Vec::new();
        let outcome = read_ahead(&mut text.as_bytes(), &mut spare, 250, 750);
        assert_eq!(outcome.unwrap(), (250, 750, false));
        assert_eq!(&spare[250..], &text.as_bytes()[..750]);
        assert_eq!(spare.capacity(), 250 + 750 + READ_BYTES);
        let outcome = read_ahead(&mut &text.as_bytes()[..100], &mut spare, 250, 750);
        assert_eq!(outcome.unwrap(), (250, 100, true));
        assert_eq!(
            spare.capacity(),
            250 + 750 + READ_BYTES,
            "the buffer used again"
        );
    }

    #[test]
    fn the_text_held_is_two_windows_however_long_the_text() {
        let text = many_events(400);
        let window = 1000;
        let mut held = Window::new(text.as_bytes(), u64::MAX);
        let mut trace = StreamedTrace::<KinetoColumns>::default();
        let open = text.find('[').unwrap();
        stream_events(&mut held, open, None, window, &mut trace).unwrap();
        let whole = kineto::decode(text.as_bytes()).unwrap();
        assert_eq!(rows(&trace.columns), rows(&whole.columns));
        assert!(text.len() > 50 * window);
        for buffer in [&held.buf, &held.spare] {
            assert!(buffer.len() <= 2 * window, "{}", buffer.len());
        }
    }

    #[test]
    fn a_read_ahead_that_fails_declines_and_one_interrupted_is_retried() {
        let text = many_events(200);
        let whole = kineto::decode(text.as_bytes()).unwrap();
        let read = |kind| {
            let mut reader = Noted {
                data: text.as_bytes(),
                step: 100,
                threads: Vec::new(),
                ends: 0,
                fail_at: Some((40, kind)),
            };
            let outcome = decode_stream::<KinetoColumns>(&mut reader, None, 1000, u64::MAX);
            let here = std::thread::current().id();
            assert_ne!(
                reader.threads[39], here,
                "the failing read is one read ahead"
            );
            outcome
        };
        let trace = read(ErrorKind::Interrupted).unwrap();
        assert_eq!(rows(&trace.columns), rows(&whole.columns));
        assert_eq!(read(ErrorKind::Other).unwrap_err().0, "cannot read: disk");
    }

    /// Panics at its `at`-th read.
    struct PanicsAt {
        inner: Vec<u8>,
        reads: usize,
        at: usize,
    }

    impl Read for PanicsAt {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.reads += 1;
            assert!(self.reads != self.at, "the reader's own panic");
            let n = out.len().min(100).min(self.inner.len());
            out[..n].copy_from_slice(&self.inner[..n]);
            self.inner.drain(..n);
            Ok(n)
        }
    }

    #[test]
    fn a_panic_in_a_read_ahead_is_resumed_on_the_callers_thread() {
        let reader = PanicsAt {
            inner: many_events(200).into_bytes(),
            reads: 0,
            at: 40,
        };
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            decode_stream::<KinetoColumns>(reader, None, 1000, u64::MAX)
        }));
        let message = *caught.unwrap_err().downcast::<&str>().unwrap();
        assert_eq!(message, "the reader's own panic");
    }

    #[test]
    fn a_top_level_member_that_the_text_cuts_or_spoils_declines() {
        let cases: [&[u8]; 4] = [
            br#"{"traceEvents": [], "x": [1,}"#,
            br#"{"traceEvents": [], "x": [1, 2"#,
            br#"{"traceEvents": [], 1: 2}"#,
            br#"{"traceEvents": [], "x"#,
        ];
        assert_declined_at_every_window(&cases);
    }

    fn inventory_rows(columns: &crate::kineto_inventory::InventoryColumns) -> Vec<String> {
        let text = |code: u32| (code != NONE).then(|| columns.texts.values[code as usize].clone());
        (0..columns.index.len())
            .map(|row| {
                format!(
                    "{} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                    columns.index[row],
                    text(columns.cat[row]),
                    text(columns.name[row]),
                    columns.ts.get(row),
                    columns.dur.get(row),
                    columns.pid.get(row),
                    columns.device.get(row),
                    columns.stream.get(row),
                    columns.correlation.get(row),
                    columns.external_id.get(row),
                    text(columns.collective[row]),
                    text(columns.process_group[row]),
                    columns.seq.get(row),
                )
            })
            .collect()
    }

    #[test]
    fn the_inventory_streams_as_it_reads_whole() {
        use crate::kineto_inventory::{inventory, InventoryColumns};
        let odd = r#"{"traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2, "pid": "7",
             "args": {"stream": "0x0", "Process Group Name": "0", "Seq": 4}},
            {"ph": "X", "cat": 3, "ts": "x", "args": null}, {"ph": "i"},
            {"ph": "X", "cat": "cpu_op", "name": "record_param_comms",
             "args": {"pg_id": 2, "Collective name": "allreduce", "External id": 5}}
        ], "distributedInfo": {"rank": 0}}"#;
        for text in [TRACE, odd] {
            let whole = inventory(text.as_bytes()).unwrap();
            for window in [1, 5, 64, 1 << 20] {
                let trace: StreamedTrace<InventoryColumns> = decode_stream(
                    Trickle {
                        data: text.as_bytes(),
                        step: 3,
                    },
                    None,
                    window,
                    u64::MAX,
                )
                .unwrap();
                assert_eq!(
                    inventory_rows(&trace.columns),
                    inventory_rows(&whole.columns)
                );
                let (start, end) = whole.distributed_info.unwrap();
                assert_eq!(
                    trace.distributed_info.as_deref(),
                    Some(&text.as_bytes()[start..end])
                );
                assert!(trace.kept.is_empty());
            }
        }
        assert!(inventory_rows(&inventory(odd.as_bytes()).unwrap().columns).len() == 3);
        let twice = br#"{"traceEvents": [{"ph": "X", "ph": "X"}]}"#;
        assert!(inventory(twice).is_err());
        for window in [1, 8, 1 << 20] {
            let streamed = decode_stream::<InventoryColumns>(&twice[..], None, window, u64::MAX);
            assert!(streamed.is_err());
        }
    }
}
