//! Errors of the prover, the verifier and the proof format (a parameter's own error,
//! [`ParamsError`], is `params.rs`'s).

use std::ops::Range;

use ballast_air::AirError;
use ballast_fri::FriError;
use thiserror::Error;

use crate::Regime;

use crate::{BackendError, MerkleHash, ParamsError, StarkParams};

/// Why proving failed.
#[derive(Debug, Error)]
pub enum ProverError {
    /// This error occurs when the parameters are invalid.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// This error occurs when the trace does not satisfy the AIR: the statement is false.
    #[error("the trace does not satisfy the AIR: {0}")]
    Unsatisfied(#[from] AirError),
    /// This error occurs when the composed polynomial is not of low degree, which only a
    /// trace violating its constraints causes.
    #[error("low-degree test failed while proving: {0}")]
    Fri(#[from] FriError),
    /// This error occurs when the backend fails.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// This error occurs when the constraints do not hold at the out-of-domain point although
    /// the trace satisfies them: the prover computed something wrong.
    #[error(
        "internal error: the out-of-domain claims do not satisfy the constraints, though the trace does"
    )]
    OodIdentity,
    /// This error occurs when tables to prove in one proof are out of order or do not match
    /// their traces.
    #[error(transparent)]
    Tables(#[from] crate::TablesError),
}

/// Why a proof was rejected.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum VerifierError {
    /// This error occurs when the proof's parameters are invalid.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// This error occurs when the proof's parameters give less security than required.
    #[error(
        "proof offers {got} bits of {regime} security ({conjectured} conjectured), {required} required"
    )]
    InsufficientSecurity {
        /// Bits the proof's parameters give in the regime the floor is judged in.
        got: u32,
        /// That regime.
        regime: Regime,
        /// Bits they give by the ethSTARK conjecture, for comparison.
        conjectured: u32,
        /// Bits the verifier requires.
        required: u32,
    },
    /// This error occurs when a proof's parts do not have the sizes its parameters fix.
    #[error("malformed proof: {what}: expected {expected}, got {got}")]
    Shape {
        /// Which part.
        what: &'static str,
        /// The size the parameters fix.
        expected: usize,
        /// The size found.
        got: usize,
    },
    /// This error occurs when the proof has more bytes than the verifier's cap.
    #[error("the proof is {len} bytes, more than the {cap}-byte cap")]
    TooLarge {
        /// The proof's length in bytes.
        len: u64,
        /// The verifier's cap.
        cap: u64,
    },
    /// This error occurs when the proof-of-work nonce does not have enough leading zeros.
    #[error("segment {segment}: proof-of-work nonce is invalid")]
    ProofOfWork {
        /// The segment index.
        segment: usize,
    },
    /// This error occurs when the out-of-domain values do not satisfy the constraints.
    #[error("segment {segment}: out-of-domain evaluations do not satisfy the constraints")]
    OodMismatch {
        /// The segment index.
        segment: usize,
    },
    /// This error occurs when the proof's query positions are not the ones the transcript
    /// draws.
    #[error("segment {segment}: the query positions are not the transcript's")]
    QueryPositions {
        /// The segment index.
        segment: usize,
    },
    /// This error occurs when the trace or quotient rows' batch opening does not match its
    /// commitment.
    #[error("segment {segment}: {commitment} rows' batch opening does not match its root")]
    Opening {
        /// The segment index.
        segment: usize,
        /// Which commitment: "trace" or "quotient".
        commitment: &'static str,
    },
    /// This error occurs when a FRI check fails.
    #[error("segment {segment}: {source}")]
    Fri {
        /// The segment index.
        segment: usize,
        /// The failing FRI check.
        source: FriError,
    },
    /// This error occurs when a proof covering segment 0 starts in another state than the
    /// workload's start.
    #[error("segment 0 starts in another state than the workload's start")]
    Start,
    /// This error occurs when a statement's verdict is asked of a part: a proof that does
    /// not cover every segment from segment 0.
    #[error("it covers segments {}..{} of {segments}, not the whole statement", .range.start, .range.end)]
    NotWhole {
        /// The segments it covers.
        range: Range<usize>,
        /// The statement's segments.
        segments: usize,
    },
    /// This error occurs when the proof's trees commit with another hash than the verifier
    /// requires.
    #[error("the proof commits with {got}, the verifier requires {required}")]
    HashMismatch {
        /// The required hash.
        required: MerkleHash,
        /// The proof's hash.
        got: MerkleHash,
    },
    /// This error occurs when the proof uses other parameters than the verifier requires.
    #[error("the proof uses parameters {got:?}, the verifier requires {expected:?}")]
    ParamsMismatch {
        /// The required parameters.
        expected: StarkParams,
        /// The proof's parameters.
        got: StarkParams,
    },
}

