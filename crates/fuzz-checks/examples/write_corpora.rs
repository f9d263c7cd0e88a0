//! Writes the fuzz targets' seed corpora: `write_corpora DIR` fills `DIR/<target>/`.
//!
//! decode_verify gets the seed proofs (a compressed one among them), parts and tables proofs;
//! mutate_proof one input per seed proof (no edits, and one edit), mutate_tables likewise per
//! seed tables proof; batch_opening canonical openings of a few index sets in a tree of each
//! hash.

use std::path::Path;

use ballast_fuzz_checks::{batch_opening_input, seed_parts, seed_proofs, seed_tables_records};
use ballast_merkle::MerkleHash;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: write_corpora DIR");
        std::process::exit(2);
    };
    let write = |target: &str, name: String, bytes: &[u8]| {
        let dir = Path::new(&dir).join(target);
        std::fs::create_dir_all(&dir).expect("create the corpus directory");
        std::fs::write(dir.join(name), bytes).expect("write a corpus file");
    };
    for (i, proof) in seed_proofs().iter().enumerate() {
        write("decode_verify", format!("seed-{i}"), proof);
        write("mutate_proof", format!("seed-{i}"), &[i as u8]);
        write(
            "mutate_proof",
            format!("seed-{i}-edit"),
            &[i as u8, 40, 0, 0, 0, 1],
        );
    }
    for (i, record) in seed_tables_records().iter().enumerate() {
        write("decode_verify", format!("tables-{i}"), record);
        write("mutate_tables", format!("seed-{i}"), &[i as u8]);
        write(
            "mutate_tables",
            format!("seed-{i}-edit"),
            &[i as u8, 40, 0, 0, 0, 1],
        );
    }
    for (i, part) in seed_parts().iter().enumerate() {
        write("decode_verify", format!("part-{i}"), part);
    }
    for hash in MerkleHash::ALL {
        for (i, indices) in [
            &[0u8][..],
            &[3, 40],
            &[5, 6, 7, 63],
            &[1, 2, 9, 10, 33, 34, 60],
        ]
        .iter()
        .enumerate()
        {
            write(
                "batch_opening",
                format!("opening-{}-{i}", hash.name()),
                &batch_opening_input(hash, indices),
            );
        }
    }
}
