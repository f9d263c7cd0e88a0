#![doc = include_str!("../README.md")]

mod backend;
mod bundle;
mod codec;
mod compressed;
mod deep;
mod dots;
mod error;
mod lanes;
mod layout;
mod ood;
mod params;
mod periodic;
mod policy;
mod proof;
mod protocol;
mod prover;
mod quotient;
mod security;
mod sizes;
mod statement;
mod tables;
mod tables_format;
mod task;
#[cfg(test)]
mod test_air;
mod values;
mod verifier;
mod workload;

pub use backend::CpuBackend;
pub use ballast_backend::{
    Backend, BackendError, CompositionInput, DeepCoefficients, DeviceCounters, Geometry, OodValues,
    Openings, Phase, PhaseTimes, SegmentAir, SegmentProver,
};
pub use ballast_merkle::MerkleHash;
pub use bundle::{PartEnds, bundle, check_cover};
pub use codec::{PREFIX_LEN, Prefix, Section, peek};
pub use compressed::{CompressedRecord, MAX_INNER_LAYERS, NODE_CHILDREN, tree_nodes};
pub use deep::{deep_coefficients, height_deep_coefficients};
pub use error::{BundleError, ProofFormatError, ProverError, VerifierError};
pub use layout::{
    COMPRESSED_MAGIC, LayoutRow, MAGIC, TABLES_MAGIC, compressed_layout, layout, tables_layout,
};
pub use params::{
    LOG_BLOWUP_RANGE, MAX_LOG_ROWS, MAX_POW_BITS, MAX_QUERIES, ParamsError, StarkParams,
    check_range,
};
pub use periodic::{LagrangeAt, PeriodicAt, periodic_at};
pub use policy::{DEFAULT_MAX_PROOF_BYTES, DEFAULT_MIN_SECURITY_BITS, VerifyPolicy};
pub use proof::{Proof, QueryOpenings, SegmentProof, air_geometry, geometry, statement_context};
pub use protocol::{
    PROTOCOL_VERSION, SegmentPosition, SegmentStatement, keyed_statement_data, label,
    statement_data,
};
pub use prover::{prove, prove_unchecked};
pub use security::{
    Analysis, Circuit, HASH_COLLISION_BITS, Regime, Round, TablesCircuit, soundcalc_toml,
};
pub use statement::{
    MAX_SEGMENTS, estimate_peak_bytes, part_range, prove_part, prove_statement, verify_part,
    verify_statement,
};
pub use tables::{
    TableAir, TableStatement, TablesError, TablesProof, TablesReplay, prove_tables, replay_tables,
    tables_statement_data, tables_transcript, tables_transcript_layout, tables_trees,
    verify_tables,
};
pub use tables_format::{RecordedTable, TablesRecord};
pub use verifier::{Replay, TranscriptLayout, replay, transcript_layout, verify};
pub use workload::Workload;
