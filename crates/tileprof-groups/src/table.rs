//! Every statistic of the group table the crate computes: what a pass in row order adds up
//! (`rows::RowPass`), then, group by group on threads, what needs a group's rows together.

use arrow_buffer::NullBuffer;
use rayon::prelude::*;

use crate::distinct::{range_of, DistinctCounter};
use crate::ranks::nearest_ranks;
use crate::rows::{group_of_rows, RowPass};
use crate::union::union_length;
use crate::ColumnError;

/// The sample columns the statistics read, one value per frame row. `offset`, `duration`
/// and `tile` have no nulls; `phase`, `useful` (usefulCycles) and `physical`
/// (physicalWorkCycles) have a value where their validity says so (None: every row).
#[derive(Clone, Copy, Debug)]
pub struct Samples<'a> {
    pub offset: &'a [i64],
    pub duration: &'a [i64],
    pub tile: &'a [i64],
    pub phase: &'a [i64],
    pub phase_valid: Option<&'a NullBuffer>,
    pub useful: &'a [f64],
    pub useful_valid: Option<&'a NullBuffer>,
    pub physical: &'a [f64],
    pub physical_valid: Option<&'a NullBuffer>,
}

/// The groups as row lists, the layout of an Arrow large list: group `g` is
/// `rows[starts[g]..starts[g + 1]]`, its frame rows in frame order (`starts` has one more
/// entry than there are groups).
#[derive(Clone, Copy, Debug)]
pub struct GroupRows<'a> {
    pub starts: &'a [i64],
    pub rows: &'a [u32],
}

/// One value per group for each statistic (definitions: docs/metrics.md, "Groups").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupTable {
    pub sample_count: Vec<i64>,
    pub tile_count: Vec<i64>,
    pub phase_count: Vec<i64>,
    /// The union of the group's intervals.
    pub phase_cycles: Vec<i64>,
    pub work_cycles: Vec<i64>,
    /// The durations of the samples that carry usefulCycles.
    pub estimated_work_cycles: Vec<i64>,
    /// Σ usefulCycles and Σ physicalWorkCycles of the samples that carry them, added in row
    /// order (0.0 when none does).
    pub useful_cycles: Vec<f64>,
    pub physical_work_cycles: Vec<f64>,
    /// Per percentile asked for, its nearest-rank duration.
    pub percentile_cycles: Vec<Vec<i64>>,
    pub maximum_cycles: Vec<i64>,
    pub first_offset: Vec<i64>,
    pub last_offset: Vec<i64>,
}

/// The figures of one group, before they are put in columns.
struct GroupFigures {
    counts: [i64; 3],
    union: (i64, i64, i64),
    sums: [i64; 2],
    float_sums: [f64; 2],
    maximum: i64,
    percentiles: Vec<i64>,
}

/// What a thread reuses from one group to the next.
#[derive(Clone)]
struct Scratch {
    tiles: DistinctCounter,
    phases: DistinctCounter,
    durations: Vec<i64>,
    pairs: Vec<(i64, i64)>,
}

/// Every group's statistics, on the current rayon pool; the same whatever its size.
/// `percents`: ascending, each in 1..=100.
///
/// One pass in row order adds up what it can (`rows::RowPass`); then each group's durations
/// are read through its rows for the percentiles, on threads, with the union redone from a
/// sort for a group whose rows are not in start order and the distinct values counted where
/// the row pass kept no bitmap.
pub fn group_statistics(
    samples: &Samples,
    groups: &GroupRows,
    percents: &[u32],
) -> Result<GroupTable, ColumnError> {
    check(samples, groups, percents)?;
    let count = groups.starts.len() - 1;
    let group_of = group_of_rows(groups.starts, groups.rows, samples.offset.len())?;
    let tile_range = range_of(samples.tile.iter().copied());
    let phases = (0..samples.phase.len()).filter(|&r| has_value(samples.phase_valid, r));
    let phase_range = range_of(phases.map(|r| samples.phase[r]));
    let pass = RowPass::run(samples, &group_of, count, tile_range, phase_range);
    drop(group_of);
    // a column the row pass counted needs no counter here
    let unless = |counted: bool, range| if counted { None } else { range };
    let scratch = Scratch {
        tiles: DistinctCounter::new(unless(pass.counted_tiles, tile_range)),
        phases: DistinctCounter::new(unless(pass.counted_phases, phase_range)),
        durations: Vec::new(),
        pairs: Vec::new(),
    };
    let figures: Vec<GroupFigures> = (0..count)
        .into_par_iter()
        .map_init(
            || scratch.clone(),
            |scratch, group| {
                let bounds = groups.starts[group] as usize..groups.starts[group + 1] as usize;
                one_group(
                    samples,
                    &groups.rows[bounds],
                    group,
                    &pass,
                    percents,
                    scratch,
                )
            },
        )
        .collect();
    Ok(table(figures, percents.len()))
}

