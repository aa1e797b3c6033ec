//! A Kineto trace's inventory for the capture checks (`tileprof check`, and `findings` and
//! `report` with them): every complete event (`ph: "X"`) in file order, whatever its category
//! and whatever its values, as columns.
//!
//! The rules are the Python reader's (`tileprof/inputs/gpu/kineto_inventory.py`): every field
//! is read as msgspec reads a field typed `Any`, then kept only when it has the column's type
//! (`_text`, `_float`, `_int`, the process group's `str()`), so an odd value is a null to
//! count, not an error. Where this reader does not write Python's conversion exactly (a
//! numeric string other than plain decimal or hex, a float or an integer beyond 64 bits where
//! text is asked for, a key given twice) it declines, and the Python reader reads the
//! document, as the event decoder (`kineto`) declines. One thread: the checks read every
//! event once, and the walk is serde_json's.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::kineto::{
    declined, once, walk_document, Checked, Declined, Next, Nullable, Span, Text, Texts, NONE,
};
use crate::kineto_stream::WindowColumns;
use crate::skip_space;

/// The inventory's columns (`INVENTORY_SCHEMA`): text columns are codes into `texts`
/// (`NONE`: null); `None` is null.
#[derive(Debug, Default)]
pub struct InventoryColumns {
    /// Place in `traceEvents`.
    pub index: Vec<i64>,
    pub cat: Vec<u32>,
    pub name: Vec<u32>,
    pub ts: Nullable<f64>,
    pub dur: Nullable<f64>,
    pub pid: Nullable<i64>,
    pub device: Nullable<i64>,
    pub stream: Nullable<i64>,
    pub correlation: Nullable<i64>,
    pub external_id: Nullable<i64>,
    pub collective: Vec<u32>,
    /// `Process Group Name`, else `pg_id`, as Python's `str()` writes it.
    pub process_group: Vec<u32>,
    pub seq: Nullable<i64>,
    pub texts: Texts,
}

/// A trace's inventory and the span of its `distributedInfo` (the Python side decodes it).
#[derive(Debug, Default)]
pub struct Inventory {
    pub columns: InventoryColumns,
    pub distributed_info: Option<Span>,
}

/// The inventory of the trace held in `data`.
pub fn inventory(data: &[u8]) -> Result<Inventory, Declined> {
    let mut columns = None;
    let distributed_info = walk_document(data, |open| {
        let mut stream = serde_json::Deserializer::from_slice(&data[open..]).into_iter::<Events>();
        match stream.next() {
            Some(Ok(Events(Ok(events)))) => {
                columns = Some(events);
                Ok(open + stream.byte_offset() - 1)
            }
            Some(Ok(Events(Err(why)))) => Err(why),
            Some(Err(error)) => Err(declined(format!("traceEvents: {error}"))),
            None => Err(declined("truncated")),
        }
    })?
    .distributed_info;
    Ok(Inventory {
        columns: columns.unwrap_or_default(),
        distributed_info,
    })
}

impl InventoryColumns {
    /// `part`'s rows after these, its `index` moved by `index_offset` and its text codes
    /// mapped into these columns' texts.
    fn append(&mut self, part: InventoryColumns, index_offset: i64) {
        // Every field named, so that a new column cannot be left out of the join.
        let InventoryColumns {
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
            collective,
            process_group,
            seq,
            texts,
        } = part;
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
        texts_of(&mut self.collective, collective);
        texts_of(&mut self.process_group, process_group);
        self.seq.extend(seq);
    }
}

/// The inventory streams a window at a time (`kineto_stream`), on one thread as in memory.
impl WindowColumns for InventoryColumns {
    fn decode_window(
        data: &[u8],
        limit: usize,
        _split: Option<(&rayon::ThreadPool, usize)>,
    ) -> Result<(Self, i64, Next), Declined> {
        inventory_from(data, 0, limit)
    }

    fn take(&mut self, part: Self, index_offset: i64, _data: &[u8], _kept: &mut Vec<u8>) {
        self.append(part, index_offset);
    }
}

