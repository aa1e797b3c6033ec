//! The subset of Perfetto's trace protos that slice and track packets use, as prost messages.
//!
//! Field numbers and types are Perfetto's (proto2, so repeated scalars are not packed); each
//! field cites the proto file of the Perfetto repository that defines it. Only the fields
//! tileprof writes are declared: a message with fewer fields encodes the same bytes.

use prost::{Message, Oneof};

/// `protos/perfetto/trace/trace.proto`: `repeated TracePacket packet = 1;` of `Trace`. A file is
/// a `Trace`, so each packet is written as this field, one after another.
pub const TRACE_PACKET_FIELD: u32 = 1;

// The field numbers again, for the hot path that writes fields with prost's encoding helpers
// (`slices`); a test below holds each to the derived message's encoding.
/// TracePacket.timestamp (trace_packet.proto).
pub const PACKET_TIMESTAMP: u32 = 8;
/// TracePacket.trusted_packet_sequence_id (trace_packet.proto).
pub const PACKET_SEQUENCE_ID: u32 = 10;
/// TracePacket.track_event (trace_packet.proto).
pub const PACKET_TRACK_EVENT: u32 = 11;
/// TracePacket.sequence_flags (trace_packet.proto).
pub const PACKET_SEQUENCE_FLAGS: u32 = 13;
/// TracePacket.track_descriptor (trace_packet.proto).
pub const PACKET_TRACK_DESCRIPTOR: u32 = 60;
/// TrackDescriptor.uuid (track_descriptor.proto).
pub const DESCRIPTOR_UUID: u32 = 1;
/// TrackDescriptor.name (track_descriptor.proto).
pub const DESCRIPTOR_NAME: u32 = 2;
/// TrackDescriptor.parent_uuid (track_descriptor.proto).
pub const DESCRIPTOR_PARENT_UUID: u32 = 5;
/// TrackDescriptor.sibling_order_rank (track_descriptor.proto).
pub const DESCRIPTOR_SIBLING_ORDER_RANK: u32 = 12;
/// TrackEvent.category_iids (track_event.proto).
pub const TRACK_EVENT_CATEGORY_IIDS: u32 = 3;
/// TrackEvent.debug_annotations (track_event.proto).
pub const TRACK_EVENT_DEBUG_ANNOTATIONS: u32 = 4;
/// TrackEvent.type (track_event.proto).
pub const TRACK_EVENT_TYPE: u32 = 9;
/// TrackEvent.name_iid (track_event.proto).
pub const TRACK_EVENT_NAME_IID: u32 = 10;
/// TrackEvent.track_uuid (track_event.proto).
pub const TRACK_EVENT_TRACK_UUID: u32 = 11;
/// DebugAnnotation.name_iid (debug_annotation.proto).
pub const ANNOTATION_NAME_IID: u32 = 1;
/// DebugAnnotation.int_value (debug_annotation.proto).
pub const ANNOTATION_INT_VALUE: u32 = 4;
/// DebugAnnotation.double_value (debug_annotation.proto).
pub const ANNOTATION_DOUBLE_VALUE: u32 = 5;
/// DebugAnnotation.string_value_iid (debug_annotation.proto).
pub const ANNOTATION_STRING_VALUE_IID: u32 = 17;

/// `protos/perfetto/trace/trace_packet.proto`: `TracePacket.SequenceFlags`.
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// `protos/perfetto/trace/trace_packet.proto`: `message TracePacket`.
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    /// trace_packet.proto: `optional uint64 timestamp = 8;`
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// trace_packet.proto: `uint32 trusted_packet_sequence_id = 10;` (in `optional_trusted_packet_sequence_id`)
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// trace_packet.proto: `TrackEvent track_event = 11;` (in the `data` oneof)
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// trace_packet.proto: `optional uint32 sequence_flags = 13;`
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// trace_packet.proto: `bytes compressed_packets = 50;` (in the `data` oneof)
    #[prost(bytes = "vec", optional, tag = "50")]
    pub compressed_packets: Option<Vec<u8>>,
    /// trace_packet.proto: `TrackDescriptor track_descriptor = 60;` (in the `data` oneof)
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `protos/perfetto/trace/track_event/track_event.proto`: `TrackEvent.Type`.
pub const TYPE_SLICE_BEGIN: i32 = 1;
/// `protos/perfetto/trace/track_event/track_event.proto`: `TrackEvent.Type`.
pub const TYPE_SLICE_END: i32 = 2;

