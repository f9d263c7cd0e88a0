//! What a segment proof contains, in protocol order.

use ballast_air::{Air, ConstraintInfo};
use ballast_field::{Ext3, Felt};
use ballast_fri::{FriLayerOpening, round_arities};
use ballast_merkle::Digest;

use crate::{OodValues, ParamsError, StarkParams};

/// The openings of every commitment at the queried positions of one segment.
#[derive(Clone, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, PartialEq, Eq)]
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

/// The sizes a segment proof's parts must have, fixed by the AIR's shape and the parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SegmentShape {
    pub width: usize,
    pub log_quotient_chunks: usize,
    pub quotient_width: usize,
    pub log_rows: usize,
    pub log_blowup: usize,
    pub num_queries: usize,
    pub log_final_poly_len: usize,
}

impl SegmentShape {
    /// The sizes `air` (with its constraints `info`) and `params` fix, after checking the
    /// parameters against the AIR.
    pub fn new<A: Air>(
        air: &A,
        info: &ConstraintInfo,
        params: &StarkParams,
    ) -> Result<Self, ParamsError> {
        let log_rows = air.log_rows();
        params.validate(log_rows)?;
        let log_chunks = info.log_quotient_chunks;
        if log_chunks > params.log_blowup {
            return Err(ParamsError::DegreeTooHigh {
                degree: info.max_degree() as usize,
                min_blowup: 1 << log_chunks,
            });
        }
        Ok(Self {
            width: air.width(),
            log_quotient_chunks: log_chunks,
            quotient_width: Ext3::DEGREE << log_chunks,
            log_rows,
            log_blowup: params.log_blowup,
            num_queries: params.num_queries,
            log_final_poly_len: params.log_final_poly_len,
        })
    }

    /// log2 of the LDE domain size.
    pub fn log_lde(&self) -> usize {
        self.log_rows + self.log_blowup
    }

    /// Number of binary FRI folds.
    pub fn fri_folds(&self) -> usize {
        self.log_rows - self.log_final_poly_len
    }

    /// log2 of each FRI round's arity; one committed layer per round.
    pub fn fri_arities(&self) -> Vec<usize> {
        round_arities(self.fri_folds())
    }

    /// The most bytes a segment proof can have, or `None` on overflow: every query at its
    /// own position and no node shared between their openings. Actual proofs are shorter
    /// by whatever the queries share.
    pub fn max_encoded_len(&self) -> Option<u64> {
        let digest = 32u64;
        let (felt, ext) = (Felt::BYTES as u64, Ext3::BYTES as u64);
        let width = self.width as u64;
        let quotient_width = self.quotient_width as u64;
        let log_lde = self.log_lde() as u64;
        let arities = self.fri_arities();
        let mut log_len = log_lde;
        let mut fri_per_query = 0;
        for &log_arity in &arities {
            let log_arity = log_arity as u64;
            fri_per_query += ((1 << log_arity) - 1) * ext + (log_len - log_arity) * digest;
            log_len -= log_arity;
        }
        let per_query = 4 + (width + quotient_width) * felt + 2 * log_lde * digest + fri_per_query;
        let fixed = 2 * digest
            + (2 * width + quotient_width) * ext
            + arities.len() as u64 * digest
            + (1u64 << self.log_final_poly_len) * ext
            + 8
            + 2;
        per_query
            .checked_mul(self.num_queries as u64)?
            .checked_add(fixed)
    }
}
