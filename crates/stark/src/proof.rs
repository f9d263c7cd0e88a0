//! What a proof contains: the segments of a statement, each a STARK, in protocol order.
//!
//! One type, [`Proof`], holds any contiguous run of a statement's segments: a proof of the
//! whole statement covers them all from segment 0; a part (`cli prove --parts`, scale-out)
//! covers a range of them. Both are encoded, bounded, decoded and verified alike.

use std::ops::Range;

use ballast_air::{Air, ConstraintInfo};
use ballast_backend::Geometry;
use ballast_field::{Ext3, Felt};
use ballast_fri::FriLayerOpening;
use ballast_keccak::{HashDomain, keccak256};
use ballast_merkle::Digest;

use crate::{OodValues, ParamsError, StarkParams, Workload};

/// The openings of every commitment at the queried positions of one segment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryOpenings {
    /// The distinct query positions in the LDE domain, strictly increasing.
    pub positions: Vec<usize>,
    /// The trace LDE's rows at those positions, one after another.
    pub trace_rows: Vec<Felt>,
    /// The trace tree's batch opening of those rows.
    pub trace_nodes: Vec<Digest>,
    /// The quotient chunks' LDE rows at those positions, one after another.
    pub quotient_rows: Vec<Felt>,
    /// The quotient tree's batch opening of those rows.
    pub quotient_nodes: Vec<Digest>,
    /// Each committed FRI layer's openings.
    pub fri: Vec<FriLayerOpening>,
}

/// A STARK proof for one table (one segment of a continuation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentProof {
    /// Root of the trace LDE's tree.
    pub trace_root: Digest,
    /// Root of the quotient chunks' tree.
    pub quotient_root: Digest,
    /// Out-of-domain claims.
    pub ood: OodValues,
    /// FRI layer roots.
    pub fri_roots: Vec<Digest>,
    /// FRI final polynomial coefficients.
    pub final_poly: Vec<Ext3>,
    /// The proof-of-work nonce. The verifier accepts any valid one; the prover sends the
    /// smallest, so its proofs are deterministic.
    pub pow_nonce: u64,
    /// The openings at the queried positions.
    pub queries: QueryOpenings,
}

/// Segments `first..first + segments.len()` of a statement: parameters, the workload, the
/// state at each boundary of the range, and one STARK per segment.
///
/// A proof of the whole statement is the one that covers every segment from segment 0 and
/// starts in the workload's start state ([`is_whole`](Self::is_whole)); its last state is
/// the statement's outcome. Any other range is a part: evidence that *if* segment `first`
/// starts in `states[0]`, the run goes through the states after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof<W: Workload> {
    /// The soundness parameters every segment uses.
    pub params: StarkParams,
    /// The computation the segments belong to.
    pub workload: W,
    /// The first segment's index in the statement.
    pub first: usize,
    /// The state segment `first` starts in, then the state each segment ends in: one more
    /// than the segments.
    pub states: Vec<W::State>,
    /// The segments' proofs, in order.
    pub segments: Vec<SegmentProof>,
}

impl<W: Workload> Proof<W> {
    /// The segments the proof covers.
    pub fn range(&self) -> Range<usize> {
        self.first..self.first.saturating_add(self.segments.len())
    }

    /// Whether it covers the whole statement: every segment, from segment 0.
    pub fn is_whole(&self) -> bool {
        self.first == 0 && self.segments.len() == self.workload.segments()
    }

    /// The statement's outcome, the state the last segment ends in, if the proof is whole.
    pub fn outcome(&self) -> Option<&W::State> {
        self.states.last().filter(|_| self.is_whole())
    }

    /// Keccak-256 of the workload's tag and encoding and of the outcome, for a whole proof:
    /// a short name for exactly this statement, which `cli prove` prints and
    /// `cli verify --expect-statement` checks.
    pub fn statement_digest(&self) -> Option<[u8; 32]> {
        Some(statement_digest(&self.workload, self.outcome()?))
    }

    /// Whether the proof and `other` belong to one statement with one parameter set.
    pub fn same_statement(&self, other: &Self) -> bool {
        self.params == other.params && self.workload == other.workload
    }
}

/// Keccak-256 of the workload's tag and encoding and of `outcome`: the name of the statement
/// that `workload` ends in `outcome`.
pub(crate) fn statement_digest<W: Workload>(workload: &W, outcome: &W::State) -> [u8; 32] {
    let mut bytes = statement_context(workload);
    workload.encode_state(outcome, &mut bytes);
    keccak256(HashDomain::Statement, &bytes)
}

/// The workload's tag and encoding: what every segment's transcript binds as its statement,
/// and what a proof's header carries.
pub fn statement_context<W: Workload>(workload: &W) -> Vec<u8> {
    let mut bytes = vec![W::TAG];
    bytes.extend_from_slice(&workload.encode());
    bytes
}

/// Checks that `first..first + count` is a range of at least one segment within the
/// statement.
pub(crate) fn check_segments<W: Workload>(
    workload: &W,
    first: usize,
    count: usize,
) -> Result<(), ParamsError> {
    let segments = workload.segments();
    crate::check_range("first segment", first, 0, segments - 1)?;
    crate::check_range("segment count", count, 1, segments - first)
}

/// The sizes a segment proof's parts must have, fixed by the AIR's shape and the
/// parameters, after checking the parameters against the AIR (`info` holds its constraints).
pub(crate) fn segment_geometry<A: Air>(
    air: &A,
    info: &ConstraintInfo,
    params: &StarkParams,
) -> Result<Geometry, ParamsError> {
    let log_rows = air.log_rows();
    params.validate(log_rows)?;
    let log_chunks = info.log_quotient_chunks;
    if log_chunks > params.log_blowup {
        return Err(ParamsError::DegreeTooHigh {
            degree: info.max_degree() as usize,
            min_blowup: 1 << log_chunks,
        });
    }
    Ok(Geometry {
        width: air.width(),
        log_rows,
        log_blowup: params.log_blowup,
        log_quotient_chunks: log_chunks,
        log_final_poly_len: params.log_final_poly_len,
        num_queries: params.num_queries,
        hash: params.hash,
    })
}

/// The geometry of every segment of `workload` proven with `params` (all share segment 0's
/// AIR shape).
///
/// # Errors
/// Parameters the workload's AIR cannot be proven with.
pub fn geometry<W: Workload>(workload: &W, params: &StarkParams) -> Result<Geometry, ParamsError> {
    air_geometry(&workload.air(0), params)
}

/// The geometry of a segment of `air` proven with `params`.
///
/// # Errors
/// Parameters `air` cannot be proven with.
pub fn air_geometry<A: Air>(air: &A, params: &StarkParams) -> Result<Geometry, ParamsError> {
    segment_geometry(air, &ConstraintInfo::of(air)?, params)
}
