//! Building Merkle trees and opening many of their leaves at once.

use ballast_cpu::Kernels;
use ballast_field::{BLOCK_ROWS, RowBlocks};
use rayon::prelude::*;

use crate::{Digest, MerkleError, MerkleHash};

/// Blocks of rows hashed per parallel task.
const BLOCKS_PER_TASK: usize = 1 << 7;
/// Levels narrower than this are compressed on one thread.
const PARALLEL_LEVEL: usize = 1 << 12;
/// Nodes compressed per parallel task.
const NODES_PER_TASK: usize = 1 << 10;

/// A Merkle tree with every level kept; `levels[0]` are the leaf digests.
#[derive(Clone, Debug)]
pub struct MerkleTree {
    levels: Vec<Vec<Digest>>,
}

impl MerkleTree {
    /// The tree over the given leaf digests, its nodes hashed with `hash`.
    ///
    /// # Panics
    /// If the number of leaves is not a power of two.
    pub fn from_leaves(hash: MerkleHash, leaves: Vec<Digest>) -> Self {
        Self::from_leaves_on(Kernels::active(), hash, leaves)
    }

    fn from_leaves_on(kernels: Kernels, hash: MerkleHash, leaves: Vec<Digest>) -> Self {
        assert!(
            leaves.len().is_power_of_two(),
            "a tree needs a power-of-two number of leaves, got {}",
            leaves.len()
        );
        let mut levels = vec![leaves];
        while levels.last().expect("at least the leaves").len() > 1 {
            let below = levels.last().expect("at least the leaves");
            levels.push(pair_nodes(kernels, hash, below));
        }
        Self { levels }
    }

    /// The tree whose leaf j is row j of `table`: [`MerkleHash::row`] of its elements in
    /// column order. Rows are hashed straight from the table's blocks.
    ///
    /// # Panics
    /// If the table's height is not a power of two.
    pub fn commit_rows(hash: MerkleHash, table: &RowBlocks) -> Self {
        Self::commit_rows_on(Kernels::active(), hash, table)
    }

    pub(crate) fn commit_rows_on(kernels: Kernels, hash: MerkleHash, table: &RowBlocks) -> Self {
        Self::from_leaves_on(kernels, hash, row_digests(kernels, hash, table))
    }

    /// A tree whose levels were built elsewhere (a device backend), leaves first, each level
    /// half the one below, ending with the root.
    ///
    /// # Errors
    /// If the level sizes do not form a tree. The digests themselves are not recomputed:
    /// backends are tested for parity with [`commit_rows`](Self::commit_rows).
    pub fn from_levels(levels: Vec<Vec<Digest>>) -> Result<Self, MerkleError> {
        let leaves = levels.first().map_or(0, Vec::len);
        if !leaves.is_power_of_two() {
            return Err(MerkleError::LeafCount { leaves });
        }
        let expected = leaves.trailing_zeros() as usize + 1;
        if levels.len() != expected {
            return Err(MerkleError::Shape {
                what: "levels",
                expected,
                got: levels.len(),
            });
        }
        for (depth, level) in levels.iter().enumerate() {
            if level.len() != leaves >> depth {
                return Err(MerkleError::Shape {
                    what: "digests in a level",
                    expected: leaves >> depth,
                    got: level.len(),
                });
            }
        }
        Ok(Self { levels })
    }

    /// The levels, leaves first and root last.
    pub fn levels(&self) -> &[Vec<Digest>] {
        &self.levels
    }

    /// The root digest.
    pub fn root(&self) -> Digest {
        self.levels.last().expect("at least the leaves")[0]
    }

    /// Path length: log2 of the number of leaves.
    pub fn height(&self) -> usize {
        self.levels.len() - 1
    }

    /// The batch opening of the leaves at `indices` (strictly increasing): the nodes a
    /// verifier cannot compute from those leaves, level by level from the leaves up and left
    /// to right within a level. Its length is [`batch_opening_len`].
    ///
    /// # Panics
    /// If `indices` are not strictly increasing leaf indices.
    pub fn open_batch(&self, indices: &[usize]) -> Vec<Digest> {
        check_indices(self.height(), indices).expect("valid leaf indices");
        batch_opening_nodes(self.height(), indices)
            .into_iter()
            .map(|(depth, index)| self.levels[depth][index])
            .collect()
    }
}

