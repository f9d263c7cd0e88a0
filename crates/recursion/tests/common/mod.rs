//! What the recursion tests share: the children, their statement and the parameters they
//! and their layers prove with.

use ballast_air::{Air, ConstraintInfo, SymbolicAir};
use ballast_field::{Felt, RowBlocks};
use ballast_recursion::{Child, SBOX, segment_statements};
use ballast_stark::{
    CpuBackend, MerkleHash, PhaseTimes, Proof, SegmentPosition, SegmentProof, SegmentStatement,
    StarkParams, VerifyPolicy, Workload, prove, prove_statement, statement_context, verify,
};
use ballast_workloads::{Fibonacci, Poseidon2Chain};

/// Poseidon2 trees, fast and insecure parameters.
pub fn params() -> StarkParams {
    StarkParams {
        hash: MerkleHash::Poseidon2,
        ..StarkParams::testing()
    }
}

/// [`params`] at blowup 8, for a layer's AIRs: the smallest blowup their degree-7
/// constraints take.
pub fn layer_params() -> StarkParams {
    StarkParams {
        log_blowup: 3,
        ..params()
    }
}

/// Whether `air`'s constraints have the degrees a layer's AIR may: its one permutation's
/// [`SBOX`]'s, every other one at most 3.
pub fn has_layer_degrees(air: &impl Air) -> bool {
    let info = ConstraintInfo::of(air).expect("a valid AIR");
    let high = info.constraints.iter().filter(|&&(_, degree)| degree > 3);
    info.max_degree() == SBOX.degree() && high.count() == SBOX.columns()
}

/// Asserts that `a` and `b`, the AIRs of two children of one shape, are one definition
/// (name, rows, width, periodic and public columns, constraints) of other public inputs
/// (`inputs`, a's then b's).
// Only the tests of the AIRs that take per-child values (transcript, identity) call it.
#[allow(dead_code)]
pub fn assert_one_definition<A: Air>(a: &A, b: &A, inputs: [Vec<Felt>; 2]) {
    assert_eq!(
        (a.id(), a.log_rows(), a.width()),
        (b.id(), b.log_rows(), b.width())
    );
    assert_eq!(a.periodic_columns(), b.periodic_columns());
    assert_eq!(a.columns_source(), b.columns_source());
    assert_eq!(a.public_columns(), b.public_columns());
    assert_eq!(SymbolicAir::of(a).encode(), SymbolicAir::of(b).encode());
    assert_eq!(ConstraintInfo::of(a), ConstraintInfo::of(b));
    assert_ne!(inputs[0], inputs[1]);
}

/// A policy without a security floor, for the fast parameters.
pub fn any_security() -> VerifyPolicy {
    VerifyPolicy {
        min_security_bits: 0,
        ..VerifyPolicy::default()
    }
}

/// A one-segment statement of these public inputs.
pub fn statement(public_inputs: &[Felt]) -> SegmentStatement<'_> {
    SegmentStatement {
        context: b"recursion test",
        position: SegmentPosition { index: 0, count: 1 },
        public_inputs,
    }
}

/// Two Fibonacci sequences in one segment of 2^`log_rows` rows.
pub fn fibonacci(log_rows: usize) -> Fibonacci {
    Fibonacci {
        sequences: 2,
        log_rows,
        segments: 1,
    }
}

/// 16 Poseidon2 steps in one segment of 2^4 rows.
pub fn poseidon2_chain() -> Poseidon2Chain {
    Poseidon2Chain {
        seed: [1, 2, 3, 4].map(Felt::new),
        steps: 16,
        log_rows: 4,
    }
}

/// A workload's first segment proven with `params` for [`statement`]: the proof and the
/// segment's public inputs.
pub fn proven<W: Workload>(workload: &W, params: &StarkParams) -> (SegmentProof, Vec<Felt>) {
    let air = workload.air(0);
    let start = workload.start();
    let (mut table, end) = workload.trace_table(0, &start);
    let public = workload.public_inputs(0, &start, &end);
    let proof = prove(
        &air,
        &mut table,
        &statement(&public),
        params,
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
    )
    .expect("the child proves");
    (proof, public)
}

/// A whole statement of `workload` proven with [`params`], its context, each segment's
/// public inputs, and each segment as a node's child.
// Only the tests of nodes take it; the others include this module as it is.
#[allow(dead_code)]
pub fn segment_children<W: Workload>(
    workload: &W,
) -> (Proof<W>, Vec<u8>, Vec<Vec<Felt>>, Vec<Child>) {
    let proof = prove_statement(
        workload,
        &params(),
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .expect("the statement proves");
    let context = statement_context(workload);
    let public_inputs: Vec<Vec<Felt>> = (proof.states.windows(2).enumerate())
        .map(|(i, ends)| workload.public_inputs(i, &ends[0], &ends[1]))
        .collect();
    let statements = segment_statements(&context, &public_inputs);
    let children = (proof.segments.iter().zip(&statements).enumerate())
        .map(|(i, (segment, statement))| {
            let air = workload.air(i);
            Child::of_segment(&air, segment, statement, &params(), &any_security())
                .expect("a node takes each segment")
        })
        .collect();
    (proof, context, public_inputs, children)
}

/// A layer's table proven with [`layer_params`] for [`statement`] of `public`, then verified: the
/// first error of either, as text.
pub fn layer_proves<A: Air>(air: &A, table: &mut RowBlocks, public: &[Felt]) -> Result<(), String> {
    let params = layer_params();
    let proof = prove(
        air,
        table,
        &statement(public),
        &params,
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
    )
    .map_err(|e| e.to_string())?;
    verify(air, &proof, &statement(public), &params, &any_security()).map_err(|e| e.to_string())
}
