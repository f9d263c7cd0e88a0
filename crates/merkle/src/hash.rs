//! The two hashes a tree can be built with, and their leaves and inner nodes.

use std::fmt;

use ballast_cpu::Kernels;
use ballast_field::{BLOCK_ROWS, Felt};
pub use ballast_keccak::Digest;
use ballast_keccak::{HashDomain, keccak256, keccak256_many, keccak256_rows};
use ballast_poseidon2::{FeltDigest, digest_from_bytes, digest_to_bytes};

/// The hash a tree commits with, chosen per proof (bound in its transcript and header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MerkleHash {
    /// Keccak-256 over bytes: a leaf is `Keccak-256(0x00 ‖ bytes)`, a node
    /// `Keccak-256(0x01 ‖ left ‖ right)`. Fast on CPUs; the default.
    #[default]
    Keccak256,
    /// Poseidon2 over Goldilocks (`ballast-poseidon2`): a leaf is the sponge of its field
    /// elements, a node the compression of its children's. What a proof that is to be
    /// verified inside another proof commits with.
    Poseidon2,
}

impl MerkleHash {
    /// Every hash, in the order of their ids.
    pub const ALL: [Self; 2] = [Self::Keccak256, Self::Poseidon2];

    /// The byte that names the hash in a proof's header.
    pub const fn id(self) -> u8 {
        match self {
            Self::Keccak256 => 0,
            Self::Poseidon2 => 1,
        }
    }

