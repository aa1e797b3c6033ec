//! One sample as the dumps write it, decoded by serde_json with borrowed text.
//!
//! The rules are those of the dump format (`tileprof/inputs/records.py`): `physicalTile`,
//! `offset` and `duration` are required integers (a tile at most 2^31 - 1, times at most 2^62),
//! `phase` and `epoch` optional 64-bit integers, `kind`, `operation` and `kernel` optional
//! strings, `metadata` any JSON value kept as its raw text. Unknown keys are skipped; `null`
//! is the same as absent for every optional field; a key given twice keeps its last value.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Largest tile index a dump may state.
pub const MAX_TILE: i64 = (1 << 31) - 1;
/// Largest offset or duration a dump may state.
pub const MAX_CYCLES: i64 = 1 << 62;

/// One decoded sample; text borrows from the input unless it had escapes.
#[derive(Debug, Default, PartialEq)]
pub struct Sample<'a> {
    pub tile: i64,
    pub offset: i64,
    pub duration: i64,
    pub phase: Option<i64>,
    pub epoch: Option<i64>,
    pub kind: Option<Cow<'a, str>>,
    pub operation: Option<Cow<'a, str>>,
    pub kernel: Option<Cow<'a, str>>,
    /// The raw text of the metadata value; None when absent or `null`.
    pub metadata: Option<&'a str>,
}

/// A string that borrows from the input when it can.
struct Text<'a>(Cow<'a, str>);

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

/// A sample's field, by its name (shared with the fast path, `fast.rs`).
#[derive(Clone, Copy)]
pub(crate) enum Key {
    Tile,
    Offset,
    Duration,
    Phase,
    Epoch,
    Kind,
    Operation,
    Kernel,
    Metadata,
    Other,
}

/// The field a key names; every other name is `Other` (skipped).
#[inline]
pub(crate) fn key_of(name: &[u8]) -> Key {
    match name {
        b"physicalTile" => Key::Tile,
        b"offset" => Key::Offset,
        b"duration" => Key::Duration,
        b"phase" => Key::Phase,
        b"epoch" => Key::Epoch,
        b"kind" => Key::Kind,
        b"operation" => Key::Operation,
        b"kernel" => Key::Kernel,
        b"metadata" => Key::Metadata,
        _ => Key::Other,
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(key_of(v.as_bytes()))
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

fn bounded<E: de::Error>(value: i64, max: i64, field: &str) -> Result<i64, E> {
    if value > max {
        return Err(E::custom(format_args!("{field}: {value} is above {max}")));
    }
    Ok(value)
}

fn text(value: Option<Text<'_>>) -> Option<Cow<'_, str>> {
    value.map(|t| t.0)
}

struct SampleVisitor;

impl<'de> Visitor<'de> for SampleVisitor {
    type Value = Sample<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sample object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sample<'de>, A::Error> {
        let mut sample = Sample::default();
        let (mut tile, mut offset, mut duration) = (None, None, None);
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Tile => tile = Some(map.next_value::<i64>()?),
                Key::Offset => offset = Some(map.next_value::<i64>()?),
                Key::Duration => duration = Some(map.next_value::<i64>()?),
                Key::Phase => sample.phase = map.next_value()?,
                Key::Epoch => sample.epoch = map.next_value()?,
                Key::Kind => sample.kind = text(map.next_value()?),
                Key::Operation => sample.operation = text(map.next_value()?),
                Key::Kernel => sample.kernel = text(map.next_value()?),
                Key::Metadata => {
                    let raw: &'de RawValue = map.next_value()?;
                    let raw = raw.get();
                    sample.metadata = (raw != "null").then_some(raw);
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let missing = |field| de::Error::missing_field(field);
        sample.tile = bounded(
            tile.ok_or_else(|| missing("physicalTile"))?,
            MAX_TILE,
            "physicalTile",
        )?;
        sample.offset = bounded(
            offset.ok_or_else(|| missing("offset"))?,
            MAX_CYCLES,
            "offset",
        )?;
        sample.duration = bounded(
            duration.ok_or_else(|| missing("duration"))?,
            MAX_CYCLES,
            "duration",
        )?;
        Ok(sample)
    }
}

impl<'de> Deserialize<'de> for Sample<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SampleVisitor)
    }
}

