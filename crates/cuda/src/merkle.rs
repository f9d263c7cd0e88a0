//! Merkle trees on the device: row leaves of a matrix, FRI layer leaves, and the
//! levels above them, one launch per level.
//!
//! A whole tree lives in one buffer, level after level (the layout `kernels/merkle.cu`
//! describes), and comes back to the host in one download as a [`MerkleTree`].

use ballast_field::{Ext3, Felt};
use ballast_merkle::{Digest, MerkleTree};
use rayon::prelude::*;

use crate::CudaError;
use crate::kernels::{Arg, Kernel, Launcher, run};

/// Words per digest: 32 bytes as four little-endian `u64`s.
const DIGEST_WORDS: usize = 4;

/// Digests in a tree over `leaves` leaves: 2·leaves − 1.
fn tree_digests(leaves: usize) -> usize {
    2 * leaves - 1
}

/// Builds the inner levels over the leaves at the start of `tree` and downloads the tree.
fn finish_tree<L: Launcher>(
    launcher: &L,
    tree: &L::Buffer,
    leaves: usize,
) -> Result<MerkleTree, CudaError> {
    let mut below = 0u64;
    let mut width = leaves as u64;
    while width > 1 {
        let above = below + width;
        width /= 2;
        run(
            launcher,
            Kernel::MerkleLevel,
            width,
            &[
                Arg::Buffer(tree),
                Arg::Word(width),
                Arg::Word(below),
                Arg::Word(above),
            ],
        )?;
        below = above;
    }
    let words = launcher.download(tree, tree_digests(leaves) * DIGEST_WORDS)?;
    let mut levels = Vec::with_capacity(leaves.trailing_zeros() as usize + 1);
    let mut rest = &words[..];
    let mut width = leaves;
    while width >= 1 {
        let (level, tail) = rest.split_at(width * DIGEST_WORDS);
        levels.push(level.chunks_exact(DIGEST_WORDS).map(digest_of).collect());
        rest = tail;
        width /= 2;
    }
    MerkleTree::from_levels(levels).map_err(|e| CudaError::BadOutput(e.to_string()))
}

/// The digest whose bytes are four little-endian words.
fn digest_of(words: &[u64]) -> Digest {
    let mut digest = [0u8; 32];
    for (chunk, word) in digest.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    digest
}

/// The tree whose leaf j hashes row j of the `width` × `height` matrix in `matrix`
/// ([`MerkleTree::commit_rows`]).
///
/// # Errors
/// If the height is not a power of two, or the device fails.
pub fn commit_rows<L: Launcher>(
    launcher: &L,
    matrix: &L::Buffer,
    width: usize,
    height: usize,
) -> Result<MerkleTree, CudaError> {
    if !height.is_power_of_two() {
        return Err(CudaError::Input(format!(
            "{height} rows to commit, need a power of two"
        )));
    }
    // The leaf launch and finish_tree's level launches write every digest of the tree.
    let tree = launcher.alloc_uninit(tree_digests(height) * DIGEST_WORDS)?;
    run(
        launcher,
        Kernel::MerkleRowLeaves,
        height as u64,
        &[
            Arg::Buffer(matrix),
            Arg::Buffer(&tree),
            Arg::Word(height as u64),
            Arg::Word(width as u64),
            Arg::Word(height as u64),
        ],
    )?;
    finish_tree(launcher, &tree, height)
}

/// A FRI layer's tree in cosets of 2^`log_arity`: with s = len/2^`log_arity`, leaf r hashes
/// `evals[r]`, `evals[r + s]`, … (`ballast_fri::commit_layer`).
///
/// # Errors
/// If the length is not a power of two of at least 2^`log_arity`, or the device fails.
pub fn commit_fri_layer<L: Launcher>(
    launcher: &L,
    evals: &[Ext3],
    log_arity: usize,
) -> Result<MerkleTree, CudaError> {
    let len = evals.len();
    if !len.is_power_of_two() || len >> log_arity == 0 {
        return Err(CudaError::Input(format!(
            "a FRI layer of {len} values cannot be cut into cosets of 2^{log_arity}"
        )));
    }
    let words: Vec<u64> = evals
        .par_iter()
        .flat_map_iter(|e| e.coeffs().map(Felt::as_u64))
        .collect();
    let evals = launcher.upload(&words)?;
    let leaves = len >> log_arity;
    // The leaf launch and finish_tree's level launches write every digest of the tree.
    let tree = launcher.alloc_uninit(tree_digests(leaves) * DIGEST_WORDS)?;
    run(
        launcher,
        Kernel::MerkleFriLayerLeaves,
        leaves as u64,
        &[
            Arg::Buffer(&evals),
            Arg::Buffer(&tree),
            Arg::Word(leaves as u64),
            Arg::Word(1 << log_arity),
        ],
    )?;
    finish_tree(launcher, &tree, leaves)
}
