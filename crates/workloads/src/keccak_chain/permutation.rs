//! Keccak-f\[1600\], round by round, as the AIR sees it.
//!
//! The state is 25 lanes of 64 bits, lane x + 5y at (x, y). A round is θ, ρ and π, χ, ι.

/// The 24 round constants of ι (one home: the hash's own crate).
pub use ballast_keccak::ROUND_CONSTANTS;

/// Rounds of Keccak-f\[1600\].
pub const ROUNDS: usize = 24;

/// The only bits a round constant ever sets: 2^j − 1 for j < 7.
pub const IOTA_BITS: [usize; 7] = [0, 1, 3, 7, 15, 31, 63];

/// ρ's rotation of lane (x, y), indexed [x][y].
pub const RHO: [[u32; 5]; 5] = [
    [0, 36, 3, 41, 18],
    [1, 44, 10, 45, 2],
    [62, 6, 43, 15, 61],
    [28, 55, 25, 21, 56],
    [27, 20, 39, 8, 14],
];

/// Lane index of (x, y).
#[inline]
pub const fn lane(x: usize, y: usize) -> usize {
    x + 5 * y
}

/// Where π takes lane (x, y) of B from: the lane (x', y') of A' with x = y' and
/// y = 2x' + 3y' (mod 5), and ρ's rotation of it.
pub const fn pi_source(x: usize, y: usize) -> (usize, usize, u32) {
    // y' = x; 2x' = y − 3x (mod 5), and 2⁻¹ = 3 (mod 5).
    let y_src = x;
    let x_src = (3 * (y + 5 * 3 - (3 * x) % 5)) % 5;
    (x_src, y_src, RHO[x_src][y_src])
}

/// Everything one round computes, as the AIR's columns hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    /// θ's column parities C[x] of the input state.
    pub c: [u64; 5],
    /// C'[x] = the parities of A' (= C[x] ⊕ D[x]).
    pub c_prime: [u64; 5],
    /// The state after θ.
    pub a_prime: [u64; 25],
    /// χ's output, before ι.
    pub chi: [u64; 25],
    /// The round's output: χ's with ι applied to lane (0, 0).
    pub output: [u64; 25],
}

/// One round on `state` with round constant `rc`.
pub fn round(state: &[u64; 25], rc: u64) -> Round {
    let c: [u64; 5] = std::array::from_fn(|x| (0..5).fold(0, |acc, y| acc ^ state[lane(x, y)]));
    let d: [u64; 5] = std::array::from_fn(|x| c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1));
    let a_prime: [u64; 25] = std::array::from_fn(|i| state[i] ^ d[i % 5]);
    let c_prime: [u64; 5] = std::array::from_fn(|x| c[x] ^ d[x]);
    let b: [u64; 25] = std::array::from_fn(|i| {
        let (xs, ys, r) = pi_source(i % 5, i / 5);
        a_prime[lane(xs, ys)].rotate_left(r)
    });
    let chi: [u64; 25] = std::array::from_fn(|i| {
        let (x, y) = (i % 5, i / 5);
        b[i] ^ (!b[lane((x + 1) % 5, y)] & b[lane((x + 2) % 5, y)])
    });
    let mut output = chi;
    output[0] ^= rc;
    Round {
        c,
        c_prime,
        a_prime,
        chi,
        output,
    }
}

/// Keccak-f\[1600\]: the 24 rounds.
pub fn keccak_f(state: &mut [u64; 25]) {
    for rc in ROUND_CONSTANTS {
        *state = round(state, rc).output;
    }
}

/// The Keccak-256 state absorbing a 32-byte message: the message in lanes 0..4, Keccak's
/// original padding (0x01 after the message, 0x80 in the last byte of the 136-byte rate).
pub fn absorb_digest(digest: &[u8; 32]) -> [u64; 25] {
    let mut state = [0u64; 25];
    for (lane, chunk) in state.iter_mut().zip(digest.chunks_exact(8)) {
        *lane = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
    }
    state[4] = PADDING[4];
    state[16] = PADDING[16];
    state
}

/// The padding lanes of a one-block 32-byte message (lanes 0..4 are the message).
pub const PADDING: [u64; 25] = {
    let mut lanes = [0u64; 25];
    lanes[4] = 0x01;
    lanes[16] = 0x80 << 56;
    lanes
};

/// The digest a permuted state holds: lanes 0..4, little-endian.
pub fn squeeze_digest(state: &[u64; 25]) -> [u8; 32] {
    let mut digest = [0u8; 32];
    for (chunk, lane) in digest.chunks_exact_mut(8).zip(state) {
        chunk.copy_from_slice(&lane.to_le_bytes());
    }
    digest
}

/// Keccak-256 of a 32-byte message.
pub fn keccak256_of_digest(digest: &[u8; 32]) -> [u8; 32] {
    let mut state = absorb_digest(digest);
    keccak_f(&mut state);
    squeeze_digest(&state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::{Digest as _, Keccak256};

    #[test]
    fn pi_is_a_permutation_of_the_lanes() {
        let mut seen = [false; 25];
        for i in 0..25 {
            let (x, y, _) = pi_source(i % 5, i / 5);
            assert!(!seen[lane(x, y)]);
            seen[lane(x, y)] = true;
            // B[y'][2x'+3y'] = A'[x'][y']
            assert_eq!((i % 5, i / 5), (y, (2 * x + 3 * y) % 5));
        }
    }

    #[test]
    fn round_constants_set_only_the_iota_bits() {
        let mask: u64 = IOTA_BITS.iter().map(|&b| 1u64 << b).sum();
        assert!(ROUND_CONSTANTS.iter().all(|rc| rc & !mask == 0));
    }

    #[test]
    fn keccak256_of_a_digest_matches_the_sha3_crate() {
        let mut digest = [7u8; 32];
        for _ in 0..20 {
            let expected: [u8; 32] = Keccak256::digest(digest).into();
            assert_eq!(keccak256_of_digest(&digest), expected);
            digest = expected;
        }
    }
}
