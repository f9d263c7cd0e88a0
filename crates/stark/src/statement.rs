//! Statements about the Fibonacci workload, proven as a chain of segments (continuations).
//!
//! A run of n segments × 2^k rows is proven segment by segment. Segment i is its own STARK
//! whose public inputs are its first and last rows; consecutive segments overlap in one row
//! (segment i ends where segment i + 1 starts), so a statement covers n·(2^k − 1) steps.
//! Segments are proven one after another and only their (small) proofs are kept, so peak
//! memory does not grow with n.

use ballast_air::FibonacciAir;
use ballast_field::{Ext3, Felt};

use crate::backend::Backend;
use crate::proof::SegmentShape;
use crate::protocol::SegmentPosition;
use crate::{
    ParamsError, Phase, PhaseTimes, ProverError, SegmentProof, StarkParams, VerifierError,
};

/// Most sequences a statement may have (2 columns each).
pub const MAX_SEQUENCES: usize = 1 << 12;
/// Most segments a statement may have.
pub const MAX_SEGMENTS: usize = 1 << 20;

/// The shape of a Fibonacci run: `sequences` × 2^`log_rows` rows × `segments`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Independent sequences (two columns each).
    pub sequences: usize,
    /// log2 of the rows per segment.
    pub log_rows: usize,
    /// Number of segments.
    pub segments: usize,
}

impl Shape {
    /// Checks the shape's own limits (parameters check `log_rows`).
    ///
    /// # Errors
    /// The first field out of range.
    pub fn validate(&self) -> Result<(), ParamsError> {
        let range = |name, value, max| {
            if (1..=max).contains(&value) {
                Ok(())
            } else {
                Err(ParamsError::OutOfRange {
                    name,
                    value,
                    min: 1,
                    max,
                })
            }
        };
        range("sequences", self.sequences, MAX_SEQUENCES)?;
        range("segments", self.segments, MAX_SEGMENTS)?;
        range("log_rows", self.log_rows, crate::params::MAX_LOG_ROWS)
    }

    /// Trace columns.
    pub fn width(&self) -> usize {
        2 * self.sequences
    }

    /// Steps the statement covers: segments·(2^k − 1).
    pub fn steps(&self) -> u64 {
        self.segments as u64 * ((1u64 << self.log_rows) - 1)
    }

    /// The sizes of one segment's proof.
    pub(crate) fn segment_shape(&self, params: &StarkParams) -> Result<SegmentShape, ParamsError> {
        let zeros = vec![Felt::ZERO; self.width()];
        SegmentShape::new(&self.air(zeros.clone(), zeros), params)
    }

    /// Encoded size of one segment (boundary rows and proof), or `None` on overflow.
    pub(crate) fn segment_len(&self, segment: &SegmentShape) -> Option<u64> {
        let boundary = 2 * self.width() as u64 * Felt::BYTES as u64;
        segment.encoded_len()?.checked_add(boundary)
    }

    /// A rough upper estimate of the prover's peak memory in bytes: one segment's tables and
    /// trees, plus every segment's proof.
    pub fn estimate_peak_bytes(&self, params: &StarkParams) -> u64 {
        let Ok(segment) = self.segment_shape(params) else {
            return u64::MAX;
        };
        let n = 1u64 << self.log_rows;
        let lde = n << params.log_blowup;
        let width = self.width() as u64;
        let quotient_width = segment.quotient_width as u64;
        let (felt, ext, digest) = (Felt::BYTES as u64, Ext3::BYTES as u64, 32u64);
        let tables = width * n * felt                     // trace
            + width * lde * felt                          // its LDE
            + quotient_width * (n + lde) * felt           // quotient chunks and their LDE
            + 3 * lde * ext                               // DEEP values and FRI layers
            + n * ext                                     // out-of-domain weights
            + 2 * lde * felt; // LDE plan and its scratch
        let trees = 3 * lde * digest; // trace and quotient pair trees, FRI layer trees
        let proofs = self
            .segment_len(&segment)
            .unwrap_or(u64::MAX)
            .saturating_mul(self.segments as u64);
        tables.saturating_add(trees).saturating_add(proofs)
    }

    fn air(&self, start: Vec<Felt>, end: Vec<Felt>) -> FibonacciAir {
        FibonacciAir::new(self.log_rows, start, end)
    }
}

/// What a proof proves: running the sequences from `start` for the shape's steps ends at
/// `end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// The run's shape.
    pub shape: Shape,
    /// The first row: (a, b) per sequence.
    pub start: Vec<Felt>,
    /// The last row.
    pub end: Vec<Felt>,
}

impl Statement {
    /// The default first row: sequence j starts at (j, j + 1).
    pub fn default_start(sequences: usize) -> Vec<Felt> {
        (0..sequences as u64)
            .flat_map(|j| [Felt::new(j), Felt::new(j + 1)])
            .collect()
    }
}

