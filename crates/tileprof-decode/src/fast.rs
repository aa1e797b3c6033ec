//! The fast path: one sample read by hand, straight from the bytes, with serde_json kept as the
//! judge of everything unusual.
//!
//! serde_json decoding a sample walks every byte of its metadata value twice over (once to skip
//! it, once more to check it), and its text fields through its generic reader. Here a sample is
//! taken apart by a small parser that knows the sample's shape, and each piece is checked only
//! once per distinct value: a text field or metadata value found in its column's dictionary (by
//! its raw bytes) is the same bytes as one already checked, so only a value seen for the first
//! time is checked (UTF-8 and control characters for text, serde_json's validating pass for
//! metadata and unknown keys' values).
//!
//! The parser gives up (`None`) on anything it does not take exactly as serde_json would: a
//! number that is not a plain integer in range, a missing field, a value of another type, nesting
//! deeper than `MAX_DEPTH`, bytes out of place. The caller then decodes that sample with
//! serde_json (`sample::decode_at`), so every error, and every sample the parser does not take,
//! is decoded as it always was. On every sample it does take, it gives what serde_json gives.
//!
//! One difference, on purpose: the metadata value is kept as raw bytes and only checked as JSON
//! (serde_json's validating pass does not check UTF-8 inside the strings it skips); the Python
//! layer decodes each distinct metadata list with msgspec, which checks the strings it reads
//! (`name`, `value`) and skips the rest. Invalid UTF-8 in a metadata entry's unknown key is thus
//! accepted, as tileprof accepted it before the compiled decoder.

use std::borrow::Cow;

use serde::de::IgnoredAny;

use crate::is_json_space;
use crate::sample::{key_of, Key, MAX_CYCLES, MAX_TILE};

/// Deepest nesting taken inside a value (serde_json's limit is 128 for the whole sample).
const MAX_DEPTH: u32 = 100;

/// One sample as the fast path reads it: text fields as raw bytes (borrowed: not yet checked;
/// owned: unescaped by serde_json, so checked), metadata as its raw bytes.
#[derive(Debug, Default, PartialEq)]
pub struct RawSample<'a> {
    pub tile: i64,
    pub offset: i64,
    pub duration: i64,
    pub phase: Option<i64>,
    pub epoch: Option<i64>,
    pub kind: Option<Cow<'a, [u8]>>,
    pub operation: Option<Cow<'a, [u8]>>,
    pub kernel: Option<Cow<'a, [u8]>>,
    /// The raw metadata value; None when absent or `null`. Not yet checked as JSON.
    pub metadata: Option<&'a [u8]>,
}

/// Whether a text field's bytes, as read here, are a string serde_json would accept.
#[allow(clippy::ptr_arg)] // the variant is the point: owned text was already checked
pub fn text_is_valid(text: &Cow<'_, [u8]>) -> bool {
    match text {
        // Unescaped by serde_json: already checked.
        Cow::Owned(_) => true,
        Cow::Borrowed(bytes) => {
            bytes.iter().all(|&b| b >= 0x20) && std::str::from_utf8(bytes).is_ok()
        }
    }
}

/// Whether a raw value is one JSON value, as serde_json checks it (UTF-8 inside strings aside).
pub fn value_is_valid(raw: &[u8]) -> bool {
    serde_json::from_slice::<IgnoredAny>(raw).is_ok()
}

struct Cursor<'a> {
    data: &'a [u8],
    position: usize,
}

/// The first position from `from` holding a quote or a backslash.
#[inline]
fn quote_or_backslash(data: &[u8], from: usize) -> Option<usize> {
    string_stop::<false>(data, from)
}

/// The first position from `from` holding a quote or a backslash, or with `CONTROL` also a
/// control character (below 0x20: the bytes that end a plain string, `kineto_fast`).
///
/// Eight bytes at a time (the zero-byte test on the bytes XORed with each wanted byte; a byte
/// below 0x20 by the "has a byte less than n" test): most strings in a dump are a few to a
/// few dozen bytes, where a call to memchr costs more than the string. Measured with callgrind
/// on a 45 MB dump: memchr2 was a fifth of a one-thread decode.
#[inline]
pub(crate) fn string_stop<const CONTROL: bool>(data: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut position = from;
    while let Some(word) = data.get(position..position + 8) {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let quotes = word ^ (ONES * u64::from(b'"'));
        let backslashes = word ^ (ONES * u64::from(b'\\'));
        // The lowest flagged byte is exact (borrows only flag bytes above a zero byte).
        let mut flagged =
            quotes.wrapping_sub(ONES) & !quotes | backslashes.wrapping_sub(ONES) & !backslashes;
        if CONTROL {
            flagged |= word.wrapping_sub(ONES * 0x20) & !word;
        }
        let found = flagged & HIGHS;
        if found != 0 {
            return Some(position + (found.trailing_zeros() / 8) as usize);
        }
        position += 8;
    }
    let rest = data.get(position..)?;
    rest.iter()
        .position(|&b| b == b'"' || b == b'\\' || (CONTROL && b < 0x20))
        .map(|found| position + found)
}

