//! Scale-out: parts proven separately bundle into the very bytes one host proves, and every
//! way a set of parts can be wrong is refused, naming the part.

mod common;

use ballast_stark::{
    BundleError, CpuBackend, PhaseTimes, Proof, ProofFormatError, SegmentPosition,
    SegmentStatement, StarkParams, VerifierError, Workload, bundle, part_range, prove_part,
    verify_part, verify_statement,
};
use ballast_workloads::{Fibonacci, KeccakChain, Poseidon2Chain};

fn params() -> StarkParams {
    StarkParams {
        log_blowup: 1,
        num_queries: 12,
        pow_bits: 3,
        log_final_poly_len: 2,
        hash: ballast_stark::MerkleHash::Keccak256,
    }
}

fn fib() -> Fibonacci {
    Fibonacci {
        sequences: 2,
        log_rows: 5,
        segments: 7,
    }
}

fn prove<W: Workload>(workload: &W, params: &StarkParams, parts: usize, index: usize) -> Proof<W> {
    let range = part_range(workload.segments(), parts, index).unwrap();
    prove_part(
        workload,
        params,
        range,
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .expect("an honest part proves")
}

fn split<W: Workload>(workload: &W, parts: usize) -> Vec<(String, Proof<W>)> {
    (0..parts)
        .map(|i| (format!("part-{i}"), prove(workload, &params(), parts, i)))
        .collect()
}

fn check_bundles<W: Workload>(workload: W) {
    let whole = common::prove(&workload, &params()).to_bytes();
    for parts in 1..=workload.segments() {
        let mut named = split(&workload, parts);
        for (_, part) in &named {
            verify_part(part, &common::any_security()).expect("an honest part verifies");
            let bytes = part.to_bytes();
            assert_eq!(&Proof::<W>::from_bytes(&bytes).unwrap(), part);
            assert_eq!(part.encoded_len(), bytes.len() as u64);
            assert!(Proof::<W>::max_len(&bytes).unwrap() >= bytes.len() as u64);
            // A part is not a statement's proof, unless it covers them all.
            assert_eq!(
                verify_statement(part, &common::any_security()).is_ok(),
                parts == 1
            );
        }
        // In any order: the bundle sorts them.
        named.reverse();
        let proof = bundle(named, &common::any_security()).expect("the parts bundle");
        assert_eq!(proof.to_bytes(), whole, "{parts} parts");
    }
}

#[test]
fn every_split_bundles_into_the_single_host_bytes() {
    check_bundles(fib());
    check_bundles(KeccakChain {
        seed: [7; 32],
        steps: 3,
        log_rows: 6,
    });
    // Three segments of 2^3 rows, the last partly dead: its states are digests.
    check_bundles(Poseidon2Chain {
        seed: [7, 8, 9, 10].map(ballast_field::Felt::new),
        steps: 21,
        log_rows: 3,
    });
}

#[test]
fn foreign_overlapping_missing_and_unchained_parts_are_refused_by_name() {
    let w = fib();
    let policy = common::any_security();
    let parts = split(&w, 3);

    let mut other_params = parts.clone();
    other_params[2].1 = prove(
        &w,
        &StarkParams {
            num_queries: 13,
            ..params()
        },
        3,
        2,
    );
    assert_eq!(
        bundle(other_params, &policy),
        Err(BundleError::Foreign {
            part: "part-2".into(),
            reference: "part-0".into(),
            what: "parameter set",
        })
    );
    let mut other_statement = parts.clone();
    let longer = Fibonacci { segments: 8, ..w };
    other_statement[1].1 = prove(&longer, &params(), 3, 1);
    assert!(matches!(
        bundle(other_statement, &policy),
        Err(BundleError::Foreign { part, what: "statement", .. }) if part == "part-1"
    ));

    let mut missing = parts.clone();
    missing.remove(1);
    assert_eq!(
        bundle(missing, &policy),
        Err(BundleError::Missing {
            range: 3..5,
            after: Some("part-0".into())
        })
    );
    let mut last_missing = parts.clone();
    last_missing.pop();
    assert_eq!(
        bundle(last_missing, &policy),
        Err(BundleError::Missing {
            range: 5..7,
            after: Some("part-1".into())
        })
    );
    let mut first_missing = parts.clone();
    first_missing.remove(0);
    assert_eq!(
        bundle(first_missing, &policy),
        Err(BundleError::Missing {
            range: 0..3,
            after: None
        })
    );
    // A part whose shape is wrong is named as itself.
    let mut malformed = parts.clone();
    malformed[1].1.states.pop();
    assert!(matches!(
        bundle(malformed, &policy),
        Err(BundleError::Invalid { part, .. }) if part == "part-1"
    ));
    // The bundled proof must fit the same cap its verifier applies, and the floor.
    let whole_len = common::prove(&w, &params()).encoded_len();
    let capped = |max_proof_bytes| ballast_stark::VerifyPolicy {
        max_proof_bytes,
        ..policy.clone()
    };
    assert_eq!(
        bundle(parts.clone(), &capped(whole_len - 1)),
        Err(BundleError::TooLarge {
            len: whole_len,
            cap: whole_len - 1
        })
    );
    assert!(bundle(parts.clone(), &capped(whole_len)).is_ok());
    assert!(matches!(
        bundle(parts.clone(), &ballast_stark::VerifyPolicy::default()),
        Err(BundleError::Invalid {
            part,
            reason: VerifierError::InsufficientSecurity { .. }
        }) if part == "part-0"
    ));
    assert_eq!(
        bundle::<Fibonacci>(vec![], &policy),
        Err(BundleError::Empty)
    );

    let mut duplicate = parts.clone();
    duplicate.push(("again".into(), parts[1].1.clone()));
    assert!(matches!(
        bundle(duplicate, &policy),
        Err(BundleError::Overlap { part, range, .. }) if part == "again" && range == (3..5)
    ));
    let mut overlapping = parts.clone();
    overlapping.push(("halves".into(), prove(&w, &params(), 2, 1)));
    assert!(matches!(
        bundle(overlapping, &policy),
        Err(BundleError::Overlap { .. })
    ));

    // A part that starts in another state than the part before it ends in: valid on its
    // own (its segments are proven from the state it names), refused by the bundle.
    let mut unchained = parts.clone();
    let moved = &unchained[1].1;
    let mut start = moved.states[0].clone();
    start[0] += ballast_field::Felt::new(1);
    unchained[1].1 = prove_part_from(&w, moved.first, moved.segments.len(), start);
    verify_part(&unchained[1].1, &policy).expect("a part from any state verifies on its own");
    assert_eq!(
        bundle(unchained, &policy),
        Err(BundleError::Chain {
            part: "part-1".into(),
            previous: "part-0".into()
        })
    );

    let mut tampered = parts;
    tampered[2].1.segments[0].pow_nonce ^= 1;
    assert!(matches!(
        bundle(tampered, &policy),
        Err(BundleError::Invalid { part, .. }) if part == "part-2"
    ));
}

/// Proves `count` segments of `w` from `first`, starting in `start` instead of where the
/// computation is at `first`: the part a worker told a wrong start state would write.
fn prove_part_from(
    w: &Fibonacci,
    first: usize,
    count: usize,
    start: Vec<ballast_field::Felt>,
) -> Proof<Fibonacci> {
    let mut context = vec![Fibonacci::TAG];
    context.extend_from_slice(&w.encode());
    let mut state = start;
    let (mut states, mut segments) = (vec![state.clone()], Vec::new());
    for index in first..first + count {
        let (mut trace, end) = w.trace_table(index, &state);
        let public_inputs = w.public_inputs(index, &state, &end);
        let statement = SegmentStatement {
            context: &context,
            position: SegmentPosition {
                index,
                count: w.segments(),
            },
            public_inputs: &public_inputs,
        };
        let backend = CpuBackend::new();
        let proof = ballast_stark::prove(
            &w.air(index),
            &mut trace,
            &statement,
            &params(),
            &backend,
            &mut PhaseTimes::default(),
        );
        segments.push(proof.expect("a trace from any start state proves"));
        states.push(end.clone());
        state = end;
    }
    Proof {
        params: params(),
        workload: *w,
        first,
        states,
        segments,
    }
}

#[test]
fn a_first_part_must_start_at_the_workloads_start() {
    let w = fib();
    let honest = prove(&w, &params(), 3, 0);
    let mut start = honest.states[0].clone();
    start[1] += ballast_field::Felt::new(1);
    let forged = prove_part_from(&w, 0, honest.segments.len(), start.clone());
    assert_eq!(
        verify_part(&forged, &common::any_security()),
        Err(VerifierError::Start)
    );
    // The same for a whole proof: it is the part of every segment.
    let whole = prove_part_from(&w, 0, w.segments, start);
    assert_eq!(
        verify_statement(&whole, &common::any_security()),
        Err(VerifierError::Start)
    );
}

#[test]
fn truncated_or_extended_parts_do_not_decode() {
    let part = prove(&fib(), &params(), 3, 1);
    let bytes = part.to_bytes();
    for len in 0..bytes.len() {
        assert!(
            ballast_workloads::decode(&bytes[..len]).is_err(),
            "a part cut to {len} bytes decoded"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        Proof::<Fibonacci>::from_bytes(&longer),
        Err(ProofFormatError::StatedLength {
            stated: bytes.len() as u64,
            got: bytes.len() as u64 + 1
        })
    );
}

#[test]
fn a_range_outside_the_statement_does_not_decode() {
    let part = prove(&fib(), &params(), 3, 2);
    let mut bytes = part.to_bytes();
    let first = common::section(&part, "first segment");
    // first = 6, count = 2: past the statement's 7 segments.
    bytes[first].copy_from_slice(&6u32.to_le_bytes());
    assert!(matches!(
        Proof::<Fibonacci>::from_bytes(&bytes),
        Err(ProofFormatError::Header(_))
    ));
}

#[test]
fn every_flipped_byte_is_rejected() {
    let part = prove(&fib(), &params(), 3, 1);
    let bytes = part.to_bytes();
    let policy = common::any_security();
    // Every byte of the header and states, then a sample of the segments' bytes.
    let states_end = common::section(&part, "states").end;
    let positions = (0..states_end).chain((states_end..bytes.len()).step_by(41));
    for at in positions {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x10;
        if let Ok(decoded) = Proof::<Fibonacci>::from_bytes(&flipped) {
            assert!(
                verify_part(&decoded, &policy).is_err(),
                "byte {at} flipped and the part still verifies"
            );
        }
    }
}
