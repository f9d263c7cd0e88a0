//! Replays every committed fuzz input (`tests/fixtures/<target>/`) and the corpus seeds
//! through the check their target runs. Every target's folder holds at least one input; an
//! empty one fails.

use std::path::Path;

use ballast_fuzz_checks::{
    batch_opening, decode_and_verify, mutate_and_verify, mutate_tables, seed_parts, seed_proofs,
    seed_tables_records, verified_tables,
};

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .filter(|path| !path.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    files.sort();
    // A folder with nothing in it would make its loop below run zero times: a test that
    // passes without testing.
    assert!(
        !files.is_empty(),
        "{} holds no input: every target keeps at least one",
        dir.display()
    );
    files
        .into_iter()
        .map(|path| (path.display().to_string(), std::fs::read(&path).unwrap()))
        .collect()
}

#[test]
fn decode_verify_regressions() {
    for (name, bytes) in inputs("decode_verify") {
        assert!(!decode_and_verify(&bytes), "{name} verified");
    }
}

#[test]
fn mutate_proof_regressions() {
    for (_, bytes) in inputs("mutate_proof") {
        mutate_and_verify(&bytes);
    }
}

#[test]
fn mutate_tables_regressions() {
    for (_, bytes) in inputs("mutate_tables") {
        mutate_tables(&bytes);
    }
}

#[test]
fn tables_seeds_verify_and_their_edits_do_not() {
    for seed in seed_tables_records() {
        assert!(verified_tables(seed).is_some());
        let mut flipped = seed.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 1;
        assert!(verified_tables(&flipped).is_none());
    }
    // No edits: the seed, which verifies; one edit, which must not.
    assert!(mutate_tables(&[0]));
    assert!(!mutate_tables(&[1, 9, 0, 0, 0, 0x40]));
}

#[test]
fn batch_opening_regressions() {
    for (_, bytes) in inputs("batch_opening") {
        batch_opening(&bytes);
    }
}

#[test]
fn seeds_verify_and_their_edits_do_not() {
    for seed in seed_proofs().iter().chain(&seed_parts()) {
        assert!(decode_and_verify(seed));
        let mut flipped = seed.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 1;
        assert!(!decode_and_verify(&flipped));
    }
    // No edits: each seed itself, which verifies and proves its own statement.
    for pick in 0..seed_proofs().len() as u8 {
        mutate_and_verify(&[pick]);
    }
    mutate_and_verify(&[1, 9, 0, 0, 0, 0x40]);
}

#[test]
fn the_batch_opening_check_catches_a_forged_opening() {
    for poseidon2 in [0, 0x80] {
        // Indices 3 and 40, no nodes: a short opening, which must be refused.
        batch_opening(&[poseidon2 | 2, 3, 40]);
        // Out-of-range and repeated indices.
        batch_opening(&[poseidon2 | 2, 100, 100]);
        batch_opening(&[poseidon2 | 3, 9, 2, 9]);
    }
}
