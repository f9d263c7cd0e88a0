//! Hashing with the permutation: a sponge for Merkle leaves, a compression for inner nodes.
//!
//! The state's first [`RATE`] cells take the input; the last four, the capacity, are never
//! written by it. A leaf starts with its length in the first capacity cell, an inner node
//! with 1 in the second (which no leaf starts with): the two start from different states,
//! and with the permutation modelled as ideal they are independent functions
//! (`docs/protocol.md` §6, item 5). A leaf's last block needs no padding rule: its zeros
//! are told apart by the length.

use ballast_field::{Algebra, Felt, Halve};

use crate::constants::{CONSTANTS, Constants, WIDTH};
use crate::permutation::permute_over;

/// Cells of the state that absorb input.
pub const RATE: usize = 8;
/// Field elements in a digest (about 256 bits: 128-bit collision resistance).
pub const DIGEST_ELEMENTS: usize = 4;
/// Bytes of a digest: its elements' canonical little-endian encodings.
pub const DIGEST_BYTES: usize = DIGEST_ELEMENTS * Felt::BYTES;

/// A Poseidon2 digest: the first [`DIGEST_ELEMENTS`] cells of the final state.
pub type FeltDigest = [Felt; DIGEST_ELEMENTS];

/// The capacity cell holding a leaf's length.
const LENGTH_CELL: usize = RATE;
/// The capacity cell that marks an inner node.
const NODE_CELL: usize = RATE + 1;

/// The digest of a Merkle leaf: the elements absorbed [`RATE`] at a time (the last block
/// filled with zeros), starting from the state whose length cell holds their number. At
/// least one permutation, so the empty leaf is hashed too.
pub fn hash_elements(elements: &[Felt]) -> FeltDigest {
    sponge(&CONSTANTS, elements.len(), Felt::ZERO, |j| elements[j])
}

/// The digest of an inner node: one permutation of `left ‖ right` with the node cell set.
pub fn compress(left: &FeltDigest, right: &FeltDigest) -> FeltDigest {
    compress_over(&CONSTANTS, *left, *right, Felt::ZERO)
}

/// [`hash_elements`] over `A`, of a leaf of `len` elements, element j being `element(j)`.
#[inline(always)]
pub(crate) fn sponge<A: Halve>(
    constants: &Constants<A>,
    len: usize,
    zero: A,
    element: impl Fn(usize) -> A,
) -> [A; DIGEST_ELEMENTS] {
    let mut state = leaf_start(len, zero);
    for block in 0..len.div_ceil(RATE).max(1) {
        for (i, cell) in state[..RATE].iter_mut().enumerate() {
            let j = block * RATE + i;
            *cell = if j < len { element(j) } else { zero };
        }
        permute_over(&mut state, constants);
    }
    squeeze(&state)
}

/// The state a leaf of `len` elements starts from: zero but its length cell. Its first block
/// goes into the first [`RATE`] cells; a leaf of at most [`RATE`] elements is hashed by one
/// permutation of that state ([`hash_elements`] keeps the first [`DIGEST_ELEMENTS`] cells).
#[inline(always)]
pub fn leaf_start<A: Algebra>(len: usize, zero: A) -> [A; WIDTH] {
    let mut state = [zero; WIDTH];
    state[LENGTH_CELL] = A::from(Felt::new(len as u64));
    state
}

/// [`compress`] over `A`.
#[inline(always)]
pub(crate) fn compress_over<A: Halve>(
    constants: &Constants<A>,
    left: [A; DIGEST_ELEMENTS],
    right: [A; DIGEST_ELEMENTS],
    zero: A,
) -> [A; DIGEST_ELEMENTS] {
    let mut state = node_start(zero);
    state[..DIGEST_ELEMENTS].copy_from_slice(&left);
    state[DIGEST_ELEMENTS..RATE].copy_from_slice(&right);
    permute_over(&mut state, constants);
    squeeze(&state)
}

/// The state an inner node starts from before its children go into the first [`RATE`]
/// cells (left, then right): zero but the node cell.
#[inline(always)]
pub fn node_start<A: Algebra>(zero: A) -> [A; WIDTH] {
    let mut state = [zero; WIDTH];
    state[NODE_CELL] = A::from(Felt::ONE);
    state
}

