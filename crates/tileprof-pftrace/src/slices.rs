//! Every slice as a SLICE_BEGIN packet then its SLICE_END packet.

use prost::encoding::{encode_key, encoded_len_varint, key_len, message, uint64, WireType};

use crate::batches::{self, Encoded};
use crate::columns::{Arg, Column};
use crate::proto::{
    DebugAnnotation, Value, ANNOTATION_DOUBLE_VALUE, ANNOTATION_INT_VALUE, ANNOTATION_NAME_IID,
    ANNOTATION_STRING_VALUE_IID, PACKET_SEQUENCE_FLAGS, PACKET_SEQUENCE_ID, PACKET_TIMESTAMP,
    PACKET_TRACK_EVENT, SEQ_NEEDS_INCREMENTAL_STATE, TRACE_PACKET_FIELD, TRACK_EVENT_CATEGORY_IIDS,
    TRACK_EVENT_DEBUG_ANNOTATIONS, TRACK_EVENT_NAME_IID, TRACK_EVENT_TRACK_UUID, TRACK_EVENT_TYPE,
    TYPE_SLICE_BEGIN, TYPE_SLICE_END,
};
use crate::ColumnError;

/// Per slice, an index into `entries`: lists of (name iid, string value iid) annotations that
/// many slices share (a sample's metadata list). A slice without an index carries none.
#[derive(Clone, Copy, Debug)]
pub struct Lists<'a> {
    pub entries: &'a [Vec<(u64, u64)>],
    pub index: Column<'a, i64>,
}

/// The slices of one packet sequence, column by column (one row per slice, in write order).
///
/// A begin packet carries the timestamp `begin`, the sequence id and
/// SEQ_NEEDS_INCREMENTAL_STATE, and a TrackEvent of type SLICE_BEGIN on `track` with the
/// interned `name`, the interned `category` (none where null), then its debug annotations:
/// `ints`, `doubles` (NaN counts as no value), `strings` (string value iids), then the row's
/// `lists` entry. The end packet carries `end` and a SLICE_END on the same track.
#[derive(Clone, Debug)]
pub struct Slices<'a> {
    pub sequence: u32,
    pub track: &'a [i64],
    pub begin: &'a [i64],
    pub end: &'a [i64],
    pub name: &'a [i64],
    pub category: Column<'a, i64>,
    pub ints: Vec<Arg<'a, i64>>,
    pub doubles: Vec<Arg<'a, f64>>,
    pub strings: Vec<Arg<'a, i64>>,
    pub lists: Option<Lists<'a>>,
}

