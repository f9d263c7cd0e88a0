//! A child proof's Merkle openings as an AIR: each opened row hashed into its leaf by the
//! Poseidon2 sponge, then up its authentication path to the root, one permutation a row
//! ([`ballast_poseidon2::air`]). The rows and the siblings are the witness; the root is the
//! public input; the positions are the AIR's own (periodic columns, bound in the transcript
//! with the rest of its shape). A verifier AIR checks every tree a child opens this way.
//!
//! Each position has a block of rows on a fixed schedule, a power of two long: first the
//! leaf's blocks of [`RATE`] elements, then one row a level of the path, then idle rows.
//! Periodic columns say which row is which, so the constraints need no selector columns:
//!
//! - the leaf's first row starts from the leaf state of `row_width` elements (its length in
//!   the capacity), its next rows from the capacity the last permutation left, and its last
//!   block's cells past the row are zero: the sponge of `hash_elements`;
//! - a path row starts from the inner-node state, with the digest below it as its left half
//!   when the position's bit at that level is 0, its right half when 1 (the other half is
//!   the sibling): `compress`, in the order the Merkle verifier uses;
//! - the last path row's digest is the root.
//!
//! Blocks past the last position repeat it. Every constraint has degree at most 3.

use ballast_air::{Air, ConstraintBuilder, Frame, PeriodicColumn};
use ballast_field::{Felt, RowBlocks};
use ballast_merkle::{Digest, MerkleHash, batch_paths};
use ballast_poseidon2::constants::WIDTH as STATE_CELLS;
use ballast_poseidon2::{
    DIGEST_ELEMENTS, FeltDigest, RATE, air, digest_from_bytes, digest_to_bytes, leaf_start,
    node_start,
};
use rayon::prelude::*;

/// Columns: the state the row's permutation starts from.
const INPUT: usize = 0;
/// Columns: the permutation's kept values ([`air::COLUMNS`]), its output state last.
const PERMUTATION: usize = INPUT + STATE_CELLS;
/// Columns of the table (248).
pub const WIDTH: usize = PERMUTATION + air::COLUMNS;

/// The tallest tree whose openings the AIR takes: far above any LDE a segment has.
const MAX_HEIGHT: usize = 40;
/// The widest row it takes.
const MAX_ROW_WIDTH: usize = 1 << 24;

/// Why openings cannot be proven as given.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OpeningsError {
    /// No position to open.
    #[error("no positions to open")]
    NoPositions,
    /// A position past the tree's last leaf.
    #[error("position {position} is outside a tree of {leaves} leaves")]
    PositionOutsideTree {
        /// The position.
        position: usize,
        /// The tree's leaves.
        leaves: u64,
    },
    /// A tree or a row beyond what the AIR takes.
    #[error("a tree of height {height} with rows of {row_width} elements is too large")]
    TooLarge {
        /// The tree's height.
        height: usize,
        /// The elements of a row.
        row_width: usize,
    },
    /// A witness of another size than the AIR's.
    #[error("{what}: expected {expected}, got {got}")]
    Shape {
        /// What has the wrong size.
        what: &'static str,
        /// The size the AIR needs.
        expected: usize,
        /// The size given.
        got: usize,
    },
    /// Positions that are not strictly increasing: no batch opening has them.
    #[error("the positions of a batch opening must be strictly increasing")]
    Unordered,
    /// The batch opening does not open these rows against the root.
    #[error("the batch opening does not verify against the root")]
    Rejected,
}

/// The openings of rows of `row_width` elements at `positions` of a Poseidon2 tree of
/// `height` levels: an [`Air`] of [`WIDTH`] columns whose public inputs are the root's
/// [`DIGEST_ELEMENTS`].
#[derive(Clone, Debug)]
pub struct OpeningsAir {
    row_width: usize,
    height: usize,
    positions: Vec<usize>,
    /// Rows of a position's block: a power of two.
    block_rows: usize,
    /// Blocks in the table: a power of two, at least one a position.
    blocks: usize,
}