/// The position of the quote that ends the string whose opening quote is at `open`, and whether
/// the string holds an escape.
#[inline]
fn string_end(data: &[u8], open: usize) -> Option<(usize, bool)> {
    let mut position = open + 1;
    let mut escaped = false;
    loop {
        position = quote_or_backslash(data, position)?;
        if data[position] == b'"' {
            return Some((position, escaped));
        }
        escaped = true;
        position += 2;
    }
}

/// The position of the bracket closing the container opened at `open`.
fn container_end(data: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0u32;
    let mut position = open;
    loop {
        match *data.get(position)? {
            b'"' => position = string_end(data, position)?.0,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return None;
                }
            }
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(position);
                }
            }
            _ => {}
        }
        position += 1;
    }
}

impl<'a> Cursor<'a> {
    #[inline]
    fn space(&mut self) {
        while self
            .data
            .get(self.position)
            .is_some_and(|&b| is_json_space(b))
        {
            self.position += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.data.get(self.position).copied()
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.position += 1)
    }

    /// A string: (its bytes between the quotes, whether it has escapes).
    #[inline]
    fn string(&mut self) -> Option<(&'a [u8], bool)> {
        let open = self.position;
        if self.peek()? != b'"' {
            return None;
        }
        let (close, escaped) = string_end(self.data, open)?;
        self.position = close + 1;
        Some((&self.data[open + 1..close], escaped))
    }

    /// A plain JSON integer that fits an i64 (anything else: give up).
    #[inline]
    fn integer(&mut self) -> Option<i64> {
        let negative = self.peek()? == b'-';
        self.position += usize::from(negative);
        let start = self.position;
        let mut value: u64 = 0;
        while let Some(&byte) = self.data.get(self.position) {
            if !byte.is_ascii_digit() {
                break;
            }
            // At most 19 digits are taken, and 19 digits fit a u64.
            value = value.wrapping_mul(10).wrapping_add(u64::from(byte - b'0'));
            self.position += 1;
        }
        let digits = self.position - start;
        let leading_zero = digits > 1 && self.data[start] == b'0';
        let fraction = matches!(self.peek(), Some(b'.' | b'e' | b'E'));
        // serde_json reads `-0` as a float.
        let negative_zero = negative && value == 0;
        if digits == 0 || digits > 19 || leading_zero || fraction || negative_zero {
            return None;
        }
        if value > i64::MAX as u64 {
            return None;
        }
        let value = value as i64;
        Some(if negative { -value } else { value })
    }

    #[inline]
    fn null(&mut self) -> Option<()> {
        let end = self.position + 4;
        (self.data.get(self.position..end)? == b"null").then(|| self.position = end)
    }

    /// `null` (Some(None)) or an integer.
    #[inline]
    fn nullable_integer(&mut self) -> Option<Option<i64>> {
        if self.peek()? == b'n' {
            return self.null().map(|()| None);
        }
        self.integer().map(Some)
    }

    /// `null` (Some(None)) or a string.
    #[inline]
    fn nullable_text(&mut self) -> Option<Option<Cow<'a, [u8]>>> {
        match self.peek()? {
            b'n' => self.null().map(|()| None),
            b'"' => {
                let open = self.position;
                let (text, escaped) = self.string()?;
                if !escaped {
                    return Some(Some(Cow::Borrowed(text)));
                }
                let quoted = &self.data[open..self.position];
                let text = serde_json::from_slice::<String>(quoted).ok()?;
                Some(Some(Cow::Owned(text.into_bytes())))
            }
            _ => None,
        }
    }

    /// The raw bytes of any one value (its extent only: not checked).
    #[inline]
    fn value(&mut self) -> Option<&'a [u8]> {
        let start = self.position;
        self.position = match self.peek()? {
            b'"' => string_end(self.data, start)?.0 + 1,
            b'[' | b'{' => container_end(self.data, start)? + 1,
            _ => {
                let rest = &self.data[start..];
                let length = rest
                    .iter()
                    .position(|&b| matches!(b, b',' | b'}' | b']') || is_json_space(b))
                    .unwrap_or(rest.len());
                if length == 0 {
                    return None;
                }
                start + length
            }
        };
        Some(&self.data[start..self.position])
    }
}

