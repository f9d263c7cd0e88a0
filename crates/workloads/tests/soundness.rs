//! The verifier rejects false statements, tampered proofs and malformed bytes, for every
//! workload.

mod common;

use std::collections::BTreeSet;

use ballast_air::{Air, check_trace};
use ballast_field::{Ext3, Felt};
use ballast_stark::{
    CpuBackend, MerkleHash, PhaseTimes, Proof, ProofFormatError, ProverError, Regime,
    SegmentPosition, SegmentProof, SegmentStatement, StarkParams, VerifierError, VerifyPolicy,
    Workload, prove, prove_unchecked, verify, verify_statement,
};
use ballast_workloads::{Fibonacci, KeccakChain, Poseidon2Chain, decode};

fn fibonacci() -> Fibonacci {
    Fibonacci {
        sequences: 2,
        log_rows: 5,
        segments: 2,
    }
}

fn chain() -> KeccakChain {
    KeccakChain {
        seed: [5; 32],
        steps: 3,
        log_rows: 6,
    }
}

/// 20 steps in two segments of 2^4 rows, the second partly dead.
fn poseidon2_chain() -> Poseidon2Chain {
    Poseidon2Chain {
        seed: [5, 6, 7, 8].map(Felt::new),
        steps: 20,
        log_rows: 4,
    }
}

fn rejected(bytes: &[u8]) -> bool {
    match decode(bytes) {
        Err(_) => true,
        Ok(proof) => proof.verify(&common::any_security()).is_err(),
    }
}

/// Flips two bits at both ends of every section, and at both ends of every digest of a
/// batch opening, of a proof committed with `hash`; each flip must be rejected. Every
/// section of the layout must be there.
fn every_section_is_checked<W: Workload>(workload: &W, hash: MerkleHash) {
    let params = StarkParams {
        hash,
        ..StarkParams::testing()
    };
    let proof = common::prove(workload, &params);
    let bytes = proof.to_bytes();
    assert!(!rejected(&bytes), "the untouched proof verifies");
    let sections = proof.sections();
    assert_eq!(sections.last().unwrap().range.end, bytes.len());
    let mut kinds = BTreeSet::new();
    for section in sections.iter().filter(|s| !s.range.is_empty()) {
        let mut offsets = vec![section.range.start, section.range.end - 1];
        if section.name.ends_with("opening") {
            assert_eq!(section.range.len() % 32, 0, "{}", section.name);
            for digest in section.range.clone().step_by(32) {
                offsets.extend([digest, digest + 31]);
            }
        }
        for offset in offsets {
            for bit in [0, 6] {
                let mut tampered = bytes.clone();
                tampered[offset] ^= 1 << bit;
                assert!(
                    rejected(&tampered),
                    "{} ({hash}): flipping bit {bit} of byte {offset} in {} went unnoticed",
                    W::NAME,
                    section.name
                );
            }
        }
        kinds.insert(section.name);
    }
    for row in ballast_stark::layout() {
        assert!(
            kinds.contains(row.name),
            "{}: no {} section {:?} in the proof",
            W::NAME,
            row.part,
            row.name
        );
    }
}

#[test]
fn a_byte_changed_in_any_section_is_rejected() {
    for hash in MerkleHash::ALL {
        every_section_is_checked(&fibonacci(), hash);
        every_section_is_checked(&chain(), hash);
        every_section_is_checked(&poseidon2_chain(), hash);
    }
}

#[test]
fn an_unknown_merkle_hash_is_refused_and_the_other_one_rejected() {
    let proof = common::prove(&fibonacci(), &StarkParams::testing());
    let at = common::section(&proof, "merkle hash");
    for (id, refused) in [(2u8, true), (u8::MAX, true), (1, false)] {
        let mut bytes = proof.to_bytes();
        bytes[at.clone()].copy_from_slice(&[id]);
        match decode(&bytes) {
            Err(err) => {
                assert!(refused, "id {id}: {err}");
                assert_eq!(err, ProofFormatError::UnknownHash(id));
            }
            // Read as committed with Poseidon2, the Keccak-256 proof's roots are no
            // Poseidon2 roots, and the hash is bound in the transcript.
            Ok(read) => {
                assert!(!refused, "id {id} was read");
                assert!(read.verify(&common::any_security()).is_err());
            }
        }
    }
}

