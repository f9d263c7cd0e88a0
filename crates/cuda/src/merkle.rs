//! Merkle trees on the device: row leaves of a column-major table, FRI layer leaves, and
//! the levels above them, one launch per level. A tree stays where it was built; only its
//! root and the nodes of batch openings come back.
//!
//! A whole tree lives in a buffer, level after level (`kernels/merkle.cu`): the L leaves at
//! digest 0, the L/2 nodes above them at digest L, and so on up to the root at 2L − 2.
//! Keccak-256 and Poseidon2 trees differ only in their kernels ([`TreeHash`]).

use ballast_merkle::{Digest, batch_opening_nodes};

use crate::CudaError;
use crate::kernels::{Arg, Grid, Kernel, Launcher};

/// Words per digest: 32 bytes as four little-endian `u64`s.
pub(crate) const DIGEST_WORDS: usize = 4;

/// The round constants' table a Poseidon2 kernel reads (its `*rc`): `ballast_poseidon2`'s,
/// in round order.
pub fn poseidon2_constants() -> Vec<u64> {
    let c = &ballast_poseidon2::constants::CONSTANTS;
    c.initial
        .iter()
        .flatten()
        .chain(&c.partial)
        .chain(c.terminal.iter().flatten())
        .map(|f| f.as_u64())
        .collect()
}

/// The hash a tree is built with on the device.
#[derive(Debug)]
pub(crate) enum TreeHash<'a, B> {
    /// Keccak-256.
    Keccak,
    /// Poseidon2, its round constants in a buffer ([`poseidon2_constants`]).
    Poseidon2(&'a B),
}

// Derived `Clone` would ask `B: Clone`; a reference is copied whatever it points to.
impl<B> Clone for TreeHash<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B> Copy for TreeHash<'_, B> {}

impl<B> TreeHash<'_, B> {
    /// Launches one item per thread of the hash's kernel of a pair (Keccak-256's,
    /// Poseidon2's) with `buffers`, then Poseidon2's round constants, then `words`.
    fn launch<L: Launcher<Buffer = B>>(
        self,
        launcher: &L,
        [keccak, poseidon2]: [Kernel; 2],
        items: u64,
        buffers: Vec<Arg<'_, B>>,
        words: &[u64],
    ) -> Result<(), CudaError> {
        let mut args = buffers;
        let kernel = match self {
            Self::Keccak => keccak,
            Self::Poseidon2(rc) => {
                args.push(Arg::Buffer(rc));
                poseidon2
            }
        };
        args.extend(words.iter().map(|&w| Arg::Word(w)));
        launcher.launch(kernel, Grid::items(items)?, &args)
    }
}

/// Digests in a tree over 2^`height` leaves.
pub(crate) fn tree_digests(height: usize) -> usize {
    (2 << height) - 1
}

/// Where node `index` at `depth` (0: the leaves) of a tree of the given height sits, in
/// digests from the tree's start.
pub(crate) fn node_at(height: usize, depth: usize, index: usize) -> usize {
    // The levels below `depth` hold 2^height + 2^(height−1) + … = 2^(height+1) − 2^(height+1−depth).
    (2 << height) - (2 << height >> depth) + index
}

/// The digest whose bytes are four little-endian words.
pub(crate) fn digest_of(words: &[u64]) -> Digest {
    let mut digest = [0u8; 32];
    for (chunk, word) in digest.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    digest
}

/// Builds the levels above the leaves at digest `start` of `tree` (2^`height` of them) and
/// returns the root.
///
/// # Errors
/// If the device fails.
pub(crate) fn finish_tree<L: Launcher>(
    launcher: &L,
    hash: TreeHash<'_, L::Buffer>,
    tree: &L::Buffer,
    start: usize,
    height: usize,
) -> Result<Digest, CudaError> {
    let mut below = start as u64;
    let mut width = 1u64 << height;
    while width > 1 {
        let above = below + width;
        width /= 2;
        hash.launch(
            launcher,
            [Kernel::MerkleLevel, Kernel::Poseidon2Level],
            width,
            vec![Arg::Buffer(tree)],
            &[width, below, above],
        )?;
        below = above;
    }
    let mut root = [0u64; DIGEST_WORDS];
    launcher.download(tree, below as usize * DIGEST_WORDS, &mut root)?;
    Ok(digest_of(&root))
}

/// The tree whose leaf j hashes row j of the `width` × 2^`height` column-major table
/// (`MerkleTree::commit_rows`), into `tree`; its root.
///
/// # Errors
/// If the device fails.
pub(crate) fn commit_rows<L: Launcher>(
    launcher: &L,
    hash: TreeHash<'_, L::Buffer>,
    table: &L::Buffer,
    width: usize,
    height: usize,
    tree: &L::Buffer,
) -> Result<Digest, CudaError> {
    let rows = 1u64 << height;
    hash.launch(
        launcher,
        [Kernel::MerkleRowLeaves, Kernel::Poseidon2RowLeaves],
        rows,
        vec![Arg::Buffer(table), Arg::Buffer(tree)],
        &[rows, width as u64, rows],
    )?;
    finish_tree(launcher, hash, tree, 0, height)
}

/// The tree over a FRI layer of 2^`log_len` extension elements (at word `layer_at` of
/// `layers`) in cosets of 2^`log_arity` (`ballast_fri::commit_layer`), at digest `tree_at`
/// of `trees`; its root.
///
/// # Errors
/// If the device fails.
#[allow(clippy::too_many_arguments)]
pub(crate) fn commit_layer<L: Launcher>(
    launcher: &L,
    hash: TreeHash<'_, L::Buffer>,
    layers: &L::Buffer,
    layer_at: usize,
    log_len: usize,
    log_arity: usize,
    trees: &L::Buffer,
    tree_at: usize,
) -> Result<Digest, CudaError> {
    let leaves = 1u64 << (log_len - log_arity);
    hash.launch(
        launcher,
        [
            Kernel::MerkleFriLayerLeaves,
            Kernel::Poseidon2FriLayerLeaves,
        ],
        leaves,
        vec![
            Arg::At(layers, layer_at),
            Arg::At(trees, tree_at * DIGEST_WORDS),
        ],
        &[leaves, 1 << log_arity],
    )?;
    finish_tree(launcher, hash, trees, tree_at, log_len - log_arity)
}

/// Where the nodes of the batch opening of `leaves` in a tree of the given height, starting
/// at digest `tree_at`, sit, in digests: what to gather.
pub(crate) fn opening_nodes(height: usize, leaves: &[usize], tree_at: usize) -> Vec<u64> {
    batch_opening_nodes(height, leaves)
        .into_iter()
        .map(|(depth, index)| (tree_at + node_at(height, depth, index)) as u64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_sit_level_after_level() {
        // Height 3: leaves 0..8, then 8..12, 12..14, and the root at 14.
        assert_eq!(node_at(3, 0, 5), 5);
        assert_eq!(node_at(3, 1, 0), 8);
        assert_eq!(node_at(3, 2, 1), 13);
        assert_eq!(node_at(3, 3, 0), 14);
        assert_eq!(tree_digests(3), 15);
        assert_eq!(node_at(0, 0, 0), 0);
    }
}
