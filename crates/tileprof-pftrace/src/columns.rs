//! Typed columns as the encoder reads them: values, and which rows hold one.

/// A validity bitmap in Arrow's layout (bit `i` of byte `i / 8`, least significant first),
/// starting `offset` bits in: a column handed over through the Arrow C data interface is read
/// in place.
#[derive(Clone, Copy, Debug)]
pub struct Bits<'a> {
    pub bytes: &'a [u8],
    pub offset: usize,
}

impl Bits<'_> {
    /// Whether row `row` is set.
    #[inline]
    pub fn get(&self, row: usize) -> bool {
        let bit = row + self.offset;
        self.bytes[bit >> 3] >> (bit & 7) & 1 == 1
    }
}

/// One column: `values[row]` where `valid` (None: every row) says the row has a value.
#[derive(Clone, Copy, Debug)]
pub struct Column<'a, T> {
    pub values: &'a [T],
    pub valid: Option<Bits<'a>>,
}

impl<'a, T: Copy> Column<'a, T> {
    /// A column without nulls.
    pub fn full(values: &'a [T]) -> Self {
        Column {
            values,
            valid: None,
        }
    }

    /// The value of `row`, None when the row has none.
    #[inline]
    pub fn get(&self, row: usize) -> Option<T> {
        match self.valid {
            Some(bits) if !bits.get(row) => None,
            _ => Some(self.values[row]),
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// A debug annotation of every slice: its interned name and one column of values (a slice
/// whose row has no value carries no annotation of this name).
#[derive(Clone, Copy, Debug)]
pub struct Arg<'a, T> {
    pub name_iid: u64,
    pub column: Column<'a, T>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_read_least_significant_first_from_the_offset() {
        let bytes = [0b1010_0101, 0b0000_0110];
        let bits = Bits {
            bytes: &bytes,
            offset: 3,
        };
        // bits 3..16 of the two bytes
        let expected = [
            false, false, true, false, true, false, true, true, false, false, false, false, false,
        ];
        let got: Vec<bool> = (0..expected.len()).map(|row| bits.get(row)).collect();
        assert_eq!(got, expected);
        let column = Column {
            values: &[10, 11, 12][..],
            valid: Some(bits),
        };
        assert_eq!(
            (column.get(0), column.get(2), column.len()),
            (None, Some(12), 3)
        );
        assert_eq!(Column::full(&[7][..]).get(0), Some(7));
        assert!(!column.is_empty() && Column::<i64>::full(&[]).is_empty());
    }
}
