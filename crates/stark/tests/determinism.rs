//! Proof bytes depend only on the statement and the parameters: not on the thread count,
//! not on the run.

mod common;

use ballast_stark::{Shape, StarkParams};
use sha2::{Digest, Sha256};

fn proof_bytes(threads: usize, shape: Shape, params: &StarkParams) -> Vec<u8> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| common::prove(shape, params).to_bytes())
}

#[test]
fn identical_bytes_with_one_two_and_four_threads_and_on_repeated_runs() {
    // 2^13 rows take the parallel NTT and Merkle paths; 8 grinding bits exercise the
    // smallest-nonce search.
    let shape = Shape {
        sequences: 4,
        log_rows: 13,
        segments: 2,
    };
    let params = StarkParams {
        pow_bits: 8,
        ..StarkParams::lambda_vm_bench()
    };
    let reference = proof_bytes(1, shape, &params);
    for threads in [2, 4, 4, 1] {
        assert!(
            proof_bytes(threads, shape, &params) == reference,
            "{threads} threads"
        );
    }
}

/// The SHA-256 of a small proof, pinned. A change here is a change of the proof format or of
/// the protocol: bump `PROTOCOL_VERSION` and update the value deliberately.
#[test]
fn golden_proof_digest() {
    let shape = Shape {
        sequences: 2,
        log_rows: 6,
        segments: 2,
    };
    let params = StarkParams {
        pow_bits: 4,
        ..StarkParams::testing()
    };
    let digest = Sha256::digest(proof_bytes(2, shape, &params));
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        "11251e1d798f07639b176169a68074624775e32ff9b8e27da6490ce52bbafbd6"
    );
}
