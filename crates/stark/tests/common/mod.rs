//! Shared helpers for the STARK integration tests.

use ballast_stark::{
    CpuBackend, PhaseTimes, Proof, Shape, StarkParams, Statement, prove_statement,
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