/// Why parts could not be bundled into one proof. Parts are named as the caller named them.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum BundleError {
    /// This error occurs when no part is given.
    #[error("no parts given")]
    Empty,
    /// This error occurs when a part proves another statement, or uses other parameters,
    /// than the first part.
    #[error("{part} belongs to another {what} than {reference}")]
    Foreign {
        /// The part that differs.
        part: String,
        /// The first part, whose statement the others must prove.
        reference: String,
        /// What differs: `statement` or `parameter set`.
        what: &'static str,
    },
    /// This error occurs when no part covers some segments.
    #[error("no part covers segments {}..{} ({}a part is missing)", .range.start, .range.end,
            .after.as_ref().map_or(String::new(), |p| format!("after {p}: ")))]
    Missing {
        /// The segments no part covers.
        range: Range<usize>,
        /// The part that ends where they start, if any.
        after: Option<String>,
    },
    /// This error occurs when the bundled proof would have more bytes than the policy's cap.
    #[error("the bundled proof would be {len} bytes, more than the {cap}-byte cap")]
    TooLarge {
        /// The bundled proof's length in bytes.
        len: u64,
        /// The cap.
        cap: u64,
    },
    /// This error occurs when two parts cover the same segment.
    #[error("{part} (segments {}..{}) overlaps {other} (segments {}..{})",
            .range.start, .range.end, .other_range.start, .other_range.end)]
    Overlap {
        /// The later part.
        part: String,
        /// Its segments.
        range: Range<usize>,
        /// The part it overlaps.
        other: String,
        /// That part's segments.
        other_range: Range<usize>,
    },
    /// This error occurs when a part does not start in the state the part before it ends in.
    #[error("{part} does not start in the state {previous} ends in")]
    Chain {
        /// The part.
        part: String,
        /// The part before it.
        previous: String,
    },
    /// This error occurs when a part does not verify.
    #[error("{part} is invalid: {reason}")]
    Invalid {
        /// The part.
        part: String,
        /// Why it was rejected.
        reason: VerifierError,
    },
}

/// Why proof bytes could not be decoded.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ProofFormatError {
    /// This error occurs when the bytes do not start with a proof's magic.
    #[error("not a ballast proof (bad magic bytes)")]
    BadMagic,
    /// This error occurs when the proof was written by another format version.
    #[error("unsupported proof format version {got}, this build reads version {supported}")]
    UnsupportedVersion {
        /// The version in the file.
        got: u16,
        /// The version this build reads.
        supported: u16,
    },
    /// This error occurs when the workload tag is not the one being decoded, or unknown.
    #[error("unknown workload tag {0}")]
    UnknownWorkload(u8),
    /// This error occurs when the header names no Merkle hash this build knows.
    #[error("unknown Merkle hash id {0}")]
    UnknownHash(u8),
    /// This error occurs when a header field is outside its supported range.
    #[error("invalid header: {0}")]
    Header(#[from] ParamsError),
    /// This error occurs when the header describes a proof too large to exist.
    #[error("the header describes a proof of more than 2^64 bytes")]
    TooLarge,
    /// This error occurs when the bytes end before their contents do, or go on after.
    #[error("proof is {got} bytes, its contents imply {expected}")]
    Length {
        /// Bytes the contents imply.
        expected: u64,
        /// Bytes present.
        got: u64,
    },
    /// This error occurs when the proof is not as long as its header states.
    #[error("proof is {got} bytes, its header states {stated}")]
    StatedLength {
        /// The length the header states.
        stated: u64,
        /// Bytes present.
        got: u64,
    },
    /// This error occurs when the header states a length no proof with its parameters,
    /// workload and range can have.
    #[error(
        "the header states {stated} bytes, more than a proof with its parameters can have ({max})"
    )]
    TooLong {
        /// The most bytes a proof with this header can have.
        max: u64,
        /// The length the header states.
        stated: u64,
    },
    /// This error occurs when a segment's query positions are not a strictly increasing
    /// list of at most `num_queries` positions in the LDE domain.
    #[error("segment {segment}: invalid query positions: {reason}")]
    Positions {
        /// The segment index.
        segment: usize,
        /// What is wrong with them.
        reason: String,
    },
    /// This error occurs when a compressed proof's header states a range of segments other
    /// than the whole statement.
    #[error(
        "a compressed proof covers its whole statement, not segments {first}..{} of {segments}",
        first + count
    )]
    NotWhole {
        /// The first segment stated.
        first: usize,
        /// The segments stated.
        count: usize,
        /// The statement's segments.
        segments: usize,
    },
    /// This error occurs when a tables proof states tables no tables proof has (none, not
    /// tallest first, a shape its parameters cannot prove) or invalid query positions.
    #[error("invalid tables proof: {0}")]
    Tables(String),
    /// This error occurs when a field element, or an element of a Poseidon2 digest, is not
    /// in canonical form.
    #[error("non-canonical field element at byte {offset}")]
    NonCanonical {
        /// Offset of the element.
        offset: usize,
    },
}
