//! The two Keccak-256 hashes of a tree: leaves and inner nodes.

use ballast_cpu::Kernels;
use ballast_field::Felt;
pub use ballast_keccak::Digest;
use ballast_keccak::{HashDomain, keccak256, keccak256_many, keccak256_rows};

/// `Keccak-256(0x00 ‖ bytes)` ([`HashDomain::MerkleLeaf`]): the digest of a leaf.
pub fn hash_leaf(bytes: &[u8]) -> Digest {
    keccak256(HashDomain::MerkleLeaf, bytes)
}

/// [`hash_leaf`] of each `leaf_len`-byte piece of `bytes`, into `out`, on the process's CPU
/// path (several leaves per permutation where it has SIMD lanes). One thread.
///
/// # Panics
/// If `bytes` is not `out.len()` leaves of `leaf_len` bytes.
pub fn hash_leaves(bytes: &[u8], leaf_len: usize, out: &mut [Digest]) {
    hash_leaves_on(Kernels::active(), bytes, leaf_len, out);
}

pub(crate) fn hash_leaves_on(kernels: Kernels, bytes: &[u8], leaf_len: usize, out: &mut [Digest]) {
    keccak256_many(kernels, HashDomain::MerkleLeaf, bytes, leaf_len, out);
}

/// [`hash_row`] of the first `out.len()` rows of a table block (`width` runs of
/// [`BLOCK_ROWS`](ballast_field::BLOCK_ROWS) values, column after column), on the given
/// kernels.
pub(crate) fn hash_block_rows(kernels: Kernels, block: &[Felt], width: usize, out: &mut [Digest]) {
    keccak256_rows(
        kernels,
        HashDomain::MerkleLeaf,
        Felt::slice_as_u64(block),
        width,
        out,
    );
}

/// [`compress`] of each pair of consecutive digests of `below`, into `out` (half as many).
pub(crate) fn compress_pairs(kernels: Kernels, below: &[Digest], out: &mut [Digest]) {
    keccak256_many(
        kernels,
        HashDomain::MerkleNode,
        below.as_flattened(),
        64,
        out,
    );
}

/// The leaf digest of a row: its elements' canonical little-endian encodings, concatenated.
pub fn hash_row(row: &[Felt]) -> Digest {
    let bytes: Vec<u8> = row.iter().flat_map(|f| f.to_le_bytes()).collect();
    hash_leaf(&bytes)
}

/// `Keccak-256(0x01 ‖ left ‖ right)` ([`HashDomain::MerkleNode`]): the digest of an inner
/// node.
pub fn compress(left: &Digest, right: &Digest) -> Digest {
    let mut pair = [0u8; 64];
    pair[..32].copy_from_slice(left);
    pair[32..].copy_from_slice(right);
    keccak256(HashDomain::MerkleNode, &pair)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(d: &Digest) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn leaf_and_node_digests_are_pinned() {
        // Keccak-256(0x00); a node is Keccak-256(0x01 ‖ left ‖ right).
        assert_eq!(
            hex(&hash_leaf(&[])),
            "bc36789e7a1e281436464229828f817d6612f7b477d66591ff96a9e064bcc98a"
        );
        assert_eq!(
            hex(&compress(&[0; 32], &[0; 32])),
            hex(&keccak256(HashDomain::MerkleNode, &[0; 64]))
        );
    }

    #[test]
    fn batched_hashes_match_one_at_a_time_on_every_path() {
        let leaves: Vec<Digest> = (0..37u8).map(|i| hash_leaf(&[i; 3])).collect();
        for kernels in Kernels::supported() {
            let mut nodes = vec![[0u8; 32]; 18];
            compress_pairs(kernels, &leaves[..36], &mut nodes);
            for (k, node) in nodes.iter().enumerate() {
                assert_eq!(
                    *node,
                    compress(&leaves[2 * k], &leaves[2 * k + 1]),
                    "{}",
                    kernels.path()
                );
            }
            let bytes: Vec<u8> = (0..37 * 24).map(|i| i as u8).collect();
            let mut digests = vec![[0u8; 32]; 37];
            hash_leaves_on(kernels, &bytes, 24, &mut digests);
            for (k, digest) in digests.iter().enumerate() {
                assert_eq!(
                    *digest,
                    hash_leaf(&bytes[k * 24..(k + 1) * 24]),
                    "{}",
                    kernels.path()
                );
            }
        }
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
