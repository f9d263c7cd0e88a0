//! Statements proven as a chain of segments (continuations), on one host or on many.
//!
//! A statement is a [`Workload`] and its outcome: running it from its start state through
//! all its segments ends in that state. Segment i is its own STARK whose public inputs come
//! from the states it starts and ends in; a [`Proof`] carries the state at every boundary of
//! the segments it covers, so the chain is checked by construction. Segments are proven one
//! after another and only their (small) proofs are kept, so peak memory does not grow with
//! the number of segments.
//!
//! Segments are independent STARKs once the states they start in are known, so one
//! statement can also be proven by many workers at once: worker I of K proves the segments
//! [`part_range`] gives it ([`prove_part`]), after *executing* (not proving) the segments
//! before them to learn its start state, and [`bundle`](crate::bundle) joins the parts into
//! the proof a single host writes — the same bytes, because a segment's proof depends only
//! on the statement, the parameters, its position and its two states.

use std::ops::Range;

use ballast_air::Air;
use ballast_field::{Ext3, Felt, RowBlocks};

use crate::proof::{check_segments, statement_context};
use crate::protocol::SegmentPosition;
use crate::prover::prove_staged;
use crate::sizes::max_segment_len;
use crate::verifier::verify_with_transcript;
use crate::{
    Backend, ParamsError, Phase, PhaseTimes, Proof, ProverError, SegmentProof, SegmentStatement,
    StarkParams, VerifierError, VerifyPolicy, Workload,
};

/// Most segments a statement may have.
pub const MAX_SEGMENTS: usize = 1 << 20;

/// A rough upper estimate of the prover's peak memory in bytes when it proves `segments` of
/// the workload's segments (all of them, or a part's): one segment's tables and trees, plus
/// those segments' proofs.
pub fn estimate_peak_bytes<W: Workload>(
    workload: &W,
    params: &StarkParams,
    segments: usize,
) -> u64 {
    let Ok(segment) = crate::geometry(workload, params) else {
        return u64::MAX;
    };
    let n = 1u64 << workload.log_rows();
    let lde = n << params.log_blowup;
    let width = segment.width as u64;
    let quotient_width = segment.quotient_width() as u64;
    let (felt, ext, digest) = (Felt::BYTES as u64, Ext3::BYTES as u64, 32u64);
    let tables = 2 * width * n * felt                 // trace and its generation scratch
        + width * lde * felt                          // its LDE
        + quotient_width * (n + lde) * felt           // quotient chunks and their LDE
        + 3 * lde * ext                               // DEEP values and FRI layers
        + n * ext                                     // out-of-domain weights
        + 2 * lde * felt; // LDE plan and its scratch
    let trees = 5 * lde * digest; // trace and quotient row trees, FRI layer trees
    let proofs = max_segment_len(&segment)
        .unwrap_or(u64::MAX)
        .saturating_mul(segments as u64);
    tables.saturating_add(trees).saturating_add(proofs)
}

/// Proves the whole statement: [`prove_part`] of every segment.
///
/// # Errors
/// As [`prove_part`].
pub fn prove_statement<W: Workload>(
    workload: &W,
    params: &StarkParams,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
    on_segment: &mut dyn FnMut(usize),
) -> Result<Proof<W>, ProverError> {
    let all = 0..workload.segments();
    prove_part(workload, params, all, backend, times, on_segment)
}

/// Proves segments `range` of `workload`, one after another: executes the segments before
/// `range.start` to learn where it starts (counted as [`Phase::Trace`]), then proves each
/// segment of the range.
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
) -> Result<Proof<W>, ProverError> {
    workload.validate()?;
    params.validate(workload.log_rows())?;
    check_segments(workload, range.start, range.len())?;
    let mut start = times.time(Phase::Trace, || {
        (0..range.start).fold(workload.start(), |state, i| workload.run(i, &state))
    });
    let context = statement_context(workload);
    let count = workload.segments();
    let mut segments = Vec::with_capacity(range.len());
    let mut states = Vec::with_capacity(range.len() + 1);
    states.push(start.clone());
    // One allocation, with the room the backend needs (the CPU's extends in place), holds
    // every segment's trace in turn: later segments reuse the pages the first one faulted in.
    // A backend that proves elsewhere (a GPU) gets a second one: the host traces segment
    // i + 1 into it, and sends it ahead, while segment i is proven.
    let overlap = backend.overlaps_tracing() && range.len() > 1;
    let geometry = crate::geometry(workload, params)?;
    let mut tables = vec![RowBlocks::zeroed(0, 0, 0); if overlap { 2 } else { 1 }];
    let mut end = times.time(Phase::Trace, || {
        trace_into(
            workload,
            params,
            range.start,
            &start,
            &mut tables[0],
            backend,
        )
    });
    let mut staged = if overlap {
        backend.stage(&tables[0], &geometry)?
    } else {
        None
    };
    for (done, index) in range.clone().enumerate() {
        let air = workload.air(index);
        let public_inputs = workload.public_inputs(index, &start, &end);
        let segment = SegmentStatement {
            context: &context,
            position: SegmentPosition { index, count },
            public_inputs: &public_inputs,
        };
        let next = (index + 1 < range.end).then_some(index + 1);
        let (current, spare) = tables.split_at_mut(1);
        let this = staged.take();
        let prove = |table: &mut RowBlocks, times: &mut PhaseTimes| {
            prove_staged(&air, table, &segment, params, backend, times, this)
        };
        let (proof, next_end) = match (next, spare.first_mut()) {
            (Some(next), Some(spare)) => {
                let mut traced = PhaseTimes::default();
                let (proof, next) = rayon::join(
                    || prove(&mut current[0], times),
                    || -> Result<_, ProverError> {
                        let next_end = traced.time(Phase::Trace, || {
                            trace_into(workload, params, next, &end, spare, backend)
                        });
                        Ok((next_end, backend.stage(spare, &geometry)?))
                    },
                );
                times.add(Phase::Trace, traced.get(Phase::Trace));
                let (next_end, next_staged) = next?;
                let proof = proof?;
                staged = next_staged;
                (proof, Some(next_end))
            }
            (next, _) => {
                let proof = prove(&mut current[0], times)?;
                let next_end = next.map(|next| {
                    times.time(Phase::Trace, || {
                        trace_into(workload, params, next, &end, &mut current[0], backend)
                    })
                });
                (proof, next_end)
            }
        };
        segments.push(proof);
        if overlap {
            tables.swap(0, 1);
        }
        states.push(end.clone());
        start = std::mem::replace(&mut end, next_end.unwrap_or_else(|| start.clone()));
        on_segment(done + 1);
    }
    Ok(Proof {
        params: *params,
        workload: workload.clone(),
        first: range.start,
        states,
        segments,
    })
}

