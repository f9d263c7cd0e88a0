//! The default size cap against the proofs ballast ships: every shipped and benchmarked
//! shape fits far below it, and so do 200 keccak-chain segments at 219 queries.

use ballast_stark::{DEFAULT_MAX_PROOF_BYTES, Proof, SegmentProof, StarkParams, Workload};
use ballast_workloads::{Fibonacci, KeccakChain};

/// The most bytes a proof of `workload`'s whole statement with `params` can have, from its
/// header (a proof of empty segments has the same header).
fn bound<W: Workload>(workload: W, params: StarkParams) -> u64 {
    let states = vec![workload.start(); workload.segments() + 1];
    let skeleton = Proof {
        params,
        segments: vec![SegmentProof::default(); workload.segments()],
        workload,
        first: 0,
        states,
    };
    Proof::<W>::max_len(&skeleton.to_bytes()).expect("a valid header")
}

#[test]
fn shipped_shapes_fit_far_below_the_default_cap() {
    let chain = |segments: u64| {
        let mut chain = KeccakChain {
            seed: [0; 32],
            steps: 1,
            log_rows: 14,
        };
        chain.steps = segments * chain.steps_per_segment();
        chain
    };
    let sixteen = Fibonacci {
        sequences: 16,
        log_rows: 20,
        segments: 1,
    };
    let blowup4 = StarkParams {
        log_blowup: 2,
        num_queries: 110,
        ..StarkParams::lambda_vm_bench()
    };
    // `cli prove`'s default statement, and the benchmarked Fibonacci shapes.
    for max in [
        bound(chain(4), StarkParams::default()),
        bound(sixteen, StarkParams::lambda_vm_bench()),
        bound(sixteen, blowup4),
    ] {
        assert!(max < DEFAULT_MAX_PROOF_BYTES / 32, "{max}");
    }
    let wide = StarkParams::lambda_vm_bench();
    assert!(bound(chain(200), wide) < DEFAULT_MAX_PROOF_BYTES);
    assert!(
        bound(chain(240), wide) > DEFAULT_MAX_PROOF_BYTES,
        "about 200 is the limit"
    );
}
