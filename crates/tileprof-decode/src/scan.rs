//! The structural scan: where strings and containers are, found without decoding.
//!
//! A JSON document is cut into blocks that threads scan independently. A block cannot know on
//! its own whether it starts inside a string, so it counts for both cases at once: the string
//! state at every byte is the state at the block's start flipped by each unescaped quote before
//! it, so one pass with one toggling flag serves both assumptions (a bracket seen "outside" under
//! one assumption is "inside" under the other). A prefix over the blocks' quote parities then
//! says which assumption was right for each block, and so its depth at its start.
//!
//! Escapes: a quote is escaped when an odd run of backslashes precedes it. Backslashes are only
//! legal inside strings, so the rule needs no string state. Block starts are moved past any
//! backslash, so no block starts in the middle of an escape.
//!
//! The scan is only ever a guide: every sample it points at is decoded by serde_json, and the
//! bytes between samples are checked, so a wrong guess (on invalid JSON) is an error, never a
//! wrong frame.

/// What one block does to the scanner's state, for both possible string states at its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockSummary {
    /// Whether the block holds an odd number of unescaped quotes (it flips the string state).
    pub flips: bool,
    /// Net depth change over the block: `[0]` when it starts outside a string, `[1]` inside.
    pub delta: [i64; 2],
    /// Lowest depth reached inside the block, relative to its start, for both assumptions.
    pub low: [i64; 2],
}

/// The scanner's state at a position: inside a string or not, and the container depth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct State {
    pub in_string: bool,
    pub depth: i64,
}

const OTHER: u8 = 0;
const QUOTE: u8 = 1;
const BACKSLASH: u8 = 2;
const OPEN: u8 = 3;
const CLOSE: u8 = 4;

const fn classes() -> [u8; 256] {
    let mut table = [OTHER; 256];
    table[b'"' as usize] = QUOTE;
    table[b'\\' as usize] = BACKSLASH;
    table[b'{' as usize] = OPEN;
    table[b'[' as usize] = OPEN;
    table[b'}' as usize] = CLOSE;
    table[b']' as usize] = CLOSE;
    table
}

static CLASS: [u8; 256] = classes();

/// Summarise one block (which must not start right after a backslash; see `block_starts`).
///
/// 64 bytes at a time, as bit masks (the technique of simdjson's stage 1, in portable Rust that
/// the compiler vectorises): a mask per kind of byte, the escaped positions from the runs of
/// backslashes, the in-string mask as the prefix XOR of the unescaped quotes, then the brackets
/// outside strings walked bit by bit for the depth. Measured: about 4× the byte loop
/// (`summarise_plain`), which was a third of a one-thread decode.
pub fn summarise(block: &[u8]) -> BlockSummary {
    let mut summary = BlockSummary::default();
    let mut carry = Carry::default();
    let mut depth = [0i64; 2];
    let mut chunks = block.chunks_exact(64);
    for chunk in &mut chunks {
        let chunk: &[u8; 64] = chunk.try_into().expect("chunks_exact gives 64 bytes");
        carry.chunk(chunk, &mut depth, &mut summary.low);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut padded = [b' '; 64];
        padded[..rest.len()].copy_from_slice(rest);
        carry.chunk(&padded, &mut depth, &mut summary.low);
    }
    summary.flips = carry.in_string != 0;
    summary.delta = depth;
    summary
}

/// What one 64-byte chunk hands the next.
#[derive(Default)]
struct Carry {
    /// 1 when the chunk before ended in an odd run of backslashes (the next byte is escaped).
    odd_backslash: u64,
    /// All ones when the chunk before ended inside a string (relative to the block's start).
    in_string: u64,
}

