//! Track descriptors by the column: the overlap lanes of a trace can number as many as its
//! samples (a tile whose samples all overlap puts each one lane higher).

use prost::encoding::{
    encode_key, encode_varint, encoded_len_varint, int32, key_len, string, uint32, uint64, WireType,
};

use crate::batches::{self, Encoded};
use crate::proto::{
    DESCRIPTOR_NAME, DESCRIPTOR_PARENT_UUID, DESCRIPTOR_SIBLING_ORDER_RANK, DESCRIPTOR_UUID,
    PACKET_SEQUENCE_ID, PACKET_TRACK_DESCRIPTOR, TRACE_PACKET_FIELD,
};
use crate::ColumnError;

/// One TrackDescriptor packet per row: `uuid`, `parent`, the name `names[name[row]]` and the
/// sibling order `rank`, on packet sequence `sequence`.
#[derive(Clone, Debug)]
pub struct Tracks<'a> {
    pub sequence: u32,
    pub uuid: &'a [i64],
    pub parent: &'a [i64],
    pub rank: &'a [i64],
    pub name: &'a [i64],
    pub names: &'a [String],
}

impl Tracks<'_> {
    pub fn len(&self) -> usize {
        self.uuid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.uuid.is_empty()
    }

    /// Equal lengths, ids not negative, ranks within int32, names that exist.
    pub fn check(&self) -> Result<(), ColumnError> {
        let n = self.len();
        for (what, values) in [
            ("parent", self.parent),
            ("rank", self.rank),
            ("name", self.name),
        ] {
            if values.len() != n {
                return Err(ColumnError(format!(
                    "{what} has {} rows, the uuids {n}",
                    values.len()
                )));
            }
        }
        let checks: [(&str, &[i64], i64, i64); 4] = [
            ("uuid", self.uuid, 0, i64::MAX),
            ("parent", self.parent, 0, i64::MAX),
            ("rank", self.rank, i64::from(i32::MIN), i64::from(i32::MAX)),
            ("name", self.name, 0, self.names.len() as i64 - 1),
        ];
        for (what, values, low, high) in checks {
            if let Some(row) = values.iter().position(|v| !(low..=high).contains(v)) {
                return Err(ColumnError(format!(
                    "{what} {} at row {row} is out of range",
                    values[row]
                )));
            }
        }
        Ok(())
    }

    /// The packets of rows `start..end`, framed, onto `out`: prost's field encoders in tag
    /// order, each name serialized once (the same bytes as the derived messages, a test
    /// holds them equal; measured: building a message with its own String per row cost
    /// 0.27 s for a million overlap tracks).
    pub fn encode_rows(&self, start: usize, end: usize, out: &mut Vec<u8>) {
        let names: Vec<Vec<u8>> = self
            .names
            .iter()
            .map(|name| {
                let mut field = Vec::new();
                string::encode(DESCRIPTOR_NAME, name, &mut field);
                field
            })
            .collect();
        let sequence = u64::from(self.sequence);
        let mut descriptor = Vec::with_capacity(64);
        for row in start..end {
            descriptor.clear();
            uint64::encode(DESCRIPTOR_UUID, &(self.uuid[row] as u64), &mut descriptor);
            descriptor.extend_from_slice(&names[self.name[row] as usize]);
            uint64::encode(
                DESCRIPTOR_PARENT_UUID,
                &(self.parent[row] as u64),
                &mut descriptor,
            );
            int32::encode(
                DESCRIPTOR_SIBLING_ORDER_RANK,
                &(self.rank[row] as i32),
                &mut descriptor,
            );
            let len = key_len(PACKET_SEQUENCE_ID)
                + encoded_len_varint(sequence)
                + key_len(PACKET_TRACK_DESCRIPTOR)
                + encoded_len_varint(descriptor.len() as u64)
                + descriptor.len();
            encode_key(TRACE_PACKET_FIELD, WireType::LengthDelimited, out);
            encode_varint(len as u64, out);
            uint32::encode(PACKET_SEQUENCE_ID, &self.sequence, out);
            encode_key(PACKET_TRACK_DESCRIPTOR, WireType::LengthDelimited, out);
            encode_varint(descriptor.len() as u64, out);
            out.extend_from_slice(&descriptor);
        }
    }

    /// Every descriptor, `batch` to a compressed packet, batches on the current rayon pool.
    pub fn encode(&self, batch: usize, level: u32) -> Result<Encoded, ColumnError> {
        self.check()?;
        Ok(batches::compressed(
            self.len(),
            batch,
            level,
            |s, e, out| self.encode_rows(s, e, out),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{TracePacket, TrackDescriptor};
    use crate::slices::tests::{inflate, unframe};

    /// The derived messages, encoded by prost: the reference for `encode_rows`.
    fn derived_rows(tracks: &Tracks<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        for row in 0..tracks.len() {
            let packet = TracePacket {
                trusted_packet_sequence_id: Some(tracks.sequence),
                track_descriptor: Some(TrackDescriptor {
                    uuid: Some(tracks.uuid[row] as u64),
                    name: Some(tracks.names[tracks.name[row] as usize].clone()),
                    parent_uuid: Some(tracks.parent[row] as u64),
                    sibling_order_rank: Some(tracks.rank[row] as i32),
                }),
                ..Default::default()
            };
            batches::frame(&packet, &mut out);
        }
        out
    }

    #[test]
    fn each_row_is_one_descriptor() {
        let names = ["overlap".to_owned(), "overlap 2".to_owned()];
        let tracks = Tracks {
            sequence: 1,
            uuid: &[100, 200],
            parent: &[10, 20],
            rank: &[1, -2],
            name: &[0, 1],
            names: &names,
        };
        let mut out = Vec::new();
        tracks.encode_rows(0, 2, &mut out);
        assert_eq!(out, derived_rows(&tracks));
        let packets = unframe(&out);
        let second = packets[1].track_descriptor.as_ref().unwrap();
        assert_eq!(packets[1].trusted_packet_sequence_id, Some(1));
        assert_eq!(second.uuid, Some(200));
        assert_eq!(second.parent_uuid, Some(20));
        assert_eq!(second.sibling_order_rank, Some(-2));
        assert_eq!(second.name.as_deref(), Some("overlap 2"));
        assert!(packets[0].track_event.is_none() && packets[0].sequence_flags.is_none());
        assert_eq!((tracks.len(), tracks.is_empty()), (2, false));
        assert!(Tracks {
            uuid: &[],
            ..tracks
        }
        .is_empty());
    }

    #[test]
    fn encode_compresses_every_descriptor_in_batches() {
        let names = ["overlap".to_owned()];
        let uuid: Vec<i64> = (100..105).collect();
        let tracks = Tracks {
            sequence: 3,
            uuid: &uuid,
            parent: &[1; 5],
            rank: &[0, 1, 2, 3, 4],
            name: &[0; 5],
            names: &names,
        };
        let encoded = tracks.encode(2, 1).unwrap();
        assert_eq!(encoded.len(), 3);
        assert_eq!(inflate(&encoded.concat()), unframe(&derived_rows(&tracks)));
        let bad = Tracks {
            rank: &[0, 1, 2, 3, i64::from(i32::MAX) + 1],
            ..tracks
        };
        assert_eq!(
            bad.encode(2, 1).unwrap_err().0,
            "rank 2147483648 at row 4 is out of range"
        );
    }

    #[test]
    fn a_name_out_of_range_is_an_error() {
        let names = ["overlap".to_owned()];
        let tracks = Tracks {
            sequence: 1,
            uuid: &[100],
            parent: &[10],
            rank: &[1],
            name: &[1],
            names: &names,
        };
        assert_eq!(
            tracks.check().unwrap_err().0,
            "name 1 at row 0 is out of range"
        );
    }
}
