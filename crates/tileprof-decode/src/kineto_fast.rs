//! One Kineto event read by hand, with serde_json kept as the judge of everything unusual
//! (the sample decoder's `fast` path, for the trace's events).
//!
//! serde_json's map access reads every key and value of an event through its generic reader;
//! here a plain event (keys without escapes, each known key once, values of the types
//! `kineto::Event` takes) is taken apart by a small parser that knows its shape. The values
//! tileprof does not read (an unknown key's, `Input Dims`, `Concrete Inputs`, ...) are
//! checked as `kineto.rs` reads them (`IgnoredAny`, `Checked`): an unknown key's plain scalar
//! (a text without escapes or control characters, a number as JSON's grammar writes it,
//! `true`, `false`, `null`) is stepped over here, which is all `IgnoredAny` checks of it; any
//! other value is passed to serde_json one by one, as before.
//!
//! The parser gives up (`None`) on anything it does not take exactly as `kineto.rs`'s serde
//! visitors would: an escape in a text, a control character, a key given twice, a number that
//! is not a plain one of the field's type (an integer field written `1.0`, an integer out of
//! range, a float out of range), a value of another type, bytes out of place. The caller then
//! decodes that event with serde_json, so every event the parser does not take, and every
//! error, is decoded as it always was; on every event it takes it gives what serde_json gives.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::fast::string_stop;
use crate::kineto::{Args, Checked, Event, Process, Stream, Text};
use crate::skip_space;

/// The event whose `{` is at `start`, and the position after its `}`; None when it is not
/// plain (module docs). `data` must be valid UTF-8 (checked whole before any event is read).
#[cfg(test)]
pub(crate) fn event_at(data: &[u8], start: usize) -> Option<(Event<'_>, usize)> {
    let mut event = Event::default();
    read_event(data, start, &mut event).map(|end| (event, end))
}

/// `event_at` into `event`, which must be `Event::default()`: the position after the `}`, or
/// None (with `event` partly filled) when the event is not plain. Filled in place, not
/// returned: an `Event` is some 400 bytes, and moving one out of the reader and into
/// `kineto::keep` for every event was 7% of a decode (perf, the 626 MB trace).
pub(crate) fn read_event<'a>(data: &'a [u8], start: usize, event: &mut Event<'a>) -> Option<usize> {
    let mut seen = 0u32;
    members(data, start, |key, at| {
        let bit = match key {
            b"ph" => 0,
            b"cat" => 1,
            b"name" => 2,
            b"ts" => 3,
            b"dur" => 4,
            b"pid" => 5,
            b"tid" => 6,
            b"args" => 7,
            _ => return ignored_end(data, at),
        };
        first_time(&mut seen, bit)?;
        let (end, value) = match bit {
            0..=2 => {
                let (text, end) = optional_text(data, at)?;
                match bit {
                    0 => event.ph = text,
                    1 => event.cat = text,
                    _ => event.name = text,
                }
                return Some(end);
            }
            3 | 4 => {
                let (value, end) = optional_float(data, at)?;
                (end, value)
            }
            5 | 6 => {
                let (process, end) = process_at(data, at)?;
                if bit == 5 {
                    event.pid = process;
                } else {
                    event.tid = process;
                }
                return Some(end);
            }
            _ => return optional_args(data, at, &mut event.args),
        };
        if bit == 3 {
            event.ts = value;
        } else {
            event.dur = value;
        }
        Some(end)
    })
}

/// Walks the object whose `{` is at `start`, giving each member's raw key (without escapes)
/// and the position of its value to `member`, which returns the position after the value.
/// The position after the `}`.
fn members<'a>(
    data: &'a [u8],
    start: usize,
    mut member: impl FnMut(&'a [u8], usize) -> Option<usize>,
) -> Option<usize> {
    if data.get(start) != Some(&b'{') {
        return None;
    }
    let mut position = skip_space(data, start + 1);
    if data.get(position) == Some(&b'}') {
        return Some(position + 1);
    }
    loop {
        let (key, after) = plain_string(data, position)?;
        let colon = skip_space(data, after);
        if data.get(colon) != Some(&b':') {
            return None;
        }
        let end = member(key, skip_space(data, colon + 1))?;
        position = skip_space(data, end);
        match data.get(position) {
            Some(b',') => position = skip_space(data, position + 1),
            Some(b'}') => return Some(position + 1),
            _ => return None,
        }
    }
}

