//! What a segment proof contains, in protocol order.

use ballast_air::{Air, ConstraintInfo};
use ballast_field::{Ext3, Felt};
use ballast_fri::FriLayerProof;
use ballast_merkle::Digest;

use crate::{OodValues, ParamsError, StarkParams};

/// The openings at one query: the pair of LDE positions j and j + N/2 (points x and −x).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryProof {
    /// Rows j and j + N/2 of the trace's LDE, concatenated.
    pub trace_rows: Vec<Felt>,
    /// Their leaf's Merkle path in the trace tree.
    pub trace_path: Vec<Digest>,
    /// Rows j and j + N/2 of the quotient chunks' LDE, concatenated.
    pub quotient_rows: Vec<Felt>,
    /// Their leaf's Merkle path in the quotient tree.
    pub quotient_path: Vec<Digest>,
    /// The FRI openings along the query's folding path.
    pub fri: Vec<FriLayerProof>,
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
    /// The proof-of-work nonce (the smallest valid one).
    pub pow_nonce: u64,
    /// One entry per query.
    pub queries: Vec<QueryProof>,
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

    /// Number of FRI folds.
    pub fn fri_folds(&self) -> usize {
        self.log_rows - self.log_final_poly_len
    }

    /// Number of committed FRI layers: every fold but the first has one.
    pub fn fri_layers(&self) -> usize {
        self.fri_folds().saturating_sub(1)
    }

    /// Merkle path length in committed FRI layer `i` (1-based), whose tree has
    /// 2^(log_lde − 1 − i) leaves.
    pub fn fri_path_len(&self, i: usize) -> usize {
        self.log_lde() - 1 - i
    }

    /// Encoded size of a segment proof in bytes, or `None` on overflow.
    pub fn encoded_len(&self) -> Option<u64> {
        let digest = 32u64;
        let (felt, ext) = (Felt::BYTES as u64, Ext3::BYTES as u64);
        let width = self.width as u64;
        let quotient_width = self.quotient_width as u64;
        let log_lde = self.log_lde() as u64;
        let layers = self.fri_layers() as u64;
        let fri_path_digests = (1..=self.fri_layers())
            .map(|i| self.fri_path_len(i) as u64)
            .sum::<u64>();
        let per_query = 2 * (width + quotient_width) * felt
            + 2 * (log_lde - 1) * digest
            + layers * ext
            + fri_path_digests * digest;
        let fixed = 2 * digest
            + (2 * width + quotient_width) * ext
            + layers * digest
            + (1u64 << self.log_final_poly_len) * ext
            + 8;
        per_query
            .checked_mul(self.num_queries as u64)?
            .checked_add(fixed)
    }
}