impl OpeningsAir {
    /// The AIR of these openings.
    ///
    /// # Errors
    /// No positions, one outside the tree, or a tree or row too large.
    pub fn new(
        row_width: usize,
        height: usize,
        positions: &[usize],
    ) -> Result<Self, OpeningsError> {
        if height > MAX_HEIGHT || row_width > MAX_ROW_WIDTH {
            return Err(OpeningsError::TooLarge { height, row_width });
        }
        if positions.is_empty() {
            return Err(OpeningsError::NoPositions);
        }
        let leaves = 1u64 << height;
        if let Some(&position) = positions.iter().find(|&&p| p as u64 >= leaves) {
            return Err(OpeningsError::PositionOutsideTree { position, leaves });
        }
        let block_rows = (leaf_rows(row_width) + height).next_power_of_two();
        // At least 2^2 rows, so parameters with a final polynomial of 4 coefficients (the
        // fewest `StarkParams::testing` has) fit any openings.
        let blocks = positions
            .len()
            .next_power_of_two()
            .max(4 / block_rows.min(4));
        Ok(Self {
            row_width,
            height,
            positions: positions.to_vec(),
            block_rows,
            blocks,
        })
    }

    /// The public inputs of the openings against `root`.
    pub fn public_inputs(root: &FeltDigest) -> Vec<Felt> {
        root.to_vec()
    }

    /// The trace: `rows` (one after another, `row_width` elements each, in the order of
    /// the positions) hashed into their leaves and up `paths` (each position's siblings,
    /// from the leaf's up). Wrong rows or siblings give a trace the constraints refuse.
    ///
    /// # Errors
    /// Rows or paths of another count or length.
    pub fn trace(
        &self,
        rows: &[Felt],
        paths: &[Vec<FeltDigest>],
    ) -> Result<RowBlocks, OpeningsError> {
        let count = self.positions.len();
        self.check_rows(rows)?;
        expect_len("paths", count, paths.len())?;
        for path in paths {
            expect_len("siblings in a path", self.height, path.len())?;
        }
        let mut table = vec![Felt::ZERO; (self.blocks * self.block_rows) * WIDTH];
        table
            .par_chunks_mut(self.block_rows * WIDTH)
            .enumerate()
            .for_each(|(block, cells)| {
                let k = block.min(count - 1);
                let row = &rows[k * self.row_width..(k + 1) * self.row_width];
                self.fill_block(self.positions[k], row, &paths[k], cells);
            });
        Ok(RowBlocks::from_rows(WIDTH, &table))
    }

    /// One position's block of rows, row-major.
    fn fill_block(&self, position: usize, row: &[Felt], path: &[FeltDigest], cells: &mut [Felt]) {
        let mut rows = cells.chunks_exact_mut(WIDTH);
        let mut permute = |input: [Felt; STATE_CELLS]| {
            let row = rows.next().expect("a row for every permutation");
            row[INPUT..PERMUTATION].copy_from_slice(&input);
            air::fill(input, &mut row[PERMUTATION..])
        };
        let mut state = leaf_start(self.row_width, Felt::ZERO);
        for block in 0..leaf_rows(self.row_width) {
            for (i, cell) in state[..RATE].iter_mut().enumerate() {
                *cell = row.get(block * RATE + i).copied().unwrap_or(Felt::ZERO);
            }
            state = permute(state);
        }
        for (level, sibling) in path.iter().enumerate() {
            let digest: FeltDigest = std::array::from_fn(|i| state[i]);
            let (left, right) = if position >> level & 1 == 0 {
                (digest, *sibling)
            } else {
                (*sibling, digest)
            };
            let mut input = node_start(Felt::ZERO);
            input[..DIGEST_ELEMENTS].copy_from_slice(&left);
            input[DIGEST_ELEMENTS..RATE].copy_from_slice(&right);
            state = permute(input);
        }
        for _ in leaf_rows(self.row_width) + self.height..self.block_rows {
            permute([Felt::ZERO; STATE_CELLS]);
        }
    }

    /// Each opened row's authentication path (its siblings, from the leaf's up), from a
    /// batch opening (`nodes`) of `rows` (one after another, in the order of the positions)
    /// in the Poseidon2 tree with root `root`: the witness of [`trace`](Self::trace).
    ///
    /// # Errors
    /// Rows of another size, positions not strictly increasing, or a batch opening that
    /// does not verify.
    pub fn paths(
        &self,
        root: &FeltDigest,
        rows: &[Felt],
        nodes: &[Digest],
    ) -> Result<Vec<Vec<FeltDigest>>, OpeningsError> {
        self.check_rows(rows)?;
        if self.positions.windows(2).any(|w| w[0] >= w[1]) {
            return Err(OpeningsError::Unordered);
        }
        let hash = MerkleHash::Poseidon2;
        let leaves: Vec<Digest> = (0..self.positions.len())
            .map(|k| hash.row(&rows[k * self.row_width..(k + 1) * self.row_width]))
            .collect();
        let root = digest_to_bytes(root);
        let paths = batch_paths(hash, &root, self.height, &self.positions, &leaves, nodes)
            .ok_or(OpeningsError::Rejected)?;
        Ok(paths
            .iter()
            .map(|path| {
                path.iter()
                    .map(|node| digest_from_bytes(node).expect("a verified node is a digest"))
                    .collect()
            })
            .collect())
    }