impl Slices<'_> {
    /// Rows (the length every column must have).
    pub fn len(&self) -> usize {
        self.track.len()
    }

    pub fn is_empty(&self) -> bool {
        self.track.is_empty()
    }

    /// Every column has one value per slice, timestamps and ids are not negative, and every
    /// list index names an entry.
    pub fn check(&self) -> Result<(), ColumnError> {
        let n = self.len();
        let mut lengths = vec![
            ("begin", self.begin.len()),
            ("end", self.end.len()),
            ("name", self.name.len()),
            ("category", self.category.len()),
        ];
        lengths.extend(
            self.ints
                .iter()
                .map(|a| ("an int argument", a.column.len())),
        );
        lengths.extend(
            self.doubles
                .iter()
                .map(|a| ("a double argument", a.column.len())),
        );
        lengths.extend(
            self.strings
                .iter()
                .map(|a| ("a string argument", a.column.len())),
        );
        if let Some(lists) = &self.lists {
            lengths.push(("the list index", lists.index.len()));
        }
        if let Some((what, len)) = lengths.into_iter().find(|&(_, len)| len != n) {
            return Err(ColumnError(format!(
                "{what} has {len} rows, the tracks {n}"
            )));
        }
        for (what, values) in [
            ("track", self.track),
            ("begin", self.begin),
            ("end", self.end),
            ("name", self.name),
        ] {
            if let Some(row) = values.iter().position(|&v| v < 0) {
                return Err(ColumnError(format!("{what} is negative at row {row}")));
            }
        }
        if let Some(lists) = &self.lists {
            let count = lists.entries.len() as i64;
            if let Some(row) =
                (0..n).find(|&row| lists.index.get(row).is_some_and(|i| i < 0 || i >= count))
            {
                return Err(ColumnError(format!(
                    "list index {} at row {row} names no entry (there are {count})",
                    lists.index.values[row]
                )));
            }
        }
        Ok(())
    }

    /// The packets of rows `start..end`, each framed as a `Trace.packet` field, onto `out`.
    ///
    /// Written with prost's field encoders, field by field in tag order: the same bytes as
    /// encoding the `proto` messages (a test holds them equal), at a fraction of the cost
    /// (measured: the derived `encode` computed every nested length three times and spent
    /// about 650 ns a slice; the annotations that repeat are serialized once here).
    pub fn encode_rows(&self, start: usize, end: usize, out: &mut Vec<u8>) {
        let fragments = Fragments::of(self);
        let mut event = Vec::with_capacity(256);
        for row in start..end {
            event.clear();
            self.begin_event(row, &fragments, &mut event);
            self.packet(self.begin[row] as u64, &event, out);
            event.clear();
            encode_key(TRACK_EVENT_TYPE, WireType::Varint, &mut event);
            encode_varint(TYPE_SLICE_END as u64, &mut event);
            encode_key(TRACK_EVENT_TRACK_UUID, WireType::Varint, &mut event);
            encode_varint(self.track[row] as u64, &mut event);
            self.packet(self.end[row] as u64, &event, out);
        }
    }

    /// One TracePacket (timestamp, sequence id, the event, the flags) framed as a
    /// `Trace.packet` field.
    fn packet(&self, timestamp: u64, event: &[u8], out: &mut Vec<u8>) {
        let flags = u64::from(SEQ_NEEDS_INCREMENTAL_STATE);
        let sequence = u64::from(self.sequence);
        let len = key_len(PACKET_TIMESTAMP)
            + encoded_len_varint(timestamp)
            + key_len(PACKET_SEQUENCE_ID)
            + encoded_len_varint(sequence)
            + key_len(PACKET_TRACK_EVENT)
            + encoded_len_varint(event.len() as u64)
            + event.len()
            + key_len(PACKET_SEQUENCE_FLAGS)
            + encoded_len_varint(flags);
        encode_key(TRACE_PACKET_FIELD, WireType::LengthDelimited, out);
        encode_varint(len as u64, out);
        encode_key(PACKET_TIMESTAMP, WireType::Varint, out);
        encode_varint(timestamp, out);
        encode_key(PACKET_SEQUENCE_ID, WireType::Varint, out);
        encode_varint(sequence, out);
        encode_key(PACKET_TRACK_EVENT, WireType::LengthDelimited, out);
        encode_varint(event.len() as u64, out);
        out.extend_from_slice(event);
        encode_key(PACKET_SEQUENCE_FLAGS, WireType::Varint, out);
        encode_varint(flags, out);
    }

    /// The SLICE_BEGIN TrackEvent of `row`, fields in tag order.
    fn begin_event(&self, row: usize, fragments: &Fragments, out: &mut Vec<u8>) {
        if let Some(category) = self.category.get(row) {
            encode_key(TRACK_EVENT_CATEGORY_IIDS, WireType::Varint, out);
            encode_varint(category as u64, out);
        }
        let varint_arg = |head: &[u8], value: u64, out: &mut Vec<u8>| {
            encode_key(
                TRACK_EVENT_DEBUG_ANNOTATIONS,
                WireType::LengthDelimited,
                out,
            );
            encode_varint((head.len() + encoded_len_varint(value)) as u64, out);
            out.extend_from_slice(head);
            encode_varint(value, out);
        };
        for (arg, head) in self.ints.iter().zip(&fragments.ints) {
            if let Some(value) = arg.column.get(row) {
                varint_arg(head, value as u64, out);
            }
        }
        for (arg, head) in self.doubles.iter().zip(&fragments.doubles) {
            if let Some(value) = arg.column.get(row).filter(|v| !v.is_nan()) {
                encode_key(
                    TRACK_EVENT_DEBUG_ANNOTATIONS,
                    WireType::LengthDelimited,
                    out,
                );
                encode_varint((head.len() + 8) as u64, out);
                out.extend_from_slice(head);
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
        for (arg, head) in self.strings.iter().zip(&fragments.strings) {
            if let Some(value) = arg.column.get(row) {
                varint_arg(head, value as u64, out);
            }
        }
        if let Some(lists) = &self.lists {
            if let Some(index) = lists.index.get(row) {
                out.extend_from_slice(&fragments.lists[index as usize]);
            }
        }
        encode_key(TRACK_EVENT_TYPE, WireType::Varint, out);
        encode_varint(TYPE_SLICE_BEGIN as u64, out);
        encode_key(TRACK_EVENT_NAME_IID, WireType::Varint, out);
        encode_varint(self.name[row] as u64, out);
        encode_key(TRACK_EVENT_TRACK_UUID, WireType::Varint, out);
        encode_varint(self.track[row] as u64, out);
    }

    /// Every slice, `batch` slices to a compressed packet, batches on the current rayon pool.
    pub fn encode(&self, batch: usize, level: u32) -> Result<Encoded, ColumnError> {
        self.check()?;
        Ok(batches::compressed(
            self.len(),
            batch,
            level,
            |start, end, out| self.encode_rows(start, end, out),
        ))
    }
}

/// A base-128 varint, as prost's `encode_varint` writes it (inlined here: measured at 16% of
/// the encoder's time as a call).
#[inline(always)]
fn encode_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The serialized parts that repeat from slice to slice: per argument, its annotation's name
/// and value key (the value follows); per list, its annotations as TrackEvent fields.
struct Fragments {
    ints: Vec<Vec<u8>>,
    doubles: Vec<Vec<u8>>,
    strings: Vec<Vec<u8>>,
    lists: Vec<Vec<u8>>,
}

impl Fragments {
    fn of(slices: &Slices<'_>) -> Self {
        let head = |name_iid: u64, value_field: u32, wire: WireType| {
            let mut head = Vec::new();
            uint64::encode(ANNOTATION_NAME_IID, &name_iid, &mut head);
            encode_key(value_field, wire, &mut head);
            head
        };
        let lists = slices.lists.map_or_else(Vec::new, |lists| {
            lists
                .entries
                .iter()
                .map(|entries| {
                    let mut bytes = Vec::new();
                    for &(name, value) in entries {
                        let annotation = DebugAnnotation {
                            name_iid: Some(name),
                            value: Some(Value::StringIid(value)),
                        };
                        message::encode(TRACK_EVENT_DEBUG_ANNOTATIONS, &annotation, &mut bytes);
                    }
                    bytes
                })
                .collect()
        });
        Fragments {
            ints: slices
                .ints
                .iter()
                .map(|a| head(a.name_iid, ANNOTATION_INT_VALUE, WireType::Varint))
                .collect(),
            doubles: slices
                .doubles
                .iter()
                .map(|a| head(a.name_iid, ANNOTATION_DOUBLE_VALUE, WireType::SixtyFourBit))
                .collect(),
            strings: slices
                .strings
                .iter()
                .map(|a| head(a.name_iid, ANNOTATION_STRING_VALUE_IID, WireType::Varint))
                .collect(),
            lists,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::columns::Bits;
    use crate::proto::{TracePacket, TrackEvent};
    use prost::Message;

    /// The packets of a Trace-framed buffer, decoded by prost.
    pub(crate) fn unframe(mut bytes: &[u8]) -> Vec<TracePacket> {
        #[derive(Clone, PartialEq, Message)]
        struct Trace {
            #[prost(message, repeated, tag = "1")]
            packet: Vec<TracePacket>,
        }
        Trace::decode(&mut bytes).expect("a valid Trace").packet
    }

    /// The packets of rows `start..end` built as the derived prost messages and encoded by
    /// prost (the reference for the field-by-field writer).
    fn derived_rows(slices: &Slices<'_>, start: usize, end: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for row in start..end {
            let mut annotations = Vec::new();
            let annotation = |name: u64, value: Value| DebugAnnotation {
                name_iid: Some(name),
                value: Some(value),
            };
            for arg in &slices.ints {
                if let Some(v) = arg.column.get(row) {
                    annotations.push(annotation(arg.name_iid, Value::Int(v)));
                }
            }
            for arg in &slices.doubles {
                if let Some(v) = arg.column.get(row).filter(|v| !v.is_nan()) {
                    annotations.push(annotation(arg.name_iid, Value::Double(v)));
                }
            }
            for arg in &slices.strings {
                if let Some(v) = arg.column.get(row) {
                    annotations.push(annotation(arg.name_iid, Value::StringIid(v as u64)));
                }
            }
            if let Some(lists) = &slices.lists {
                if let Some(index) = lists.index.get(row) {
                    for &(name, value) in &lists.entries[index as usize] {
                        annotations.push(annotation(name, Value::StringIid(value)));
                    }
                }
            }
            let packet = |timestamp: i64, event: TrackEvent| TracePacket {
                timestamp: Some(timestamp as u64),
                trusted_packet_sequence_id: Some(slices.sequence),
                sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                track_event: Some(event),
                ..Default::default()
            };
            let begin = TrackEvent {
                category_iids: slices
                    .category
                    .get(row)
                    .map(|c| c as u64)
                    .into_iter()
                    .collect(),
                debug_annotations: annotations,
                r#type: Some(TYPE_SLICE_BEGIN),
                name_iid: Some(slices.name[row] as u64),
                track_uuid: Some(slices.track[row] as u64),
            };
            let end = TrackEvent {
                r#type: Some(TYPE_SLICE_END),
                track_uuid: Some(slices.track[row] as u64),
                ..Default::default()
            };
            batches::frame(&packet(slices.begin[row], begin), &mut out);
            batches::frame(&packet(slices.end[row], end), &mut out);
        }
        out
    }

    /// The packets inside the compressed packets of `packets`.
    pub(crate) fn inflate(packets: &[u8]) -> Vec<TracePacket> {
        use std::io::Read;
        let mut out = Vec::new();
        for outer in unframe(packets) {
            let mut plain = Vec::new();
            flate2::read::ZlibDecoder::new(&outer.compressed_packets.unwrap()[..])
                .read_to_end(&mut plain)
                .unwrap();
            out.extend(unframe(&plain));
        }
        out
    }

    fn sample<'a>(
        track: &'a [i64],
        times: &'a [i64],
        ints: &'a [i64],
        valid: &'a [u8],
        doubles: &'a [f64],
        lists: &'a [Vec<(u64, u64)>],
        index: &'a [i64],
    ) -> Slices<'a> {
        Slices {
            sequence: 7,
            track,
            begin: &times[..times.len() - 1],
            end: &times[1..],
            name: &track[..3],
            category: Column {
                values: track,
                valid: Some(Bits {
                    bytes: valid,
                    offset: 1,
                }),
            },
            ints: vec![Arg {
                name_iid: 5,
                column: Column::full(ints),
            }],
            doubles: vec![Arg {
                name_iid: 6,
                column: Column::full(doubles),
            }],
            strings: vec![],
            lists: Some(Lists {
                entries: lists,
                index: Column::full(index),
            }),
        }
    }

    #[test]
    fn begin_and_end_packets_carry_every_column() {
        let lists = [vec![(9, 10), (11, 12)], vec![]];
        let track = [1, 2, 300];
        let slices = sample(
            &track,
            &[0, 128, 2000, 70000],
            &[-1, 0, i64::MAX],
            &[0b0000_0100],
            &[0.5, f64::NAN, 1e300],
            &lists,
            &[0, 1, 0],
        );
        assert_eq!((slices.len(), slices.is_empty()), (3, false));
        let none = Slices {
            track: &[],
            begin: &[],
            end: &[],
            name: &[],
            ..slices.clone()
        };
        assert!(none.is_empty());
        let mut out = Vec::new();
        slices.encode_rows(0, 3, &mut out);
        assert_eq!(out, derived_rows(&slices, 0, 3));
        let packets = unframe(&out);
        assert_eq!(packets.len(), 6);
        let begin = &packets[0];
        assert_eq!(begin.timestamp, Some(0));
        assert_eq!(begin.trusted_packet_sequence_id, Some(7));
        assert_eq!(begin.sequence_flags, Some(SEQ_NEEDS_INCREMENTAL_STATE));
        let event = begin.track_event.as_ref().unwrap();
        assert_eq!(event.r#type, Some(TYPE_SLICE_BEGIN));
        assert_eq!((event.track_uuid, event.name_iid), (Some(1), Some(1)));
        assert!(event.category_iids.is_empty()); // bit 1 of the bitmap is clear
        let values: Vec<_> = event
            .debug_annotations
            .iter()
            .map(|a| (a.name_iid.unwrap(), a.value.clone().unwrap()))
            .collect();
        assert_eq!(
            values,
            [
                (5, Value::Int(-1)),
                (6, Value::Double(0.5)),
                (9, Value::StringIid(10)),
                (11, Value::StringIid(12))
            ]
        );
        let end = &packets[1];
        assert_eq!(end.timestamp, Some(128));
        let end_event = end.track_event.as_ref().unwrap();
        assert_eq!(end_event.r#type, Some(TYPE_SLICE_END));
        assert_eq!(end_event.track_uuid, Some(1));
        assert!(end_event.debug_annotations.is_empty() && end_event.name_iid.is_none());
        // row 1: category set (bit 2), NaN double left out, empty list
        let event = packets[2].track_event.as_ref().unwrap();
        assert_eq!(event.category_iids, [2]);
        assert_eq!(event.debug_annotations.len(), 1);
        assert_eq!(packets[5].timestamp, Some(70000));
        assert_eq!(
            packets[4].track_event.as_ref().unwrap().track_uuid,
            Some(300)
        );
    }

    #[test]
    fn batches_hold_the_same_packets_for_any_size_and_thread_count() {
        let n = 1000usize;
        let track: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 5000).collect();
        let times: Vec<i64> = (0..=n as i64).map(|i| i * i).collect();
        let ints: Vec<i64> = (0..n as i64).map(|i| i - 500).collect();
        let valid = vec![0b1010_1010u8; n / 8 + 2];
        let doubles: Vec<f64> = (0..n).map(|i| i as f64 / 3.0).collect();
        let lists = [vec![(1, 2)], vec![(3, 4), (5, 6)]];
        let index: Vec<i64> = (0..n as i64).map(|i| i % 2).collect();
        let mut slices = sample(&track, &times, &ints, &valid, &doubles, &lists, &index);
        slices.name = &track;
        let mut whole = Vec::new();
        slices.encode_rows(0, n, &mut whole);
        assert_eq!(whole, derived_rows(&slices, 0, n)); // byte for byte
        let expected = unframe(&whole);
        for (batch, threads) in [(1, 1), (7, 3), (64, 2), (5000, 1)] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let encoded = pool.install(|| slices.encode(batch, 1)).unwrap();
            assert_eq!(encoded.len(), n.div_ceil(batch));
            assert_eq!(inflate(&encoded.concat()), expected);
        }
    }

    #[test]
    fn bad_columns_are_errors_not_panics() {
        let lists = [vec![(1, 2)]];
        let track = [1, 2, 3];
        let times = [0, 1, 2, 3];
        let valid = [0xff];
        let mut slices = sample(
            &track,
            &times,
            &[1, 2, 3],
            &valid,
            &[0.0; 3],
            &lists,
            &[0, 1, 0],
        );
        let error = slices.check().unwrap_err();
        assert_eq!(
            error.0,
            "list index 1 at row 1 names no entry (there are 1)"
        );
        slices.lists = None;
        slices.begin = &times[..2];
        assert_eq!(
            slices.check().unwrap_err().0,
            "begin has 2 rows, the tracks 3"
        );
        slices.begin = &[0, -5, 0];
        assert_eq!(slices.check().unwrap_err().0, "begin is negative at row 1");
    }
}