/// Read one key (and the colon after it); None when serde_json would not take it as is.
#[inline]
fn key(cursor: &mut Cursor<'_>) -> Option<Key> {
    let open = cursor.position;
    let (name, escaped) = cursor.string()?;
    let key = if escaped {
        let quoted = &cursor.data[open..cursor.position];
        key_of(serde_json::from_slice::<String>(quoted).ok()?.as_bytes())
    } else {
        let key = key_of(name);
        if matches!(key, Key::Other) && !text_is_valid(&Cow::Borrowed(name)) {
            return None;
        }
        key
    };
    cursor.space();
    cursor.eat(b':')?;
    cursor.space();
    Some(key)
}

/// Says whether raw bytes are a metadata value already checked (in a column's dictionary), so
/// each one whole JSON value.
pub type Known<'k> = &'k dyn Fn(&[u8]) -> bool;

/// The metadata value at the cursor when it is one already checked and it ends the sample: the
/// bytes up to the line's last `]` that is followed by nothing but the sample's `}` (and white
/// space). A checked value is one JSON value, so its extent is the one `value` would find (the
/// bracket that closes a valid array is its last byte), without walking it.
///
/// Measured with callgrind on a 200k-sample NDJSON load: walking each metadata list to find its
/// end (`Cursor::value`) was 265M instructions, about a fifth of the decoder's.
#[inline]
fn known_metadata<'a>(cursor: &Cursor<'a>, known: Known<'_>) -> Option<&'a [u8]> {
    let rest = &cursor.data[cursor.position..];
    if rest.first() != Some(&b'[') {
        return None;
    }
    let close = memchr::memrchr(b']', rest)?;
    let mut after = rest[close + 1..].iter().filter(|&&b| !is_json_space(b));
    if after.next() != Some(&b'}') || after.next().is_some() {
        return None;
    }
    let raw = &rest[..=close];
    known(raw).then_some(raw)
}

/// Read one field's value into `sample`.
#[inline]
fn field<'a>(
    cursor: &mut Cursor<'a>,
    key: Key,
    sample: &mut RawSample<'a>,
    required: &mut [Option<i64>; 3],
) -> Option<()> {
    match key {
        Key::Tile => required[0] = Some(cursor.integer()?),
        Key::Offset => required[1] = Some(cursor.integer()?),
        Key::Duration => required[2] = Some(cursor.integer()?),
        Key::Phase => sample.phase = cursor.nullable_integer()?,
        Key::Epoch => sample.epoch = cursor.nullable_integer()?,
        Key::Kind => sample.kind = cursor.nullable_text()?,
        Key::Operation => sample.operation = cursor.nullable_text()?,
        Key::Kernel => sample.kernel = cursor.nullable_text()?,
        Key::Metadata => {
            let raw = cursor.value()?;
            sample.metadata = (raw != b"null").then_some(raw);
        }
        Key::Other => {
            if !value_is_valid(cursor.value()?) {
                return None;
            }
        }
    }
    Some(())
}

/// The sample object at `data[at]`, and the position after it; None to leave it to serde_json.
pub fn sample_at(data: &[u8], at: usize) -> Option<(RawSample<'_>, usize)> {
    sample_with(data, at, None)
}

