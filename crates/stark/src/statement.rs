//! Statements proven as a chain of segments (continuations).
//!
//! A statement is a [`Workload`] and its outcome: running it from its start state through
//! all its segments ends in `end`. Segment i is its own STARK whose public inputs come from
//! the states it starts and ends in; the proof carries the states between segments, so the
//! chain is checked by construction. Segments are proven one after another and only their
//! (small) proofs are kept, so peak memory does not grow with the number of segments.

use std::ops::Range;

use ballast_air::{Air, ConstraintInfo};
use ballast_field::{Ext3, Felt, RowBlocks};

use crate::backend::Backend;
use crate::proof::SegmentShape;
use crate::protocol::SegmentPosition;
use crate::{
    ParamsError, Phase, PhaseTimes, ProverError, SegmentProof, SegmentStatement, StarkParams,
    VerifierError, Workload,
};

/// Most segments a statement may have.
pub const MAX_SEGMENTS: usize = 1 << 20;

/// A complete proof: parameters, the statement (workload and outcome), the states between
/// segments and one STARK per segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof<W: Workload> {
    /// The soundness parameters every segment uses.
    pub params: StarkParams,
    /// The computation proven.
    pub workload: W,
    /// The state it ends in: what the statement claims.
    pub end: W::State,
    /// The states between segments: `boundaries[i]` is where segment i ends and i + 1
    /// starts (segments − 1 of them).
    pub boundaries: Vec<W::State>,
    /// The segments' proofs, in order.
    pub segments: Vec<SegmentProof>,
}

impl<W: Workload> Proof<W> {
    /// The state segment `index` starts in.
    pub fn segment_start(&self, index: usize) -> W::State {
        match index {
            0 => self.workload.start(),
            i => self.boundaries[i - 1].clone(),
        }
    }

    /// Provable security in bits ([`StarkParams::provable_security_bits`]) with the DEEP
    /// batch of this proof's AIR: 2W + C terms; 0 for parameters the AIR cannot use.
    pub fn provable_security_bits(&self) -> u32 {
        provable_security_bits(&self.workload, &self.params)
    }

    /// The state segment `index` ends in.
    pub fn segment_end(&self, index: usize) -> &W::State {
        self.boundaries.get(index).unwrap_or(&self.end)
    }
}

/// [`StarkParams::provable_security_bits`] for `workload`'s AIR, whose DEEP batch has 2W + C
/// terms; 0 for parameters the AIR cannot use.
pub(crate) fn provable_security_bits<W: Workload>(workload: &W, params: &StarkParams) -> u32 {
    segment_shape(workload, 0, params).map_or(0, |shape| {
        params.provable_security_bits(workload.log_rows(), 2 * shape.width + shape.quotient_width)
    })
}

/// The workload's tag and encoding: what every segment's transcript binds as its statement.
pub(crate) fn context<W: Workload>(workload: &W) -> Vec<u8> {
    let mut bytes = vec![W::TAG];
    bytes.extend_from_slice(&workload.encode());
    bytes
}

/// The sizes of segment `index`'s proof.
pub(crate) fn segment_shape<W: Workload>(
    workload: &W,
    index: usize,
    params: &StarkParams,
) -> Result<SegmentShape, ParamsError> {
    let air = workload.air(index);
    let info = ConstraintInfo::of(&air)?;
    SegmentShape::new(&air, &info, params)
}

/// The most bytes a proof of `workload` with `params` can have (every query at its own
/// position, nothing shared), or `None` on overflow. The parameters must be valid.
pub(crate) fn max_proof_len<W: Workload>(workload: &W, params: &StarkParams) -> Option<u64> {
    let states = workload.state_len() as u64 * workload.segments() as u64;
    max_segments_len(workload, params, workload.segments())?
        .checked_add(crate::header_len::<W>() as u64)?
        .checked_add(states)
}

/// The most bytes `count` segment proofs of `workload` can have, or `None` on overflow.
pub(crate) fn max_segments_len<W: Workload>(
    workload: &W,
    params: &StarkParams,
    count: usize,
) -> Option<u64> {
    segment_shape(workload, 0, params)
        .ok()?
        .max_encoded_len()?
        .checked_mul(count as u64)
}