/// The inventory of the events from the one starting at `start` until the array ends or an
/// event starts at or past `limit`, the number of events read and where they stopped: each
/// event read as `Events` reads the array's elements, the walk between them (commas, `]`) by
/// hand.
fn inventory_from(
    data: &[u8],
    start: usize,
    limit: usize,
) -> Result<(InventoryColumns, i64, Next), Declined> {
    let mut columns = InventoryColumns::default();
    let (mut position, mut index) = (start, 0i64);
    loop {
        let mut stream =
            serde_json::Deserializer::from_slice(&data[position..]).into_iter::<Event>();
        let event = match stream.next() {
            Some(Ok(event)) => event,
            Some(Err(error)) => return Err(declined(format!("event {index}: {error}"))),
            None => return Err(declined("truncated")),
        };
        let end = position + stream.byte_offset();
        if event.ph.text() == Some("X") {
            file(&mut columns, &event, index)
                .map_err(|why| declined(format!("event {index}: {why}")))?;
        }
        index += 1;
        let after = skip_space(data, end);
        match data.get(after) {
            Some(b',') => {
                position = skip_space(data, after + 1);
                if position >= limit {
                    return Ok((columns, index, Next::Event(position)));
                }
            }
            Some(b']') => return Ok((columns, index, Next::End(after))),
            _ => return Err(declined("syntax")),
        }
    }
}

/// A value read as msgspec reads `Any`, by kind.
#[derive(Debug, Default, Clone, PartialEq)]
enum Loose<'a> {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    /// A list or an object.
    Container,
}

/// A value from its raw text. A number beyond a float anywhere in it is refused as msgspec
/// refuses it; an integer beyond 64 bits declines (Python holds it; this reader does not).
fn loose(raw: &RawValue) -> Result<Loose<'_>, String> {
    let text = raw.get();
    Ok(match text.as_bytes()[0] {
        b'n' => Loose::Null,
        b't' => Loose::Bool(true),
        b'f' => Loose::Bool(false),
        b'"' if !text.contains('\\') => Loose::Str(Cow::Borrowed(&text[1..text.len() - 1])),
        b'"' => Loose::Str(
            serde_json::from_str::<Text<'_>>(text)
                .map_err(|e| e.to_string())?
                .0,
        ),
        b'[' | b'{' => {
            serde_json::from_str::<Checked>(text).map_err(|e| e.to_string())?;
            Loose::Container
        }
        _ if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) => {
            // Rust's parse rounds correctly, as msgspec's does.
            let value: f64 = text.parse().map_err(|_| "a number".to_owned())?;
            if !value.is_finite() {
                return Err("number out of range".to_owned());
            }
            Loose::Float(value)
        }
        _ => Loose::Int(
            text.parse()
                .map_err(|_| "an integer beyond 64 bits".to_owned())?,
        ),
    })
}

impl<'a> Loose<'a> {
    /// `_text`: the text, when it is one.
    fn text(&self) -> Option<&str> {
        match self {
            Loose::Str(text) => Some(text),
            _ => None,
        }
    }

    /// `_float`: an integer or a float (not a boolean), as a float.
    fn float(&self) -> Option<f64> {
        match *self {
            Loose::Int(value) => Some(value as f64),
            Loose::Float(value) => Some(value),
            _ => None,
        }
    }

    /// `_int`: an integer, or text Python's `int(text, 0)` reads, that Int64 holds.
    fn int(&self) -> Result<Option<i64>, String> {
        match self {
            Loose::Int(value) => Ok(Some(*value)),
            Loose::Str(text) => python_int(text),
            _ => Ok(None),
        }
    }

    /// The process group as Python's `str()` writes it (None for a list or an object).
    fn group(&self) -> Result<Option<Cow<'a, str>>, String> {
        Ok(match self {
            Loose::Null | Loose::Container => None,
            Loose::Bool(value) => Some(Cow::Borrowed(if *value { "True" } else { "False" })),
            Loose::Int(value) => Some(Cow::Owned(value.to_string())),
            Loose::Str(text) => Some(text.clone()),
            Loose::Float(_) => return Err("a float process group".to_owned()),
        })
    }
}