#[test]
fn a_digest_that_is_no_poseidon2_digest_is_refused_when_read() {
    // Every digest section of a Poseidon2 proof (roots and opening nodes): its first
    // digest's first word set to 2^64 - 1 (no element) is refused at that offset, before
    // any hashing or transcript step reads it.
    let params = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..StarkParams::testing()
    };
    let proof = common::prove(&fibonacci(), &params);
    let bytes = proof.to_bytes();
    let digests: BTreeSet<&str> = ballast_stark::layout()
        .into_iter()
        .filter(|row| row.item == "digest")
        .map(|row| row.name)
        .collect();
    let mut seen = BTreeSet::new();
    for section in proof.sections() {
        if !digests.contains(section.name) || section.range.is_empty() {
            continue;
        }
        let mut tampered = bytes.clone();
        let at = section.range.start;
        tampered[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            decode(&tampered).err(),
            Some(ProofFormatError::NonCanonical { offset: at }),
            "{}",
            section.name
        );
        seen.insert(section.name);
    }
    assert_eq!(seen, digests, "every digest section was tried");
}

/// A trace changed at `(column, row)` is refused by `prove`, and its forced proof
/// (`prove_unchecked`) is rejected by `verify`.
fn forced_proof_is_rejected<W: Workload>(workload: &W, column: usize, row: usize) {
    let start = workload.start();
    let (mut trace, end) = workload.trace_table(0, &start);
    trace.set(row, column, trace.get(row, column) + Felt::ONE);
    let air = workload.air(0);
    let public_inputs = workload.public_inputs(0, &start, &end);
    let segment = SegmentStatement {
        context: b"test",
        position: SegmentPosition { index: 0, count: 1 },
        public_inputs: &public_inputs,
    };
    let params = StarkParams::testing();
    let backend = CpuBackend::new();
    let mut times = PhaseTimes::default();
    // The prover finds the violation at the out-of-domain point and names the same first
    // failing row and constraint as checking the trace row by row.
    let first_failure = check_trace(&air, &trace, &public_inputs).expect_err("a broken trace");
    let refused = prove(
        &air,
        &mut trace.clone(),
        &segment,
        &params,
        &backend,
        &mut times,
    );
    assert!(
        matches!(&refused, Err(ProverError::Unsatisfied(e)) if *e == first_failure),
        "{}: column {column} row {row}: {refused:?}, expected {first_failure:?}",
        W::NAME
    );
    match prove_unchecked(&air, &mut trace, &segment, &params, &backend, &mut times) {
        // The composed function is not of low degree: the prover's own FRI notices.
        Err(ProverError::Fri(_)) => {}
        Err(other) => panic!("{}: unexpected error {other}", W::NAME),
        Ok(forged) => assert!(
            verify(&air, &forged, &segment, &params, &common::any_security()).is_err(),
            "{}: a proof of a broken trace (column {column}, row {row}) verified",
            W::NAME
        ),
    }
}

#[test]
fn proofs_of_broken_traces_are_rejected() {
    forced_proof_is_rejected(&fibonacci(), 1, 20);
    forced_proof_is_rejected(&fibonacci(), 3, 31);
    // One column of each kind of the Keccak-f AIR: state limbs, C, C', A' bits, output limbs,
    // ι helpers, live, count; on a round row, a copy row and a dead block.
    let width = chain().air(0).width();
    for (column, row) in [
        (5, 3),
        (50 + 7, 10),
        (370 + 100, 2),
        (690 + 999, 20),
        (2290 + 1, 5),
        (2340 + 2, 1),
        (width - 2, 40),
        (width - 1, 63),
        (0, 26),
    ] {
        forced_proof_is_rejected(&chain(), column, row);
    }
    // The Poseidon2 chain: live, count, the digest, a full round's cube and state, a
    // partial round's cube and S-box output, the output; on the first, middle and last rows.
    let width = poseidon2_chain().air(0).width();
    for (column, row) in [
        (0, 9),
        (1, 15),
        (3, 0),
        (6 + 5, 2),
        (6 + 12 + 7, 13),
        (6 + 4 * 24 + 12, 7),
        (6 + 4 * 24 + 21, 11),
        (width - 9, 15),
        (width - 12, 3),
    ] {
        forced_proof_is_rejected(&poseidon2_chain(), column, row);
    }
}