    /// The hash a header byte names, if any.
    pub fn from_id(id: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|hash| hash.id() == id)
    }

    /// The name users give it (`--hash`) and reports print: `keccak` or `poseidon2`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Keccak256 => "keccak",
            Self::Poseidon2 => "poseidon2",
        }
    }

    /// The hash of that [`name`](Self::name), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|hash| hash.name() == name)
    }

    /// The leaf digest of a row: its elements' canonical little-endian encodings,
    /// concatenated, for Keccak-256; the elements themselves for Poseidon2.
    pub fn row(self, row: &[Felt]) -> Digest {
        match self {
            Self::Keccak256 => {
                let bytes: Vec<u8> = row.iter().flat_map(|f| f.to_le_bytes()).collect();
                keccak256(HashDomain::MerkleLeaf, &bytes)
            }
            Self::Poseidon2 => to_bytes(ballast_poseidon2::hash_elements(row)),
        }
    }

    /// Whether `digest` is a digest of this hash: any 32 bytes for Keccak-256; four canonical
    /// elements for Poseidon2 (a node or root is never read two ways).
    pub fn is_digest(self, digest: &Digest) -> bool {
        match self {
            Self::Keccak256 => true,
            Self::Poseidon2 => digest_from_bytes(digest).is_some(),
        }
    }

    /// The digest of an inner node, or `None` when a child is no digest of this hash (a
    /// Poseidon2 digest whose elements are not canonical): every node has one encoding.
    pub fn node(self, left: &Digest, right: &Digest) -> Option<Digest> {
        match self {
            Self::Keccak256 => {
                let mut pair = [0u8; 64];
                pair[..32].copy_from_slice(left);
                pair[32..].copy_from_slice(right);
                Some(keccak256(HashDomain::MerkleNode, &pair))
            }
            Self::Poseidon2 => {
                let (left, right) = (digest_from_bytes(left)?, digest_from_bytes(right)?);
                Some(to_bytes(ballast_poseidon2::compress(&left, &right)))
            }
        }
    }

    /// [`row`](Self::row) of each `len`-element piece of `elements`, into `out`, on the
    /// process's CPU path (several rows per permutation where it has SIMD lanes). One thread.
    ///
    /// # Panics
    /// If `elements` is not `out.len()` rows of `len` elements.
    pub fn rows(self, elements: &[Felt], len: usize, out: &mut [Digest]) {
        self.rows_on(Kernels::active(), elements, len, out);
    }

    pub(crate) fn rows_on(
        self,
        kernels: Kernels,
        elements: &[Felt],
        len: usize,
        out: &mut [Digest],
    ) {
        match self {
            Self::Keccak256 => {
                let bytes: Vec<u8> = elements.iter().flat_map(|f| f.to_le_bytes()).collect();
                let leaf_len = len * Felt::BYTES;
                keccak256_many(kernels, HashDomain::MerkleLeaf, &bytes, leaf_len, out);
            }
            Self::Poseidon2 => {
                let mut digests = vec![[Felt::ZERO; 4]; out.len()];
                ballast_poseidon2::hash_many(kernels, elements, len, &mut digests);
                write_bytes(&digests, out);
            }
        }
    }

    /// [`row`](Self::row) of the first `out.len()` rows of consecutive table blocks (each
    /// `width` runs of [`BLOCK_ROWS`] values, column after column), on the given kernels.
    pub(crate) fn block_rows(
        self,
        kernels: Kernels,
        blocks: &[Felt],
        width: usize,
        out: &mut [Digest],
    ) {
        match self {
            Self::Keccak256 => {
                let block = width * BLOCK_ROWS;
                for (b, out) in out.chunks_mut(BLOCK_ROWS).enumerate() {
                    let words = Felt::slice_as_u64(&blocks[b * block..(b + 1) * block]);
                    keccak256_rows(kernels, HashDomain::MerkleLeaf, words, width, out);
                }
            }
            Self::Poseidon2 => {
                let mut digests = vec![[Felt::ZERO; 4]; out.len()];
                ballast_poseidon2::hash_block_rows(kernels, blocks, width, &mut digests);
                write_bytes(&digests, out);
            }
        }
    }

    /// [`node`](Self::node) of each pair of consecutive digests of `below`, on the process's
    /// CPU path, or `None` when one of them is no digest of this hash.
    ///
    /// # Panics
    /// If `below` holds an odd number of digests.
    pub(crate) fn checked_nodes(self, below: &[Digest]) -> Option<Vec<Digest>> {
        if !below.iter().all(|d| self.is_digest(d)) {
            return None;
        }
        let mut out = vec![[0u8; 32]; below.len() / 2];
        self.nodes_on(Kernels::active(), below, &mut out);
        Some(out)
    }

    /// [`node`](Self::node) of each pair of consecutive digests of `below`, into `out` (half
    /// as many).
    ///
    /// # Panics
    /// If a Poseidon2 digest of `below` is not canonical: the prover's own levels are.
    pub(crate) fn nodes_on(self, kernels: Kernels, below: &[Digest], out: &mut [Digest]) {
        match self {
            Self::Keccak256 => keccak256_many(
                kernels,
                HashDomain::MerkleNode,
                below.as_flattened(),
                64,
                out,
            ),
            Self::Poseidon2 => {
                let children: Vec<FeltDigest> = below
                    .iter()
                    .map(|d| digest_from_bytes(d).expect("the prover's digests are canonical"))
                    .collect();
                let mut digests = vec![[Felt::ZERO; 4]; out.len()];
                ballast_poseidon2::compress_many(kernels, &children, &mut digests);
                write_bytes(&digests, out);
            }
        }
    }
}

impl fmt::Display for MerkleHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn to_bytes(digest: FeltDigest) -> Digest {
    digest_to_bytes(&digest)
}