const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// Masks of one 64-byte chunk: (quotes, backslashes, `{` or `[`, `}` or `]`).
#[cfg(target_arch = "x86_64")]
#[inline]
fn masks(chunk: &[u8; 64]) -> [u64; 4] {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // `{` and `[` (and `}` and `]`) differ only in bit 0x20: one compare finds both.
    const WANTED: [u8; 4] = [b'"', b'\\', b'{', b'}'];
    const FOLD: [u8; 4] = [0, 0, 0x20, 0x20];
    let mut found = [0u64; 4];
    // SAFETY: SSE2 is part of every x86_64 CPU (the target's baseline), and each load reads the
    // 16 bytes 16 * part .. 16 * part + 16 of the 64-byte array, unaligned. Measured with
    // callgrind on a 5 MB dump: the byte-by-byte masks made the scan cost 4× serde_json's whole
    // validating pass; these cost a fraction of it.
    unsafe {
        for part in 0..4 {
            let bytes = _mm_loadu_si128(chunk.as_ptr().add(16 * part).cast());
            for kind in 0..4 {
                let folded = _mm_or_si128(bytes, _mm_set1_epi8(FOLD[kind] as i8));
                let hits =
                    _mm_movemask_epi8(_mm_cmpeq_epi8(folded, _mm_set1_epi8(WANTED[kind] as i8)));
                found[kind] |= u64::from(hits as u16) << (16 * part);
            }
        }
    }
    found
}

/// Masks of one 64-byte chunk: (quotes, backslashes, `{` or `[`, `}` or `]`).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn masks(chunk: &[u8; 64]) -> [u64; 4] {
    let mut found = [0u64; 4];
    for (index, &byte) in chunk.iter().enumerate() {
        found[0] |= u64::from(byte == b'"') << index;
        found[1] |= u64::from(byte == b'\\') << index;
        found[2] |= u64::from(byte | 0x20 == b'{') << index;
        found[3] |= u64::from(byte | 0x20 == b'}') << index;
    }
    found
}

#[inline]
fn prefix_xor(mut bits: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        bits ^= bits << shift;
    }
    bits
}

impl Carry {
    /// The positions escaped by a backslash (the byte after an odd run of them).
    #[inline]
    fn escaped(&mut self, backslash: u64) -> u64 {
        let starts = backslash & !(backslash << 1);
        let even_start_mask = EVEN_BITS ^ self.odd_backslash;
        let even_starts = starts & even_start_mask;
        let odd_starts = starts & !even_start_mask;
        let even_carries = backslash.wrapping_add(even_starts);
        let (odd_carries, overflow) = backslash.overflowing_add(odd_starts);
        let odd_carries = odd_carries | self.odd_backslash;
        self.odd_backslash = u64::from(overflow);
        let even_start_odd_end = even_carries & !backslash & !EVEN_BITS;
        let odd_start_even_end = odd_carries & !backslash & EVEN_BITS;
        even_start_odd_end | odd_start_even_end
    }

    #[inline]
    fn chunk(&mut self, chunk: &[u8; 64], depth: &mut [i64; 2], low: &mut [i64; 2]) {
        let [quotes, backslashes, opens, closes] = masks(chunk);
        let escaped = self.escaped(backslashes);
        let inside = prefix_xor(quotes & !escaped) ^ self.in_string;
        self.in_string = ((inside >> 63) & 1).wrapping_neg();
        let (opens, closes) = (opens & !escaped, closes & !escaped);
        // Outside a string under assumption 0 where `inside` is clear; under 1 where it is set.
        for (which, outside) in [!inside, inside].into_iter().enumerate() {
            let (mut brackets, opened) = ((opens | closes) & outside, opens & outside);
            if opened == brackets {
                depth[which] += i64::from(opened.count_ones());
                continue;
            }
            while brackets != 0 {
                let bit = brackets & brackets.wrapping_neg();
                if opened & bit != 0 {
                    depth[which] += 1;
                } else {
                    depth[which] -= 1;
                    low[which] = low[which].min(depth[which]);
                }
                brackets ^= bit;
            }
        }
    }
}