    /// Refuses opened rows of another total size than the positions' rows.
    fn check_rows(&self, rows: &[Felt]) -> Result<(), OpeningsError> {
        expect_len(
            "opened elements",
            self.positions.len() * self.row_width,
            rows.len(),
        )
    }

    /// The position block `block` opens.
    fn position(&self, block: usize) -> usize {
        self.positions[block.min(self.positions.len() - 1)]
    }

    /// A column of one block's period, 1 on the rows `on` picks.
    fn scheduled(&self, on: impl Fn(usize) -> bool) -> PeriodicColumn {
        PeriodicColumn {
            values: (0..self.block_rows)
                .map(|r| Felt::new(u64::from(on(r))))
                .collect(),
        }
    }

    /// A column of the whole table, 1 on the row before each path row whose digest from
    /// below is its `bit` half (0 left, 1 right).
    fn links_to_half(&self, bit: usize) -> PeriodicColumn {
        let first_node = leaf_rows(self.row_width);
        let mut values = vec![Felt::ZERO; self.blocks * self.block_rows];
        for block in 0..self.blocks {
            for level in 0..self.height {
                if self.position(block) >> level & 1 == bit {
                    values[block * self.block_rows + first_node + level - 1] = Felt::ONE;
                }
            }
        }
        PeriodicColumn { values }
    }
}

/// Permutations that hash a leaf of `row_width` elements: at least one.
fn leaf_rows(row_width: usize) -> usize {
    row_width.div_ceil(RATE).max(1)
}

// The periodic columns, in `periodic_columns`'s order.
const LEAF_START: usize = 0;
const LEAF_NEXT: usize = 1;
const LEAF_LAST: usize = 2;
const NODE: usize = 3;
const ROOT: usize = 4;
const INTO_LEFT: usize = 5;
const INTO_RIGHT: usize = 6;

impl Air for OpeningsAir {
    fn id(&self) -> &str {
        "ballast/merkle-openings"
    }

    fn width(&self) -> usize {
        WIDTH
    }

    fn log_rows(&self) -> usize {
        (self.blocks * self.block_rows).trailing_zeros() as usize
    }

    fn num_public_inputs(&self) -> usize {
        DIGEST_ELEMENTS
    }

    fn periodic_columns(&self) -> Vec<PeriodicColumn> {
        let leaf = leaf_rows(self.row_width);
        let path_end = leaf + self.height;
        vec![
            self.scheduled(|r| r == 0),
            self.scheduled(|r| r + 1 < leaf),
            self.scheduled(|r| r + 1 == leaf),
            self.scheduled(|r| (leaf..path_end).contains(&r)),
            self.scheduled(|r| r + 1 == path_end),
            self.links_to_half(0),
            self.links_to_half(1),
        ]
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let zero = B::Expr::from(Felt::ZERO);
        let (cur, next, p) = (f.current, f.next, f.periodic);
        let input: [B::Expr; STATE_CELLS] = std::array::from_fn(|i| cur[INPUT + i]);
        let output = air::eval(b, input, &cur[PERMUTATION..]);
        let leaf = leaf_start(self.row_width, zero);
        let node = node_start(zero);
        for i in RATE..STATE_CELLS {
            b.every_row(p[LEAF_START] * (input[i] - leaf[i]));
            b.transition(p[LEAF_NEXT] * (next[INPUT + i] - output[i]));
            b.every_row(p[NODE] * (input[i] - node[i]));
        }
        let filled = self.row_width - (leaf_rows(self.row_width) - 1) * RATE;
        for &cell in &input[filled..RATE] {
            b.every_row(p[LEAF_LAST] * cell);
        }
        for i in 0..DIGEST_ELEMENTS {
            b.transition(p[INTO_LEFT] * (next[INPUT + i] - output[i]));
            b.transition(p[INTO_RIGHT] * (next[INPUT + DIGEST_ELEMENTS + i] - output[i]));
            b.every_row(p[ROOT] * (output[i] - f.public_inputs[i]));
        }
    }
}

/// Refuses a length other than `expected`.
fn expect_len(what: &'static str, expected: usize, got: usize) -> Result<(), OpeningsError> {
    if got == expected {
        Ok(())
    } else {
        Err(OpeningsError::Shape {
            what,
            expected,
            got,
        })
    }
}
