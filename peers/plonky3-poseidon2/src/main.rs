//! The test-only peer of `ballast-poseidon2`: Plonky3 0.8.0's width-12 Goldilocks Poseidon2
//! (`p3_goldilocks::default_goldilocks_poseidon2_12`).
//!
//! Reads states from standard input, one a line as 12 canonical words in hex separated by
//! spaces, and prints each line followed by the 12 words of its permutation.
//! `ci/check-poseidon2-peer.sh` feeds it the inputs of the vectors `ballast-poseidon2`'s
//! test reads (`crates/poseidon2/tests/fixtures/plonky3-vectors.txt`) and compares the outputs.

use std::io::BufRead;

use p3_field::{PrimeCharacteristicRing, PrimeField64};
use p3_goldilocks::{Goldilocks, default_goldilocks_poseidon2_12};
use p3_symmetric::Permutation;

fn main() {
    let perm = default_goldilocks_poseidon2_12();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.unwrap_or_else(|e| fail(&format!("reading standard input: {e}")));
        let words: Vec<u64> = line
            .split_whitespace()
            .map(|w| u64::from_str_radix(w, 16))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| fail(&format!("line {}: {e}", n + 1)));
        let Ok(words) = <[u64; 12]>::try_from(words) else {
            fail(&format!("line {}: expected 12 words", n + 1))
        };
        if words.iter().any(|&w| w >= Goldilocks::ORDER_U64) {
            fail(&format!("line {}: a word is not a canonical field element", n + 1));
        }
        let mut state = words.map(Goldilocks::from_u64);
        perm.permute_mut(&mut state);
        let output = state.map(|x| format!("{:016x}", x.as_canonical_u64()));
        println!("{} {}", line.trim(), output.join(" "));
    }
}

fn fail(message: &str) -> ! {
    eprintln!("p3-poseidon2-vectors: {message}");
    std::process::exit(2)
}