/// Group `group`'s figures: the row pass's, and what needs the group's rows together.
fn one_group(
    samples: &Samples,
    rows: &[u32],
    group: usize,
    pass: &RowPass,
    percents: &[u32],
    scratch: &mut Scratch,
) -> GroupFigures {
    scratch.durations.clear();
    let durations = rows.iter().map(|&row| samples.duration[row as usize]);
    scratch.durations.extend(durations);
    let mut percentiles = Vec::with_capacity(percents.len());
    nearest_ranks(&mut scratch.durations, percents, &mut percentiles);
    let sums = &pass.groups[group];
    let union = sums.sweep.finish().unwrap_or_else(|| {
        union_length(rows, samples.offset, samples.duration, &mut scratch.pairs)
    });
    let tiles = match pass.counted_tiles {
        true => sums.tiles,
        false => scratch
            .tiles
            .count(rows.iter().map(|&r| samples.tile[r as usize])),
    };
    let phases = match pass.counted_phases {
        true => sums.phases,
        false => {
            let rows = rows
                .iter()
                .filter(|&&r| has_value(samples.phase_valid, r as usize));
            scratch
                .phases
                .count(rows.map(|&r| samples.phase[r as usize]))
        }
    };
    GroupFigures {
        counts: [rows.len() as i64, tiles, phases],
        union,
        sums: [sums.work, sums.estimated],
        float_sums: [sums.useful, sums.physical],
        maximum: sums.maximum,
        percentiles,
    }
}

/// Whether `row` has a value, by a column's validity (None: every row has one).
#[inline]
pub(crate) fn has_value(valid: Option<&NullBuffer>, row: usize) -> bool {
    valid.is_none_or(|bits| bits.is_valid(row))
}

/// Every column as long as the frame, the lists inside `rows` and every row inside the frame,
/// the list starts ascending (no group is empty), the percents ascending in 1..=100.
fn check(samples: &Samples, groups: &GroupRows, percents: &[u32]) -> Result<(), ColumnError> {
    let n = samples.offset.len();
    let lengths = [
        ("duration", samples.duration.len()),
        ("tile", samples.tile.len()),
        ("phase", samples.phase.len()),
        ("usefulCycles", samples.useful.len()),
        ("physicalWorkCycles", samples.physical.len()),
    ];
    if let Some((name, len)) = lengths.into_iter().find(|&(_, len)| len != n) {
        return Err(ColumnError(format!("{name} has {len} rows, offset {n}")));
    }
    for (name, bits) in [
        ("phase", samples.phase_valid),
        ("usefulCycles", samples.useful_valid),
        ("physicalWorkCycles", samples.physical_valid),
    ] {
        if bits.is_some_and(|b| b.len() != n) {
            return Err(ColumnError(format!(
                "{name}'s validity is not {n} rows long"
            )));
        }
    }
    let starts = groups.starts;
    let inside = |start: &i64| (0..=groups.rows.len() as i64).contains(start);
    if starts.is_empty() || !inside(&starts[0]) || !inside(&starts[starts.len() - 1]) {
        return Err(ColumnError("the row lists reach past their rows".into()));
    }
    if let Some(group) = starts.windows(2).position(|w| w[1] <= w[0]) {
        return Err(ColumnError(format!("group {group} has no rows")));
    }
    if let Some(row) = groups.rows.iter().find(|&&row| row as usize >= n) {
        return Err(ColumnError(format!(
            "row {row} is not in the frame of {n} rows"
        )));
    }
    let in_range = percents.iter().all(|p| (1..=100).contains(p));
    if !in_range || percents.windows(2).any(|w| w[1] < w[0]) {
        return Err(ColumnError(format!(
            "percents {percents:?} are not ascending in 1..=100"
        )));
    }
    Ok(())
}

