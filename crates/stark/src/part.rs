//! Parts: a contiguous run of one statement's segments, proven on its own host.
//!
//! Segments are independent STARKs once the states they start in are known, so one
//! statement can be proven by many workers at once. Worker I of K proves the segments
//! [`part_range`] gives it, after *executing* (not proving) the segments before them to learn
//! its start state. [`bundle`] joins parts that cover every segment exactly once into the
//! [`Proof`] a single host would have written — the same bytes, because a segment's proof
//! depends only on the statement, the parameters, its position and its two states.
//!
//! A part on its own proves less than a statement: that *if* the computation is in the
//! part's start state at its first segment, it runs through the part's end states. Only a
//! part starting at segment 0 has its start state checked (it must be the workload's);
//! [`bundle`] checks that each part starts where the one before it ends.

use std::ops::Range;

use crate::backend::Backend;
use crate::statement::{max_segments_len, prove_segments, verify_segments};
use crate::{
    BundleError, ParamsError, Phase, PhaseTimes, Proof, ProverError, SegmentProof, StarkParams,
    VerifierError, VerifyPolicy, Workload,
};

/// A proof of segments `first..first + segments.len()` of a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part<W: Workload> {
    /// The soundness parameters every segment uses.
    pub params: StarkParams,
    /// The computation the segments belong to.
    pub workload: W,
    /// The first segment's index in the statement.
    pub first: usize,
    /// The state the first segment starts in.
    pub start: W::State,
    /// The state each segment ends in, in order.
    pub ends: Vec<W::State>,
    /// The segments' proofs, in order.
    pub segments: Vec<SegmentProof>,
}

impl<W: Workload> Part<W> {
    /// The segments the part covers.
    pub fn range(&self) -> Range<usize> {
        self.first..self.first.saturating_add(self.segments.len())
    }

    /// Provable security in bits, as [`Proof::provable_security_bits`].
    pub fn provable_security_bits(&self) -> u32 {
        crate::statement::provable_security_bits(&self.workload, &self.params)
    }

    /// Whether the part and `other` belong to one statement with one parameter set.
    pub fn same_statement(&self, other: &Self) -> bool {
        self.params == other.params && self.workload == other.workload
    }
}

/// Segments `index` of `parts` near-equal, contiguous ranges of `segments` covers: the first
/// `segments mod parts` ranges have one segment more than the others.
///
/// # Errors
/// `parts` outside `1..=segments`, or `index` not below `parts`.
pub fn part_range(
    segments: usize,
    parts: usize,
    index: usize,
) -> Result<Range<usize>, ParamsError> {
    crate::check_range("parts", parts, 1, segments.max(1))?;
    crate::check_range("part_index", index, 0, parts - 1)?;
    let (size, extra) = (segments / parts, segments % parts);
    let first = index * size + index.min(extra);
    let len = size + usize::from(index < extra);
    Ok(first..first + len)
}

/// Proves segments `range` of `workload`: executes the segments before `range.start` to
/// learn where it starts (counted as [`Phase::Trace`]), then proves each segment of the range
/// exactly as [`prove_statement`](crate::prove_statement) would.
///
/// `on_segment` is called with the number of the range's segments done after each one.
///
/// # Errors
/// Invalid workload, parameters or range, or a backend failure.
pub fn prove_part<W: Workload>(
    workload: &W,
    params: &StarkParams,
    range: Range<usize>,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
    on_segment: &mut dyn FnMut(usize),
) -> Result<Part<W>, ProverError> {
    workload.validate()?;
    params.validate(workload.log_rows())?;
    check_part_range(workload, &range)?;
    let start = times.time(Phase::Trace, || {
        (0..range.start).fold(workload.start(), |state, i| workload.run(i, &state))
    });
    let (ends, segments) = prove_segments(
        workload,
        params,
        range.clone(),
        start.clone(),
        backend,
        times,
        on_segment,
    )?;
    Ok(Part {
        params: *params,
        workload: workload.clone(),
        first: range.start,
        start,
        ends,
        segments,
    })
}

/// Checks every segment of `part` against the states it names; a part starting at segment 0
/// must start at the workload's start.
///
/// # Errors
/// The first check that fails.
pub fn verify_part<W: Workload>(
    part: &Part<W>,
    policy: &VerifyPolicy,
) -> Result<(), VerifierError> {
    let Part {
        params,
        workload,
        first,
        start,
        ends,
        segments,
    } = part;
    workload.validate()?;
    policy.check_params(params, workload.log_rows())?;
    check_part_range(workload, &part.range())?;
    policy.check_size(max_part_len(workload, params, segments.len()).unwrap_or(u64::MAX))?;
    check_ends(part)?;
    if *first == 0 && *start != workload.start() {
        return Err(VerifierError::PartStart);
    }
    verify_segments(workload, params, policy, *first, start, ends, segments)
}

