//! Building, opening and checking Merkle trees.

use ballast_field::ColMatrix;
use rayon::prelude::*;

use crate::{Digest, MerkleError, compress, hash_leaf};

/// Rows hashed per parallel task, each reusing one byte buffer.
const ROWS_PER_TASK: usize = 1 << 10;
/// Leaves whose rows are gathered together.
const TILE: usize = 16;
/// Levels narrower than this are compressed on one thread.
const PARALLEL_LEVEL: usize = 1 << 12;

/// A Merkle tree with every level kept; `levels[0]` are the leaf digests.
#[derive(Clone, Debug)]
pub struct MerkleTree {
    levels: Vec<Vec<Digest>>,
}

impl MerkleTree {
    /// The tree over the given leaf digests.
    ///
    /// # Panics
    /// If the number of leaves is not a power of two.
    pub fn from_leaves(leaves: Vec<Digest>) -> Self {
        assert!(
            leaves.len().is_power_of_two(),
            "a tree needs a power-of-two number of leaves, got {}",
            leaves.len()
        );
        let mut levels = vec![leaves];
        while levels.last().expect("at least the leaves").len() > 1 {
            let below = levels.last().expect("at least the leaves");
            let level = if below.len() >= PARALLEL_LEVEL {
                below
                    .par_chunks_exact(2)
                    .map(|p| compress(&p[0], &p[1]))
                    .collect()
            } else {
                below
                    .chunks_exact(2)
                    .map(|p| compress(&p[0], &p[1]))
                    .collect()
            };
            levels.push(level);
        }
        Self { levels }
    }

    /// The tree whose leaf j holds rows j and j + h of `matrix` (h = height/2), in that
    /// order: on a coset in natural order those are the points x and −x, which one FRI fold
    /// needs together. Its bytes are [`hash_row`](crate::hash_row) of the two rows
    /// concatenated.
    ///
    /// # Panics
    /// If the matrix height is not a power of two of at least 2.
    pub fn commit_row_pairs(matrix: &ColMatrix) -> Self {
        let half = matrix.height() / 2;
        assert!(
            half >= 1,
            "a matrix of {} rows has no row pairs",
            matrix.height()
        );
        let columns: Vec<_> = matrix.columns().collect();
        let width = columns.len();
        let mut leaves = vec![[0u8; 32]; half];
        leaves
            .par_chunks_mut(ROWS_PER_TASK)
            .enumerate()
            .for_each(|(task, chunk)| {
                // Rows are gathered a tile at a time, column by column: each column is read
                // as short runs instead of one scattered value per row (wide tables).
                let mut tile = vec![0u8; 2 * TILE * width * 8];
                for (t, leaves) in chunk.chunks_mut(TILE).enumerate() {
                    let first = task * ROWS_PER_TASK + t * TILE;
                    let rows = leaves.len();
                    for (c, column) in columns.iter().enumerate() {
                        for (side, base) in [first, first + half].into_iter().enumerate() {
                            for (k, value) in column[base..base + rows].iter().enumerate() {
                                let at = ((2 * k + side) * width + c) * 8;
                                tile[at..at + 8].copy_from_slice(&value.to_le_bytes());
                            }
                        }
                    }
                    for (k, leaf) in leaves.iter_mut().enumerate() {
                        *leaf = hash_leaf(&tile[2 * k * width * 8..2 * (k + 1) * width * 8]);
                    }
                }
            });
        Self::from_leaves(leaves)
    }

    /// A tree whose levels were built elsewhere (a device backend), leaves first, each level
    /// half the one below, ending with the root.
    ///
    /// # Errors
    /// If the level sizes do not form a tree. The digests themselves are not recomputed:
    /// backends are tested for parity with [`commit_row_pairs`](Self::commit_row_pairs).
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

    /// The sibling digests from leaf `index` up to the root.
    ///
    /// # Panics
    /// If `index` is not a leaf index.
    pub fn open(&self, index: usize) -> Vec<Digest> {
        assert!(index < self.levels[0].len(), "leaf {index} out of range");
        self.levels[..self.height()]
            .iter()
            .enumerate()
            .map(|(depth, level)| level[(index >> depth) ^ 1])
            .collect()
    }
}

/// True when `path` proves that `leaf` is leaf `index` of the tree with root `root`.
///
/// The tree height is the path length; `index` must be below 2^height.
pub fn verify_path(root: &Digest, index: usize, leaf: Digest, path: &[Digest]) -> bool {
    if path.len() < usize::BITS as usize && index >> path.len() != 0 {
        return false;
    }
    let node = path
        .iter()
        .enumerate()
        .fold(leaf, |node, (depth, sibling)| {
            if (index >> depth) & 1 == 0 {
                compress(&node, sibling)
            } else {
                compress(sibling, &node)
            }
        });
    node == *root
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash_row;
    use ballast_field::Felt;

    /// The root computed recursively, independently of the level-by-level builder.
    fn recursive_root(leaves: &[Digest]) -> Digest {
        if leaves.len() == 1 {
            return leaves[0];
        }
        let (l, r) = leaves.split_at(leaves.len() / 2);
        compress(&recursive_root(l), &recursive_root(r))
    }

    fn matrix(height: usize) -> ColMatrix {
        let columns: Vec<Vec<Felt>> = (0..3u64)
            .map(|c| (0..height as u64).map(|r| Felt::new(r * 31 + c)).collect())
            .collect();
        ColMatrix::from_columns(&columns)
    }

    fn pair_leaf(m: &ColMatrix, j: usize) -> Digest {
        hash_row(&[m.row(j), m.row(j + m.height() / 2)].concat())
    }

    #[test]
    fn root_matches_recursive_oracle() {
        for height in [2, 4, 16, 1 << 13] {
            let m = matrix(height);
            let tree = MerkleTree::commit_row_pairs(&m);
            let leaves: Vec<Digest> = (0..height / 2).map(|j| pair_leaf(&m, j)).collect();
            assert_eq!(tree.root(), recursive_root(&leaves), "height {height}");
        }
    }

    #[test]
    fn levels_round_trip_and_bad_shapes_are_refused() {
        let tree = MerkleTree::commit_row_pairs(&matrix(16));
        let rebuilt = MerkleTree::from_levels(tree.levels().to_vec()).unwrap();
        assert_eq!(rebuilt.root(), tree.root());
        assert_eq!(rebuilt.open(3), tree.open(3));
        let mut short = tree.levels().to_vec();
        short.pop();
        assert!(MerkleTree::from_levels(short).is_err());
        let mut ragged = tree.levels().to_vec();
        ragged[1].pop();
        assert!(MerkleTree::from_levels(ragged).is_err());
        assert!(MerkleTree::from_levels(vec![vec![[0; 32]; 3]]).is_err());
    }

    #[test]
    fn every_opening_verifies_and_tampering_fails() {
        let m = matrix(128);
        let tree = MerkleTree::commit_row_pairs(&m);
        for index in 0..64 {
            let leaf = pair_leaf(&m, index);
            let path = tree.open(index);
            assert!(verify_path(&tree.root(), index, leaf, &path));
            assert!(!verify_path(&tree.root(), index ^ 1, leaf, &path));
            assert!(!verify_path(&tree.root(), index + 64, leaf, &path));
            let mut bad = path.clone();
            bad[3][0] ^= 1;
            assert!(!verify_path(&tree.root(), index, leaf, &bad));
            assert!(!verify_path(&tree.root(), index, leaf, &path[..5]));
        }
    }
}