/// A rough upper estimate of the prover's peak memory in bytes when it proves `segments` of
/// the workload's segments (all of them, or a part's): one segment's tables and trees, plus
/// those segments' proofs.
pub fn estimate_peak_bytes<W: Workload>(
    workload: &W,
    params: &StarkParams,
    segments: usize,
) -> u64 {
    let Ok(segment) = segment_shape(workload, 0, params) else {
        return u64::MAX;
    };
    let n = 1u64 << workload.log_rows();
    let lde = n << params.log_blowup;
    let width = workload.air(0).width() as u64;
    let quotient_width = segment.quotient_width as u64;
    let (felt, ext, digest) = (Felt::BYTES as u64, Ext3::BYTES as u64, 32u64);
    let tables = 2 * width * n * felt                 // trace and its generation scratch
        + width * lde * felt                          // its LDE
        + quotient_width * (n + lde) * felt           // quotient chunks and their LDE
        + 3 * lde * ext                               // DEEP values and FRI layers
        + n * ext                                     // out-of-domain weights
        + 2 * lde * felt; // LDE plan and its scratch
    let trees = 5 * lde * digest; // trace and quotient row trees, FRI layer trees
    let proofs = segment
        .max_encoded_len()
        .unwrap_or(u64::MAX)
        .saturating_mul(segments as u64);
    tables.saturating_add(trees).saturating_add(proofs)
}

/// Proves `workload`, segment after segment.
///
/// `on_segment` is called with the number of segments done after each one.
///
/// # Errors
/// Invalid workload or parameters, or a backend failure.
pub fn prove_statement<W: Workload>(
    workload: &W,
    params: &StarkParams,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
    on_segment: &mut dyn FnMut(usize),
) -> Result<Proof<W>, ProverError> {
    workload.validate()?;
    params.validate(workload.log_rows())?;
    let (mut states, segments) = prove_segments(
        workload,
        params,
        0..workload.segments(),
        workload.start(),
        backend,
        times,
        on_segment,
    )?;
    let end = states.pop().expect("at least one segment");
    Ok(Proof {
        params: *params,
        workload: workload.clone(),
        end,
        boundaries: states,
        segments,
    })
}

/// Proves segments `range` one after another from `start`: the state each ends in, and
/// their proofs. The workload, parameters and range must be valid.
pub(crate) fn prove_segments<W: Workload>(
    workload: &W,
    params: &StarkParams,
    range: Range<usize>,
    mut start: W::State,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
    on_segment: &mut dyn FnMut(usize),
) -> Result<(Vec<W::State>, Vec<SegmentProof>), ProverError> {
    let context = context(workload);
    let count = workload.segments();
    let mut segments = Vec::with_capacity(range.len());
    let mut states = Vec::with_capacity(range.len());
    // One allocation, with room for the extension, holds every segment's trace and LDE in
    // turn: later segments reuse the pages the first one faulted in.
    let rows = 1usize << workload.log_rows();
    let mut table = RowBlocks::zeroed(0, 0, 0);
    for (done, index) in range.enumerate() {
        let air = workload.air(index);
        let end = times.time(Phase::Trace, || {
            if done == 0 {
                table = RowBlocks::zeroed(air.width(), rows, rows << params.log_blowup);
            } else {
                table.reshape(air.width(), rows);
                table.fill_zero();
            }
            workload.trace(index, &start, &mut table)
        });
        let public_inputs = workload.public_inputs(index, &start, &end);
        let segment = SegmentStatement {
            context: &context,
            position: SegmentPosition { index, count },
            public_inputs: &public_inputs,
        };
        let proof = crate::prove(&air, &mut table, &segment, params, backend, times)?;
        segments.push(proof);
        states.push(end.clone());
        start = end;
        on_segment(done + 1);
    }
    Ok((states, segments))
}

/// The conjectured security a verifier requires unless told otherwise.
pub const DEFAULT_MIN_SECURITY_BITS: u32 = 100;

/// The largest proof a verifier accepts unless told otherwise: 1 GiB, judged by the most
/// bytes the proof's header allows ([`Proof::max_len`]). Every proof of the shapes ballast
/// ships and benchmarks is far below it (the default statement's header allows 8 MiB;
/// 16 Fibonacci sequences × 2^20 rows at 219 queries, 1.6 MiB; a keccak-chain segment of
/// 2^14 rows at 219 queries, 4.5 MiB), and so is any statement of up to about 200 such
/// segments; larger ones need a larger cap, given explicitly.
pub const DEFAULT_MAX_PROOF_BYTES: u64 = 1 << 30;