/// The groups' figures as columns.
fn table(figures: Vec<GroupFigures>, percentiles: usize) -> GroupTable {
    let mut table = GroupTable {
        percentile_cycles: vec![Vec::with_capacity(figures.len()); percentiles],
        ..GroupTable::default()
    };
    for group in figures {
        table.sample_count.push(group.counts[0]);
        table.tile_count.push(group.counts[1]);
        table.phase_count.push(group.counts[2]);
        let (union, first, last) = group.union;
        table.phase_cycles.push(union);
        table.first_offset.push(first);
        table.last_offset.push(last);
        table.work_cycles.push(group.sums[0]);
        table.estimated_work_cycles.push(group.sums[1]);
        table.useful_cycles.push(group.float_sums[0]);
        table.physical_work_cycles.push(group.float_sums[1]);
        table.maximum_cycles.push(group.maximum);
        for (column, value) in table.percentile_cycles.iter_mut().zip(group.percentiles) {
            column.push(value);
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples<'a>(
        offset: &'a [i64],
        duration: &'a [i64],
        tile: &'a [i64],
        phase: &'a [i64],
    ) -> Samples<'a> {
        // no usefulCycles or physicalWorkCycles: zeros (a test's frames live as long as it)
        let zeros: &'a [f64] = Box::leak(vec![0.0; offset.len()].into_boxed_slice());
        Samples {
            offset,
            duration,
            tile,
            phase,
            phase_valid: None,
            useful: zeros,
            useful_valid: None,
            physical: zeros,
            physical_valid: None,
        }
    }

    #[test]
    fn each_group_reads_its_own_rows() {
        // group 0: rows 0, 2, 3; group 1: rows 1, 4
        let offset = [0, 5, 4, 30, 6];
        let duration = [10, 1, 2, 5, 100];
        let tile = [3, 3, 3, 4, 9];
        let phase = [1, 1, 7, 7, 2];
        let useful = NullBuffer::from(vec![true, false, false, true, true]);
        let phase_valid = NullBuffer::from(vec![true, true, false, true, true]);
        let physical_valid = NullBuffer::from(vec![false, true, true, true, false]);
        let frame = Samples {
            phase_valid: Some(&phase_valid),
            useful: &[0.1, 9.0, 9.0, 0.2, 0.5],
            useful_valid: Some(&useful),
            physical: &[9.0, 1.5, 0.25, 0.125, 9.0],
            physical_valid: Some(&physical_valid),
            ..samples(&offset, &duration, &tile, &phase)
        };
        let groups = GroupRows {
            starts: &[0, 3, 5],
            rows: &[0, 2, 3, 1, 4],
        };
        let table = group_statistics(&frame, &groups, &[50, 95]).unwrap();
        assert_eq!(table.sample_count, [3, 2]);
        assert_eq!(table.tile_count, [2, 2]);
        assert_eq!(table.phase_count, [2, 2]); // row 2's phase is null
        assert_eq!(table.phase_cycles, [15, 101]);
        assert_eq!(table.work_cycles, [17, 101]);
        assert_eq!(table.estimated_work_cycles, [15, 100]);
        assert_eq!(table.useful_cycles, [0.1 + 0.2, 0.5]);
        assert_eq!(table.physical_work_cycles, [0.25 + 0.125, 1.5]);
        assert_eq!(table.percentile_cycles, [vec![5, 1], vec![10, 100]]);
        assert_eq!(table.maximum_cycles, [10, 100]);
        assert_eq!(table.first_offset, [0, 5]);
        assert_eq!(table.last_offset, [35, 106]);
    }

    #[test]
    fn the_same_figures_on_any_number_of_threads() {
        let n = 20_000usize;
        let offset: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 10_007).collect();
        let duration: Vec<i64> = (0..n as i64).map(|i| (i * 31) % 97).collect();
        let tile: Vec<i64> = (0..n as i64).map(|i| i % 1472).collect();
        let phase: Vec<i64> = (0..n as i64).map(|i| i % 400).collect();
        let frame = samples(&offset, &duration, &tile, &phase);
        let mut rows: Vec<u32> = (0..n as u32).collect();
        rows.sort_by_key(|&r| r % 13);
        let starts: Vec<i64> = (0..=13)
            .map(|g| rows.partition_point(|&r| r % 13 < g) as i64)
            .collect();
        let groups = GroupRows {
            starts: &starts,
            rows: &rows,
        };
        let pool = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
        };
        let one = pool(1).install(|| group_statistics(&frame, &groups, &[50, 95]).unwrap());
        let four = pool(4).install(|| group_statistics(&frame, &groups, &[50, 95]).unwrap());
        assert_eq!(one, four);
        assert_eq!(one.sample_count.iter().sum::<i64>(), n as i64);
    }

    #[test]
    fn groups_out_of_start_order_and_wide_values_take_the_group_by_group_paths() {
        // the tiles span 2^40 values (no pair bitmap), group 0's rows are not in start order
        let offset = [50, 0, 10, 70];
        let duration = [10, 5, 10, 1];
        let wide = [1 << 40, 0, 1 << 40, 7];
        let narrow = [1, 0, 1, 7];
        let phase = [i64::MIN, i64::MAX, 0, 0];
        let groups = GroupRows {
            starts: &[0, 3, 4],
            rows: &[0, 1, 2, 3],
        };
        let table = |tile| {
            let frame = samples(&offset, &duration, tile, &phase);
            group_statistics(&frame, &groups, &[50]).unwrap()
        };
        let (wide, narrow) = (table(&wide), table(&narrow));
        assert_eq!(wide, narrow);
        assert_eq!(wide.tile_count, [2, 1]);
        assert_eq!(wide.phase_count, [3, 1]);
        assert_eq!(wide.phase_cycles, [25, 1]);
        assert_eq!(
            (wide.first_offset, wide.last_offset),
            (vec![0, 70], vec![60, 71])
        );
    }

    #[test]
    fn percents_may_repeat_and_reach_1_and_100() {
        // ascending means non-decreasing: a repeated percent gives its column again
        let offset = [0, 1, 2, 3];
        let duration = [4, 1, 3, 2];
        let frame = samples(&offset, &duration, &[0; 4], &[0; 4]);
        let groups = GroupRows {
            starts: &[0, 4],
            rows: &[0, 1, 2, 3],
        };
        let table = group_statistics(&frame, &groups, &[1, 50, 50, 100]).unwrap();
        assert_eq!(
            table.percentile_cycles,
            [vec![1], vec![2], vec![2], vec![4]]
        );
    }

    #[test]
    fn malformed_columns_are_refused() {
        let frame = samples(&[0, 1], &[1, 1], &[0, 0], &[0, 0]);
        let refused = |starts: &[i64], rows: &[u32], percents: &[u32]| {
            group_statistics(&frame, &GroupRows { starts, rows }, percents)
                .unwrap_err()
                .0
        };
        assert_eq!(refused(&[0, 0, 2], &[0, 1], &[50]), "group 0 has no rows");
        assert_eq!(
            refused(&[0, 2], &[0, 2], &[50]),
            "row 2 is not in the frame of 2 rows"
        );
        assert_eq!(
            refused(&[0, 3], &[0, 1], &[50]),
            "the row lists reach past their rows"
        );
        assert_eq!(
            refused(&[], &[0, 1], &[50]),
            "the row lists reach past their rows"
        );
        assert!(refused(&[0, 2], &[0, 1], &[95, 50]).starts_with("percents"));
        let short = samples(&[0, 1], &[1], &[0, 0], &[0, 0]);
        let groups = GroupRows {
            starts: &[0, 2],
            rows: &[0, 1],
        };
        assert_eq!(
            group_statistics(&short, &groups, &[50]).unwrap_err().0,
            "duration has 1 rows, offset 2"
        );
    }
}