/// Parameters changed after proving, segments swapped, or a policy demanding other
/// parameters: each is rejected.
fn parameters_and_order_are_bound<W: Workload>(proof: &Proof<W>) {
    let mut forged = proof.clone();
    forged.params.pow_bits += 1;
    assert!(verify_statement(&forged, &common::any_security()).is_err());
    let mut swapped = proof.clone();
    swapped.segments.swap(0, 1);
    assert!(verify_statement(&swapped, &common::any_security()).is_err());
    let policy = VerifyPolicy {
        params: Some(StarkParams {
            num_queries: proof.params.num_queries + 1,
            ..proof.params
        }),
        ..common::any_security()
    };
    assert!(matches!(
        verify_statement(proof, &policy),
        Err(VerifierError::ParamsMismatch { .. })
    ));
}

#[test]
fn other_outcomes_boundaries_or_parameters_are_rejected() {
    parameters_and_order_are_bound(&common::prove(&fibonacci(), &StarkParams::testing()));
    let proof = common::prove(&chain(), &StarkParams::testing());
    parameters_and_order_are_bound(&proof);
    let mut forged = proof.clone();
    forged.states.last_mut().unwrap()[0] ^= 1;
    assert_ne!(forged.statement_digest(), proof.statement_digest());
    assert!(verify_statement(&forged, &common::any_security()).is_err());
    let mut forged = proof.clone();
    forged.states[1][31] ^= 0x80;
    assert!(verify_statement(&forged, &common::any_security()).is_err());
    let mut forged = proof.clone();
    forged.workload.seed[0] ^= 1;
    assert!(verify_statement(&forged, &common::any_security()).is_err());

    // A segment verified as if it sat at another position in the chain.
    let w = chain();
    let public_inputs = w.public_inputs(0, &proof.states[0], &proof.states[1]);
    let context = [&[KeccakChain::TAG][..], &w.encode()].concat();
    let at = |index| SegmentStatement {
        context: &context,
        position: SegmentPosition { index, count: 2 },
        public_inputs: &public_inputs,
    };
    let params = StarkParams::testing();
    assert!(
        verify(
            &w.air(0),
            &proof.segments[0],
            &at(0),
            &params,
            &common::any_security()
        )
        .is_ok()
    );
    assert!(
        verify(
            &w.air(0),
            &proof.segments[0],
            &at(1),
            &params,
            &common::any_security()
        )
        .is_err()
    );
}

#[test]
fn a_verifier_enforces_its_security_floor() {
    let params = StarkParams::testing();
    let proof = common::prove(&chain(), &params);
    // The default policy requires 100 bits provable (JBR); the test parameters give 3 (8
    // conjectured), and the error names both.
    let refused = verify_statement(&proof, &VerifyPolicy::default());
    assert_eq!(
        refused,
        Err(VerifierError::InsufficientSecurity {
            got: 3,
            regime: Regime::Jbr,
            conjectured: 8,
            required: 100
        })
    );
    assert_eq!(
        refused.unwrap_err().to_string(),
        "proof offers 3 bits of jbr security (8 conjectured), 100 required"
    );
    // Judged by the conjecture instead, a floor of 8 accepts them and 9 does not.
    let conjectured = |min_security_bits| VerifyPolicy {
        min_security_bits,
        regime: Regime::Conjectured,
        ..VerifyPolicy::default()
    };
    assert_eq!(verify_statement(&proof, &conjectured(8)), Ok(()));
    assert!(verify_statement(&proof, &conjectured(9)).is_err());
    // The parameters chosen for 128 bits reach the default floor.
    let secure = StarkParams::for_security(&chain().air(0), 128, Regime::Jbr).unwrap();
    let default = common::prove(&chain(), &secure);
    assert_eq!(verify_statement(&default, &VerifyPolicy::default()), Ok(()));
}

