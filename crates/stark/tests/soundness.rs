//! The verifier rejects false statements, tampered proofs and malformed bytes.

mod common;

use ballast_air::{Air, FibonacciAir};
use ballast_field::Felt;
use ballast_stark::{
    CpuBackend, PhaseTimes, Proof, ProverError, SegmentPosition, Shape, StarkParams, Statement,
    VerifierError, VerifyPolicy, prove, prove_unchecked, verify, verify_statement,
};

/// A small shape and fast parameters for tests that tamper with proofs.
fn small() -> (Shape, StarkParams) {
    (
        Shape {
            sequences: 2,
            log_rows: 5,
            segments: 2,
        },
        StarkParams::testing(),
    )
}

const ONE_SEGMENT: SegmentPosition = SegmentPosition { index: 0, count: 1 };

fn rejected(bytes: &[u8]) -> bool {
    match Proof::from_bytes(bytes) {
        Err(_) => true,
        Ok(proof) => verify_statement(&proof, &common::any_security()).is_err(),
    }
}

#[test]
fn a_trace_breaking_a_constraint_is_refused_and_its_proof_rejected() {
    let log_rows = 6;
    let start = Statement::default_start(2);
    let mut trace = FibonacciAir::generate_trace(log_rows, &start);
    let end = trace.row(63);
    trace.column_mut(1)[40] += Felt::ONE;
    let air = FibonacciAir::new(log_rows, start, end);
    let params = StarkParams::testing();
    let backend = CpuBackend::new();
    let mut times = PhaseTimes::default();

    let refused = prove(&air, &trace, &params, ONE_SEGMENT, &backend, &mut times);
    assert!(
        matches!(refused, Err(ProverError::Unsatisfied(_))),
        "{refused:?}"
    );

    // Proving anyway gives a proof whose out-of-domain claims cannot satisfy the constraints.
    let forged = prove_unchecked(&air, &trace, &params, ONE_SEGMENT, &backend, &mut times)
        .expect("the unchecked prover runs to the end");
    assert_eq!(
        verify(&air, &forged, &params, ONE_SEGMENT),
        Err(VerifierError::OodMismatch { segment: 0 })
    );
}

