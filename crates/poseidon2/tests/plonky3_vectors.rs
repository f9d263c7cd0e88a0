//! The permutation against Plonky3 0.8.0's on 64 states: 0..12, every cell p − 1, every cell
//! 0, and 61 random ones. The outputs were printed by the peer (`peers/plonky3-poseidon2`);
//! `ci/check-poseidon2-peer.sh` prints them again from the inputs and compares.

use ballast_field::Felt;
use ballast_poseidon2::constants::WIDTH;
use ballast_poseidon2::permute;

#[test]
fn the_permutation_is_plonky3s() {
    let vectors = include_str!("fixtures/plonky3-vectors.txt");
    let mut checked = 0;
    for (n, line) in vectors.lines().enumerate() {
        let words: Vec<Felt> = line
            .split_whitespace()
            .map(|w| {
                let value = u64::from_str_radix(w, 16).expect("a hex word");
                Felt::from_canonical(value).expect("a canonical element")
            })
            .collect();
        assert_eq!(words.len(), 2 * WIDTH, "line {}", n + 1);
        let mut state: [Felt; WIDTH] = words[..WIDTH].try_into().expect("a state");
        permute(&mut state);
        assert_eq!(state[..], words[WIDTH..], "line {}", n + 1);
        checked += 1;
    }
    assert_eq!(checked, 64, "the vector file lost lines");
}
