//! Shared helpers for the STARK integration tests.

use ballast_stark::{
    CpuBackend, PhaseTimes, Proof, Shape, StarkParams, Statement, VerifyPolicy, prove_statement,
};

/// Proves the default run of `shape` on the CPU backend.
pub fn prove(shape: Shape, params: &StarkParams) -> Proof {
    prove_statement(
        shape,
        Statement::default_start(shape.sequences),
        params,
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .expect("an honest statement proves")
}

/// A policy without a security floor, for tests that use fast, insecure parameters.
#[allow(dead_code)] // not every test binary verifies
pub fn any_security() -> VerifyPolicy {
    VerifyPolicy {
        min_security_bits: 0,
        ..VerifyPolicy::default()
    }
}
