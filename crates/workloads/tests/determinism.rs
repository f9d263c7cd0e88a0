//! Proof bytes depend only on the statement and the parameters: not on the thread count,
//! not on the run.

mod common;

use ballast_field::Felt;
use ballast_stark::{MerkleHash, Regime, StarkParams, Workload};
use ballast_workloads::{AnyProof, Fibonacci, KeccakChain, Poseidon2Chain};
use sha2::{Digest, Sha256};

fn proof_bytes<W: Workload>(threads: usize, workload: &W, params: &StarkParams) -> Vec<u8> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| common::prove(workload, params).to_bytes())
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn identical_bytes_with_one_two_and_four_threads_and_on_repeated_runs() {
    // 2^13 rows take the parallel NTT and Merkle paths; 8 grinding bits exercise the
    // smallest-nonce search.
    let fib = Fibonacci {
        sequences: 4,
        log_rows: 13,
        segments: 2,
    };
    let params = StarkParams {
        pow_bits: 8,
        ..StarkParams::lambda_vm_bench()
    };
    let chain = KeccakChain {
        seed: [1; 32],
        steps: 5,
        log_rows: 7,
    };
    let fast = StarkParams {
        pow_bits: 6,
        ..StarkParams::testing()
    };
    let poseidon2 = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..params
    };
    // One segment of 2^13 rows, the chain ending inside it, committed with Poseidon2.
    let poseidon2_chain = Poseidon2Chain {
        seed: [1, 2, 3, 4].map(Felt::new),
        steps: 8000,
        log_rows: 13,
    };
    let poseidon2_fast = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..fast
    };
    let reference = (
        proof_bytes(1, &fib, &params),
        proof_bytes(1, &chain, &fast),
        proof_bytes(1, &fib, &poseidon2),
        proof_bytes(1, &poseidon2_chain, &poseidon2_fast),
    );
    for threads in [2, 4, 4, 1] {
        assert!(
            proof_bytes(threads, &fib, &params) == reference.0,
            "{threads} threads"
        );
        assert!(
            proof_bytes(threads, &chain, &fast) == reference.1,
            "{threads} threads"
        );
        assert!(
            proof_bytes(threads, &fib, &poseidon2) == reference.2,
            "{threads} threads, Poseidon2"
        );
        assert!(
            proof_bytes(threads, &poseidon2_chain, &poseidon2_fast) == reference.3,
            "{threads} threads, the Poseidon2 chain"
        );
    }
}

/// The SHA-256 of small proofs, pinned. A change here is a change of the proof format or of
/// the protocol: bump `PROTOCOL_VERSION` and update the values deliberately.
#[test]
fn golden_proof_digests() {
    let params = StarkParams {
        pow_bits: 4,
        ..StarkParams::testing()
    };
    let fib = Fibonacci {
        sequences: 2,
        log_rows: 6,
        segments: 2,
    };
    let chain = KeccakChain {
        seed: [0; 32],
        steps: 3,
        log_rows: 6,
    };
    assert_eq!(
        sha256_hex(&proof_bytes(2, &fib, &params)),
        "bafad9de8584f4aae4c8180ad39b1473fbc21dec73345d421ac660175bf681e5"
    );
    assert_eq!(
        sha256_hex(&proof_bytes(2, &chain, &params)),
        "9da13a93af830197b5af13f7a2eac5e3915b1cbe0e3b71841ae5e856a3e4fb83"
    );
    let poseidon2 = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..params
    };
    assert_eq!(
        sha256_hex(&proof_bytes(2, &fib, &poseidon2)),
        "ddab52c5040fae82cbcb614fbaca5bf7e84a6a07d955bf113bc9a33379720cef"
    );
    let poseidon2_chain = Poseidon2Chain {
        seed: [0; 4].map(Felt::new),
        steps: 20,
        log_rows: 4,
    };
    assert_eq!(
        sha256_hex(&proof_bytes(2, &poseidon2_chain, &poseidon2)),
        "db6bda0cd4b08bbf7be25e90f6df8304d70c50d04b542a384bc3e6cd8e421db4"
    );
}

/// The SHA-256 of a small compressed proof, pinned: the layer's AIRs and witness, and the
/// tables prover (`prove_tables`) that proves them a coset of each extension at a time. A
/// change here is a change of the proof format or of the protocol, as above.
#[test]
fn golden_compressed_digest() {
    let fib = Fibonacci {
        sequences: 2,
        log_rows: 6,
        segments: 1,
    };
    let params = StarkParams {
        pow_bits: 4,
        hash: MerkleHash::Poseidon2,
        ..StarkParams::testing()
    };
    let compressed = common::prove(&fib, &params)
        .compress((3, 0), 20, Regime::Jbr, &common::any_security())
        .expect("the proof compresses");
    assert_eq!(
        sha256_hex(&compressed.to_bytes()),
        "c328046136e4ef17406a83a73d2b9252797d53bea77568f53fa905efc6825a52"
    );
}
