use ballast_air::{AirError, ConstraintInfo, check_trace};
use proptest::prelude::*;

use super::*;

fn chain(steps: u64, log_rows: usize) -> Poseidon2Chain {
    Poseidon2Chain {
        seed: [1, 2, 3, 4].map(Felt::new),
        steps,
        log_rows,
    }
}

#[test]
fn constraints_have_degree_three_and_two_quotient_chunks() {
    let info = ConstraintInfo::of(&Poseidon2ChainAir { log_rows: 4 }).unwrap();
    assert_eq!(info.max_degree(), 3);
    assert_eq!(info.log_quotient_chunks, 1);
    let [every, transition, first, last] = info.counts();
    assert_eq!(every, SBOX.columns() + 1);
    assert_eq!((transition, first, last), (2 + 8, 2 + 4, 1 + 4));
    assert_eq!(WIDTH, 242);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn traces_follow_the_leaf_hash_across_segments(
        seed in any::<[u32; 4]>(),
        steps in 1u64..20,
        log_rows in 1usize..=4,
    ) {
        // 2 to 16 rows (tables of 2 and 4 rows fill part of a block): segments end full or
        // partly dead.
        let w = Poseidon2Chain { seed: seed.map(|x| Felt::new(x.into())), steps, log_rows };
        let mut start = w.seed;
        for segment in 0..w.segments() {
            let (trace, end) = w.trace_table(segment, &start);
            prop_assert_eq!(end, w.run(segment, &start));
            let public = w.public_inputs(segment, &start, &end);
            prop_assert_eq!(check_trace(&w.air(segment), &trace, &public), Ok(()));
            start = end;
        }
        let expected = (0..steps).fold(w.seed, |h, _| hash_elements(&h));
        prop_assert_eq!(start, expected);
        prop_assert_eq!(w.output(), start);
    }
}

/// Changes one value of a segment of 5 live rows out of 8 and expects `check_trace` to
/// refuse it.
fn refused(column: usize, row: usize) -> bool {
    let w = chain(5, 3);
    let (mut trace, end) = w.trace_table(0, &w.seed);
    let public = w.public_inputs(0, &w.seed, &end);
    assert_eq!(check_trace(&w.air(0), &trace, &public), Ok(()));
    trace.set(row, column, trace.get(row, column) + Felt::ONE);
    matches!(
        check_trace(&w.air(0), &trace, &public),
        Err(AirError::Unsatisfied { .. })
    )
}

#[test]
fn every_kind_of_column_is_constrained() {
    // Rows 0 (the first), 3 (live), 4 (the last live), 5 (dead) and 7 (the last).
    let columns = [
        ("live", LIVE),
        ("count", COUNT),
        ("digest", DIGEST),
        ("digest", DIGEST + 3),
        ("a cube", PERMUTATION),
        ("a partial round", PERMUTATION + 8 * STATE_CELLS + 1),
        ("the output", WIDTH - STATE_CELLS),
        ("the output's last cell", WIDTH - 1),
    ];
    for (name, column) in columns {
        for row in [0, 3, 4, 5, 7] {
            assert!(refused(column, row), "{name} (column {column}) row {row}");
        }
    }
}

#[test]
fn public_inputs_bind_the_digests_and_the_step_count() {
    for (steps, log_rows) in [(5, 3), (8, 3)] {
        let w = chain(steps, log_rows);
        let (trace, end) = w.trace_table(0, &w.seed);
        let public = w.public_inputs(0, &w.seed, &end);
        for i in 0..public.len() {
            let mut wrong = public.clone();
            wrong[i] += Felt::ONE;
            assert!(
                check_trace(&w.air(0), &trace, &wrong).is_err(),
                "{steps} steps: public input {i}"
            );
        }
    }
}

