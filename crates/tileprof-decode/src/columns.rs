//! The typed columns samples decode into, and the dictionaries that intern their text.
//!
//! Each thread fills its own `Columns` with its own dictionaries (no locks in the hot loop);
//! `Columns::append` then joins them in file order, remapping each part's dictionary ids so that
//! ids follow the order of first appearance in the whole file, as a single pass would give.

use std::borrow::Cow;
use std::hash::Hash;

use hashbrown::HashMap;

use crate::fast::{self, RawSample};
use crate::sample::Sample;
use crate::DecodeError;

/// The id of an absent value in a dictionary-encoded column.
pub const NONE: u32 = u32::MAX;

/// Memory that must be left over whenever the columns grow (checked, then given back): the
/// small allocations that cannot fail softly are made in it. Measured under `RLIMIT_AS`: with
/// 32 MiB a decode thread still aborted now and then on an allocation of 144 bytes, since
/// glibc gives a thread's arena a new heap by mapping 128 MiB (twice its 64 MiB, to align it).
pub const SLACK_BYTES: usize = 160 << 20;

/// Whether `bytes` can be had now: reserved and given back at once. The probe is kept from the
/// optimizer (`black_box`): an allocation that is never used may be elided, and was, after an
/// unrelated change, so that the probe passed under any limit.
pub fn room_for(bytes: usize) -> Result<(), std::collections::TryReserveError> {
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes)?;
    std::hint::black_box(&mut probe);
    Ok(())
}

/// Distinct values in the order first seen, and each value's id.
#[derive(Debug, Clone)]
pub struct Dictionary<K: Eq + Hash> {
    index: HashMap<K, u32>,
    pub values: Vec<K>,
}

impl<K: Eq + Hash> Default for Dictionary<K> {
    fn default() -> Self {
        Dictionary {
            index: HashMap::new(),
            values: Vec::new(),
        }
    }
}

