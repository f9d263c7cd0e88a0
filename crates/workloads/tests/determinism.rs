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
        "a65f5c500948fc01197a1635229bc6678b3befb3f61cfbb3ea9dacea646e0daa"
    );
    assert_eq!(
        sha256_hex(&proof_bytes(2, &chain, &params)),
        "d4b6663a5f290abb0cd0181a3748cc430f105036600db70bff3d41db9229acaa"
    );
    let poseidon2 = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..params
    };
    assert_eq!(
        sha256_hex(&proof_bytes(2, &fib, &poseidon2)),
        "96c1490e8ac61acb16ebc7c39929ed99ddb6be960f7f4af01712c8abc213d684"
    );
    let poseidon2_chain = Poseidon2Chain {
        seed: [0; 4].map(Felt::new),
        steps: 20,
        log_rows: 4,
    };
    assert_eq!(
        sha256_hex(&proof_bytes(2, &poseidon2_chain, &poseidon2)),
        "a5c65b1240d4c6a05dab050d420d67a2e06ad9f9b6a7ad4933c2b79db1541dce"
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
        "f69ccb3bb736e1317f2e7bace507ceec72159653c8c264611386219160e99b36"
    );
}