fn first_time(seen: &mut u32, bit: u32) -> Option<()> {
    if *seen & (1 << bit) != 0 {
        return None; // serde_json's visitor refuses it, with its message
    }
    *seen |= 1 << bit;
    Some(())
}

/// The bytes of the string whose `"` is at `open` when it holds no escape and no control
/// character, and the position after its closing quote.
fn plain_string(data: &[u8], open: usize) -> Option<(&[u8], usize)> {
    if data.get(open) != Some(&b'"') {
        return None;
    }
    let close = string_stop::<true>(data, open + 1)?;
    (data[close] == b'"').then(|| (&data[open + 1..close], close + 1))
}

/// A plain string as text.
fn plain_text(data: &[u8], open: usize) -> Option<(&str, usize)> {
    let (bytes, end) = plain_string(data, open)?;
    debug_assert!(std::str::from_utf8(bytes).is_ok());
    // SAFETY: `event_at` is only given text checked as UTF-8: whole documents (`kineto::decode`
    // declines any other before reading an event) or a stream's window up to its last whole
    // character (`kineto_stream::whole_characters`); and a string's quotes are ASCII, so the
    // bytes between them are whole characters. Measured: checking each text again was a
    // tenth of the decode (perf, the 49 MB trace).
    Some((unsafe { std::str::from_utf8_unchecked(bytes) }, end))
}

/// `null` at `at`: the position after it.
fn null_at(data: &[u8], at: usize) -> Option<usize> {
    data.get(at..at + 4)
        .filter(|word| *word == b"null")
        .map(|_| at + 4)
}

/// `ph`, `cat`, `name`: a text or null.
fn optional_text(data: &[u8], at: usize) -> Option<(Option<Cow<'_, str>>, usize)> {
    if let Some(end) = null_at(data, at) {
        return Some((None, end));
    }
    let (text, end) = plain_text(data, at)?;
    Some((Some(Cow::Borrowed(text)), end))
}