/// Joins `parts` (each with the name errors call it by, e.g. its file name) into the proof
/// of their statement: byte for byte what [`prove_statement`](crate::prove_statement) writes.
///
/// Checks that every part proves the first part's statement with its parameters, that the
/// parts cover every segment exactly once, that each starts where the one before it ends,
/// and that every part verifies under `policy`.
///
/// # Errors
/// The first problem found, naming the part.
pub fn bundle<W: Workload>(
    parts: Vec<(String, Part<W>)>,
    policy: &VerifyPolicy,
) -> Result<Proof<W>, BundleError> {
    let Some((reference, first)) = parts.first() else {
        return Err(BundleError::Empty);
    };
    if let Some((name, part)) = parts.iter().find(|(_, p)| !p.same_statement(first)) {
        return Err(BundleError::Foreign {
            part: name.clone(),
            reference: reference.clone(),
            what: if part.workload == first.workload {
                "parameter set"
            } else {
                "statement"
            },
        });
    }
    let count = first.workload.segments();
    if let Err(reason) = first.workload.validate() {
        return Err(BundleError::Invalid {
            part: reference.clone(),
            reason: reason.into(),
        });
    }
    if let Some(max_len) = crate::statement::max_proof_len(&first.workload, &first.params)
        && let Err(VerifierError::TooLarge { max_len, cap }) = policy.check_size(max_len)
    {
        return Err(BundleError::TooLarge { max_len, cap });
    }
    // Shapes first, so that a malformed part is named as itself, not as a neighbour's overlap.
    for (name, part) in &parts {
        let shape = check_part_range(&part.workload, &part.range())
            .map_err(VerifierError::from)
            .and_then(|()| check_ends(part));
        shape.map_err(|reason| BundleError::Invalid {
            part: name.clone(),
            reason,
        })?;
    }
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| (parts[i].1.first, parts[i].1.segments.len()));
    let mut covered = 0;
    for (k, &i) in order.iter().enumerate() {
        let (name, part) = &parts[i];
        let range = part.range();
        if range.start > covered {
            return Err(BundleError::Missing {
                range: covered..range.start,
                after: k.checked_sub(1).map(|j| parts[order[j]].0.clone()),
            });
        }
        if range.start < covered {
            let (other, previous) = &parts[order[k - 1]];
            return Err(BundleError::Overlap {
                part: name.clone(),
                range,
                other: other.clone(),
                other_range: previous.range(),
            });
        }
        if k > 0 {
            let (previous_name, previous) = &parts[order[k - 1]];
            if previous.ends.last() != Some(&part.start) {
                return Err(BundleError::Chain {
                    part: name.clone(),
                    previous: previous_name.clone(),
                });
            }
        }
        covered = range.end;
    }
    if covered < count {
        return Err(BundleError::Missing {
            range: covered..count,
            after: order.last().map(|&i| parts[i].0.clone()),
        });
    }
    let verdicts: Vec<Result<(), VerifierError>> = {
        use rayon::prelude::*;
        parts
            .par_iter()
            .map(|(_, p)| verify_part(p, policy))
            .collect()
    };
    for ((name, _), verdict) in parts.iter().zip(verdicts) {
        verdict.map_err(|reason| BundleError::Invalid {
            part: name.clone(),
            reason,
        })?;
    }
    let (params, workload) = (first.params, first.workload.clone());
    let mut parts: Vec<Part<W>> = parts.into_iter().map(|(_, p)| p).collect();
    parts.sort_by_key(|p| p.first);
    let mut boundaries = Vec::with_capacity(count);
    let mut segments = Vec::with_capacity(count);
    for part in parts {
        boundaries.extend(part.ends);
        segments.extend(part.segments);
    }
    let end = boundaries
        .pop()
        .expect("the parts cover at least one segment");
    Ok(Proof {
        params,
        workload,
        end,
        boundaries,
        segments,
    })
}

/// One end state per segment.
fn check_ends<W: Workload>(part: &Part<W>) -> Result<(), VerifierError> {
    if part.ends.len() != part.segments.len() {
        return Err(VerifierError::Shape {
            what: "part end states",
            expected: part.segments.len(),
            got: part.ends.len(),
        });
    }
    Ok(())
}

/// A range of at least one segment, within the statement.
pub(crate) fn check_part_range<W: Workload>(
    workload: &W,
    range: &Range<usize>,
) -> Result<(), ParamsError> {
    let count = workload.segments();
    crate::check_range("part's first segment", range.start, 0, count - 1)?;
    crate::check_range("part's segments", range.len(), 1, count - range.start)
}

/// The most bytes a part of `segments` segments of `workload` can have, or `None` on
/// overflow. The parameters must be valid.
pub(crate) fn max_part_len<W: Workload>(
    workload: &W,
    params: &StarkParams,
    segments: usize,
) -> Option<u64> {
    let states = workload.state_len() as u64 * (segments as u64 + 1);
    max_segments_len(workload, params, segments)?
        .checked_add(crate::part_header_len::<W>() as u64)?
        .checked_add(states)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_near_equal_contiguous_and_cover_everything() {
        for segments in 1..=40 {
            for parts in 1..=segments {
                let ranges: Vec<_> = (0..parts)
                    .map(|i| part_range(segments, parts, i).unwrap())
                    .collect();
                assert_eq!(ranges[0].start, 0);
                assert_eq!(ranges[parts - 1].end, segments);
                for pair in ranges.windows(2) {
                    assert_eq!(pair[0].end, pair[1].start);
                }
                let (min, max) = (
                    ranges.iter().map(Range::len).min().unwrap(),
                    ranges.iter().map(Range::len).max().unwrap(),
                );
                assert!(min >= 1 && max - min <= 1, "{segments}/{parts}: {ranges:?}");
            }
        }
        assert_eq!(part_range(10, 4, 0).unwrap(), 0..3);
        assert_eq!(part_range(10, 4, 3).unwrap(), 8..10);
    }

    #[test]
    fn impossible_splits_are_refused() {
        assert!(part_range(4, 0, 0).is_err());
        assert!(part_range(4, 5, 0).is_err(), "more parts than segments");
        assert!(part_range(4, 4, 4).is_err(), "index past the last part");
    }
}
