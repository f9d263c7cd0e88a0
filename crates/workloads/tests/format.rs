//! The default size cap against the proofs ballast ships: every shipped and benchmarked
//! shape fits far below it, and so do 200 keccak-chain segments at 219 queries. And the
//! parameters the library derives from a target, which set those shapes' query counts.

use ballast_stark::{DEFAULT_MAX_PROOF_BYTES, Proof, Regime, SegmentProof, StarkParams, Workload};
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
        bound(
            chain(4),
            StarkParams::for_security(&chain(4).air(0), 128, Regime::Jbr).unwrap(),
        ),
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

/// The library's parameters reach their target at every segment size: the query count
/// grows with the segments where a fixed one would fall short (227 queries give 128 bits at
/// 2^14 rows, 127.2 at 2^20, 124.6 at 2^28).
#[test]
fn parameters_for_a_target_reach_it_at_every_size() {
    use ballast_stark::Circuit;
    let mut queries = Vec::new();
    for log_rows in [14, 16, 20, 24, 28] {
        let air = ballast_workloads::KeccakChainAir { log_rows };
        let params = StarkParams::for_security(&air, 128, Regime::Jbr).unwrap();
        let bits = Circuit::of(&air, &params)
            .unwrap()
            .analyse(Regime::Jbr)
            .total;
        assert!(
            bits >= 128,
            "2^{log_rows} rows: {bits} bits with {params:?}"
        );
        queries.push(params.num_queries);
    }
    assert_eq!(queries[0], 227, "the default statement's");
    assert!(queries.windows(2).all(|w| w[0] <= w[1]) && queries[0] < queries[4]);
    assert!(
        StarkParams::for_security(
            &ballast_workloads::KeccakChainAir { log_rows: 14 },
            129,
            Regime::Jbr
        )
        .is_err()
    );
}
