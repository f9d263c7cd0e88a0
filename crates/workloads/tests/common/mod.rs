//! Shared helpers for the workloads' integration tests.

use ballast_stark::{
    CpuBackend, PhaseTimes, Proof, StarkParams, VerifyPolicy, Workload, prove_statement,
};

/// Proves `workload` on the CPU backend.
pub fn prove<W: Workload>(workload: &W, params: &StarkParams) -> Proof<W> {
    prove_statement(
        workload,
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

/// Where the section `name` lies in `proof`'s encoding.
#[allow(dead_code)] // not every test binary tampers with sections
pub fn section<W: Workload>(proof: &Proof<W>, name: &str) -> std::ops::Range<usize> {
    let sections = proof.sections();
    let found = sections.iter().find(|s| s.name == name);
    found.expect("the layout has the section").range.clone()
}
