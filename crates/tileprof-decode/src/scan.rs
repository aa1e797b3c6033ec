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
pub fn summarise(block: &[u8]) -> BlockSummary {
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

/// Where blocks of about `size` bytes start in `data` (the first at 0), each moved forward past
/// any backslash before it so that no block starts inside an escape sequence.
pub fn block_starts(data: &[u8], size: usize) -> Vec<usize> {
    let size = size.max(1);
    let mut starts = vec![0];
    let mut position = size;
    while position < data.len() {
        while position < data.len() && data[position - 1] == b'\\' {
            position += 1;
        }
        if position >= data.len() {
            break;
        }
        starts.push(position);
        position += size;
    }
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
        let mut walker = Walker::new(state);
        let mut position = from;
        loop {
            let end = self.end_of(block);
            while position < end {
                if walker.step(data[position]) == CLOSE && walker.state.depth == target {
                    return Some(position);
                }
                position += 1;
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
            walker = Walker::new(self.states[block]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