#[inline(always)]
fn squeeze<A: Copy>(state: &[A; WIDTH]) -> [A; DIGEST_ELEMENTS] {
    std::array::from_fn(|i| state[i])
}

/// The digest's bytes: each element's canonical little-endian encoding, in order.
pub fn digest_to_bytes(digest: &FeltDigest) -> [u8; DIGEST_BYTES] {
    let mut bytes = [0u8; DIGEST_BYTES];
    for (out, element) in bytes
        .as_chunks_mut::<{ Felt::BYTES }>()
        .0
        .iter_mut()
        .zip(digest)
    {
        *out = element.to_le_bytes();
    }
    bytes
}

/// The digest these bytes encode, or `None` when an element's encoding is not canonical
/// (`≥ p`): every digest has exactly one encoding, so a proof cannot carry a node two ways.
pub fn digest_from_bytes(bytes: &[u8; DIGEST_BYTES]) -> Option<FeltDigest> {
    let (words, _) = bytes.as_chunks::<{ Felt::BYTES }>();
    let mut digest = [Felt::ZERO; DIGEST_ELEMENTS];
    for (element, word) in digest.iter_mut().zip(words) {
        *element = Felt::from_le_bytes(*word)?;
    }
    Some(digest)
}

#[cfg(test)]
mod tests {
    use ballast_testkit::SplitMix64;

    use super::*;

    fn elements(rng: &mut SplitMix64, len: usize) -> Vec<Felt> {
        rng.take(len).map(Felt::new).collect()
    }

    #[test]
    fn a_leaf_binds_its_length_and_every_element() {
        let mut rng = SplitMix64::new(0x9051);
        for len in [0, 1, 7, 8, 9, 16, 24, 2_359] {
            let leaf = elements(&mut rng, len);
            let digest = hash_elements(&leaf);
            let mut padded = leaf.clone();
            padded.push(Felt::ZERO);
            assert_ne!(hash_elements(&padded), digest, "length {len}");
            for k in (0..len).step_by(len.div_ceil(5).max(1)) {
                let mut changed = leaf.clone();
                changed[k] += Felt::ONE;
                assert_ne!(hash_elements(&changed), digest, "length {len}, element {k}");
            }
        }
    }

    #[test]
    fn a_node_is_not_a_leaf_of_its_children() {
        let mut rng = SplitMix64::new(0x9052);
        let left: FeltDigest = elements(&mut rng, 4).try_into().unwrap();
        let right: FeltDigest = elements(&mut rng, 4).try_into().unwrap();
        let node = compress(&left, &right);
        let concatenated: Vec<Felt> = left.iter().chain(&right).copied().collect();
        assert_ne!(node, hash_elements(&concatenated));
        assert_ne!(node, compress(&right, &left));
    }

    #[test]
    fn the_sponge_is_pinned() {
        // Guards the construction (cells, padding, order) against silent change: a digest
        // that once went into a proof must stay the same.
        let leaf: Vec<Felt> = (1..=20).map(Felt::new).collect();
        let node = compress(&hash_elements(&leaf), &hash_elements(&[]));
        assert_eq!(
            hex(&digest_to_bytes(&hash_elements(&leaf))),
            "76febd485e9234015a7828486a42da208ef98a038deaa90aca2e5638688d86a7"
        );
        assert_eq!(
            hex(&digest_to_bytes(&node)),
            "69820ba8d20638c6d8ff000edea1f136d19afb405ed8d3a94281f1265c0daa81"
        );
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn digests_have_one_encoding() {
        let mut rng = SplitMix64::new(0x9053);
        let digest = hash_elements(&elements(&mut rng, 3));
        let bytes = digest_to_bytes(&digest);
        assert_eq!(digest_from_bytes(&bytes), Some(digest));
        let mut aliased = bytes;
        // The first element plus p, as a 64-bit word, when that fits: the same residue.
        let value = digest[0].as_u64();
        if let Some(alias) = value.checked_add(Felt::MODULUS) {
            aliased[..8].copy_from_slice(&alias.to_le_bytes());
            assert_eq!(digest_from_bytes(&aliased), None);
        }
        aliased[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(digest_from_bytes(&aliased), None);
    }
}