/// Python's `int(text, 0)` within Int64, for plain decimal (`-12`, `+7`, `0`) and hex
/// (`0x1F`); text with no digit is not a number (None). Anything else with a digit or
/// outside ASCII (underscores, spaces, leading zeros, octal, Unicode digits) declines.
fn python_int(text: &str) -> Result<Option<i64>, String> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let hex = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0X"))
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit()));
    let decimal = (body == "0"
        || (body.starts_with(|c: char| matches!(c, '1'..='9'))
            && body.bytes().all(|b| b.is_ascii_digit())))
    .then_some(body);
    let magnitude = match (hex, decimal) {
        (Some(digits), _) => {
            u128::from_str_radix(digits.trim_start_matches('0'), 16).or_else(|_| {
                if digits.trim_start_matches('0').is_empty() {
                    Ok(0)
                } else {
                    Err(())
                }
            })
        }
        (None, Some(digits)) => digits.parse::<u128>().map_err(|_| ()),
        (None, None) if text.is_ascii() && !text.bytes().any(|b| b.is_ascii_digit()) => {
            return Ok(None)
        }
        (None, None) => return Err("a numeric text this reader does not read".to_owned()),
    };
    // beyond 128 bits, or beyond Int64 (-2^63 to 2^63 - 1): no integer the column holds
    let limit = (1u128 << 63) - u128::from(!negative);
    match magnitude {
        Ok(magnitude) if magnitude <= limit => {
            let value = magnitude as i128;
            Ok(i64::try_from(if negative { -value } else { value }).ok())
        }
        _ => Ok(None),
    }
}

/// The `traceEvents` array, decoded into the inventory's columns (or why it declined).
struct Events(Result<InventoryColumns, Declined>);

impl<'de> Deserialize<'de> for Events {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(EventsVisitor)
    }
}

struct EventsVisitor;

impl<'de> Visitor<'de> for EventsVisitor {
    type Value = Events;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the traceEvents array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Events, A::Error> {
        let mut columns = InventoryColumns::default();
        let mut index = 0i64;
        while let Some(event) = seq.next_element::<Event<'de>>()? {
            if event.ph.text() == Some("X") {
                if let Err(why) = file(&mut columns, &event, index) {
                    // the rest is read through, so that serde_json reaches the array's end
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(Events(Err(declined(format!("event {index}: {why}")))));
                }
            }
            index += 1;
        }
        Ok(Events(Ok(columns)))
    }
}

/// One complete event's row.
fn file(columns: &mut InventoryColumns, event: &Event<'_>, index: i64) -> Result<(), String> {
    let args = &event.args;
    let group = if args.pg_name == Loose::Null {
        args.pg_id.group()?
    } else {
        args.pg_name.group()?
    };
    let texts = &mut columns.texts;
    let mut code = |text: Option<&str>| text.map_or(NONE, |t| texts.code(t));
    columns.index.push(index);
    columns.cat.push(code(event.cat.text()));
    columns.name.push(code(event.name.text()));
    columns.collective.push(code(args.collective.text()));
    columns.process_group.push(code(group.as_deref()));
    columns.ts.push(event.ts.float());
    columns.dur.push(event.dur.float());
    columns.pid.push(event.pid.int()?);
    columns.device.push(args.device.int()?);
    columns.stream.push(args.stream.int()?);
    columns.correlation.push(args.correlation.int()?);
    columns.external_id.push(args.external_id.int()?);
    columns.seq.push(args.seq.int()?);
    Ok(())
}

/// The `args` fields the checks read (`_Args`).
#[derive(Debug, Default)]
struct Args<'a> {
    device: Loose<'a>,
    stream: Loose<'a>,
    correlation: Loose<'a>,
    external_id: Loose<'a>,
    collective: Loose<'a>,
    pg_name: Loose<'a>,
    pg_id: Loose<'a>,
    seq: Loose<'a>,
}