/// The first position in `from..to` of a bracket, outside strings, that closes down to depth
/// `target`, walking from `state` at `from` (which must not follow a backslash). 64 bytes at a
/// time with the masks of `summarise`: measured with callgrind on a 45 MB dump, the byte walk of
/// the first and last blocks to find the samples array's end was a tenth of a one-thread decode.
pub fn close_in(data: &[u8], from: usize, to: usize, state: State, target: i64) -> Option<usize> {
    let to = to.min(data.len());
    let mut carry = Carry {
        odd_backslash: 0,
        in_string: if state.in_string { u64::MAX } else { 0 },
    };
    let mut depth = state.depth;
    let mut start = from;
    while start < to {
        let length = (to - start).min(64);
        let mut chunk = [b' '; 64];
        chunk[..length].copy_from_slice(&data[start..start + length]);
        let [quotes, backslashes, opens, closes] = masks(&chunk);
        let escaped = carry.escaped(backslashes);
        let inside = prefix_xor(quotes & !escaped) ^ carry.in_string;
        carry.in_string = ((inside >> 63) & 1).wrapping_neg();
        let opens = opens & !escaped & !inside;
        let closes = closes & !escaped & !inside;
        if depth - i64::from(closes.count_ones()) > target {
            depth += i64::from(opens.count_ones()) - i64::from(closes.count_ones());
        } else {
            let mut brackets = opens | closes;
            while brackets != 0 {
                let bit = brackets & brackets.wrapping_neg();
                if opens & bit != 0 {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == target {
                        return Some(start + bit.trailing_zeros() as usize);
                    }
                }
                brackets ^= bit;
            }
        }
        start += length;
    }
    None
}

/// The block start at or after `nominal`: moved forward past any backslash before it, so that
/// no block starts inside an escape sequence, and past UTF-8 continuation bytes, so that each
/// block's text can be checked as UTF-8 on its own. 0 stays 0; `data.len()` when none is left.
pub fn block_start(data: &[u8], nominal: usize) -> usize {
    let mut position = nominal.min(data.len());
    while position > 0
        && position < data.len()
        && (data[position - 1] == b'\\' || data[position] & 0xC0 == 0x80)
    {
        position += 1;
    }
    position
}

/// Where blocks of about `size` bytes start in `data` (the first at 0; see `block_start`).
pub fn block_starts(data: &[u8], size: usize) -> Vec<usize> {
    let size = size.max(1);
    let mut starts: Vec<usize> = (0..data.len().max(1))
        .step_by(size)
        .map(|nominal| block_start(data, nominal))
        .collect();
    starts.dedup();
    starts.retain(|&start| start == 0 || start < data.len());
    starts
}

/// The state at each block's start, from the summaries (the first block starts at `first`).
pub fn block_states(summaries: &[BlockSummary], first: State) -> Vec<State> {
    let mut states = Vec::with_capacity(summaries.len());
    let mut state = first;
    for summary in summaries {
        states.push(state);
        let which = usize::from(state.in_string);
        state = State {
            in_string: state.in_string ^ summary.flips,
            depth: state.depth + summary.delta[which],
        };
    }
    states
}

/// A walker over bytes from a known state: tracks strings, escapes and depth.
#[derive(Clone, Copy, Debug)]
pub struct Walker {
    pub state: State,
    escaped: bool,
}

impl Walker {
    pub fn new(state: State) -> Self {
        Walker {
            state,
            escaped: false,
        }
    }

    /// Take one byte; returns its class when it is a bracket outside a string (OPEN or CLOSE),
    /// after the depth has been updated, and OTHER otherwise.
    #[inline]
    pub fn step(&mut self, byte: u8) -> u8 {
        if self.escaped {
            self.escaped = false;
            return OTHER;
        }
        match CLASS[byte as usize] {
            QUOTE => self.state.in_string = !self.state.in_string,
            BACKSLASH => self.escaped = true,
            OPEN if !self.state.in_string => {
                self.state.depth += 1;
                return OPEN;
            }
            CLOSE if !self.state.in_string => {
                self.state.depth -= 1;
                return CLOSE;
            }
            _ => {}
        }
        OTHER
    }
}

/// The first position in `from..to` where a container opens at `depth` (the depth before the
/// bracket) outside a string, walking from `state` at `from`.
pub fn first_open_at(
    data: &[u8],
    from: usize,
    to: usize,
    state: State,
    depth: i64,
) -> Option<usize> {
    let mut walker = Walker::new(state);
    for (position, &byte) in data.iter().enumerate().take(to.min(data.len())).skip(from) {
        let before = walker.state.depth;
        if walker.step(byte) == OPEN && before == depth {
            return Some(position);
        }
    }
    None
}

