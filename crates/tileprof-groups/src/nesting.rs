//! How a trace's CPU ops nest, for the op rows (`tileprof.analyses.ops`): each op's innermost
//! enclosing op on its thread, which ops are counted (the outermost op carrying work on its
//! stack), and the op whose row each op's GPU events go to. Each is a walk in stack order
//! whose answer for one op depends on its parent's, so it runs here rather than as a chain of
//! joins as deep as the stacks.

use crate::ColumnError;

/// The ops in stack order (by thread, start, longest first, then place in the file), one
/// value per op in each slice.
pub struct Ops<'a> {
    /// Equal values for ops of one thread.
    pub thread: &'a [i64],
    pub ts: &'a [f64],
    pub dur: &'a [f64],
    /// Carries work: a `flops` argument, or a dispatcher-level formula.
    pub candidate: &'a [bool],
    /// A composite op (counted only when nothing inside it is a candidate).
    pub composite: &'a [bool],
}

/// Per op: its innermost enclosing op, whether it is counted, and its owner (the counted op
/// it is inside, else itself).
#[derive(Debug, PartialEq, Eq)]
pub struct Nesting {
    pub parent: Vec<Option<usize>>,
    pub counted: Vec<bool>,
    pub owner: Vec<usize>,
}

/// Each op's innermost enclosing op on its thread: the op on the stack that has not ended
/// when it starts (`ts < parent.ts + parent.dur`, times added as the Python reader adds them).
pub fn parents(thread: &[i64], ts: &[f64], dur: &[f64]) -> Vec<Option<usize>> {
    let mut parent = Vec::with_capacity(ts.len());
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..ts.len() {
        while let Some(&top) = stack.last() {
            if thread[top] != thread[i] || ts[i] >= ts[top] + dur[top] {
                stack.pop();
            } else {
                break;
            }
        }
        parent.push(stack.last().copied());
        stack.push(i);
    }
    parent
}

/// The nesting of `ops` (module docstring); a parent always comes before its child.
pub fn op_nesting(ops: &Ops<'_>) -> Result<Nesting, ColumnError> {
    let n = ops.thread.len();
    let lengths = [
        ops.ts.len(),
        ops.dur.len(),
        ops.candidate.len(),
        ops.composite.len(),
    ];
    if lengths.iter().any(|&len| len != n) {
        return Err(ColumnError(format!(
            "op columns of lengths {n} and {lengths:?}"
        )));
    }
    let parent = parents(ops.thread, ops.ts, ops.dur);
    // a candidate somewhere inside
    let mut below = vec![false; n];
    for i in (0..n).rev() {
        if let Some(p) = parent[i] {
            if ops.candidate[i] || below[i] {
                below[p] = true;
            }
        }
    }
    let mut counted = vec![false; n];
    let mut covered = vec![false; n]; // inside a counted op
    let mut owner: Vec<usize> = (0..n).collect();
    for i in 0..n {
        if let Some(p) = parent[i] {
            covered[i] = covered[p] || counted[p];
        }
        if !covered[i] {
            counted[i] = ops.candidate[i] || (ops.composite[i] && !below[i]);
        }
        if let Some(p) = parent[i] {
            if !counted[i] && counted[owner[p]] {
                owner[i] = owner[p];
            }
        }
    }
    Ok(Nesting {
        parent,
        counted,
        owner,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outermost_candidate_owns_what_is_inside_it() {
        // thread 1: linear [0, 10) > addmm [1, 9) > kernel-less child [2, 3); then mm [10, 12)
        // thread 2: a composite with nothing counted inside [0, 5) > add [1, 2)
        let ops = Ops {
            thread: &[1, 1, 1, 1, 2, 2],
            ts: &[0.0, 1.0, 2.0, 10.0, 0.0, 1.0],
            dur: &[10.0, 8.0, 1.0, 2.0, 5.0, 1.0],
            candidate: &[false, true, false, true, false, false],
            composite: &[true, false, false, false, true, false],
        };
        let nesting = op_nesting(&ops).unwrap();
        assert_eq!(
            nesting.parent,
            vec![None, Some(0), Some(1), None, None, Some(4)]
        );
        assert_eq!(nesting.counted, vec![false, true, false, true, true, false]);
        assert_eq!(nesting.owner, vec![0, 1, 1, 3, 4, 4]);
    }

    #[test]
    fn an_op_starting_at_its_neighbours_end_is_not_inside_it() {
        assert_eq!(
            parents(&[0, 0, 0], &[0.0, 2.0, 2.5], &[2.0, 1.0, 0.0]),
            vec![None, None, Some(1)]
        );
    }

    #[test]
    fn columns_of_other_lengths_are_refused() {
        let ops = Ops {
            thread: &[1],
            ts: &[],
            dur: &[1.0],
            candidate: &[true],
            composite: &[false],
        };
        assert!(op_nesting(&ops).is_err());
    }
}