/// An event's fields the checks read (`_Event`); `args` null or absent reads as no args.
#[derive(Debug, Default)]
struct Event<'a> {
    ph: Loose<'a>,
    cat: Loose<'a>,
    name: Loose<'a>,
    ts: Loose<'a>,
    dur: Loose<'a>,
    pid: Loose<'a>,
    args: Args<'a>,
}

/// The next value of `map`, read as `Any`.
fn loose_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Loose<'de>, A::Error> {
    let raw: &'de RawValue = map.next_value()?;
    loose(raw).map_err(de::Error::custom)
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
            let (bit, slot) = match key.as_ref() {
                "ph" => (0, &mut event.ph),
                "cat" => (1, &mut event.cat),
                "name" => (2, &mut event.name),
                "ts" => (3, &mut event.ts),
                "dur" => (4, &mut event.dur),
                "pid" => (5, &mut event.pid),
                "args" => {
                    once(&mut seen, 6)?;
                    event.args = map.next_value::<Option<Args<'de>>>()?.unwrap_or_default();
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            once(&mut seen, bit)?;
            *slot = loose_value(&mut map)?;
        }
        Ok(event)
    }
}

impl<'de> Deserialize<'de> for Args<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ArgsVisitor)
    }
}

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
            let (bit, slot) = match key.as_ref() {
                "device" => (0, &mut args.device),
                "stream" => (1, &mut args.stream),
                "correlation" => (2, &mut args.correlation),
                "External id" => (3, &mut args.external_id),
                "Collective name" => (4, &mut args.collective),
                "Process Group Name" => (5, &mut args.pg_name),
                "pg_id" => (6, &mut args.pg_id),
                "Seq" => (7, &mut args.seq),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            once(&mut seen, bit)?;
            *slot = loose_value(&mut map)?;
        }
        Ok(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(inventory: &Inventory, code: u32) -> Option<&str> {
        (code != NONE).then(|| inventory.columns.texts.values[code as usize].as_str())
    }

    #[test]
    fn every_complete_event_with_its_odd_values_kept_as_nulls() {
        let data = br#"{"distributedInfo": {"rank": 1}, "traceEvents": [
          {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2.5, "pid": "7",
           "args": {"device": 0, "stream": "0x1f", "correlation": true, "External id": 1.0,
                    "Collective name": "allreduce", "Process Group Name": null, "pg_id": 3,
                    "Seq": "-12", "x": 1e400}},
          {"ph": "i", "cat": "kernel"},
          {"ph": "X", "cat": 5, "name": "n\u00e9", "ts": null, "pid": "p", "args": null},
          {"ph": "X", "ts": 9223372036854775807, "args": {"Process Group Name": ["a"],
           "pg_id": 1, "stream": "", "device": "gpu", "Seq": "9223372036854775808"}},
          {"ph": "X", "args": {"Process Group Name": true, "correlation": "+0"}}
        ]}"#;
        let found = inventory(data).unwrap();
        let c = &found.columns;
        assert_eq!(c.index, vec![0, 2, 3, 4]);
        assert_eq!(text(&found, c.cat[0]), Some("kernel"));
        assert_eq!(c.cat[1], NONE, "a number is no category");
        assert_eq!(text(&found, c.name[1]), Some("né"));
        assert_eq!(
            c.ts,
            vec![Some(1.0), None, Some(9223372036854775807.0), None]
        );
        assert_eq!(c.dur, vec![Some(-2.5), None, None, None]);
        assert_eq!(c.pid, vec![Some(7), None, None, None]);
        assert_eq!(c.device, vec![Some(0), None, None, None]);
        assert_eq!(c.stream, vec![Some(31), None, None, None]);
        assert_eq!(c.correlation, vec![None, None, None, Some(0)]);
        assert_eq!(
            c.external_id,
            vec![None, None, None, None],
            "1.0 is not an integer"
        );
        assert_eq!(text(&found, c.collective[0]), Some("allreduce"));
        assert_eq!(
            text(&found, c.process_group[0]),
            Some("3"),
            "pg_id when the name is null"
        );
        assert_eq!(c.process_group[2], NONE, "a list is no group");
        assert_eq!(text(&found, c.process_group[3]), Some("True"));
        assert_eq!(c.seq, vec![Some(-12), None, None, None]);
        let (start, end) = found.distributed_info.unwrap();
        assert_eq!(&data[start..end], br#"{"rank": 1}"#);
    }

    #[test]
    fn python_reads_numeric_text_so() {
        for (text, value) in [
            ("0", Some(0)),
            ("-0", Some(0)),
            ("+42", Some(42)),
            ("0x0", Some(0)),
            ("-0X10", Some(-16)),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775808", None),
            ("0x8000000000000000", None),
            ("0x00000000000000000000000000000000001", Some(1)),
            ("-0x8000000000000000", Some(i64::MIN)),
            ("0xffffffffffffffffffffffffffffffff", None),
            ("-0xffffffffffffffffffffffffffffffff", None),
            ("340282366920938463463374607431768211455", None),
            ("-9223372036854775809", None),
            ("abc", None),
            ("", None),
            ("-", None),
            ("cuda", None),
        ] {
            assert_eq!(python_int(text), Ok(value), "{text:?}");
        }
        for text in [
            "07", " 7", "1_0", "0o7", "0b1", "1.5", "\u{663}", "x1", "0x",
        ] {
            assert!(python_int(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn what_this_reader_does_not_write_exactly_declines() {
        for data in [
            &br#"{"traceEvents": [{"ph": "X", "ph": "X"}]}"#[..],
            br#"{"traceEvents": [{"ph": "X", "args": {"Seq": 1, "Seq": 2}}]}"#,
            br#"{"traceEvents": [{"ph": "X", "args": {"pg_id": 1.5}}]}"#,
            br#"{"traceEvents": [{"ph": "X", "pid": 18446744073709551616}]}"#,
            br#"{"traceEvents": [{"ph": "X", "pid": "1_0"}]}"#,
            br#"{"traceEvents": [{"ph": "X", "ts": 1e400}]}"#,
            br#"{"traceEvents": [{"ph": "X", "cat": [1e400]}]}"#,
            br#"{"traceEvents": [{"ph": "X", "args": []}]}"#,
            br#"{"traceEvents": [1]}"#,
            br#"{"traceEvents": [{"ph": "X"}, ]}"#,
            br#"{"traceEvents": [{"ph": "X"}]"#,
            br#"{"traceEvents": {}}"#,
            br#"{"other": 1}"#,
            br#"{"traceEvents": [{"name": "\ud800"}]}"#,
        ] {
            assert!(
                inventory(data).is_err(),
                "{}",
                String::from_utf8_lossy(data)
            );
        }
        let ids = br#"{"traceEvents": [{"ph": "X", "args": {"External id": 5, "Seq": 6}}]}"#;
        let found = inventory(ids).unwrap();
        assert_eq!(
            (found.columns.external_id.get(0), found.columns.seq.get(0)),
            (Some(5), Some(6))
        );
        let booleans = br#"{"traceEvents": [{"ph": "X", "pid": false, "args": {"pg_id": false}}]}"#;
        let found = inventory(booleans).expect("a boolean is read, as a null or as Python's text");
        assert_eq!(found.columns.pid, vec![None]);
        assert_eq!(text(&found, found.columns.process_group[0]), Some("False"));
        let other = br#"{"traceEvents": [{"ph": "i", "pid": "1_0", "args": {"pg_id": 1.5}}]}"#;
        assert!(
            inventory(other).is_ok(),
            "only complete events' values are converted"
        );
        let empty = inventory(br#"{"traceEvents": []}"#).unwrap();
        assert!(empty.columns.index.is_empty());
    }
}