impl<K: Eq + Hash + Clone> Dictionary<K> {
    /// The id of `value`, adding it when new (`make` builds the owned key only then). The
    /// room for a new value is reserved fallibly: a file of millions of distinct names that
    /// does not fit is an error, not an abort.
    #[inline]
    pub fn intern<Q>(&mut self, value: &Q, make: impl FnOnce(&Q) -> K) -> Result<u32, DecodeError>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(&id) = self.index.get(value) {
            return Ok(id);
        }
        self.values.try_reserve(1)?;
        self.index.try_reserve(1)?;
        let id = self.values.len() as u32;
        let key = make(value);
        self.values.push(key.clone());
        self.index.insert(key, id);
        Ok(id)
    }

    /// The id of `value`, when it is here.
    #[inline]
    pub fn get<Q>(&self, value: &Q) -> Option<u32>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.index.get(value).copied()
    }

    /// Add every value of `other`; returns, for each of its ids, the id here.
    pub fn absorb(&mut self, other: &Dictionary<K>) -> Result<Vec<u32>, DecodeError> {
        let mut ids = Vec::new();
        ids.try_reserve_exact(other.values.len())?;
        for value in &other.values {
            ids.push(self.intern(value, K::clone)?);
        }
        Ok(ids)
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// A dictionary-encoded text column: ids into `dictionary` (`NONE` where absent). The values
/// are kept as bytes, so the fast path looks raw bytes up; each is UTF-8 (checked when added).
#[derive(Debug, Default, Clone)]
pub struct TextColumn {
    pub ids: Vec<u32>,
    pub dictionary: Dictionary<Box<[u8]>>,
    /// For each value, whether it holds a control character (it came from an escape, and the
    /// same bytes written raw in a string are refused).
    control: Vec<bool>,
}

fn has_control(text: &[u8]) -> bool {
    text.iter().any(|&b| b < 0x20)
}

/// A value's id when it is already in a dictionary, `NONE` when there is no value, or `NEW`
/// when it is a valid value to add.
const NEW: u32 = u32::MAX - 1;

impl TextColumn {
    /// Add one value (`Columns::room` reserved its id's place).
    #[inline]
    fn push(&mut self, value: Option<&str>) -> Result<(), DecodeError> {
        let id = match value {
            Some(text) => self.intern(text.as_bytes())?,
            None => NONE,
        };
        self.ids.push(id);
        Ok(())
    }

    #[inline]
    fn intern(&mut self, text: &[u8]) -> Result<u32, DecodeError> {
        let id = self.dictionary.intern(text, |t: &[u8]| Box::from(t))?;
        if id as usize == self.control.len() {
            self.control.try_reserve(1)?;
            self.control.push(has_control(text));
        }
        Ok(id)
    }

    /// The id of a fast-path text (`NEW`: not here yet, and valid); None when not valid.
    ///
    /// Always inlined: LLVM's choice for it moved with unrelated changes to the crate, and a
    /// `find` called out of `push_raw` (or a dictionary lookup called out of `find`) cost the
    /// fast path ~13M instructions on a 200k-sample dump (callgrind).
    #[inline(always)]
    fn find(&self, text: &Option<Cow<'_, [u8]>>, known: Option<&TextColumn>) -> Option<u32> {
        let Some(text) = text else {
            return Some(NONE);
        };
        // The dictionaries hold decoded text: a raw string found there is UTF-8, but it may
        // match a value that had escaped control characters, which serde_json refuses raw.
        let raw = matches!(text, Cow::Borrowed(_));
        match self.dictionary.get(text.as_ref()) {
            Some(id) if raw && self.control[id as usize] => None,
            Some(id) => Some(id),
            None => match known.and_then(|k| Some((k, k.dictionary.get(text.as_ref())?))) {
                Some((known, id)) => (!(raw && known.control[id as usize])).then_some(NEW),
                None => fast::text_is_valid(text).then_some(NEW),
            },
        }
    }

    #[inline]
    fn push_found(&mut self, text: &Option<Cow<'_, [u8]>>, found: u32) -> Result<(), DecodeError> {
        let id = match text {
            Some(text) if found == NEW => self.intern(text)?,
            _ => found,
        };
        self.ids.push(id);
        Ok(())
    }

    /// Add `other`'s values after these (`Columns::append` reserved the ids' room).
    fn append(&mut self, other: TextColumn) -> Result<(), DecodeError> {
        let remap = self.dictionary.absorb(&other.dictionary)?;
        let added = &self.dictionary.values[self.control.len()..];
        self.control.try_reserve(added.len())?;
        self.control
            .extend(added.iter().map(|value| has_control(value)));
        self.ids.extend(
            other
                .ids
                .iter()
                .map(|&id| if id == NONE { NONE } else { remap[id as usize] }),
        );
        Ok(())
    }
}

/// A nullable 64-bit integer column.
#[derive(Debug, Default, Clone)]
pub struct IntColumn {
    pub values: Vec<i64>,
    pub valid: Vec<bool>,
    pub nulls: usize,
}

impl IntColumn {
    #[inline]
    fn push(&mut self, value: Option<i64>) {
        self.values.push(value.unwrap_or(0));
        self.valid.push(value.is_some());
        self.nulls += usize::from(value.is_none());
    }

    /// Add `other`'s values after these (`Columns::append` reserved the room).
    fn append(&mut self, other: IntColumn) {
        self.values.extend_from_slice(&other.values);
        self.valid.extend_from_slice(&other.valid);
        self.nulls += other.nulls;
    }
}

/// Every column of the sample frame, as decoded (the metadata lists interned by raw text).
///
/// Every row column grows only through `try_reserve` (`room`, `try_reserve_rows`, `append`):
/// how many samples a file holds is the file's to say, so running out of memory for them is a
/// `DecodeError::Memory`, not an abort ("memory allocation failed", SIGABRT). `rows` is the
/// room every row column has (the least of their capacities), checked once a sample.
#[derive(Debug, Default, Clone)]
pub struct Columns {
    pub tile: Vec<i64>,
    pub offset: Vec<i64>,
    pub duration: Vec<i64>,
    pub phase: IntColumn,
    pub epoch: IntColumn,
    pub kind: TextColumn,
    pub operation: TextColumn,
    pub kernel: TextColumn,
    /// Ids into `metadata` (`NONE`: no metadata).
    pub metadata_ids: Vec<u32>,
    /// The distinct raw metadata texts, in the order first seen.
    pub metadata: Dictionary<Box<[u8]>>,
    /// Samples every row column has room for.
    rows: usize,
}

impl Columns {
    pub fn len(&self) -> usize {
        self.tile.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tile.is_empty()
    }

    /// Room for one more sample in every row column: grown (doubling) with `try_reserve`.
    #[inline]
    fn room(&mut self) -> Result<(), DecodeError> {
        if self.len() < self.rows {
            return Ok(());
        }
        self.try_reserve_rows(self.len().max(1024))
    }

    /// The least capacity of the row columns (what `room` may fill without a reallocation).
    fn settle(&mut self) {
        let texts = [&self.kind, &self.operation, &self.kernel];
        self.rows = [&self.tile, &self.offset, &self.duration]
            .iter()
            .map(|column| column.capacity())
            .chain(
                [&self.phase, &self.epoch]
                    .iter()
                    .flat_map(|c| [c.values.capacity(), c.valid.capacity()]),
            )
            .chain(texts.iter().map(|column| column.ids.capacity()))
            .chain([self.metadata_ids.capacity()])
            .min()
            .unwrap_or(0);
    }

    /// Add one sample.
    #[inline]
    pub fn push(&mut self, sample: &Sample<'_>) -> Result<(), DecodeError> {
        self.room()?;
        let metadata = match sample.metadata {
            Some(raw) => self
                .metadata
                .intern(raw.as_bytes(), |r: &[u8]| Box::from(r))?,
            None => NONE,
        };
        self.tile.push(sample.tile);
        self.offset.push(sample.offset);
        self.duration.push(sample.duration);
        self.phase.push(sample.phase);
        self.epoch.push(sample.epoch);
        self.kind.push(sample.kind.as_deref())?;
        self.operation.push(sample.operation.as_deref())?;
        self.kernel.push(sample.kernel.as_deref())?;
        self.metadata_ids.push(metadata);
        Ok(())
    }

    /// Add one sample read by the fast path, checking each text and metadata value the first
    /// time it is seen (here or in `known`, columns whose values were all checked); false (and
    /// nothing added) when one is not valid.
    #[inline]
    pub fn push_raw(
        &mut self,
        sample: &RawSample<'_>,
        known: Option<&Columns>,
    ) -> Result<bool, DecodeError> {
        self.push_raw_with_id(sample, known, None)
    }

    /// `push_raw`, `metadata_id` being the id here of the sample's metadata when the caller
    /// looked it up already (the NDJSON reader, to take a known value without walking it).
    #[inline]
    pub fn push_raw_with_id(
        &mut self,
        sample: &RawSample<'_>,
        known: Option<&Columns>,
        metadata_id: Option<u32>,
    ) -> Result<bool, DecodeError> {
        let (Some(kind), Some(operation), Some(kernel)) = (
            self.kind.find(&sample.kind, known.map(|k| &k.kind)),
            self.operation
                .find(&sample.operation, known.map(|k| &k.operation)),
            self.kernel.find(&sample.kernel, known.map(|k| &k.kernel)),
        ) else {
            return Ok(false);
        };
        let checked = |raw: &[u8]| {
            known.is_some_and(|k| k.metadata.get(raw).is_some()) || fast::value_is_valid(raw)
        };
        let metadata = match sample.metadata {
            None => NONE,
            Some(raw) => match metadata_id.or_else(|| self.metadata.get(raw)) {
                Some(id) => id,
                None if checked(raw) => self.metadata.intern(raw, |r: &[u8]| Box::from(r))?,
                None => return Ok(false),
            },
        };
        self.room()?;
        self.tile.push(sample.tile);
        self.offset.push(sample.offset);
        self.duration.push(sample.duration);
        self.phase.push(sample.phase);
        self.epoch.push(sample.epoch);
        self.kind.push_found(&sample.kind, kind)?;
        self.operation.push_found(&sample.operation, operation)?;
        self.kernel.push_found(&sample.kernel, kernel)?;
        self.metadata_ids.push(metadata);
        Ok(true)
    }

    /// Add `other`'s samples after these, its dictionaries merged into these. The columns are
    /// copied on the current rayon pool's threads, a few columns each.
    ///
    /// Measured on the 5M-sample NDJSON dump (2 threads): copied in turn on one thread, the
    /// appends were 0.38 s of a 4.0 s decode during which the other thread waited.
    pub fn append(&mut self, other: Columns) -> Result<(), DecodeError> {
        if self.len() + other.len() > self.rows {
            self.try_reserve_rows(other.len().max(self.len()))?;
        }
        let Columns {
            tile,
            offset,
            duration,
            phase,
            epoch,
            kind,
            operation,
            kernel,
            metadata_ids,
            metadata,
            rows: _,
        } = other;
        let (integers, rest) = (
            (&mut self.tile, &mut self.offset, &mut self.duration),
            (&mut self.phase, &mut self.epoch),
        );
        let texts = (&mut self.kind, &mut self.operation, &mut self.kernel);
        let ids = (&mut self.metadata, &mut self.metadata_ids);
        let (kinds, others) = rayon::join(
            || {
                rayon::join(
                    || {
                        integers.0.extend_from_slice(&tile);
                        integers.1.extend_from_slice(&offset);
                    },
                    || {
                        integers.2.extend_from_slice(&duration);
                        rest.0.append(phase);
                    },
                )
            },
            || {
                rayon::join(
                    || {
                        rest.1.append(epoch);
                        texts.0.append(kind)
                    },
                    || {
                        texts.1.append(operation)?;
                        texts.2.append(kernel)?;
                        let remap = ids.0.absorb(&metadata)?;
                        ids.1.extend(metadata_ids.iter().map(|&id| {
                            if id == NONE {
                                NONE
                            } else {
                                remap[id as usize]
                            }
                        }));
                        Ok(())
                    },
                )
            },
        )
        .1;
        self.settle();
        kinds.and(others)
    }

    /// Give back the room the columns grew into but do not use.
    pub fn shrink_to_fit(&mut self) {
        for column in [&mut self.tile, &mut self.offset, &mut self.duration] {
            column.shrink_to_fit();
        }
        for column in [&mut self.phase, &mut self.epoch] {
            column.values.shrink_to_fit();
            column.valid.shrink_to_fit();
        }
        for column in [&mut self.kind, &mut self.operation, &mut self.kernel] {
            column.ids.shrink_to_fit();
        }
        self.metadata_ids.shrink_to_fit();
        self.settle();
    }

    /// Room for `rows` more samples in every column, reserved exactly, or the error saying
    /// that memory ran out (nothing aborts).
    pub fn try_reserve_rows(&mut self, rows: usize) -> Result<(), DecodeError> {
        let outcome = self.try_reserve_each(rows).and_then(|()| {
            // What the decode allocates infallibly (a new name, a rayon job) is small; room
            // for it is kept: columns that took the last of the address space would leave
            // those to abort.
            room_for(SLACK_BYTES)
        });
        if outcome.is_err() {
            *self = Columns::default(); // what the columns took is given back first
        }
        self.settle();
        outcome.map_err(|_| DecodeError::Memory("the sample columns could not grow"))
    }

    fn try_reserve_each(&mut self, rows: usize) -> Result<(), std::collections::TryReserveError> {
        for column in [&mut self.tile, &mut self.offset, &mut self.duration] {
            column.try_reserve_exact(rows)?;
        }
        for column in [&mut self.phase, &mut self.epoch] {
            column.values.try_reserve_exact(rows)?;
            column.valid.try_reserve_exact(rows)?;
        }
        for column in [&mut self.kind, &mut self.operation, &mut self.kernel] {
            column.ids.try_reserve_exact(rows)?;
        }
        self.metadata_ids.try_reserve_exact(rows)
    }

    /// All parts joined in order. The result is sized once and each part is dropped as soon as
    /// it is copied, so the join holds the columns plus one part, not twice the columns.
    pub fn join(parts: Vec<Columns>) -> Result<Columns, DecodeError> {
        let rows = parts.iter().map(Columns::len).sum();
        let mut joined = Columns::default();
        joined.try_reserve_rows(rows)?;
        for part in parts {
            joined.append(part)?;
        }
        Ok(joined)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::decode_line;

    fn columns(lines: &[&str]) -> Columns {
        let mut columns = Columns::default();
        for line in lines {
            columns
                .push(&decode_line(line.as_bytes()).unwrap())
                .unwrap();
        }
        columns
    }

    const A: &str = r#"{"physicalTile":0,"offset":0,"duration":1,"kernel":"a","metadata":[1]}"#;
    const B: &str = r#"{"physicalTile":1,"offset":2,"duration":1,"kernel":"b","phase":4}"#;
    const C: &str = r#"{"physicalTile":2,"offset":3,"duration":1,"kernel":"a","metadata":[ 1]}"#;

    #[test]
    fn room_is_had_or_refused() {
        assert!(room_for(1 << 20).is_ok());
        assert!(room_for(usize::MAX / 2).is_err());
    }

    #[test]
    fn interning_follows_first_appearance() {
        let joined = columns(&[A, B, C, B]);
        assert_eq!(joined.kernel.ids, vec![0, 1, 0, 1]);
        assert_eq!(joined.metadata_ids, vec![0, NONE, 1, NONE]);
        assert_eq!(joined.metadata.values[1].as_ref(), b"[ 1]");
        assert_eq!(joined.phase.valid, vec![false, true, false, true]);
    }

    #[test]
    fn a_raw_control_character_is_refused_even_when_its_escaped_twin_was_seen() {
        let escaped = r#"{"physicalTile":0,"offset":0,"duration":1,"kind":"a\nb"}"#;
        let raw = "{\"physicalTile\":0,\"offset\":0,\"duration\":1,\"kind\":\"a\nb\"}";
        let mut columns = Columns::default();
        assert!(columns
            .push_raw(&fast::line(escaped.as_bytes()).unwrap(), None)
            .unwrap());
        let sample = fast::line(raw.as_bytes()).unwrap();
        assert!(!columns.push_raw(&sample, None).unwrap());
        assert!(!Columns::default()
            .push_raw(&sample, Some(&columns))
            .unwrap());
        assert!(decode_line(raw.as_bytes()).is_err());
        assert_eq!(columns.len(), 1);
    }

    #[test]
    fn a_text_seen_before_is_found_again_on_the_fast_path() {
        // "a b" has a space (0x20, not a control character); "a\nb" came from an escape
        let spaced = r#"{"physicalTile":0,"offset":0,"duration":1,"kind":"a b"}"#;
        let escaped = r#"{"physicalTile":0,"offset":0,"duration":1,"kind":"a\nb"}"#;
        let mut columns = Columns::default();
        for line in [spaced, spaced, escaped, escaped] {
            let sample = fast::line(line.as_bytes()).unwrap();
            assert!(columns.push_raw(&sample, None).unwrap(), "{line}");
        }
        assert_eq!(columns.kind.ids, [0, 0, 1, 1]);
        let sample = fast::line(spaced.as_bytes()).unwrap();
        assert!(Columns::default()
            .push_raw(&sample, Some(&columns))
            .unwrap());
        let dictionary = &columns.kind.dictionary;
        assert_eq!((dictionary.len(), dictionary.is_empty()), (2, false));
        assert!(Dictionary::<Box<[u8]>>::default().is_empty());
    }

    #[test]
    fn joined_parts_equal_one_pass() {
        let whole = columns(&[A, B, C, B, A]);
        let parts = Columns::join(vec![columns(&[B]), columns(&[]), columns(&[C, B, A])]).unwrap();
        let expected = Columns::join(vec![columns(&[B, C, B, A])]).unwrap();
        assert_eq!(parts.kernel.ids, expected.kernel.ids);
        assert_eq!(parts.metadata_ids, expected.metadata_ids);
        let two = Columns::join(vec![columns(&[A, B]), columns(&[C, B, A])]).unwrap();
        assert_eq!(two.kernel.ids, whole.kernel.ids);
        assert_eq!(two.kernel.dictionary.values, whole.kernel.dictionary.values);
        assert_eq!(two.metadata_ids, whole.metadata_ids);
        assert_eq!(two.offset, whole.offset);
    }

    #[test]
    fn columns_grow_with_room_checked_and_keep_slack() {
        let mut grown = Columns::default();
        for _ in 0..3000 {
            grown.push(&decode_line(A.as_bytes()).unwrap()).unwrap();
            assert!(grown.rows >= grown.len());
            assert!(grown.metadata_ids.capacity() >= grown.rows);
        }
        // More room than any address space: the error, and the columns given back.
        let error = grown.try_reserve_rows(usize::MAX / 64).unwrap_err();
        assert_eq!(
            error,
            DecodeError::Memory("the sample columns could not grow")
        );
        assert!(grown.is_empty());
    }
}