fn write_bytes(digests: &[FeltDigest], out: &mut [Digest]) {
    for (out, digest) in out.iter_mut().zip(digests) {
        *out = digest_to_bytes(digest);
    }
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
        let keccak = MerkleHash::Keccak256;
        assert_eq!(
            hex(&keccak.row(&[])),
            "bc36789e7a1e281436464229828f817d6612f7b477d66591ff96a9e064bcc98a"
        );
        assert_eq!(
            hex(&keccak.node(&[0; 32], &[0; 32]).unwrap()),
            hex(&keccak256(HashDomain::MerkleNode, &[0; 64]))
        );
        // Poseidon2: the sponge of no elements, the compression of two zero digests.
        let poseidon2 = MerkleHash::Poseidon2;
        assert_eq!(
            poseidon2.row(&[]),
            to_bytes(ballast_poseidon2::hash_elements(&[]))
        );
        assert_eq!(
            poseidon2.node(&[0; 32], &[0; 32]).unwrap(),
            to_bytes(ballast_poseidon2::compress(
                &[Felt::ZERO; 4],
                &[Felt::ZERO; 4]
            ))
        );
    }

    #[test]
    fn ids_and_names_round_trip() {
        for hash in MerkleHash::ALL {
            assert_eq!(MerkleHash::from_id(hash.id()), Some(hash));
            assert_eq!(MerkleHash::from_name(hash.name()), Some(hash));
        }
        assert_eq!(MerkleHash::from_id(2), None);
        assert_eq!(MerkleHash::from_name("sha256"), None);
    }

    #[test]
    fn batched_hashes_match_one_at_a_time_on_every_path() {
        for hash in MerkleHash::ALL {
            let leaves: Vec<Digest> = (0..37u64).map(|i| hash.row(&[Felt::new(i); 3])).collect();
            for kernels in Kernels::supported() {
                let mut nodes = vec![[0u8; 32]; 18];
                hash.nodes_on(kernels, &leaves[..36], &mut nodes);
                for (k, node) in nodes.iter().enumerate() {
                    let one = hash.node(&leaves[2 * k], &leaves[2 * k + 1]).unwrap();
                    assert_eq!(*node, one, "{hash} {}", kernels.path());
                }
                let elements: Vec<Felt> =
                    (0..37 * 3u64).map(|i| Felt::new(i * 0x9e37_79b9)).collect();
                let mut digests = vec![[0u8; 32]; 37];
                hash.rows_on(kernels, &elements, 3, &mut digests);
                for (k, digest) in digests.iter().enumerate() {
                    let one = hash.row(&elements[k * 3..(k + 1) * 3]);
                    assert_eq!(*digest, one, "{hash} {}", kernels.path());
                }
            }
        }
    }

    #[test]
    fn leaves_and_nodes_are_domain_separated() {
        for hash in MerkleHash::ALL {
            let (a, b) = (hash.row(&[Felt::ONE]), hash.row(&[Felt::new(2)]));
            // The leaf of the children's concatenation: their bytes, or their elements.
            let leaf = match hash {
                MerkleHash::Keccak256 => keccak256(HashDomain::MerkleLeaf, &[a, b].concat()),
                MerkleHash::Poseidon2 => {
                    let elements = [a, b].map(|d| digest_from_bytes(&d).unwrap()).concat();
                    hash.row(&elements)
                }
            };
            assert_ne!(hash.node(&a, &b), Some(leaf), "{hash}");
            assert_ne!(hash.node(&a, &b), hash.node(&b, &a), "{hash}");
        }
    }

    #[test]
    fn rows_hash_their_canonical_encoding_or_their_elements() {
        let row = [Felt::new(1), Felt::new(Felt::MODULUS - 1)];
        let mut bytes = 1u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&(Felt::MODULUS - 1).to_le_bytes());
        assert_eq!(
            MerkleHash::Keccak256.row(&row),
            keccak256(HashDomain::MerkleLeaf, &bytes)
        );
        assert_eq!(
            MerkleHash::Poseidon2.row(&row),
            to_bytes(ballast_poseidon2::hash_elements(&row))
        );
    }

    #[test]
    fn a_non_canonical_poseidon2_child_is_no_node() {
        let digest = MerkleHash::Poseidon2.row(&[Felt::ONE]);
        let mut alias = digest;
        alias[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(MerkleHash::Poseidon2.node(&digest, &digest).is_some());
        assert_eq!(MerkleHash::Poseidon2.node(&alias, &digest), None);
        assert_eq!(MerkleHash::Poseidon2.node(&digest, &alias), None);
    }
}