#[test]
fn truncated_and_random_bytes_give_errors_not_panics() {
    for bytes in [
        common::prove(&fibonacci(), &StarkParams::testing()).to_bytes(),
        common::prove(&chain(), &StarkParams::testing()).to_bytes(),
    ] {
        for len in (0..bytes.len()).step_by(97).chain([bytes.len() - 1]) {
            assert!(decode(&bytes[..len]).is_err(), "prefix of {len} bytes");
        }
        let mut extended = bytes.clone();
        extended.push(0);
        assert!(decode(&extended).is_err());
    }
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
        assert!(decode(&random(len)).is_err());
        // Random bodies behind a valid magic and version.
        let mut body = b"BLST".to_vec();
        body.extend(ballast_stark::PROTOCOL_VERSION.to_le_bytes());
        body.extend(random(len));
        assert!(decode(&body).is_err());
    }
    // A header that claims a huge proof (4,096 sequences × 2^28 rows, 2^20 segments) is
    // refused before anything past it is read or allocated: a length above its bound, or
    // any other length than the bytes'.
    let huge = |length: u64| {
        let mut bytes = b"BLST".to_vec();
        bytes.extend(ballast_stark::PROTOCOL_VERSION.to_le_bytes());
        bytes.extend(length.to_le_bytes());
        bytes.extend([1, 16, 0, 0, 2, 0, Fibonacci::TAG]);
        bytes.extend(4096u32.to_le_bytes());
        bytes.push(28);
        bytes.extend((1u32 << 20).to_le_bytes());
        bytes.extend(0u32.to_le_bytes());
        bytes.extend((1u32 << 20).to_le_bytes());
        bytes
    };
    let max = Proof::<Fibonacci>::max_len(&huge(0)).unwrap();
    assert!(max > 1 << 40, "{max}");
    assert_eq!(
        decode(&huge(max + 1)).unwrap_err(),
        ProofFormatError::TooLong {
            max,
            stated: max + 1
        }
    );
    assert_eq!(
        decode(&huge(max)).unwrap_err(),
        ProofFormatError::StatedLength {
            stated: max,
            got: huge(max).len() as u64
        }
    );
}

/// A proof re-encoded consistently with one query position dropped, or another position
/// substituted, is rejected for its positions: the prover cannot choose where it is queried.
#[test]
fn query_positions_must_be_the_transcripts() {
    let params = StarkParams::testing();
    let proof = common::prove(&chain(), &params);
    let air = chain().air(0);
    let (width, quotient_width) = (
        air.width(),
        proof.segments[0].queries.quotient_rows.len() / proof.segments[0].queries.positions.len(),
    );
    let mut dropped = proof.clone();
    let q = &mut dropped.segments[0].queries;
    q.positions.remove(0);
    q.trace_rows.drain(..width);
    q.quotient_rows.drain(..quotient_width);
    fit_openings(&mut dropped.segments[0], &params);
    assert_eq!(
        verify_statement(&dropped, &common::any_security()),
        Err(VerifierError::QueryPositions { segment: 0 })
    );
    let mut moved = proof.clone();
    let q = &mut moved.segments[0].queries;
    let last = *q.positions.last().unwrap();
    let free = (0..last).rev().find(|p| !q.positions.contains(p)).unwrap();
    q.positions.pop();
    q.positions.insert(0, free);
    q.positions.sort_unstable();
    fit_openings(&mut moved.segments[0], &params);
    assert_eq!(
        verify_statement(&moved, &common::any_security()),
        Err(VerifierError::QueryPositions { segment: 0 })
    );
}

/// Resizes a keccak-chain segment's openings to what its changed positions call for, as a
/// prover choosing its own positions would: the proof is well formed, only its positions are
/// not the transcript's.
fn fit_openings(segment: &mut SegmentProof, params: &StarkParams) {
    let log_rows = chain().log_rows;
    let log_lde = log_rows + params.log_blowup;
    let positions = segment.queries.positions.clone();
    let q = &mut segment.queries;
    let opening = ballast_merkle::batch_opening_len(log_lde, &positions);
    q.trace_nodes.resize(opening, [0; 32]);
    q.quotient_nodes.resize(opening, [0; 32]);
    let arities = ballast_fri::round_arities(log_rows - params.log_final_poly_len);
    let plan = ballast_fri::QueryPlan::new(log_lde, &arities, &positions).unwrap();
    for (layer, planned) in q.fri.iter_mut().zip(plan.layers()) {
        layer.values.resize(planned.unknown_count(), Ext3::ZERO);
        layer.nodes.resize(planned.opening_len(), [0; 32]);
    }
}

/// The size cap judges the proof's length: a cap below it refuses the proof, one at it
/// accepts.
#[test]
fn a_verifier_enforces_its_size_cap() {
    let proof = common::prove(&fibonacci(), &StarkParams::testing());
    let len = proof.to_bytes().len() as u64;
    let capped = |max_proof_bytes| VerifyPolicy {
        max_proof_bytes,
        ..common::any_security()
    };
    assert_eq!(
        verify_statement(&proof, &capped(len - 1)),
        Err(VerifierError::TooLarge { len, cap: len - 1 })
    );
    verify_statement(&proof, &capped(len)).unwrap();
}