#[test]
fn segments_split_the_steps_and_the_encoding_round_trips() {
    let w = chain(20, 3);
    assert_eq!(w.segments(), 3);
    assert_eq!((w.segment_steps(0), w.segment_steps(2)), (8, 4));
    assert!(chain(0, 3).validate().is_err());
    assert!(chain(1, 0).validate().is_err());
    assert_eq!(Poseidon2Chain::decode(&w.encode()), Ok(w));
    let mut bytes = w.encode();
    bytes[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(
        Poseidon2Chain::decode(&bytes),
        Err(ParamsError::NonCanonical { name: "seed" })
    );
}

/// A segment's table from each row's live bit, count and input digest, every row's
/// permutation filled from its digest.
fn table_of(rows: &[(u64, u64, FeltDigest)]) -> RowBlocks {
    let mut table = RowBlocks::zeroed(WIDTH, rows.len(), rows.len());
    for (r, &(live, count, digest)) in rows.iter().enumerate() {
        let mut row = [Felt::ZERO; WIDTH];
        row[LIVE] = Felt::new(live);
        row[COUNT] = Felt::new(count);
        row[DIGEST..PERMUTATION].copy_from_slice(&digest);
        air::fill(
            SBOX,
            step_input(digest, Felt::ZERO),
            &mut row[PERMUTATION..],
        );
        table.write_row(r, &row);
    }
    table
}

#[test]
fn a_break_in_the_chain_is_refused_where_it_is() {
    // Five live rows whose fourth hashes a digest the third did not output, each row's
    // permutation itself correct, the end the last live row's output.
    let w = chain(5, 3);
    let mut digests = vec![w.seed];
    for r in 1..5 {
        let previous = digests[r - 1];
        digests.push(if r == 3 {
            [9, 9, 9, 9].map(Felt::new)
        } else {
            hash_elements(&previous)
        });
    }
    let end = hash_elements(&digests[4]);
    let rows: Vec<_> = (0..8)
        .map(|r| (u64::from(r < 5), (r as u64 + 1).min(5), digests[r.min(4)]))
        .collect();
    let public = w.public_inputs(0, &w.seed, &end);
    assert_eq!(
        check_trace(&w.air(0), &table_of(&rows), &public),
        Err(AirError::Unsatisfied {
            constraint: SBOX.columns() + 7,
            row: 2
        })
    );
    // The same rows with the chain unbroken pass.
    let (honest, honest_end) = w.trace_table(0, &w.seed);
    digests[3] = hash_elements(&digests[2]);
    digests[4] = hash_elements(&digests[3]);
    let rows: Vec<_> = (0..8)
        .map(|r| (u64::from(r < 5), (r as u64 + 1).min(5), digests[r.min(4)]))
        .collect();
    assert_eq!(table_of(&rows), honest);
    let public = w.public_inputs(0, &w.seed, &honest_end);
    assert_eq!(check_trace(&w.air(0), &honest, &public), Ok(()));
}

#[test]
fn flags_give_the_default_statement_and_refuse_a_seed_that_is_no_digest() {
    let default = Poseidon2Chain::from_flags(&FlagValues::default()).unwrap();
    let ballast: Vec<Felt> = b"ballast".iter().map(|&b| Felt::new(b.into())).collect();
    assert_eq!(default.seed, hash_elements(&ballast));
    assert_eq!((default.steps, default.log_rows), (4 << 14, 14));
    assert_eq!(default.segments(), 4);

    let mut flags = FlagValues::default();
    flags.insert("seed", "ff".repeat(32));
    let err = Poseidon2Chain::from_flags(&flags).unwrap_err().to_string();
    assert!(
        err.starts_with("invalid --seed: an element is not below"),
        "{err}"
    );

    let mut flags = FlagValues::default();
    flags.insert(
        "seed",
        hex::encode(digest_to_bytes(&[9, 8, 7, 6].map(Felt::new))),
    );
    flags.insert("steps", "20");
    flags.insert("log-rows", "3");
    let chain = Poseidon2Chain::from_flags(&flags).unwrap();
    assert_eq!(
        (chain.seed, chain.steps, chain.segments()),
        ([9, 8, 7, 6].map(Felt::new), 20, 3)
    );
    flags.insert("segments", "2");
    assert!(
        Poseidon2Chain::from_flags(&flags).is_err(),
        "--steps and --segments"
    );
}