#[test]
fn a_byte_changed_in_any_section_is_rejected() {
    let (shape, params) = small();
    let proof = common::prove(shape, &params);
    let bytes = proof.to_bytes();
    assert!(!rejected(&bytes), "the untouched proof verifies");
    let sections = proof.sections();
    assert_eq!(sections.last().unwrap().range.end, bytes.len());
    let mut kinds = std::collections::BTreeSet::new();
    for section in &sections {
        for offset in [section.range.start, section.range.end - 1] {
            for bit in [0, 6] {
                let mut tampered = bytes.clone();
                tampered[offset] ^= 1 << bit;
                assert!(
                    rejected(&tampered),
                    "flipping bit {bit} of byte {offset} in {} went unnoticed",
                    section.name
                );
            }
        }
        kinds.insert(
            section
                .name
                .split(' ')
                .filter(|w| w.parse::<u32>().is_err())
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    // Every kind of section was tampered with: header, parameters, public inputs,
    // commitments, openings, FRI layers and the nonce.
    for kind in [
        "magic",
        "version",
        "params",
        "statement shape",
        "statement start",
        "statement end",
        "segment start",
        "segment end",
        "segment trace root",
        "segment quotient root",
        "segment ood trace z",
        "segment ood trace zw",
        "segment ood quotient z",
        "segment fri roots",
        "segment final poly",
        "segment pow nonce",
        "segment query trace rows",
        "segment query trace path",
        "segment query quotient rows",
        "segment query quotient path",
        "segment query fri layer sibling",
        "segment query fri layer path",
    ] {
        assert!(
            kinds.contains(kind),
            "no section of kind {kind:?}: {kinds:?}"
        );
    }
}

#[test]
fn other_public_inputs_or_parameters_are_rejected() {
    let (shape, params) = small();
    let proof = common::prove(shape, &params);

    // Claiming another end: the last segment's STARK binds its public inputs.
    let mut forged = proof.clone();
    forged.statement.end[0] += Felt::ONE;
    forged.segments[1].end[0] += Felt::ONE;
    assert!(verify_statement(&forged, &common::any_security()).is_err());

    // Claiming another start without touching the segments breaks the boundary check.
    let mut forged = proof.clone();
    forged.statement.start[1] += Felt::ONE;
    assert_eq!(
        verify_statement(&forged, &common::any_security()),
        Err(VerifierError::StatementBoundary { which: "start" })
    );

    // Re-chaining the segments: segment 1's first row is bound into its transcript.
    let mut forged = proof.clone();
    forged.segments[0].end[2] += Felt::ONE;
    forged.segments[1].start[2] += Felt::ONE;
    assert!(verify_statement(&forged, &common::any_security()).is_err());
    let mut forged = proof.clone();
    forged.segments[0].end[2] += Felt::ONE;
    assert_eq!(
        verify_statement(&forged, &common::any_security()),
        Err(VerifierError::BrokenChain { segment: 1 })
    );

    // Swapping the segments of two different runs fails the chain or the binding.
    let mut forged = proof.clone();
    forged.segments.swap(0, 1);
    assert!(verify_statement(&forged, &common::any_security()).is_err());

    // A verifier expecting another statement or other parameters refuses.
    let mut other = proof.statement.clone();
    other.end[3] += Felt::ONE;
    assert_ne!(other.digest(), proof.statement.digest());
    let policy = VerifyPolicy {
        statement: Some(other),
        ..common::any_security()
    };
    assert_eq!(
        verify_statement(&proof, &policy),
        Err(VerifierError::StatementMismatch)
    );
    let policy = VerifyPolicy {
        params: Some(StarkParams {
            num_queries: params.num_queries + 1,
            ..params
        }),
        ..common::any_security()
    };
    assert!(matches!(
        verify_statement(&proof, &policy),
        Err(VerifierError::ParamsMismatch { .. })
    ));

    // Proof parameters changed after proving: the transcript binds them.
    let mut forged = proof.clone();
    forged.params.pow_bits += 1;
    assert!(verify_statement(&forged, &common::any_security()).is_err());

    // A segment verified as if it sat at another position in the chain.
    let segment = &proof.segments[0];
    let air = FibonacciAir::new(shape.log_rows, segment.start.clone(), segment.end.clone());
    assert!(
        verify(
            &air,
            &segment.proof,
            &params,
            SegmentPosition { index: 0, count: 2 }
        )
        .is_ok()
    );
    assert!(
        verify(
            &air,
            &segment.proof,
            &params,
            SegmentPosition { index: 1, count: 2 }
        )
        .is_err()
    );
    assert_eq!(air.public_inputs().len(), 2 * shape.width());
}

#[test]
fn a_verifier_enforces_its_security_floor() {
    let (shape, params) = small();
    let proof = common::prove(shape, &params);
    // The default policy requires 100 bits; the test parameters give 8.
    assert_eq!(
        verify_statement(&proof, &VerifyPolicy::default()),
        Err(VerifierError::InsufficientSecurity {
            got: 8,
            required: 100
        })
    );
    let bits = params.conjectured_security_bits(shape.log_rows);
    let policy = VerifyPolicy {
        min_security_bits: bits + 1,
        ..common::any_security()
    };
    assert_eq!(
        verify_statement(&proof, &policy),
        Err(VerifierError::InsufficientSecurity {
            got: bits,
            required: bits + 1
        })
    );
}

#[test]
fn truncated_and_random_bytes_give_errors_not_panics() {
    let (shape, params) = small();
    let bytes = common::prove(shape, &params).to_bytes();
    for len in (0..bytes.len()).step_by(7).chain([bytes.len() - 1]) {
        assert!(
            Proof::from_bytes(&bytes[..len]).is_err(),
            "prefix of {len} bytes"
        );
    }
    let mut extended = bytes.clone();
    extended.push(0);
    assert!(Proof::from_bytes(&extended).is_err());

    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut random = |len: usize| -> Vec<u8> {
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    };
    for len in [0, 1, 4, 21, 100, 5000] {
        assert!(Proof::from_bytes(&random(len)).is_err());
        // Random bodies behind a valid magic and version.
        let mut body = b"BLST\x01\x00".to_vec();
        body.extend(random(len));
        assert!(Proof::from_bytes(&body).is_err());
    }
    // A header that claims a huge proof is refused before any allocation.
    let mut huge = bytes[..11].to_vec();
    huge.extend_from_slice(&[1, 0xff, 0x0f, 0, 0, 28, 0xff, 0xff, 0x0f, 0x00]);
    assert!(Proof::from_bytes(&huge).is_err());
}
