//! A compressed proof of any workload as a trait object ([`AnyCompressed`]), as [`AnyProof`]
//! is for proofs: what the command line asks of one, whichever workload it proves.
//!
//! [`AnyProof`]: crate::AnyProof

use std::fmt::Debug;

use ballast_recursion::{CompressError, CompressedCircuits, verify_compressed};
use ballast_stark::{CompressedRecord, VerifyPolicy};
use serde_json::{Map, Value};

use crate::Describe;

/// A compressed proof of any registered workload's statement.
pub trait AnyCompressed: Debug + Send + Sync {
    /// The canonical encoding ([`CompressedRecord::to_bytes`]).
    fn to_bytes(&self) -> Vec<u8>;
    /// Verifies it ([`verify_compressed`]); the circuits whose figures `policy` judged.
    ///
    /// # Errors
    /// The first check that fails.
    fn verify(&self, policy: &VerifyPolicy) -> Result<CompressedCircuits, CompressError>;
    /// The statement's digest: its uncompressed proof's.
    fn statement_digest(&self) -> [u8; 32];
    /// One line: what it proves.
    fn summary(&self) -> String;
    /// The same as JSON: `workload`, `digest`, and the workload's fields.
    fn json(&self) -> Value;
}

impl<W: Describe + Send + 'static> AnyCompressed for CompressedRecord<W> {
    fn to_bytes(&self) -> Vec<u8> {
        CompressedRecord::to_bytes(self)
    }

    fn verify(&self, policy: &VerifyPolicy) -> Result<CompressedCircuits, CompressError> {
        verify_compressed(self, policy)
    }

    fn statement_digest(&self) -> [u8; 32] {
        CompressedRecord::statement_digest(self)
    }

    fn summary(&self) -> String {
        self.workload.summary(&self.ends[1])
    }

    fn json(&self) -> Value {
        let mut map = Map::new();
        map.insert("workload".into(), W::NAME.into());
        map.insert("digest".into(), hex::encode(self.statement_digest()).into());
        map.extend(self.workload.json(&self.ends[1]));
        Value::Object(map)
    }
}