/// `sample_at`, with `known` (where `data` is one NDJSON line) to take a metadata value that ends
/// the line and was checked already without walking it (`known_metadata`).
fn sample_with<'a>(
    data: &'a [u8],
    at: usize,
    known: Option<Known<'_>>,
) -> Option<(RawSample<'a>, usize)> {
    let mut cursor = Cursor { data, position: at };
    cursor.eat(b'{')?;
    cursor.space();
    let mut sample = RawSample::default();
    let mut required = [None; 3];
    let mut seen = 0u16;
    if cursor.eat(b'}').is_none() {
        loop {
            let key = key(&mut cursor)?;
            // A field given twice: serde_json checks both values and keeps the last; here only
            // the kept one would be checked, so leave the sample to serde_json.
            let bit = 1u16 << (key as u16);
            if seen & bit != 0 && !matches!(key, Key::Other) {
                return None;
            }
            seen |= bit;
            // A known metadata value is taken here, so that `field` (the JSON reader's too)
            // stays as it was. Measured with callgrind: with the lookup inside `field`, the
            // JSON reader's sample parser was 28M instructions more on a 200k-sample dump.
            let taken = match (key, known) {
                (Key::Metadata, Some(known)) => known_metadata(&cursor, known),
                _ => None,
            };
            match taken {
                Some(raw) => {
                    cursor.position += raw.len();
                    sample.metadata = Some(raw);
                }
                None => field(&mut cursor, key, &mut sample, &mut required)?,
            }
            cursor.space();
            match cursor.peek()? {
                b',' => {
                    cursor.position += 1;
                    cursor.space();
                }
                b'}' => {
                    cursor.position += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    let [tile, offset, duration] = required;
    sample.tile = tile.filter(|&t| t <= MAX_TILE)?;
    sample.offset = offset.filter(|&o| o <= MAX_CYCLES)?;
    sample.duration = duration.filter(|&d| d <= MAX_CYCLES)?;
    // What serde_json's stream accepts right after a value (else "trailing characters").
    match cursor.peek() {
        None
        | Some(b' ' | b'\n' | b'\t' | b'\r' | b'"' | b'[' | b']' | b'{' | b'}' | b',' | b':') => {
            Some((sample, cursor.position))
        }
        Some(_) => None,
    }
}

/// One whole NDJSON line (white space around the sample allowed, nothing else).
pub fn line(text: &[u8]) -> Option<RawSample<'_>> {
    line_with(text, None)
}

/// `line`, with `known` saying which metadata values were checked already (see
/// `known_metadata`): the same sample, or the same None.
pub fn line_with<'a>(text: &'a [u8], known: Option<Known<'_>>) -> Option<RawSample<'a>> {
    let start = crate::skip_space(text, 0);
    let (sample, end) = sample_with(text, start, known)?;
    (crate::skip_space(text, end) == text.len()).then_some(sample)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::decode_line;

    /// The fast path takes `text` exactly as serde_json does, or leaves it to serde_json.
    fn agrees(text: &str) {
        agrees_bytes(text.as_bytes());
    }

    fn agrees_bytes(bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let Some(raw) = line(bytes) else {
            return;
        };
        let valid = [&raw.kind, &raw.operation, &raw.kernel]
            .iter()
            .all(|t| t.as_ref().is_none_or(text_is_valid))
            && raw.metadata.is_none_or(value_is_valid)
            // On purpose, the one difference: serde_json's raw value also checks UTF-8.
            && raw.metadata.is_none_or(|m| std::str::from_utf8(m).is_ok());
        let sample = decode_line(bytes);
        if !valid {
            return;
        }
        let sample = sample.unwrap_or_else(|e| panic!("fast path took {text:?}: {e}"));
        let bytes = |t: &Option<Cow<'_, str>>| t.as_ref().map(|t| t.as_bytes().to_vec());
        let raw_bytes = |t: &Option<Cow<'_, [u8]>>| t.as_ref().map(|t| t.to_vec());
        assert_eq!(
            (raw.tile, raw.offset, raw.duration, raw.phase, raw.epoch),
            (
                sample.tile,
                sample.offset,
                sample.duration,
                sample.phase,
                sample.epoch
            ),
            "{text}"
        );
        assert_eq!(raw_bytes(&raw.kind), bytes(&sample.kind), "{text}");
        assert_eq!(raw_bytes(&raw.operation), bytes(&sample.operation));
        assert_eq!(raw_bytes(&raw.kernel), bytes(&sample.kernel));
        assert_eq!(raw.metadata, sample.metadata.map(str::as_bytes), "{text}");
    }

    #[test]
    fn plain_samples_take_the_fast_path() {
        let text = r#" {"physicalTile": 3, "offset":10,"duration" : 5, "phase": null, "epoch": -2,
            "kind": "compute", "extra": {"a": [1, "]"]}, "kernel": "g\u00e9mm",
            "metadata": [{"name": "usefulCycles", "value": "4"}]} "#;
        let raw = line(text.as_bytes()).expect("the fast path");
        assert_eq!((raw.tile, raw.epoch), (3, Some(-2)));
        assert_eq!(raw.kernel.as_deref(), Some("gémm".as_bytes()));
        assert!(matches!(raw.kind, Some(Cow::Borrowed(b"compute"))));
        agrees(text);
    }

    #[test]
    fn anything_unusual_is_left_to_serde_json_or_agrees() {
        let base = r#"{"physicalTile":1,"offset":2,"duration":3}"#;
        for text in [
            base,
            r#"{"physicalTile":1,"offset":2}"#,
            r#"{"physicalTile":1.0,"offset":2,"duration":3}"#,
            r#"{"physicalTile":1e2,"offset":2,"duration":3}"#,
            r#"{"physicalTile":01,"offset":2,"duration":3}"#,
            r#"{"physicalTile":-0,"offset":2,"duration":3}"#,
            r#"{"physicalTile":-,"offset":2,"duration":3}"#,
            r#"{"physicalTile":2147483648,"offset":2,"duration":3}"#,
            r#"{"physicalTile":1,"offset":4611686018427387904,"duration":3}"#,
            r#"{"physicalTile":1,"offset":4611686018427387905,"duration":3}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"phase":9223372036854775807}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"phase":9223372036854775808}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"phase":-9223372036854775807}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"phase":12345678901234567890}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"phase":nul}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"kind":3}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"kind":"a\"b"}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"kind":"a\ud800"}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"kind":"	tab"}"#,
            r#"{"physical\u0054ile":1,"offset":2,"duration":3}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"x	":1}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"x":tru}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"x":[1,]}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"metadata":"m"}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"metadata":5}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"metadata":[1,}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"metadata":null}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"offset":9}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,"metadata":[1,],"metadata":[1]}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3,}":1}"#,
            r#"{x":1,"physicalTile":1,"offset":2,"duration":3}"#,
            r#"{"physicalTile":1,"offset":2,"duration":3} x"#,
            r#"{"physicalTile":1 "offset":2,"duration":3}"#,
            r#"{}"#,
            r#"[]"#,
        ] {
            agrees(text);
        }
        let deep = format!(
            r#"{{"physicalTile":1,"offset":2,"duration":3,"metadata":{}{}}}"#,
            "[".repeat(150),
            "]".repeat(150)
        );
        assert!(line(deep.as_bytes()).is_none());
        let twice = r#"{"physicalTile":1,"offset":2,"duration":3,"kind":"a","kind":"b"}"#;
        assert!(
            line(twice.as_bytes()).is_none(),
            "a field given twice goes to serde_json"
        );
        for text in [
            r#"{"physicalTile":1,"offset":2,"duration":3,}":1}"#,
            r#"{x":1,"physicalTile":1,"offset":2,"duration":3}"#,
        ] {
            assert!(line(text.as_bytes()).is_none(), "{text}");
        }
        let others = r#"{"physicalTile":1,"offset":2,"duration":3,"x":1,"x":2}"#;
        assert!(line(others.as_bytes()).is_some());
    }

    #[test]
    fn random_edits_are_taken_as_serde_json_takes_them_or_left_to_it() {
        const SEEDS: [&str; 3] = [
            r#"{"physicalTile": 3, "offset": 10, "duration": 5, "phase": null, "epoch": 2, "kind": "k", "x": [1, {"a": "b"}], "metadata": [{"name": "n", "value": "1"}]}"#,
            r#"{"kernel":"g\u00e9\"m","physicalTile":0,"offset":0,"duration":1,"operation":null,"metadata":null}"#,
            r#" {"physicalTile":-1,"offset":1,"duration":1,"y":true,"z":-1.5e3,"kind":"\\"} "#,
        ];
        const ALPHABET: &[u8] = b"{}[]\",:\\ 0123456789-.eEnulltrfsa\n\x01\xff\xc3";
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..30_000 {
            let mut bytes = SEEDS[round % SEEDS.len()].as_bytes().to_vec();
            for _ in 0..1 + next() % 3 {
                let at = (next() % (bytes.len() as u64 + 1)) as usize;
                let byte = ALPHABET[(next() % ALPHABET.len() as u64) as usize];
                match next() % 3 {
                    0 if at < bytes.len() => bytes[at] = byte,
                    1 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => bytes.insert(at, byte),
                }
            }
            agrees_bytes(&bytes);
        }
    }

    #[test]
    fn quotes_and_backslashes_are_found_at_every_offset() {
        for length in 0..40 {
            for at in 0..=length {
                for wanted in [b'"', b'\\'] {
                    let mut data = vec![b'a'; length];
                    if at < length {
                        data[at] = wanted;
                    }
                    let expected = (at < length).then_some(at);
                    assert_eq!(quote_or_backslash(&data, 0), expected, "{length} {at}");
                }
            }
        }
        assert_eq!(quote_or_backslash(b"\xff\x22\x5c\"", 0), Some(1));
        assert_eq!(quote_or_backslash(b"ab", 3), None);
    }

    #[test]
    fn values_nested_up_to_max_depth_are_walked_deeper_ones_left_to_serde_json() {
        let nested = |depth: usize| {
            let (open, close) = ("[".repeat(depth), "]".repeat(depth));
            format!(r#"{{"physicalTile":1,"offset":2,"duration":3,"x":{open}{close}}}"#)
        };
        let depth = MAX_DEPTH as usize;
        assert!(line(nested(depth).as_bytes()).is_some());
        assert!(line(nested(depth + 1).as_bytes()).is_none());
        assert!(decode_line(nested(depth + 1).as_bytes()).is_ok());
    }

    #[test]
    fn string_values_of_other_keys_and_metadata_are_skipped_whole() {
        let text = r#"{"physicalTile":1,"x":"","offset":2,"y":"a,b","duration":3,"metadata":"m"}"#;
        let raw = line(text.as_bytes()).unwrap();
        assert_eq!((raw.offset, raw.duration), (2, 3));
        assert_eq!(raw.metadata, Some(&b"\"m\""[..]));
    }

    #[test]
    fn sample_at_ends_where_serde_json_ends() {
        let data = br#"{"physicalTile":1,"offset":1,"duration":1} , {"x"#;
        let (_, end) = sample_at(data, 0).unwrap();
        assert_eq!(end, crate::sample::decode_at(data).unwrap().1);
        assert!(sample_at(br#"{"physicalTile":1,"offset":1,"duration":1}x"#, 0).is_none());
    }

    #[test]
    fn a_known_metadata_value_gives_what_walking_it_gives() {
        const HEAD: &str = r#"{"physicalTile":1,"offset":2,"duration":3"#;
        let metadata = [
            r#"[{"name":"usefulCycles","value":"4"}]"#,
            r#"[{"name":"a]}","value":"]"},{"name":"b","value":[1,[2]]}]"#,
            r#"[ ]"#,
            r#"[1]"#,
        ];
        let mut lines = Vec::new();
        for raw in metadata {
            lines.push(format!(r#"{HEAD},"metadata":{raw}}}"#));
            lines.push(format!("{HEAD}, \"metadata\" : {raw} \t}} \r"));
            lines.push(format!(r#"{HEAD},"metadata":{raw},"kernel":"k]"}}"#));
            lines.push(format!(r#"{HEAD},"metadata":{raw}]}}"#));
            lines.push(format!(r#"{HEAD},"metadata":{raw}}}}}"#));
            lines.push(format!(r#"{HEAD},"metadata":{raw},"x":"]"}}"#));
            lines.push(format!(r#"{HEAD},"metadata":{raw}"#));
            lines.push(format!(r#"{HEAD},"metadata":{raw},"metadata":[1]}}"#));
        }
        lines.push(format!(r#"{HEAD},"metadata":[1],"x":[2]}}"#));
        lines.push(format!(r#"{HEAD},"metadata":[1]}} x"#));
        // Known: every value above, and other whole values (what a dictionary holds: checked).
        let mut known: Vec<String> = metadata.iter().map(|m| m.to_string()).collect();
        known.extend(["[2]", "[[1],[2]]", "[]"].map(String::from));
        let hits = std::cell::Cell::new(0);
        let is_known = |raw: &[u8]| {
            let found = known.iter().any(|k| k.as_bytes() == raw);
            hits.set(hits.get() + usize::from(found));
            found
        };
        for text in &lines {
            let walked = line(text.as_bytes());
            assert_eq!(
                line_with(text.as_bytes(), Some(&is_known)),
                walked,
                "{text}"
            );
            assert_eq!(line_with(text.as_bytes(), Some(&|_: &[u8]| false)), walked);
            agrees(text);
        }
        assert!(line(lines[0].as_bytes()).is_some_and(|s| s.metadata.is_some()));
        assert!(hits.get() >= 2 * metadata.len(), "the shortcut was taken");
    }
}
