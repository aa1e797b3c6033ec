//! Track descriptors by the column: the overlap lanes of a trace can number as many as its
//! samples (a tile whose samples all overlap puts each one lane higher).

use crate::batches::{self, Encoded};
use crate::proto::{TracePacket, TrackDescriptor};
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

    /// The packets of rows `start..end`, framed, onto `out`.
    pub fn encode_rows(&self, start: usize, end: usize, out: &mut Vec<u8>) {
        for row in start..end {
            let packet = TracePacket {
                trusted_packet_sequence_id: Some(self.sequence),
                track_descriptor: Some(TrackDescriptor {
                    uuid: Some(self.uuid[row] as u64),
                    name: Some(self.names[self.name[row] as usize].clone()),
                    parent_uuid: Some(self.parent[row] as u64),
                    sibling_order_rank: Some(self.rank[row] as i32),
                }),
                ..Default::default()
            };
            batches::frame(&packet, out);
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
    use crate::slices::tests::unframe;

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
        let packets = unframe(&out);
        let second = packets[1].track_descriptor.as_ref().unwrap();
        assert_eq!(packets[1].trusted_packet_sequence_id, Some(1));
        assert_eq!(second.uuid, Some(200));
        assert_eq!(second.parent_uuid, Some(20));
        assert_eq!(second.sibling_order_rank, Some(-2));
        assert_eq!(second.name.as_deref(), Some("overlap 2"));
        assert!(packets[0].track_event.is_none() && packets[0].sequence_flags.is_none());
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
