//! The two Keccak-256 hashes of a tree: leaves and inner nodes.

use ballast_field::Felt;
use sha3::{Digest as _, Keccak256};

/// A Keccak-256 output.
pub type Digest = [u8; 32];

const LEAF_PREFIX: u8 = 0x00;
const NODE_PREFIX: u8 = 0x01;

/// `Keccak-256(0x00 ‖ bytes)`: the digest of a leaf.
pub fn hash_leaf(bytes: &[u8]) -> Digest {
    let mut hasher = Keccak256::new();
    hasher.update([LEAF_PREFIX]);
    hasher.update(bytes);
    hasher.finalize().into()
}

/// The leaf digest of a row: its elements' canonical little-endian encodings, concatenated.
pub fn hash_row(row: &[Felt]) -> Digest {
    let bytes: Vec<u8> = row.iter().flat_map(|f| f.to_le_bytes()).collect();
    hash_leaf(&bytes)
}

/// `Keccak-256(0x01 ‖ left ‖ right)`: the digest of an inner node.
pub fn compress(left: &Digest, right: &Digest) -> Digest {
    let mut block = [0u8; 65];
    block[0] = NODE_PREFIX;
    block[1..33].copy_from_slice(left);
    block[33..].copy_from_slice(right);
    Keccak256::digest(block).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(d: &Digest) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn keccak_is_keccak_256_not_sha3() {
        // Keccak-256("") differs from SHA3-256("") only by padding; this is the Keccak value.
        assert_eq!(
            hex(&Keccak256::digest([]).into()),
            "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
        );
    }

    #[test]
    fn leaves_and_nodes_are_domain_separated() {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let mut concatenated = a.to_vec();
        concatenated.extend_from_slice(&b);
        assert_ne!(compress(&a, &b), hash_leaf(&concatenated));
        assert_ne!(compress(&a, &b), compress(&b, &a));
    }

    #[test]
    fn rows_hash_their_canonical_encoding() {
        let row = [Felt::new(1), Felt::new(Felt::MODULUS - 1)];
        let mut bytes = 1u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&(Felt::MODULUS - 1).to_le_bytes());
        assert_eq!(hash_row(&row), hash_leaf(&bytes));
    }
}