/// What a verifier insists on beyond the proof's own validity.
///
/// The proof names its own parameters and size, so a verifier must set a floor and a cap:
/// the default requires [`DEFAULT_MIN_SECURITY_BITS`] and at most
/// [`DEFAULT_MAX_PROOF_BYTES`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyPolicy {
    /// Least conjectured security the proof's parameters must give.
    pub min_security_bits: u32,
    /// When set, the proof must use exactly these parameters.
    pub params: Option<StarkParams>,
    /// Most bytes the proof's header may allow.
    pub max_proof_bytes: u64,
}

impl Default for VerifyPolicy {
    fn default() -> Self {
        Self {
            min_security_bits: DEFAULT_MIN_SECURITY_BITS,
            params: None,
            max_proof_bytes: DEFAULT_MAX_PROOF_BYTES,
        }
    }
}

impl VerifyPolicy {
    /// Checks parameters for a trace of 2^`log_rows` rows against the floor and, when set,
    /// the required parameters.
    ///
    /// # Errors
    /// Invalid parameters, too little security, or other parameters than required.
    pub fn check_params(&self, params: &StarkParams, log_rows: usize) -> Result<(), VerifierError> {
        params.validate(log_rows)?;
        let security = params.conjectured_security_bits(log_rows);
        if security < self.min_security_bits {
            return Err(VerifierError::InsufficientSecurity {
                got: security,
                required: self.min_security_bits,
            });
        }
        match self.params {
            Some(expected) if expected != *params => Err(VerifierError::ParamsMismatch {
                expected,
                got: *params,
            }),
            _ => Ok(()),
        }
    }

    /// Checks the most bytes a proof's header allows against the cap.
    ///
    /// # Errors
    /// [`VerifierError::TooLarge`] above the cap.
    pub fn check_size(&self, max_len: u64) -> Result<(), VerifierError> {
        if max_len > self.max_proof_bytes {
            return Err(VerifierError::TooLarge {
                max_len,
                cap: self.max_proof_bytes,
            });
        }
        Ok(())
    }
}

/// Verifies every segment against the states the proof names for it: the first starts at
/// the workload's start, each ends where the next starts, and the last ends at the claimed
/// outcome.
///
/// # Errors
/// The first check that fails.
pub fn verify_statement<W: Workload>(
    proof: &Proof<W>,
    policy: &VerifyPolicy,
) -> Result<(), VerifierError> {
    let Proof {
        params,
        workload,
        boundaries,
        segments,
        ..
    } = proof;
    workload.validate()?;
    policy.check_params(params, workload.log_rows())?;
    policy.check_size(max_proof_len(workload, params).unwrap_or(u64::MAX))?;
    let count = workload.segments();
    if segments.len() != count || boundaries.len() + 1 != count {
        return Err(VerifierError::Shape {
            what: "segments",
            expected: count,
            got: segments.len(),
        });
    }
    let mut ends = boundaries.clone();
    ends.push(proof.end.clone());
    verify_segments(
        workload,
        params,
        policy,
        0,
        &workload.start(),
        &ends,
        segments,
    )
}

/// Verifies segments `first..first + proofs.len()`: the first starts in `start`, segment
/// `first + i` ends in `ends[i]` and the next starts there. The shapes must match.
pub(crate) fn verify_segments<W: Workload>(
    workload: &W,
    params: &StarkParams,
    policy: &VerifyPolicy,
    first: usize,
    start: &W::State,
    ends: &[W::State],
    proofs: &[SegmentProof],
) -> Result<(), VerifierError> {
    let context = context(workload);
    let count = workload.segments();
    let starts = std::iter::once(start).chain(ends);
    for (i, ((segment_proof, start), end)) in proofs.iter().zip(starts).zip(ends).enumerate() {
        let index = first + i;
        let air = workload.air(index);
        let public_inputs = workload.public_inputs(index, start, end);
        let segment = SegmentStatement {
            context: &context,
            position: SegmentPosition { index, count },
            public_inputs: &public_inputs,
        };
        crate::verify(&air, segment_proof, &segment, params, policy)?;
    }
    Ok(())
}