/// [`MerkleHash::row`] of every row of `table`, in order, hashed straight from its blocks.
pub(crate) fn row_digests(kernels: Kernels, hash: MerkleHash, table: &RowBlocks) -> Vec<Digest> {
    let block = table.width() * BLOCK_ROWS;
    let mut digests = vec![[0u8; 32]; table.height()];
    digests
        .par_chunks_mut(BLOCKS_PER_TASK * BLOCK_ROWS)
        .enumerate()
        .for_each(|(task, chunk)| {
            let first = task * BLOCKS_PER_TASK * block;
            let blocks = &table.as_slice()[first..first + chunk.len().div_ceil(BLOCK_ROWS) * block];
            hash.block_rows(kernels, blocks, table.width(), chunk);
        });
    digests
}

/// [`MerkleHash::node`] of each pair of consecutive digests of `below`: the level above.
pub(crate) fn pair_nodes(kernels: Kernels, hash: MerkleHash, below: &[Digest]) -> Vec<Digest> {
    let mut level = vec![[0u8; 32]; below.len() / 2];
    if below.len() >= PARALLEL_LEVEL {
        level
            .par_chunks_mut(NODES_PER_TASK)
            .zip(below.par_chunks(2 * NODES_PER_TASK))
            .for_each(|(out, below)| hash.nodes_on(kernels, below, out));
    } else {
        hash.nodes_on(kernels, below, &mut level);
    }
    level
}

/// Checks that `indices` are strictly increasing leaf indices of a tree of the given height,
/// and that there is at least one.
///
/// # Errors
/// [`MerkleError::Indices`] saying which rule fails.
pub fn check_indices(height: usize, indices: &[usize]) -> Result<(), MerkleError> {
    if height >= usize::BITS as usize {
        return Err(MerkleError::Indices("the tree is too tall to address"));
    }
    let leaves = 1usize << height;
    if indices.is_empty() {
        return Err(MerkleError::Indices("no leaves to open"));
    }
    if indices.windows(2).any(|w| w[0] >= w[1]) {
        return Err(MerkleError::Indices(
            "leaf indices are not strictly increasing",
        ));
    }
    if indices.last().is_some_and(|&last| last >= leaves) {
        return Err(MerkleError::Indices("a leaf index is outside the tree"));
    }
    Ok(())
}

/// Number of nodes in the batch opening of `indices` in a tree of the given height. It is
/// at most `indices.len()·height`. The indices must pass [`check_indices`] for the count to
/// mean anything.
pub fn batch_opening_len(height: usize, indices: &[usize]) -> usize {
    let mut count = 0;
    walk(height, indices, |_, _| count += 1);
    count
}

/// Where the nodes of the batch opening of `indices` sit: (depth, index) pairs, depth 0
/// being the leaves, in the opening's order. For a tree kept elsewhere (a device), which
/// gathers just these. The indices must pass [`check_indices`].
pub fn batch_opening_nodes(height: usize, indices: &[usize]) -> Vec<(usize, usize)> {
    let mut nodes = Vec::new();
    walk(height, indices, |depth, index| nodes.push((depth, index)));
    nodes
}

/// Calls `sibling(depth, index)` for every node a batch opening of `indices` carries, in
/// the opening's order.
fn walk(height: usize, indices: &[usize], mut sibling: impl FnMut(usize, usize)) {
    let mut known = indices.to_vec();
    for depth in 0..height {
        let mut k = 0;
        while k < known.len() {
            let i = known[k];
            if i.is_multiple_of(2) && known.get(k + 1) == Some(&(i + 1)) {
                k += 2;
            } else {
                sibling(depth, i ^ 1);
                k += 1;
            }
        }
        known.dedup_by_key(|i| *i >> 1);
        known.iter_mut().for_each(|i| *i >>= 1);
    }
}

/// True when `nodes`, the batch opening of the leaves at `indices` (strictly increasing),
/// proves that `leaves` are those leaves of the tree of the given height with root `root`,
/// its nodes hashed with `hash`.
///
/// False as well when the indices are invalid, the counts disagree, nodes are left over, or
/// a node is no digest of `hash` ([`MerkleHash::node`]).
pub fn verify_batch(
    hash: MerkleHash,
    root: &Digest,
    height: usize,
    indices: &[usize],
    leaves: &[Digest],
    nodes: &[Digest],
) -> bool {
    climb(
        hash,
        height,
        indices,
        leaves,
        nodes,
        |_, _, _| {},
        |_, _, node| Some(node),
    ) == Some(*root)
}

