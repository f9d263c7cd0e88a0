//! What the recursion tests share: the parameters their children and layers prove with.

use ballast_stark::{MerkleHash, StarkParams, VerifyPolicy};

/// Poseidon2 trees, fast and insecure parameters.
pub fn params() -> StarkParams {
    StarkParams {
        hash: MerkleHash::Poseidon2,
        ..StarkParams::testing()
    }
}

/// A policy without a security floor, for the fast parameters.
pub fn any_security() -> VerifyPolicy {
    VerifyPolicy {
        min_security_bits: 0,
        ..VerifyPolicy::default()
    }
}