/// `protos/perfetto/trace/track_event/track_event.proto`: `message TrackEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    /// track_event.proto: `repeated uint64 category_iids = 3;`
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub category_iids: Vec<u64>,
    /// track_event.proto: `repeated DebugAnnotation debug_annotations = 4;`
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// track_event.proto: `optional Type type = 9;`
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// track_event.proto: `uint64 name_iid = 10;` (in the `name_field` oneof)
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    /// track_event.proto: `optional uint64 track_uuid = 11;`
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
}

/// `protos/perfetto/trace/track_event/debug_annotation.proto`: `message DebugAnnotation`.
#[derive(Clone, PartialEq, Message)]
pub struct DebugAnnotation {
    /// debug_annotation.proto: `uint64 name_iid = 1;` (in the `name_field` oneof)
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    /// debug_annotation.proto: the `value` oneof.
    #[prost(oneof = "Value", tags = "4, 5, 17")]
    pub value: Option<Value>,
}

/// `protos/perfetto/trace/track_event/debug_annotation.proto`: the `value` oneof of
/// `DebugAnnotation`.
#[derive(Clone, PartialEq, Oneof)]
pub enum Value {
    /// debug_annotation.proto: `int64 int_value = 4;`
    #[prost(int64, tag = "4")]
    Int(i64),
    /// debug_annotation.proto: `double double_value = 5;`
    #[prost(double, tag = "5")]
    Double(f64),
    /// debug_annotation.proto: `uint64 string_value_iid = 17;`
    #[prost(uint64, tag = "17")]
    StringIid(u64),
}

/// `protos/perfetto/trace/track_event/track_descriptor.proto`: `message TrackDescriptor`.
#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    /// track_descriptor.proto: `optional uint64 uuid = 1;`
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// track_descriptor.proto: `string name = 2;` (in the `static_or_dynamic_name` oneof)
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// track_descriptor.proto: `optional uint64 parent_uuid = 5;`
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// track_descriptor.proto: `optional int32 sibling_order_rank = 12;`
    #[prost(int32, optional, tag = "12")]
    pub sibling_order_rank: Option<i32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::encoding::{decode_key, WireType};

    /// The field number of the one field `message` sets.
    fn only_field(message: &impl Message) -> u32 {
        let bytes = message.encode_to_vec();
        let (tag, _): (u32, WireType) = decode_key(&mut &bytes[..]).unwrap();
        tag
    }

    #[test]
    fn the_constants_are_the_derived_field_numbers() {
        let packet = |f: fn(&mut TracePacket)| {
            let mut p = TracePacket::default();
            f(&mut p);
            only_field(&p)
        };
        assert_eq!(packet(|p| p.timestamp = Some(1)), PACKET_TIMESTAMP);
        assert_eq!(
            packet(|p| p.trusted_packet_sequence_id = Some(1)),
            PACKET_SEQUENCE_ID
        );
        assert_eq!(
            packet(|p| p.track_event = Some(TrackEvent::default())),
            PACKET_TRACK_EVENT
        );
        assert_eq!(
            packet(|p| p.sequence_flags = Some(1)),
            PACKET_SEQUENCE_FLAGS
        );
        let event = |f: fn(&mut TrackEvent)| {
            let mut e = TrackEvent::default();
            f(&mut e);
            only_field(&e)
        };
        assert_eq!(
            event(|e| e.category_iids = vec![1]),
            TRACK_EVENT_CATEGORY_IIDS
        );
        assert_eq!(
            event(|e| e.debug_annotations = vec![DebugAnnotation::default()]),
            TRACK_EVENT_DEBUG_ANNOTATIONS
        );
        assert_eq!(event(|e| e.r#type = Some(1)), TRACK_EVENT_TYPE);
        assert_eq!(event(|e| e.name_iid = Some(1)), TRACK_EVENT_NAME_IID);
        assert_eq!(event(|e| e.track_uuid = Some(1)), TRACK_EVENT_TRACK_UUID);
        let annotation = |name_iid: Option<u64>, value: Option<Value>| {
            only_field(&DebugAnnotation { name_iid, value })
        };
        assert_eq!(annotation(Some(1), None), ANNOTATION_NAME_IID);
        assert_eq!(annotation(None, Some(Value::Int(1))), ANNOTATION_INT_VALUE);
        assert_eq!(
            annotation(None, Some(Value::Double(1.0))),
            ANNOTATION_DOUBLE_VALUE
        );
        assert_eq!(
            annotation(None, Some(Value::StringIid(1))),
            ANNOTATION_STRING_VALUE_IID
        );
    }
}