/// The authentication path of each leaf a batch opening opens, from the leaf's sibling up
/// to the root's child (`height` nodes), when [`verify_batch`] accepts the opening against
/// `root`: what a verifier AIR hashes, one node a row. `None` when it refuses.
pub fn batch_paths(
    hash: MerkleHash,
    root: &Digest,
    height: usize,
    indices: &[usize],
    leaves: &[Digest],
    nodes: &[Digest],
) -> Option<Vec<Vec<Digest>>> {
    let mut known = std::collections::HashMap::new();
    let top = climb(
        hash,
        height,
        indices,
        leaves,
        nodes,
        |depth, index, digest| {
            known.insert((depth, index), *digest);
        },
        |_, _, node| Some(node),
    );
    (top == Some(*root)).then(|| {
        indices
            .iter()
            .map(|&leaf| {
                (0..height)
                    .map(|depth| known[&(depth, (leaf >> depth) ^ 1)])
                    .collect()
            })
            .collect()
    })
}

/// The root that the batch opening `nodes` of `leaves` at `indices` leads to, calling
/// `known(depth, index, digest)` for every node on the way below the root (opened, carried
/// or computed). Each parent computed from its children passes through `lift(depth, index,
/// digest)`, which gives the node's digest (a mixed tree joins a shorter table's row there).
/// A level's `known` calls all come before its `lift` calls (its parents are hashed at
/// once). `None` when the indices are invalid, the counts disagree, nodes are left over, a node is
/// no digest of `hash`, or `lift` refuses.
pub(crate) fn climb(
    hash: MerkleHash,
    height: usize,
    indices: &[usize],
    leaves: &[Digest],
    nodes: &[Digest],
    mut known: impl FnMut(usize, usize, &Digest),
    mut lift: impl FnMut(usize, usize, Digest) -> Option<Digest>,
) -> Option<Digest> {
    if check_indices(height, indices).is_err() || leaves.len() != indices.len() {
        return None;
    }
    let mut level: Vec<(usize, Digest)> = indices
        .iter()
        .copied()
        .zip(leaves.iter().copied())
        .collect();
    let mut nodes = nodes.iter();
    for depth in 0..height {
        // The level's pairs of children, in order, then their parents hashed at once (SIMD
        // lanes where the CPU has them).
        let mut children = Vec::with_capacity(2 * level.len());
        let mut parents = Vec::with_capacity(level.len());
        let mut k = 0;
        while k < level.len() {
            let (i, digest) = level[k];
            known(depth, i, &digest);
            match level.get(k + 1) {
                Some(&(j, right)) if i.is_multiple_of(2) && j == i + 1 => {
                    k += 2;
                    known(depth, j, &right);
                    children.extend([digest, right]);
                }
                _ => {
                    k += 1;
                    let sibling = *nodes.next()?;
                    known(depth, i ^ 1, &sibling);
                    if i.is_multiple_of(2) {
                        children.extend([digest, sibling]);
                    } else {
                        children.extend([sibling, digest]);
                    }
                }
            }
            parents.push(i >> 1);
        }
        level = parents
            .into_iter()
            .zip(hash.checked_nodes(&children)?)
            .map(|(i, parent)| Some((i, lift(depth + 1, i, parent)?)))
            .collect::<Option<_>>()?;
    }
    match (nodes.next(), level.as_slice()) {
        (None, &[(0, root)]) => Some(root),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_field::Felt;

    /// The root computed recursively, independently of the level-by-level builder.
    fn recursive_root(hash: MerkleHash, leaves: &[Digest]) -> Digest {
        if leaves.len() == 1 {
            return leaves[0];
        }
        let (l, r) = leaves.split_at(leaves.len() / 2);
        let (l, r) = (recursive_root(hash, l), recursive_root(hash, r));
        hash.node(&l, &r).expect("canonical children")
    }

    fn matrix(height: usize) -> RowBlocks {
        let columns: Vec<Vec<Felt>> = (0..3u64)
            .map(|c| (0..height as u64).map(|r| Felt::new(r * 31 + c)).collect())
            .collect();
        RowBlocks::from_columns(&columns)
    }

    fn leaves(hash: MerkleHash, m: &RowBlocks, indices: &[usize]) -> Vec<Digest> {
        indices.iter().map(|&j| hash.row(&m.row(j))).collect()
    }

    #[test]
    fn root_matches_recursive_oracle() {
        for hash in MerkleHash::ALL {
            for height in [1, 2, 16, 1 << 10] {
                let m = matrix(height);
                let tree = MerkleTree::commit_rows(hash, &m);
                let all: Vec<usize> = (0..height).collect();
                assert_eq!(
                    tree.root(),
                    recursive_root(hash, &leaves(hash, &m, &all)),
                    "{hash}, height {height}"
                );
            }
        }
    }

    #[test]
    fn every_path_builds_the_same_tree() {
        // 2^13 rows: parallel levels, whole tiles; 37 columns: leaves of two blocks.
        let columns: Vec<Vec<Felt>> = (0..37u64)
            .map(|c| {
                (0..1u64 << 13)
                    .map(|r| Felt::new(r.wrapping_mul(0x9e37_79b9) ^ c))
                    .collect()
            })
            .collect();
        let m = RowBlocks::from_columns(&columns);
        let hash = MerkleHash::Keccak256;
        let scalar = MerkleTree::commit_rows_on(Kernels::Scalar, hash, &m);
        for kernels in Kernels::supported() {
            let tree = MerkleTree::commit_rows_on(kernels, hash, &m);
            assert_eq!(tree.levels(), scalar.levels(), "{} path", kernels.path());
        }
        assert_eq!(
            scalar.root(),
            recursive_root(hash, &leaves(hash, &m, &(0..1 << 13).collect::<Vec<_>>()))
        );
        // Poseidon2 on fewer rows (a permutation costs ~50 Keccak-f's here): 2^9, still
        // whole tiles of every path's lanes.
        let columns: Vec<Vec<Felt>> = columns.iter().map(|c| c[..1 << 9].to_vec()).collect();
        let m = RowBlocks::from_columns(&columns);
        let hash = MerkleHash::Poseidon2;
        let scalar = MerkleTree::commit_rows_on(Kernels::Scalar, hash, &m);
        for kernels in Kernels::supported() {
            let tree = MerkleTree::commit_rows_on(kernels, hash, &m);
            assert_eq!(
                tree.levels(),
                scalar.levels(),
                "{hash} {} path",
                kernels.path()
            );
        }
        assert_eq!(
            scalar.root(),
            recursive_root(hash, &leaves(hash, &m, &(0..1 << 9).collect::<Vec<_>>()))
        );
    }

    #[test]
    fn levels_round_trip_and_bad_shapes_are_refused() {
        let tree = MerkleTree::commit_rows(MerkleHash::Keccak256, &matrix(16));
        let rebuilt = MerkleTree::from_levels(tree.levels().to_vec()).unwrap();
        assert_eq!(rebuilt.root(), tree.root());
        assert_eq!(rebuilt.open_batch(&[3, 9]), tree.open_batch(&[3, 9]));
        let mut short = tree.levels().to_vec();
        short.pop();
        assert!(MerkleTree::from_levels(short).is_err());
        let mut ragged = tree.levels().to_vec();
        ragged[1].pop();
        assert!(MerkleTree::from_levels(ragged).is_err());
        assert!(MerkleTree::from_levels(vec![vec![[0; 32]; 3]]).is_err());
    }

    /// Sibling counts by brute force: a node is sent when it is not itself known but its
    /// sibling is, where a node is known when some opened leaf lies below it.
    fn oracle_len(height: usize, indices: &[usize]) -> usize {
        (0..height)
            .map(|depth| {
                let known: std::collections::BTreeSet<usize> =
                    indices.iter().map(|i| i >> depth).collect();
                known.iter().filter(|&&i| !known.contains(&(i ^ 1))).count()
            })
            .sum()
    }

    #[test]
    fn batch_openings_verify_and_have_the_counted_length() {
        for hash in MerkleHash::ALL {
            batch_openings_verify(hash);
        }
    }

    fn batch_openings_verify(hash: MerkleHash) {
        let m = matrix(128);
        let tree = MerkleTree::commit_rows(hash, &m);
        for indices in [
            vec![0],
            vec![127],
            vec![0, 1],
            vec![5, 6],
            vec![0, 64],
            vec![3, 4, 5, 100, 101, 127],
            (0..128).collect(),
        ] {
            let nodes = tree.open_batch(&indices);
            assert_eq!(nodes.len(), batch_opening_len(7, &indices), "{indices:?}");
            assert_eq!(nodes.len(), oracle_len(7, &indices), "{indices:?}");
            assert!(nodes.len() <= indices.len() * 7);
            let leaves = leaves(hash, &m, &indices);
            assert!(verify_batch(
                hash,
                &tree.root(),
                7,
                &indices,
                &leaves,
                &nodes
            ));
            let paths = batch_paths(hash, &tree.root(), 7, &indices, &leaves, &nodes)
                .expect("the opening verifies");
            for (&leaf, path) in indices.iter().zip(&paths) {
                let siblings: Vec<Digest> = (0..7)
                    .map(|depth| tree.levels()[depth][(leaf >> depth) ^ 1])
                    .collect();
                assert_eq!(path, &siblings, "leaf {leaf} of {indices:?}");
            }
        }
        assert!(tree.open_batch(&(0..128).collect::<Vec<_>>()).is_empty());
    }

    #[test]
    fn every_tampered_batch_opening_fails() {
        for hash in MerkleHash::ALL {
            tampered_openings_fail(hash);
        }
    }

    fn tampered_openings_fail(hash: MerkleHash) {
        let m = matrix(64);
        let tree = MerkleTree::commit_rows(hash, &m);
        let root = tree.root();
        let indices = [2, 9, 10, 40];
        let leaves = leaves(hash, &m, &indices);
        let nodes = tree.open_batch(&indices);
        let verify = |indices: &[usize], leaves: &[Digest], nodes: &[Digest], height| {
            verify_batch(hash, &root, height, indices, leaves, nodes)
        };
        assert!(verify(&indices, &leaves, &nodes, 6));
        for k in 0..nodes.len() {
            let mut bad = nodes.clone();
            bad[k][7] ^= 1;
            assert!(!verify(&indices, &leaves, &bad, 6), "{hash} node {k}");
            assert_eq!(batch_paths(hash, &root, 6, &indices, &leaves, &bad), None);
        }
        for k in 0..leaves.len() {
            let mut bad = leaves.clone();
            bad[k][0] ^= 1;
            assert!(!verify(&indices, &bad, &nodes, 6), "{hash} leaf {k}");
        }
        // Other positions, a missing or an extra node, a wrong height, bad index lists, and
        // (for Poseidon2) a node that is no digest: an element's encoding not canonical.
        assert!(!verify(&[2, 9, 11, 40], &leaves, &nodes, 6));
        assert!(!verify(&indices, &leaves, &nodes[1..], 6));
        let mut extra = nodes.clone();
        extra.push(nodes[0]);
        assert!(!verify(&indices, &leaves, &extra, 6));
        assert!(!verify(&indices, &leaves, &nodes, 5));
        assert!(!verify(&[9, 2, 10, 40], &leaves, &nodes, 6));
        assert!(!verify(&[2, 9, 10, 64], &leaves, &nodes, 6));
        if hash == MerkleHash::Poseidon2 {
            for k in 0..nodes.len() {
                let mut bad = nodes.clone();
                bad[k][..8].copy_from_slice(&u64::MAX.to_le_bytes());
                assert!(
                    !verify(&indices, &leaves, &bad, 6),
                    "a non-canonical node {k}"
                );
            }
        }
    }

    #[test]
    fn index_lists_are_checked() {
        assert!(check_indices(3, &[0, 7]).is_ok());
        assert!(check_indices(3, &[]).is_err());
        assert!(check_indices(3, &[1, 1]).is_err());
        assert!(check_indices(3, &[2, 1]).is_err());
        assert!(check_indices(3, &[8]).is_err());
        assert!(check_indices(64, &[0]).is_err());
        assert!(check_indices(0, &[0]).is_ok());
    }
}