/// The blocks of one document: their starts, summaries and the state at each start.
pub struct Blocks {
    pub starts: Vec<usize>,
    pub summaries: Vec<BlockSummary>,
    pub states: Vec<State>,
    pub len: usize,
}

impl Blocks {
    /// The block holding `position`.
    pub fn block_of(&self, position: usize) -> usize {
        self.starts.partition_point(|&start| start <= position) - 1
    }

    fn end_of(&self, block: usize) -> usize {
        self.starts.get(block + 1).copied().unwrap_or(self.len)
    }

    /// The position of the bracket that closes the container opened just before `from` (where the
    /// walk is in `state`, inside it), skipping whole blocks whose depth never gets that low.
    pub fn close_of(&self, data: &[u8], from: usize, state: State) -> Option<usize> {
        let target = state.depth - 1;
        let mut block = self.block_of(from);
        let mut position = from;
        let mut state = state;
        loop {
            let end = self.end_of(block);
            // Skip the rest of a block whose depth never gets down to the target.
            let start = self.states[block];
            let low = start.depth + self.summaries[block].low[usize::from(start.in_string)];
            if low <= target {
                if let Some(close) = close_in(data, position, end, state, target) {
                    return Some(close);
                }
            }
            block += 1;
            while block < self.starts.len() {
                let start = self.states[block];
                let which = usize::from(start.in_string);
                if start.depth + self.summaries[block].low[which] <= target {
                    break;
                }
                block += 1;
            }
            if block >= self.starts.len() {
                return None;
            }
            position = self.starts[block];
            state = self.states[block];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `summarise`, one byte at a time: the definition the fast one is tested against.
    fn summarise_plain(block: &[u8]) -> BlockSummary {
        let mut summary = BlockSummary::default();
        let mut toggled = false; // the string state relative to the block's start
        let mut escaped = false;
        let mut depth = [0i64; 2];
        for &byte in block {
            if escaped {
                escaped = false;
                continue;
            }
            match CLASS[byte as usize] {
                QUOTE => toggled = !toggled,
                BACKSLASH => escaped = true,
                class @ (OPEN | CLOSE) => {
                    // Outside a string under assumption 0 exactly when not toggled; under 1 when toggled.
                    let which = usize::from(toggled);
                    if class == OPEN {
                        depth[which] += 1;
                    } else {
                        depth[which] -= 1;
                        summary.low[which] = summary.low[which].min(depth[which]);
                    }
                }
                _ => {}
            }
        }
        summary.flips = toggled;
        summary.delta = depth;
        summary
    }

    /// Bytes from a small alphabet of structure, by xorshift (no dependency).
    fn random_bytes(seed: &mut u64, len: usize) -> Vec<u8> {
        const ALPHABET: &[u8] = b"\\\\\"\"{}[]a ";
        (0..len)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                ALPHABET[(*seed % ALPHABET.len() as u64) as usize]
            })
            .collect()
    }

