//! Honest proofs verify at several shapes, blowups and segment counts, and survive encoding.

mod common;

use ballast_air::FibonacciAir;
use ballast_stark::{Proof, Shape, StarkParams, verify_statement};

fn check(shape: Shape, params: StarkParams) {
    let proof = common::prove(shape, &params);
    let last = FibonacciAir::last_row_from(shape.log_rows, &proof.segments.last().unwrap().start);
    assert_eq!(
        proof.statement.end, last,
        "statement ends where the run ends"
    );
    verify_statement(&proof, &common::any_security()).expect("honest proof verifies");
    let bytes = proof.to_bytes();
    let decoded = Proof::from_bytes(&bytes).expect("own encoding decodes");
    assert_eq!(decoded, proof);
    verify_statement(&decoded, &common::any_security()).unwrap();
}

#[test]
fn shapes_blowups_and_segment_counts() {
    let cases = [
        (1, 1, 1, 1, 0),
        (1, 3, 1, 1, 2),
        (4, 6, 3, 1, 3),
        (2, 8, 2, 2, 3),
        (3, 7, 1, 3, 0),
        (2, 6, 2, 4, 6),
        (16, 9, 2, 1, 3),
    ];
    for (sequences, log_rows, segments, log_blowup, log_final_poly_len) in cases {
        let shape = Shape {
            sequences,
            log_rows,
            segments,
        };
        let params = StarkParams {
            log_blowup,
            num_queries: 12,
            pow_bits: 2,
            log_final_poly_len,
        };
        check(shape, params);
    }
}

#[test]
fn named_configurations_prove_and_verify() {
    let shape = Shape {
        sequences: 2,
        log_rows: 8,
        segments: 1,
    };
    check(shape, StarkParams::lambda_vm_bench());
    check(
        shape,
        StarkParams {
            log_blowup: 2,
            num_queries: 110,
            ..StarkParams::lambda_vm_bench()
        },
    );
    check(shape, StarkParams::default());
}