/// Runs segment `index` from `start` into `table` (allocated by the backend on first use,
/// zeroed and reshaped after), returning the state it ends in.
fn trace_into<W: Workload>(
    workload: &W,
    params: &StarkParams,
    index: usize,
    start: &W::State,
    table: &mut RowBlocks,
    backend: &dyn Backend,
) -> W::State {
    let width = workload.air(index).width();
    let rows = 1usize << workload.log_rows();
    if table.capacity() < rows || table.width() == 0 {
        *table = backend.trace_table(width, workload.log_rows(), params.log_blowup);
    } else {
        table.reshape(width, rows);
        table.fill_zero();
    }
    workload.trace(index, start, table)
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

/// Verifies a proof of a whole statement: it must cover every segment from segment 0
/// ([`Proof::is_whole`]) and pass [`verify_part`].
///
/// # Errors
/// [`VerifierError::NotWhole`] for a part, or the first check that fails.
pub fn verify_statement<W: Workload>(
    proof: &Proof<W>,
    policy: &VerifyPolicy,
) -> Result<(), VerifierError> {
    if !proof.is_whole() {
        return Err(VerifierError::NotWhole {
            range: proof.range(),
            segments: proof.workload.segments(),
        });
    }
    verify_part(proof, policy)
}

/// Verifies the segments a proof covers, whole or part: the policy's parameters and cap,
/// the range and the states' count, a first segment 0 that starts in the workload's start
/// state, and every segment against the states the proof names for it.
///
/// # Errors
/// The first check that fails.
pub fn verify_part<W: Workload>(
    proof: &Proof<W>,
    policy: &VerifyPolicy,
) -> Result<(), VerifierError> {
    let Proof {
        params,
        workload,
        first,
        states,
        segments,
    } = proof;
    workload.validate()?;
    policy.check_params(&workload.air(0), params)?;
    check_segments(workload, *first, segments.len())?;
    check_states(proof)?;
    policy.check_size(proof.encoded_len())?;
    check_start(proof)?;
    verify_segments(workload, params, *first, states, segments)
}

/// One state more than segments.
pub(crate) fn check_states<W: Workload>(proof: &Proof<W>) -> Result<(), VerifierError> {
    if proof.states.len() != proof.segments.len() + 1 {
        return Err(VerifierError::Shape {
            what: "states",
            expected: proof.segments.len() + 1,
            got: proof.states.len(),
        });
    }
    Ok(())
}

/// A proof covering segment 0 starts in the workload's start state.
pub(crate) fn check_start<W: Workload>(proof: &Proof<W>) -> Result<(), VerifierError> {
    if proof.first == 0 && proof.states.first() != Some(&proof.workload.start()) {
        return Err(VerifierError::Start);
    }
    Ok(())
}

/// Verifies segments `first..first + proofs.len()` in parallel, segment `first + i` from
/// `states[i]` to `states[i + 1]`; the first failure in segment order. The parameters must
/// have passed the policy (checked once, on segment 0's AIR, whose shape every segment
/// shares) and there must be one state more than proofs.
pub(crate) fn verify_segments<W: Workload>(
    workload: &W,
    params: &StarkParams,
    first: usize,
    states: &[W::State],
    proofs: &[SegmentProof],
) -> Result<(), VerifierError> {
    use rayon::prelude::*;
    let context = statement_context(workload);
    let count = workload.segments();
    let verdicts: Vec<Result<(), VerifierError>> = proofs
        .par_iter()
        .zip(states.par_windows(2))
        .enumerate()
        .map(|(i, (proof, ends))| {
            let index = first + i;
            let public_inputs = workload.public_inputs(index, &ends[0], &ends[1]);
            let segment = SegmentStatement {
                context: &context,
                position: SegmentPosition { index, count },
                public_inputs: &public_inputs,
            };
            verify_with_transcript(&workload.air(index), proof, &segment, params).map(|_| ())
        })
        .collect();
    verdicts.into_iter().collect()
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
