#![doc = include_str!("../README.md")]

mod backend;
mod codec;
mod deep;
mod error;
mod ood;
mod params;
mod proof;
mod protocol;
mod prover;
mod quotient;
mod statement;
mod stats;
mod verifier;

pub use backend::{Backend, Committed, CpuBackend};
pub use codec::{HEADER_LEN, MAGIC, Section};
pub use error::{BackendError, ParamsError, ProofFormatError, ProverError, VerifierError};
pub use ood::OodValues;
pub use params::{
    EXTENSION_FIELD_BITS, HASH_COLLISION_BITS, LOG_BLOWUP_RANGE, MAX_LOG_ROWS, MAX_POW_BITS,
    MAX_QUERIES, StarkParams,
};
pub use proof::{QueryProof, SegmentProof};
pub use protocol::{PROTOCOL_VERSION, SegmentPosition};
pub use prover::{prove, prove_unchecked};
pub use statement::{
    DEFAULT_MIN_SECURITY_BITS, MAX_SEGMENTS, MAX_SEQUENCES, Proof, Segment, Shape, Statement,
    VerifyPolicy, prove_statement, verify_statement,
};
pub use stats::{Phase, PhaseTimes};
pub use verifier::verify;