/// A JSON number at `at` (its grammar checked), whether it is written as an integer, and the
/// position after it.
fn number(data: &[u8], at: usize) -> Option<(&str, bool, usize)> {
    let digits = |from: usize| {
        let count = data[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        (count > 0).then_some(from + count)
    };
    let mut position = at;
    if data.get(position) == Some(&b'-') {
        position += 1;
    }
    let integer_end = digits(position)?;
    if data[position] == b'0' && integer_end > position + 1 {
        return None; // a leading zero
    }
    position = integer_end;
    let mut integer = true;
    if data.get(position) == Some(&b'.') {
        position = digits(position + 1)?;
        integer = false;
    }
    if matches!(data.get(position), Some(b'e' | b'E')) {
        position += 1;
        if matches!(data.get(position), Some(b'+' | b'-')) {
            position += 1;
        }
        position = digits(position)?;
        integer = false;
    }
    debug_assert!(std::str::from_utf8(&data[at..position]).is_ok());
    // SAFETY: every byte from `at` to `position` was matched above as ASCII (a sign, a digit,
    // `.`, `e` or `E`), so the range is whole UTF-8 characters. Measured: checking it again
    // was 7.5% of the decode's instructions (callgrind, the 49 MB generated trace).
    let text = unsafe { std::str::from_utf8_unchecked(&data[at..position]) };
    Some((text, integer, position))
}

/// `ts`, `dur` (`kineto::float_field`): a finite number, or null.
fn optional_float(data: &[u8], at: usize) -> Option<(Option<f64>, usize)> {
    if let Some(end) = null_at(data, at) {
        return Some((None, end));
    }
    let (text, _, end) = number(data, at)?;
    let value: f64 = text.parse().ok()?;
    value.is_finite().then_some((Some(value), end))
}

/// An Int64 field (`kineto::int_field`): an integer literal that Int64 holds, or null.
fn optional_int(data: &[u8], at: usize) -> Option<(Option<i64>, usize)> {
    if let Some(end) = null_at(data, at) {
        return Some((None, end));
    }
    let (value, end) = int_literal(data, at)?;
    Some((Some(value), end))
}

fn int_literal(data: &[u8], at: usize) -> Option<(i64, usize)> {
    let (text, integer, end) = number(data, at)?;
    if !integer {
        return None;
    }
    Some((text.parse().ok()?, end))
}

/// `pid`, `tid` (`kineto::process_of`): null, true, false, a text without escapes or an
/// integer that Int64 holds, with Python's `str()` of it. Anything else is left to serde_json.
fn process_at(data: &[u8], at: usize) -> Option<(Process<'_>, usize)> {
    fn process(int: Option<i64>, python: &str, end: usize) -> Option<(Process<'_>, usize)> {
        let python = Some(Cow::Borrowed(python));
        Some((Process { int, python }, end))
    }
    match data.get(at)? {
        b'"' => {
            let (text, end) = plain_text(data, at)?;
            process(None, text, end)
        }
        b'-' | b'0'..=b'9' => {
            let (text, integer, end) = number(data, at)?;
            if !integer {
                return None;
            }
            let python = if text == "-0" { "0" } else { text };
            process(Some(text.parse().ok()?), python, end)
        }
        b'n' => process(None, "None", null_at(data, at)?),
        b't' if data[at..].starts_with(b"true") => process(None, "True", at + 4),
        b'f' if data[at..].starts_with(b"false") => process(None, "False", at + 5),
        _ => None,
    }
}

/// The document's text from `start` to `end`.
fn text_between(data: &[u8], start: usize, end: usize) -> &str {
    let bytes = &data[start..end];
    debug_assert!(std::str::from_utf8(bytes).is_ok());
    // SAFETY: as in `plain_text`: the text was checked as UTF-8 (the document whole, or the
    // stream's window), and a JSON value begins and ends with ASCII bytes, so these are whole
    // characters.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// A free-form argument (`kineto::raw_field`): its raw text (None when null), checked as
/// `Checked` checks it.
fn raw_value(data: &[u8], at: usize) -> Option<(Option<&str>, usize)> {
    let (_, end) = serde_value::<Checked>(data, at)?;
    let text = text_between(data, at, end);
    Some(((text != "null").then_some(text), end))
}

/// The position after the value at `at`, which tileprof does not read (`IgnoredAny`): a plain
/// scalar is stepped over here (`scalar_end`), anything else is left to serde_json as before.
/// Measured: serde_json's stream set up per value was 7% of the decode's instructions
/// (callgrind, the 49 MB generated trace), most of it for the scalars of keys not read.
fn ignored_end(data: &[u8], at: usize) -> Option<usize> {
    scalar_end(data, at).or_else(|| serde_value::<IgnoredAny>(data, at).map(|(_, end)| end))
}

/// The position after the plain scalar at `at`: a text without escapes or control characters,
/// a number as JSON's grammar writes it (serde_json's `IgnoredAny` checks no more of one), or
/// a literal; None for any other value, or for bytes that are none of these.
fn scalar_end(data: &[u8], at: usize) -> Option<usize> {
    match data.get(at)? {
        b'"' => plain_string(data, at).map(|(_, end)| end),
        b'-' | b'0'..=b'9' => number(data, at).map(|(_, _, end)| end),
        b't' => literal_end(data, at, b"true"),
        b'f' => literal_end(data, at, b"false"),
        b'n' => null_at(data, at),
        _ => None,
    }
}

/// `word` at `at`: the position after it.
fn literal_end(data: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    let end = at + word.len();
    (data.get(at..end)? == word).then_some(end)
}

/// A value read by serde_json from `at` (as `kineto.rs` reads it), and the position after it.
fn serde_value<'a, T: Deserialize<'a>>(data: &'a [u8], at: usize) -> Option<(T, usize)> {
    let mut stream = serde_json::Deserializer::from_slice(&data[at..]).into_iter::<T>();
    let value = stream.next()?.ok()?;
    Some((value, at + stream.byte_offset()))
}

/// `args`: an object or null, into `slot` (None before); the position after it.
fn optional_args<'a>(data: &'a [u8], at: usize, slot: &mut Option<Args<'a>>) -> Option<usize> {
    if let Some(end) = null_at(data, at) {
        return Some(end);
    }
    let args = slot.insert(Args::default());
    let mut seen = 0u32;
    members(data, at, |key, at| {
        let bit = match key {
            b"device" => 0,
            b"stream" => 1,
            b"correlation" => 2,
            b"External id" => 3,
            b"grid" => 4,
            b"block" => 5,
            b"Input type" => 6,
            b"Input Dims" => 7,
            b"Concrete Inputs" => 8,
            b"flops" => 9,
            b"Collective name"
            | b"In msg nelems"
            | b"Out msg nelems"
            | b"Group size"
            | b"dtype"
            | b"Process Group Name"
            | b"pg_id"
            | b"Seq" => {
                return serde_value::<Checked>(data, at).map(|(_, end)| end);
            }
            _ => return ignored_end(data, at),
        };
        first_time(&mut seen, bit)?;
        let end = match bit {
            0 | 2 | 3 => {
                let (value, end) = optional_int(data, at)?;
                match bit {
                    0 => args.device = value,
                    2 => args.correlation = value,
                    _ => args.external_id = value,
                }
                end
            }
            1 => {
                let (stream, end) = stream_at(data, at)?;
                args.stream = stream;
                end
            }
            4 | 5 => {
                let (dims, end) = optional_ints(data, at)?;
                if bit == 4 {
                    args.grid = dims;
                } else {
                    args.block = dims;
                }
                end
            }
            6 => {
                let (types, end) = optional_texts(data, at)?;
                args.input_type = types;
                let text = text_between(data, at, end);
                args.input_type_raw = (text != "null").then_some(text);
                end
            }
            _ => {
                let (text, end) = raw_value(data, at)?;
                match bit {
                    7 => args.input_dims = text,
                    8 => args.concrete_inputs = text,
                    _ => args.flops = text,
                }
                end
            }
        };
        Some(end)
    })
}

/// `args.stream` (`kineto::stream_of`): null, an Int64 integer, or a text (anything else is
/// left to serde_json).
fn stream_at(data: &[u8], at: usize) -> Option<(Stream, usize)> {
    if let Some(end) = null_at(data, at) {
        return Some((Stream::None, end));
    }
    if data.get(at) == Some(&b'"') {
        return plain_string(data, at).map(|(_, end)| (Stream::Other, end));
    }
    let (value, end) = int_literal(data, at)?;
    Some((Stream::Int(value), end))
}

/// The elements of the array whose `[` is at `at`, each read by `element` (which returns the
/// position after it), and the position after the `]`.
fn elements(
    data: &[u8],
    at: usize,
    mut element: impl FnMut(usize) -> Option<usize>,
) -> Option<usize> {
    if data.get(at) != Some(&b'[') {
        return None;
    }
    let mut position = skip_space(data, at + 1);
    if data.get(position) == Some(&b']') {
        return Some(position + 1);
    }
    loop {
        position = skip_space(data, element(position)?);
        match data.get(position) {
            Some(b',') => position = skip_space(data, position + 1),
            Some(b']') => return Some(position + 1),
            _ => return None,
        }
    }
}

/// `grid`, `block`: an array of Int64 integers, or null.
fn optional_ints(data: &[u8], at: usize) -> Option<(Option<Vec<i64>>, usize)> {
    if let Some(end) = null_at(data, at) {
        return Some((None, end));
    }
    let mut values = Vec::new();
    let end = elements(data, at, |position| {
        let (value, end) = int_literal(data, position)?;
        values.push(value);
        Some(end)
    })?;
    Some((Some(values), end))
}

/// `Input type`: an array of texts, or null.
fn optional_texts(data: &[u8], at: usize) -> Option<(Option<Vec<Text<'_>>>, usize)> {
    if let Some(end) = null_at(data, at) {
        return Some((None, end));
    }
    let mut texts = Vec::new();
    let end = elements(data, at, |position| {
        let (text, end) = plain_text(data, position)?;
        texts.push(Text(Cow::Borrowed(text)));
        Some(end)
    })?;
    Some((Some(texts), end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_serde(text: &str) -> Option<String> {
        serde_json::from_str::<Event>(text)
            .ok()
            .map(|event| format!("{event:?}"))
    }

    #[test]
    fn what_it_takes_it_reads_as_serde_json_and_the_rest_it_leaves() {
        let taken = [
            r#"{"ph": "X", "cat": "kernel", "name": "k", "ts": 1.5, "dur": 0.25, "pid": 0,
                "tid": "t", "args": {"device": 0, "stream": 7, "correlation": -3,
                "grid": [1, 2, 3], "block": [], "Input type": ["a", ""], "x": [{}]}}"#,
            r#"{ "ts" : -0.0e1 , "pid":null,"tid":true,"args":null,"other":{"a":[1e400]} }"#,
            r#"{"pid": -0, "tid": 9223372036854775807, "args": {"stream": "0x0", "flops": 1,
                "Input Dims": [[1, 2], []], "Concrete Inputs": ["", "1"], "Input type": []}}"#,
            r#"{"pid": "p", "tid": false, "args": {"Input type": null, "flops": null}}"#,
            r#"{"ts": 1e+2, "dur": 2.5E-1, "args": {"External id": 5, "Seq": 3, "x": 1e400}}"#,
            r#"{}"#,
            // values not read: scalars stepped over here, the rest by serde_json
            r#"{"x": "s", "y": -0, "z": 1.5e-3, "w": true, "v": false, "u": null, "t": 2E+9}"#,
            r#"{"args": {"k": "s", "q": -12, "r": true, "n": null, "e": "a\nb", "o": {"a": 1}}}"#,
            r#"{"x": "\u00e9", "y": [1, "a"], "ph": "X"}"#,
            // strings in the last eight bytes, read one byte at a time
            r#"{"ph":"X"}"#,
            r#"{"x":"ab"}"#,
            r#"{"ph":"a b"}"#,
        ];
        for text in taken {
            let (event, end) = event_at(text.as_bytes(), 0).expect(text);
            assert_eq!(end, text.len());
            assert_eq!(Some(format!("{event:?}")), by_serde(text), "{text}");
        }
        let left = [
            r#"{"name": "\u00e9"}"#,
            r#"{"n\u0061me": "k"}"#,
            r#"{"ph": "X", "ph": "X"}"#,
            r#"{"ts": 1e400}"#,
            r#"{"ts": 01}"#,
            r#"{"pid": 9223372036854775808}"#,
            r#"{"pid": 1.5}"#,
            r#"{"tid": [1]}"#,
            r#"{"args": {"flops": 1e400}}"#,
            r#"{"args": {"device": 1.0}}"#,
            r#"{"args": {"grid": [1.5]}}"#,
            r#"{"args": {"stream": [1]}}"#,
            r#"{"args": {"Input type": [null]}}"#,
            r#"{"args": {"Input Dims": 1e400}}"#,
            r#"{"args": []}"#,
            "{\"name\": \"a\tb\"}",
            // a control character where eight bytes are read at a time, and after them
            "{\"name\": \"aaaaaaaa\u{1}aaaaaaaaaaaaaaaaaaaaaa\"}",
            "{\"name\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u{1f}\"}",
            r#"{"ts": 1,}"#,
            r#"{"ts": 1, "ts": 2}"#,
            r#"{"ts": 1.}"#,
            r#"{"ts": -}"#,
            r#"{"ts": 1e}"#,
            r#"{"pid": trux}"#,
            r#"{"tid": falsy}"#,
            r#"{"args": {"Seq": 1e400}}"#,
            r#"{"args": {"device": 1, "device": 2}}"#,
            r#"{"n":"\"}"#,
            "{\"n\":\"a\u{1}\"}",
            r#"{"x": tru}"#,
            r#"{"x": nul}"#,
            r#"{"x": -}"#,
            r#"{"x": 01}"#,
            r#"{"x": 1.e5}"#,
            r#"{"args": {"x": fals}}"#,
            r#"{"args": {"x": truex}}"#,
            "{\"x\": \"a\u{1}b\"}",
        ];
        for text in left {
            assert!(event_at(text.as_bytes(), 0).is_none(), "{text}");
        }
    }

    #[test]
    fn plain_scalars_are_stepped_over_without_serde_json() {
        let stepped = [
            (r#""abc", "#, 5),
            (r#""", "#, 2),
            ("-0}", 2),
            ("12.5e-3,", 7),
            ("7E+9]", 4),
            ("true,", 4),
            ("false}", 5),
            ("null ", 4),
        ];
        for (text, end) in stepped {
            assert_eq!(scalar_end(text.as_bytes(), 0), Some(end), "{text}");
            assert_eq!(ignored_end(text.as_bytes(), 0), Some(end), "{text}");
        }
        // left to serde_json: what it reads whole, and what it refuses
        let left = [
            (r#""a\nb", "#, Some(6)),
            (r#"[1, "a"],"#, Some(8)),
            (r#"{"a": 1}}"#, Some(8)),
            ("tru,", None),
            ("fals}", None),
            ("nul ", None),
            ("01,", None),
            ("1.e5,", None),
            ("-,", None),
            ("\"a\u{1}b\",", None),
            ("x", None),
            ("", None),
        ];
        for (text, end) in left {
            assert_eq!(scalar_end(text.as_bytes(), 0), None, "{text}");
            assert_eq!(ignored_end(text.as_bytes(), 0), end, "{text}");
        }
    }
}