    #[test]
    fn the_fast_summary_equals_the_byte_loop() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        for len in (0..300).chain([511, 512, 513, 1000, 4096]) {
            for _ in 0..20 {
                let block = random_bytes(&mut seed, len);
                let text = String::from_utf8_lossy(&block);
                assert_eq!(summarise(&block), summarise_plain(&block), "{text:?}");
            }
        }
    }

    fn blocks_of(data: &[u8], size: usize) -> Blocks {
        let starts = block_starts(data, size);
        let summaries: Vec<BlockSummary> = starts
            .iter()
            .enumerate()
            .map(|(i, &s)| summarise(&data[s..starts.get(i + 1).copied().unwrap_or(data.len())]))
            .collect();
        let states = block_states(&summaries, State::default());
        Blocks {
            starts,
            summaries,
            states,
            len: data.len(),
        }
    }

    /// The state at every position by a plain walk from the start, to hold the blocks to.
    fn walk_states(data: &[u8]) -> Vec<State> {
        let mut walker = Walker::new(State::default());
        let mut states = Vec::new();
        for &byte in data {
            states.push(walker.state);
            walker.step(byte);
        }
        states
    }

    const AWKWARD: &[u8] =
        br#"{"a": "},{\"physicalTile\": 1}", "b": [1, {"c": "\\"}, "\\\"[["], "d": {}}"#;

    #[test]
    fn block_states_equal_a_plain_walk_for_every_block_size() {
        let truth = walk_states(AWKWARD);
        for size in 1..AWKWARD.len() + 2 {
            let blocks = blocks_of(AWKWARD, size);
            for (block, &start) in blocks.starts.iter().enumerate() {
                assert_eq!(
                    blocks.states[block], truth[start],
                    "size {size}, block {block}"
                );
            }
        }
    }

    #[test]
    fn block_starts_never_follow_a_backslash() {
        let data = br#""\\\\\\\\\\\\\\\\\\\\\\\\"#;
        for size in 1..8 {
            for &start in &block_starts(data, size) {
                assert!(
                    start == 0 || data[start - 1] != b'\\',
                    "size {size}, start {start}"
                );
            }
        }
    }

    #[test]
    fn every_block_starts_inside_the_text_once() {
        // Nominal starts every `size` bytes, each moved past an escape or a UTF-8 character;
        // one moved to the end of the text is no block (an empty last block is work for
        // nothing), and two moved to the same place are one block (2 and 4 past `\\\b`).
        assert_eq!(block_starts(b"abcdef", 2), vec![0, 2, 4]);
        assert_eq!(block_starts(br"a\\\", 2), vec![0]);
        assert_eq!(block_starts(br"a\\\bc", 2), vec![0, 5]);
        assert_eq!(block_starts("aé".as_bytes(), 2), vec![0]);
        assert_eq!(block_starts(b"", 4), vec![0]);
    }

    #[test]
    fn quotes_inside_strings_and_escaped_quotes_are_not_structure() {
        let summary = summarise(br#""{[\"]}""#);
        assert_eq!(summary.delta, [0, 0]);
        assert!(!summary.flips);
        let summary = summarise(br#"a", {"#);
        // starting inside a string, the quote closes it and the brace opens a container
        assert_eq!(summary.delta[1], 1);
        assert_eq!(summary.delta[0], 0);
        assert!(summary.flips);
    }

    #[test]
    fn close_of_finds_the_matching_bracket_across_blocks() {
        for size in 1..AWKWARD.len() + 2 {
            let blocks = blocks_of(AWKWARD, size);
            let open = AWKWARD.iter().position(|&b| b == b'[').unwrap();
            let state = State {
                in_string: false,
                depth: 2,
            };
            let close = blocks.close_of(AWKWARD, open + 1, state).unwrap();
            assert_eq!(&AWKWARD[close..close + 1], b"]", "size {size}");
            assert_eq!(&AWKWARD[close + 1..close + 3], b", ");
        }
    }

    #[test]
    fn close_in_equals_a_plain_walk() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for len in [1, 10, 63, 64, 65, 130, 700] {
            for _ in 0..50 {
                let data = random_bytes(&mut seed, len);
                let start = State {
                    in_string: false,
                    depth: 3,
                };
                for target in [0, 1, 2] {
                    let mut walker = Walker::new(start);
                    let expected = data.iter().position(|&byte| {
                        walker.step(byte) == CLOSE && walker.state.depth == target
                    });
                    let found = close_in(&data, 0, data.len(), start, target);
                    assert_eq!(found, expected, "{:?}", String::from_utf8_lossy(&data));
                }
            }
        }
    }

    #[test]
    fn first_open_at_skips_brackets_in_strings_and_deeper_levels() {
        let data = br#"[ "{", [{}], {"x": "{"}]"#;
        let state = State {
            in_string: false,
            depth: 1,
        };
        assert_eq!(first_open_at(data, 1, data.len(), state, 1), Some(7));
        assert_eq!(first_open_at(data, 12, data.len(), state, 1), Some(13));
    }
}