fn first_sample<'a, R: serde_json::de::Read<'a>>(
    deserializer: serde_json::Deserializer<R>,
) -> Result<(Sample<'a>, usize), serde_json::Error> {
    let mut stream = deserializer.into_iter::<Sample<'a>>();
    match stream.next() {
        Some(Ok(sample)) => Ok((sample, stream.byte_offset())),
        Some(Err(error)) => Err(error),
        None => Err(serde::de::Error::custom(
            "the input ends where a sample should start",
        )),
    }
}

/// Decode the sample that starts at `data[0]`; returns it and the number of bytes it took.
pub fn decode_at(data: &[u8]) -> Result<(Sample<'_>, usize), serde_json::Error> {
    first_sample(serde_json::Deserializer::from_slice(data))
}

/// Decode one whole line (white space around it allowed, nothing else).
pub fn decode_line(line: &[u8]) -> Result<Sample<'_>, serde_json::Error> {
    serde_json::from_slice(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_field_of_another_type_says_a_string_was_expected() {
        let line = br#"{"physicalTile": 0, "offset": 0, "duration": 1, "kind": 7}"#;
        let error = decode_line(line).unwrap_err();
        assert!(error.to_string().contains("expected a string"), "{error}");
    }

    #[test]
    fn fields_text_and_metadata_decode() {
        let line = br#"{"kernel": "g\u00e9mm", "physicalTile": 3, "offset": 10, "duration": 5,
            "phase": null, "epoch": 2, "kind": "compute", "extra": {"a": [1]},
            "metadata": [{"name": "usefulCycles", "value": "4"}]}"#;
        let sample = decode_line(line).unwrap();
        assert_eq!(sample.tile, 3);
        assert_eq!((sample.offset, sample.duration), (10, 5));
        assert_eq!((sample.phase, sample.epoch), (None, Some(2)));
        assert_eq!(sample.kernel.as_deref(), Some("gémm"));
        assert!(matches!(sample.kind, Some(Cow::Borrowed("compute"))));
        assert_eq!(
            sample.metadata,
            Some(r#"[{"name": "usefulCycles", "value": "4"}]"#)
        );
    }

    #[test]
    fn null_metadata_is_absent_and_duplicates_keep_the_last() {
        let sample = decode_line(
            br#"{"physicalTile":1,"offset":1,"duration":1,"offset":7,"metadata":null}"#,
        )
        .unwrap();
        assert_eq!(sample.offset, 7);
        assert_eq!(sample.metadata, None);
    }

    #[test]
    fn bad_samples_are_errors() {
        for line in [
            &br#"{"offset":1,"duration":1}"#[..],
            br#"{"physicalTile":"1","offset":1,"duration":1}"#,
            br#"{"physicalTile":1.5,"offset":1,"duration":1}"#,
            br#"{"physicalTile":2147483648,"offset":1,"duration":1}"#,
            br#"{"physicalTile":1,"offset":4611686018427387905,"duration":1}"#,
            br#"{"physicalTile":1,"offset":1,"duration":1,"phase":9223372036854775808}"#,
            br#"{"physicalTile":1,"offset":1,"duration":1,"kind":3}"#,
            br#"[1, 2]"#,
            br#"{"physicalTile":1,"offset":1,"duration":1"#,
        ] {
            assert!(
                decode_line(line).is_err(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn decode_at_says_where_the_sample_ends() {
        let data = br#"{"physicalTile":1,"offset":1,"duration":1} , {"x"#;
        let (_, end) = decode_at(data).unwrap();
        assert_eq!(&data[end..end + 2], b" ,");
    }
}
