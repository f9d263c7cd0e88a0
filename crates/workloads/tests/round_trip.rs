//! Honest proofs verify at several shapes, blowups and segment counts, with each Merkle hash,
//! and survive encoding.

mod common;

use ballast_stark::{
    MerkleHash, Proof, ProofFormatError, Regime, StarkParams, Workload, peek, verify_statement,
};
use ballast_workloads::{Describe, Fibonacci, KeccakChain, Poseidon2Chain};

/// Proves `workload` with `params` and each Merkle hash, and checks every proof.
fn check<W: Describe + Clone + Send + 'static>(workload: W, params: StarkParams) {
    for hash in MerkleHash::ALL {
        check_with(workload.clone(), StarkParams { hash, ..params });
    }
}

fn check_with<W: Describe + Send + 'static>(workload: W, params: StarkParams) {
    let proof = common::prove(&workload, &params);
    let end = (0..workload.segments()).fold(workload.start(), |s, i| workload.run(i, &s));
    assert_eq!(
        proof.outcome(),
        Some(&end),
        "the statement ends where the run ends"
    );
    verify_statement(&proof, &common::any_security()).expect("honest proof verifies");
    let bytes = proof.to_bytes();
    assert_eq!(
        peek(&bytes).unwrap().length,
        bytes.len() as u64,
        "the header states it"
    );
    assert_eq!(proof.encoded_len(), bytes.len() as u64);
    let decoded = Proof::<W>::from_bytes(&bytes).expect("own encoding decodes");
    assert_eq!(decoded, proof);
    let any = ballast_workloads::decode(&bytes).expect("the registry decodes it");
    any.verify(&common::any_security()).unwrap();
    assert_eq!(any.statement_digest(), proof.statement_digest());
    assert_eq!(any.to_bytes(), bytes);
    let max = ballast_workloads::max_len(&bytes).unwrap();
    assert!(max >= bytes.len() as u64);
    // Exactly the stated length: nothing may follow the proof, nothing may be missing.
    let mut longer = bytes.clone();
    longer.push(0);
    let stated = bytes.len() as u64;
    assert_eq!(
        Proof::<W>::from_bytes(&longer),
        Err(ProofFormatError::StatedLength {
            stated,
            got: stated + 1
        })
    );
    assert_eq!(
        Proof::<W>::from_bytes(&bytes[..bytes.len() - 1]),
        Err(ProofFormatError::StatedLength {
            stated,
            got: stated - 1
        })
    );
    // A stated length above the header's bound is refused whatever follows.
    let mut overstated = bytes.clone();
    overstated[common::section(&proof, "length")].copy_from_slice(&(max + 1).to_le_bytes());
    assert_eq!(
        Proof::<W>::from_bytes(&overstated),
        Err(ProofFormatError::TooLong {
            max,
            stated: max + 1
        })
    );
}

#[test]
fn fibonacci_shapes_blowups_and_segment_counts() {
    let cases = [
        (1, 1, 1, 1, 0),
        (1, 3, 1, 1, 2),
        (4, 6, 3, 1, 3),
        (2, 8, 2, 2, 3),
        (3, 7, 1, 3, 0),
        (2, 6, 2, 4, 6),
        (16, 9, 2, 1, 3),
        (2, 5, 2, 5, 1),
        (3, 6, 2, 6, 4),
    ];
    for (sequences, log_rows, segments, log_blowup, log_final_poly_len) in cases {
        let params = StarkParams {
            log_blowup,
            num_queries: 12,
            pow_bits: 2,
            log_final_poly_len,
            hash: MerkleHash::Keccak256,
        };
        check(
            Fibonacci {
                sequences,
                log_rows,
                segments,
            },
            params,
        );
    }
}

#[test]
fn keccak_chains_of_several_lengths_blowups_and_segment_counts() {
    // 2^6 rows hold two steps: 1 and 3 steps leave the last segment half empty.
    let cases = [(1, 6, 1), (3, 6, 1), (4, 6, 2), (5, 7, 1), (2, 5, 3)];
    for (steps, log_rows, log_blowup) in cases {
        let params = StarkParams {
            log_blowup,
            num_queries: 10,
            pow_bits: 2,
            log_final_poly_len: 2,
            hash: MerkleHash::Keccak256,
        };
        check(
            KeccakChain {
                seed: [steps as u8; 32],
                steps,
                log_rows,
            },
            params,
        );
    }
}

#[test]
fn poseidon2_chains_of_several_lengths_blowups_and_segment_counts() {
    // 2^4 rows hold 16 steps: 5 and 20 steps leave the last segment partly dead.
    let cases = [(1, 4, 1), (5, 4, 2), (16, 4, 1), (20, 4, 3), (40, 5, 1)];
    for (steps, log_rows, log_blowup) in cases {
        let params = StarkParams {
            log_blowup,
            num_queries: 10,
            pow_bits: 2,
            log_final_poly_len: 2,
            hash: MerkleHash::Keccak256,
        };
        check(
            Poseidon2Chain {
                seed: [steps, 1, 2, 3].map(ballast_field::Felt::new),
                steps,
                log_rows,
            },
            params,
        );
    }
}

#[test]
fn named_configurations_prove_and_verify() {
    let fib = Fibonacci {
        sequences: 2,
        log_rows: 8,
        segments: 1,
    };
    let blowup4 = StarkParams {
        log_blowup: 2,
        num_queries: 110,
        ..StarkParams::lambda_vm_bench()
    };
    let secure = StarkParams::for_security(&fib.air(0), 128, Regime::Jbr).unwrap();
    for params in [StarkParams::lambda_vm_bench(), blowup4, secure] {
        check(fib, params);
    }
    let chain = KeccakChain {
        seed: [9; 32],
        steps: 2,
        log_rows: 6,
    };
    check(chain, StarkParams::lambda_vm_bench());
}
