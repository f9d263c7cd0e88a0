use ballast_air::{AirError, ConstraintInfo, Domain, check_trace};
use proptest::prelude::*;
use sha3::{Digest as _, Keccak256};

use super::*;

fn sha3_chain(seed: [u8; 32], steps: u64) -> [u8; 32] {
    (0..steps).fold(seed, |h, _| Keccak256::digest(h).into())
}

fn chain(steps: u64, log_rows: usize) -> KeccakChain {
    KeccakChain {
        seed: *b"ballast keccak-chain test seed!!",
        steps,
        log_rows,
    }
}

#[test]
fn constraints_have_degree_three_and_two_quotient_chunks() {
    let info = ConstraintInfo::of(&KeccakChainAir { log_rows: 6 }).unwrap();
    assert_eq!(info.max_degree(), 3);
    assert_eq!(info.log_quotient_chunks, 1);
    let [every, transition, first, last] = info.counts();
    assert_eq!((transition, first, last), (3 + 53, 52 + 3, 9));
    assert_eq!(every, 2240 + 320 + 320 + 50 + 50 + 7 + 1 + 1);
    assert!(
        info.constraints
            .iter()
            .all(|&(d, deg)| d != Domain::FirstRow || deg == 1)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]
    #[test]
    fn traces_agree_with_the_sha3_crate_across_segments(
        seed in any::<[u8; 32]>(),
        steps in 1u64..9,
    ) {
        // 2^6 rows: two permutations per segment (and 16 rows after them), so segments end
        // full or half-empty.
        let w = KeccakChain { seed, steps, log_rows: 6 };
        let mut start = seed;
        for segment in 0..w.segments() {
            let (trace, end) = w.trace_table(segment, &start);
            prop_assert_eq!(end, w.run(segment, &start));
            let public = w.public_inputs(segment, &start, &end);
            prop_assert_eq!(check_trace(&w.air(segment), &trace, &public), Ok(()));
            start = end;
        }
        prop_assert_eq!(start, sha3_chain(seed, steps));
        prop_assert_eq!(w.output(), start);
    }
}

/// Changes one value of the trace and expects `check_trace` to refuse it.
fn refused(column: usize, row: usize, change: Felt) -> bool {
    let w = chain(3, 7);
    let (mut trace, end) = w.trace_table(0, &w.seed);
    let public = w.public_inputs(0, &w.seed, &end);
    assert_eq!(check_trace(&w.air(0), &trace, &public), Ok(()));
    trace.set(row, column, trace.get(row, column) + change);
    matches!(
        check_trace(&w.air(0), &trace, &public),
        Err(AirError::Unsatisfied { .. })
    )
}

#[test]
fn every_kind_of_column_is_constrained() {
    // Rows 0, 3 and 23 (rounds of the first block, the last handing on to the second), 26
    // and 31 (the second), 100 (a dead block) and 127 (the last row, in the partial block).
    let columns = [
        ("A", a_limb(7, 1)),
        ("C", c_bit(1, 6)),
        ("C'", c_prime_bit(0, 5)),
        ("A'", a_prime_bit(12, 33)),
        ("O", o_limb(0, 0)),
        ("O", o_limb(24, 1)),
        ("iota", IOTA + 3),
        ("live", LIVE),
        ("count", COUNT),
        ("third 0", THIRD),
        ("third 1", THIRD + 1),
        ("third 2", THIRD + 2),
        ("end", END),
    ];
    for (name, column) in columns {
        for row in [0, 3, 23, 26, 31, 100, 127] {
            assert!(
                refused(column, row, Felt::ONE),
                "{name} (column {column}) row {row}"
            );
        }
    }
    // A bit column set to 2 (not a bit) but otherwise consistent is refused too.
    assert!(refused(a_prime_bit(0, 0), 5, Felt::ONE + Felt::ONE));
}

#[test]
fn public_inputs_bind_the_digests_and_the_step_count() {
    let w = chain(3, 7);
    let (trace, end) = w.trace_table(0, &w.seed);
    let public = w.public_inputs(0, &w.seed, &end);
    for i in [0, 7, 8, 15, 16] {
        let mut wrong = public.clone();
        wrong[i] += Felt::ONE;
        assert!(
            check_trace(&w.air(0), &trace, &wrong).is_err(),
            "public input {i}"
        );
    }
}

#[test]
fn segments_split_the_steps() {
    let w = chain(9, 6);
    assert_eq!(w.segments(), 5);
    assert_eq!((w.segment_steps(0), w.segment_steps(4)), (2, 1));
    assert!(chain(0, 6).validate().is_err());
    assert!(
        chain(1, 4).validate().is_err(),
        "a segment holds at least one permutation and a row after it"
    );
    assert_eq!(chain(1, 14).steps_per_segment(), 682);
    assert_eq!(chain(1, 15).steps_per_segment(), 1365);
    assert_eq!(KeccakChain::decode(&w.encode()), Ok(w));
}
