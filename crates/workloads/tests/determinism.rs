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
        "3b9b99aa46f78b7d24ae66730b8c3b7c6955a56904af7b3bd57b2e4727f099e7"
    );
    assert_eq!(
        sha256_hex(&proof_bytes(2, &chain, &params)),
        "de7b4c2e20e99069701559743e31769caa91e8aa36fe30769abd1eaa1d60d1a2"
    );
    let poseidon2 = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..params
    };
    assert_eq!(
        sha256_hex(&proof_bytes(2, &fib, &poseidon2)),
        "89b0a02586fc81142da217035d1ac71747c5f7953a65c919e17a99fc865dd0d7"
    );
    let poseidon2_chain = Poseidon2Chain {
        seed: [0; 4].map(Felt::new),
        steps: 20,
        log_rows: 4,
    };
    assert_eq!(
        sha256_hex(&proof_bytes(2, &poseidon2_chain, &poseidon2)),
        "090d97515f23d7405dbaae05f8f206e4a6da2cc79cfd18f23282acd43d448147"
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
        "2d66cab1d06d1a4f3e2c197a68313de7c833bde8e26888fc98329a1de715ffa9"
    );
}