/// One segment: its boundary rows and its STARK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The segment's first row.
    pub start: Vec<Felt>,
    /// The segment's last row.
    pub end: Vec<Felt>,
    /// The segment's proof.
    pub proof: SegmentProof,
}

/// A complete proof: parameters, statement and one STARK per segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// The soundness parameters every segment uses.
    pub params: StarkParams,
    /// What is proven.
    pub statement: Statement,
    /// The segments, in order.
    pub segments: Vec<Segment>,
}

/// Proves the run of `shape` from `start`, segment after segment.
///
/// `on_segment` is called with the number of segments done after each one.
///
/// # Errors
/// Invalid shape or parameters, or a backend failure.
pub fn prove_statement(
    shape: Shape,
    start: Vec<Felt>,
    params: &StarkParams,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
    on_segment: &mut dyn FnMut(usize),
) -> Result<Proof, ProverError> {
    shape.validate()?;
    params.validate(shape.log_rows)?;
    if start.len() != shape.width() {
        return Err(ProverError::StartRow {
            expected: shape.width(),
            got: start.len(),
        });
    }
    let mut segments = Vec::with_capacity(shape.segments);
    let mut first_row = start.clone();
    for index in 0..shape.segments {
        let trace = times.time(Phase::Trace, || {
            FibonacciAir::generate_trace(shape.log_rows, &first_row)
        });
        let last_row = trace.row(trace.height() - 1);
        let air = shape.air(first_row.clone(), last_row.clone());
        let position = SegmentPosition {
            index,
            count: shape.segments,
        };
        let proof = crate::prove(&air, &trace, params, position, backend, times)?;
        drop(trace);
        segments.push(Segment {
            start: first_row,
            end: last_row.clone(),
            proof,
        });
        first_row = last_row;
        on_segment(index + 1);
    }
    Ok(Proof {
        params: *params,
        statement: Statement {
            shape,
            start,
            end: first_row,
        },
        segments,
    })
}

/// The conjectured security a verifier requires unless told otherwise.
pub const DEFAULT_MIN_SECURITY_BITS: u32 = 100;

/// What a verifier insists on beyond the proof's own validity.
///
/// The proof names its own parameters, so a verifier must set a floor: the default requires
/// [`DEFAULT_MIN_SECURITY_BITS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyPolicy {
    /// Least conjectured security the proof's parameters must give.
    pub min_security_bits: u32,
    /// When set, the proof must use exactly these parameters.
    pub params: Option<StarkParams>,
    /// When set, the proof must be about exactly this statement.
    pub statement: Option<Statement>,
}

impl Default for VerifyPolicy {
    fn default() -> Self {
        Self {
            min_security_bits: DEFAULT_MIN_SECURITY_BITS,
            params: None,
            statement: None,
        }
    }
}

/// Verifies every segment, the chain between them and the statement's start and end.
///
/// # Errors
/// The first check that fails.
pub fn verify_statement(proof: &Proof, policy: &VerifyPolicy) -> Result<(), VerifierError> {
    let Proof {
        params,
        statement,
        segments,
    } = proof;
    let shape = statement.shape;
    shape.validate()?;
    params.validate(shape.log_rows)?;
    let security = params.conjectured_security_bits(shape.log_rows);
    if security < policy.min_security_bits {
        return Err(VerifierError::InsufficientSecurity {
            got: security,
            required: policy.min_security_bits,
        });
    }
    if let Some(expected) = policy.params
        && expected != *params
    {
        return Err(VerifierError::ParamsMismatch {
            expected,
            got: *params,
        });
    }
    if policy.statement.as_ref().is_some_and(|s| s != statement) {
        return Err(VerifierError::StatementMismatch);
    }
    let width = shape.width();
    let shape_error = |what, expected, got| VerifierError::Shape {
        what,
        expected,
        got,
    };
    if segments.len() != shape.segments {
        return Err(shape_error("segments", shape.segments, segments.len()));
    }
    let rows = [&statement.start, &statement.end]
        .into_iter()
        .chain(segments.iter().flat_map(|s| [&s.start, &s.end]));
    for row in rows {
        if row.len() != width {
            return Err(shape_error("boundary row values", width, row.len()));
        }
    }
    if segments[0].start != statement.start {
        return Err(VerifierError::StatementBoundary { which: "start" });
    }
    if segments[segments.len() - 1].end != statement.end {
        return Err(VerifierError::StatementBoundary { which: "end" });
    }
    for (index, pair) in segments.windows(2).enumerate() {
        if pair[0].end != pair[1].start {
            return Err(VerifierError::BrokenChain { segment: index + 1 });
        }
    }
    for (index, segment) in segments.iter().enumerate() {
        let air = shape.air(segment.start.clone(), segment.end.clone());
        let position = SegmentPosition {
            index,
            count: shape.segments,
        };
        crate::verify(&air, &segment.proof, params, position)?;
    }
    Ok(())
}
