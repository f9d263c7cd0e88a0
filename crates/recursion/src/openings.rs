//! A child proof's Merkle openings as an AIR: in each of its trees (the trace's, the
//! quotient's, FRI's layers': each of its own height and row width), each opened row hashed
//! into its leaf by the Poseidon2 sponge, then up its authentication path to the tree's root,
//! one permutation a row ([`ballast_poseidon2::air`]). The rows and the siblings are the
//! witness; the public inputs are the roots and the positions' digest (a chain of
//! compressions, [`OpeningsAir::positions_digest`]). A position p of the tallest tree opens
//! leaf p mod 2^h of a tree of height h: the leaf a FRI layer's coset holds.
//!
//! Each position has a block of rows on a fixed schedule, a power of two long: for each
//! tree in turn, the leaf's blocks of [`RATE`] elements, then one row a level of the path;
//! then idle rows, the last of which chains the position into the digest. Periodic columns
//! of the block's period say which row is which, so the constraints need no selector
//! columns:
//!
//! - a leaf's first row starts from the leaf state of its tree's row width (the length in
//!   the capacity), its next rows from the capacity the last permutation left, and its last
//!   block's cells past the row are zero: the sponge of `hash_elements`;
//! - a path row starts from the inner-node state, with the digest below it as its left half
//!   when its bit column is 0, its right half when 1 (the other half is the sibling):
//!   `compress`, in the order the Merkle verifier uses;
//! - the last path row's digest is its tree's root;
//! - the bits are the position's: a position column holds it all down the block, a
//!   remainder column holds it on the row before a tree's path, and each path row's bit and
//!   remainder are the row above's remainder halved (r = 2·r' + bit', the bit 0 or 1), down
//!   to 0 on a tallest tree's last path row, so p < 2^h and the bits are its digits. A lower
//!   tree's path ends at p >> h, which the AIR that embeds the openings binds (the query
//!   AIR, through FRI's slots); on their own the openings take trees of one height;
//! - the positions are the digest's: a digest column holds the chain so far (zero on the
//!   first row), and each block's last row compresses it with the block's position
//!   (`compress(h, [p, 0, 0, 0])`, a node row's start state), the output the next block's
//!   digest and, on the table's last row, the public one.
//!
//! Blocks past the last position repeat it. The permutation's constraints have [`SBOX`]'s
//! degree (7), every other one degree at most 3.

use std::borrow::Cow;

use ballast_air::{Air, ConstraintBuilder, Frame, PeriodicColumn};
use ballast_field::{Felt, RowBlocks};
use ballast_merkle::{Digest, MerkleHash, batch_paths};
use ballast_poseidon2::constants::WIDTH as STATE_CELLS;
use ballast_poseidon2::{
    DIGEST_ELEMENTS, FeltDigest, RATE, air, compress, digest_from_bytes, digest_to_bytes,
    leaf_start, node_start,
};
use rayon::prelude::*;

use crate::SBOX;

/// Columns: the state the row's permutation starts from.
pub(crate) const INPUT: usize = 0;
/// Columns: the permutation's kept values ([`SBOX`]`.columns()`), its output state
/// last.
const PERMUTATION: usize = INPUT + STATE_CELLS;
/// Column: on a path row, the position's bit at its level (which half the digest from below
/// takes).
pub(crate) const BIT: usize = PERMUTATION + SBOX.columns();
/// Column: the position's bits not yet taken (p on the row before a path, p >> (level + 1)
/// on a path row).
pub(crate) const REST: usize = BIT + 1;
/// Column: the block's position.
const POSITION: usize = REST + 1;
/// Columns: the positions' digest so far, the chain of the blocks before this one.
const CHAIN: usize = POSITION + 1;
/// Columns of the table (137).
pub const WIDTH: usize = CHAIN + DIGEST_ELEMENTS;

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
    /// A position past the tallest tree's last leaf.
    #[error("position {position} is outside a tree of {leaves} leaves")]
    PositionOutsideTree {
        /// The position.
        position: usize,
        /// The tree's leaves.
        leaves: u64,
    },
    /// No tree to open.
    #[error("no trees to open")]
    NoTrees,
    /// A tree lower than the tallest, whose path's end no rule of the openings binds.
    #[error("a tree of height {height} beside one of {tallest}: the openings take one height")]
    LowerTree {
        /// The lower tree's height.
        height: usize,
        /// The tallest's.
        tallest: usize,
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
    /// A child's LDE no taller than its trace: no blowup.
    #[error("an LDE of 2^{log_lde} points for a child of 2^{log_rows} rows: no blowup")]
    LdeTooShort {
        /// log2 of the child's rows.
        log_rows: usize,
        /// log2 of its LDE's points.
        log_lde: usize,
    },
    /// An LDE taller than the field's two-adic subgroup: it has no such domain.
    #[error("an LDE of 2^{log_lde} points is beyond the field's two-adic subgroup")]
    LdeTooTall {
        /// log2 of its points.
        log_lde: usize,
    },
    /// An out-of-domain point on the LDE's points, where the DEEP quotients divide by zero.
    #[error("z or zω lies on the LDE's points")]
    OnTheDomain,
    /// A child's final polynomial longer than its trace, or than the AIR evaluates.
    #[error("a final polynomial of 2^{log_len} coefficients is longer than the AIR takes")]
    FinalPolynomial {
        /// log2 of its coefficients.
        log_len: usize,
    },
    /// The batch opening does not open these rows against the root.
    #[error("the batch opening does not verify against the root")]
    Rejected,
}

/// A Poseidon2 tree's shape: its height (levels) and the elements of its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeShape {
    /// The elements of a row.
    pub row_width: usize,
    /// The levels above the leaves.
    pub height: usize,
}

/// The openings at `positions` of Poseidon2 trees of the given shapes: an [`Air`] of
/// [`WIDTH`] columns whose public inputs are the roots' [`DIGEST_ELEMENTS`], tree after tree,
/// then the positions' digest's.
#[derive(Clone, Debug)]
pub struct OpeningsAir {
    trees: Vec<TreeShape>,
    positions: Vec<usize>,
    /// Rows of a position's block: a power of two.
    pub(crate) block_rows: usize,
    /// Blocks in the table: a power of two, at least one a position.
    pub(crate) blocks: usize,
}

/// One tree's openings, the witness [`OpeningsAir::trace`] hashes: the row each position
/// opens (one after another, in the order of the positions) and each one's authentication
/// path (its siblings, from the leaf's up).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    /// The opened rows.
    pub rows: Vec<Felt>,
    /// Each row's path.
    pub paths: Vec<Vec<FeltDigest>>,
}

impl OpeningsAir {
    /// The AIR of these openings: `positions` in trees of one height.
    ///
    /// # Errors
    /// No trees, trees of unequal heights, no positions, one outside the trees, or a tree or
    /// row too large.
    pub fn new(trees: &[TreeShape], positions: &[usize]) -> Result<Self, OpeningsError> {
        let tallest = trees.iter().map(|t| t.height).max().unwrap_or(0);
        if let Some(tree) = trees.iter().find(|t| t.height < tallest) {
            return Err(OpeningsError::LowerTree {
                height: tree.height,
                tallest,
            });
        }
        Self::with_lower_trees(trees, positions)
    }

    /// [`new`](Self::new), taking trees lower than the tallest: for an AIR that binds their
    /// paths' ends (p >> h) itself, and is proven in their place.
    pub(crate) fn with_lower_trees(
        trees: &[TreeShape],
        positions: &[usize],
    ) -> Result<Self, OpeningsError> {
        if trees.is_empty() {
            return Err(OpeningsError::NoTrees);
        }
        if let Some(tree) = trees
            .iter()
            .find(|t| t.height > MAX_HEIGHT || t.row_width > MAX_ROW_WIDTH)
        {
            return Err(OpeningsError::TooLarge {
                height: tree.height,
                row_width: tree.row_width,
            });
        }
        if positions.is_empty() {
            return Err(OpeningsError::NoPositions);
        }
        let tallest = trees.iter().map(|t| t.height).max().unwrap_or(0);
        let leaves = 1u64 << tallest;
        if let Some(&position) = positions.iter().find(|&&p| p as u64 >= leaves) {
            return Err(OpeningsError::PositionOutsideTree { position, leaves });
        }
        let scheduled: usize = trees
            .iter()
            .map(|t| leaf_rows(t.row_width) + t.height)
            .sum();
        // A row more for the chain, which needs an idle row.
        let block_rows = (scheduled + 1).next_power_of_two();
        // At least 2^2 rows, so parameters with a final polynomial of 4 coefficients (the
        // fewest `StarkParams::testing` has) fit any openings.
        let blocks = positions
            .len()
            .next_power_of_two()
            .max(4 / block_rows.min(4));
        Ok(Self {
            trees: trees.to_vec(),
            positions: positions.to_vec(),
            block_rows,
            blocks,
        })
    }

    /// The public inputs of the openings against `roots`, one a tree: the roots, then the
    /// positions' digest.
    pub fn public_inputs(&self, roots: &[FeltDigest]) -> Vec<Felt> {
        let mut inputs = roots.concat();
        inputs.extend(self.positions_digest());
        inputs
    }

    /// The blocks' positions (the last one repeated past the positions) chained from zero:
    /// h ← `compress(h, [p, 0, 0, 0])`, what the table's last row must give.
    pub fn positions_digest(&self) -> FeltDigest {
        self.chain()[self.blocks]
    }

    /// The chain of the positions (the last one repeated past them) before each block, then
    /// after the last: each block's last row compresses the digest with [p, 0, 0, 0].
    fn chain(&self) -> Vec<FeltDigest> {
        let positions = &self.positions;
        let mut chain = vec![[Felt::ZERO; DIGEST_ELEMENTS]];
        for block in 0..self.blocks {
            let position = positions[block.min(positions.len() - 1)];
            chain.push(compress(
                &chain[block],
                &chained(Felt::new(position as u64)),
            ));
        }
        chain
    }

    /// The trace: each tree's opened rows hashed into their leaves and up their paths.
    /// Wrong rows or siblings give a trace the constraints refuse.
    ///
    /// # Errors
    /// Openings of another count or size than the AIR's.
    pub fn trace(&self, opened: &[Opened]) -> Result<RowBlocks, OpeningsError> {
        expect_len("opened trees", self.trees.len(), opened.len())?;
        for (shape, opened) in self.trees.iter().zip(opened) {
            let elements = self.positions.len() * shape.row_width;
            expect_len("opened elements", elements, opened.rows.len())?;
            expect_len("paths", self.positions.len(), opened.paths.len())?;
            for path in &opened.paths {
                expect_len("siblings in a path", shape.height, path.len())?;
            }
        }
        let count = self.positions.len();
        let chain = self.chain();
        let mut table = vec![Felt::ZERO; (self.blocks * self.block_rows) * WIDTH];
        table
            .par_chunks_mut(self.block_rows * WIDTH)
            .enumerate()
            .for_each(|(block, cells)| {
                let k = block.min(count - 1);
                let position = Felt::new(self.positions[k] as u64);
                for row in cells.chunks_exact_mut(WIDTH) {
                    row[POSITION] = position;
                    row[CHAIN..WIDTH].copy_from_slice(&chain[block]);
                }
                let mut rows = cells.chunks_exact_mut(WIDTH);
                let mut permute = |input: [Felt; STATE_CELLS], bit: usize, rest: usize| {
                    let row = rows.next().expect("a row for every permutation");
                    row[INPUT..PERMUTATION].copy_from_slice(&input);
                    row[BIT] = Felt::new(bit as u64);
                    row[REST] = Felt::new(rest as u64);
                    air::fill(SBOX, input, &mut row[PERMUTATION..BIT])
                };
                for (shape, opened) in self.trees.iter().zip(opened) {
                    let width = shape.row_width;
                    let row = &opened.rows[k * width..(k + 1) * width];
                    hash_up(self.positions[k], row, &opened.paths[k], &mut permute);
                }
                for _ in self.scheduled_rows()..self.block_rows - 1 {
                    permute([Felt::ZERO; STATE_CELLS], 0, 0);
                }
                let mut input = node_start(Felt::ZERO);
                input[..DIGEST_ELEMENTS].copy_from_slice(&chain[block]);
                input[DIGEST_ELEMENTS..RATE].copy_from_slice(&chained(position));
                permute(input, 0, 0);
            });
        Ok(RowBlocks::from_rows(WIDTH, &table))
    }

    /// Tree `tree`'s openings from its batch opening (`nodes`) against `root` of `rows`:
    /// one after another, a row for each distinct leaf the positions open (p mod 2^height),
    /// in increasing leaf order. Each position (in any order, repeated or not: the draws as
    /// the transcript gave them) gets its leaf's row and path.
    ///
    /// # Errors
    /// No such tree, rows of another size, or a batch opening that does not verify.
    pub fn open(
        &self,
        tree: usize,
        root: &FeltDigest,
        rows: &[Felt],
        nodes: &[Digest],
    ) -> Result<Opened, OpeningsError> {
        let Some(&TreeShape { row_width, height }) = self.trees.get(tree) else {
            return Err(OpeningsError::Shape {
                what: "tree index past the trees",
                expected: self.trees.len(),
                got: tree,
            });
        };
        let leaf_of = |p: usize| p & ((1 << height) - 1);
        let mut leaf_indices: Vec<usize> = self.positions.iter().map(|&p| leaf_of(p)).collect();
        leaf_indices.sort_unstable();
        leaf_indices.dedup();
        expect_len(
            "opened elements",
            leaf_indices.len() * row_width,
            rows.len(),
        )?;
        let hash = MerkleHash::Poseidon2;
        let row = |k: usize| &rows[k * row_width..(k + 1) * row_width];
        let leaves: Vec<Digest> = (0..leaf_indices.len()).map(|k| hash.row(row(k))).collect();
        let root = digest_to_bytes(root);
        let paths = batch_paths(hash, &root, height, &leaf_indices, &leaves, nodes)
            .ok_or(OpeningsError::Rejected)?;
        let mut opened = Opened {
            rows: Vec::with_capacity(self.positions.len() * row_width),
            paths: Vec::with_capacity(self.positions.len()),
        };
        for &p in &self.positions {
            let k = leaf_indices
                .binary_search(&leaf_of(p))
                .expect("every position's leaf is opened");
            opened.rows.extend_from_slice(row(k));
            opened.paths.push(
                paths[k]
                    .iter()
                    .map(|node| digest_from_bytes(node).expect("a verified node is a digest"))
                    .collect(),
            );
        }
        Ok(opened)
    }

    /// The trees' shapes.
    pub(crate) fn trees(&self) -> &[TreeShape] {
        &self.trees
    }

    /// Rows of a block the trees use; the rest are idle.
    fn scheduled_rows(&self) -> usize {
        self.segments().map(|(_, leaf, height)| leaf + height).sum()
    }

    /// Where each tree's rows start in a block, its leaf rows and its height (path rows).
    pub(crate) fn segments(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        self.trees.iter().scan(0, |start, tree| {
            let segment = (*start, leaf_rows(tree.row_width), tree.height);
            *start += segment.1 + segment.2;
            Some(segment)
        })
    }

    /// The position block `block` opens.
    pub(crate) fn position(&self, block: usize) -> usize {
        self.positions[block.min(self.positions.len() - 1)]
    }

    /// A column of one block's period, `value(tree, r)` on row r of each tree's rows (r
    /// counted from the tree's first row), zero on idle rows.
    pub(crate) fn scheduled(&self, value: impl Fn(usize, usize) -> u64) -> PeriodicColumn {
        let owners: Vec<(usize, usize)> = self
            .segments()
            .enumerate()
            .flat_map(|(tree, (_, leaf, height))| (0..leaf + height).map(move |r| (tree, r)))
            .collect();
        self.block_column(|row| owners.get(row).map_or(0, |&(tree, r)| value(tree, r)))
    }

    /// A column of one block's period, `value(r)` on block row r.
    pub(crate) fn block_column(&self, value: impl Fn(usize) -> u64) -> PeriodicColumn {
        PeriodicColumn {
            values: (0..self.block_rows).map(|r| Felt::new(value(r))).collect(),
        }
    }

    /// The positions.
    pub(crate) fn positions(&self) -> &[usize] {
        &self.positions
    }

    /// How many periodic columns [`periodic_columns`](Air::periodic_columns) gives.
    pub(crate) fn periodic_columns_len(&self) -> usize {
        PADDING + self.padded_cells().len() + self.trees.len()
    }

    /// The first cell of a leaf's last block that holds padding, for a row of `width`.
    fn filled(width: usize) -> usize {
        width - (leaf_rows(width) - 1) * RATE
    }

    /// The rate cells some tree pads.
    fn padded_cells(&self) -> std::ops::Range<usize> {
        let least = self.trees.iter().map(|t| Self::filled(t.row_width)).min();
        least.unwrap_or(RATE)..RATE
    }
}

/// What a block's last row compresses the positions' digest with: its position, then zeros.
fn chained(position: Felt) -> FeltDigest {
    let mut right = [Felt::ZERO; DIGEST_ELEMENTS];
    right[0] = position;
    right
}

/// Hashes `row` into its leaf and up `path` for `position`, one permutation a row:
/// `permute(input, bit, rest)`, which returns the output state, with the row's bit and
/// remainder columns (the leaf's last row holds the position, the others nothing).
fn hash_up(
    position: usize,
    row: &[Felt],
    path: &[FeltDigest],
    permute: &mut impl FnMut([Felt; STATE_CELLS], usize, usize) -> [Felt; STATE_CELLS],
) {
    let mut state = leaf_start(row.len(), Felt::ZERO);
    let blocks = leaf_rows(row.len());
    for block in 0..blocks {
        for (i, cell) in state[..RATE].iter_mut().enumerate() {
            *cell = row.get(block * RATE + i).copied().unwrap_or(Felt::ZERO);
        }
        let rest = if block + 1 == blocks { position } else { 0 };
        state = permute(state, 0, rest);
    }
    for (level, sibling) in path.iter().enumerate() {
        let digest: FeltDigest = std::array::from_fn(|i| state[i]);
        let bit = position >> level & 1;
        let (left, right) = if bit == 0 {
            (digest, *sibling)
        } else {
            (*sibling, digest)
        };
        let mut input = node_start(Felt::ZERO);
        input[..DIGEST_ELEMENTS].copy_from_slice(&left);
        input[DIGEST_ELEMENTS..RATE].copy_from_slice(&right);
        state = permute(input, bit, position >> (level + 1));
    }
}

/// Permutations that hash a leaf of `row_width` elements: at least one.
fn leaf_rows(row_width: usize) -> usize {
    row_width.div_ceil(RATE).max(1)
}

// The periodic columns, in `periodic_columns`'s order: the schedule's, then one a padded
// cell, then one a tree's root row.
const LEAF_START: usize = 0;
const LEAF_LENGTH: usize = 1;
/// Rows followed by another row of the same leaf (the DEEP sums step their powers there).
pub(crate) const LEAF_NEXT: usize = 2;
/// Rows that compress: path rows and the chain's row.
const NODE: usize = 3;
/// Rows followed by a path row: the digest from below goes up.
const LINK: usize = 4;
/// The row before a tree's path, where its remainder is the position.
const PATH_START: usize = 5;
/// A path's last row, where the remainder is p >> h (bound by the embedding AIR for a lower
/// tree).
pub(crate) const PATH_END: usize = 6;
/// A tallest tree's path's last row, where the remainder is p >> h = 0.
const TALL_END: usize = 7;
/// The block's last row, which chains its position into the digest.
const CHAIN_ROW: usize = 8;
const PADDING: usize = 9;

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
        (self.trees.len() + 1) * DIGEST_ELEMENTS
    }

    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        let leaf = |tree: usize| leaf_rows(self.trees[tree].row_width);
        let tallest = self.trees.iter().map(|t| t.height).max().unwrap_or(0);
        let path_end = |tree: usize, r: usize| {
            let height = self.trees[tree].height;
            height > 0 && r + 1 == leaf(tree) + height
        };
        let mut node = self.scheduled(|tree, r| u64::from(r >= leaf(tree)));
        node.values[self.block_rows - 1] = Felt::ONE;
        let mut columns = vec![
            self.scheduled(|_, r| u64::from(r == 0)),
            self.scheduled(|tree, r| {
                if r == 0 {
                    self.trees[tree].row_width as u64
                } else {
                    0
                }
            }),
            self.scheduled(|tree, r| u64::from(r + 1 < leaf(tree))),
            node,
            self.scheduled(|tree, r| {
                u64::from(r + 1 >= leaf(tree) && r + 1 < leaf(tree) + self.trees[tree].height)
            }),
            self.scheduled(|tree, r| u64::from(r + 1 == leaf(tree) && self.trees[tree].height > 0)),
            self.scheduled(|tree, r| u64::from(path_end(tree, r))),
            self.scheduled(|tree, r| {
                u64::from(path_end(tree, r) && self.trees[tree].height == tallest)
            }),
            self.block_column(|r| u64::from(r + 1 == self.block_rows)),
        ];
        for cell in self.padded_cells() {
            columns.push(self.scheduled(|tree, r| {
                u64::from(r + 1 == leaf(tree) && cell >= Self::filled(self.trees[tree].row_width))
            }));
        }
        for root in 0..self.trees.len() {
            columns.push(self.scheduled(|tree, r| {
                u64::from(tree == root && r + 1 == leaf(tree) + self.trees[tree].height)
            }));
        }
        columns.into()
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let zero = B::Expr::from(Felt::ZERO);
        let (cur, next, p) = (f.current, f.next, f.periodic);
        let input: [B::Expr; STATE_CELLS] = std::array::from_fn(|i| cur[INPUT + i]);
        let output = air::eval(b, SBOX, input, &cur[PERMUTATION..BIT]);
        // A leaf starts from its length in the first capacity cell: the periodic length
        // column holds it on each leaf's first row, so the start state is `leaf_start`'s.
        let leaf = leaf_start(0, zero);
        let node = node_start(zero);
        for i in RATE..STATE_CELLS {
            let length = if i == RATE { p[LEAF_LENGTH] } else { zero };
            b.every_row(p[LEAF_START] * (input[i] - leaf[i]) - length);
            b.transition(p[LEAF_NEXT] * (next[INPUT + i] - output[i]));
            b.every_row(p[NODE] * (input[i] - node[i]));
        }
        let padded = self.padded_cells();
        for (k, cell) in padded.clone().enumerate() {
            b.every_row(p[PADDING + k] * input[cell]);
        }
        let roots = PADDING + padded.len();
        let one = B::Expr::from(Felt::ONE);
        let (bit, rest) = (cur[BIT], cur[REST]);
        let up = next[BIT];
        for i in 0..DIGEST_ELEMENTS {
            let into_left = next[INPUT + i] - output[i];
            let into_right = next[INPUT + DIGEST_ELEMENTS + i] - output[i];
            b.transition(p[LINK] * (one - up) * into_left);
            b.transition(p[LINK] * up * into_right);
            for tree in 0..self.trees.len() {
                let root = f.public_inputs[tree * DIGEST_ELEMENTS + i];
                b.every_row(p[roots + tree] * (output[i] - root));
            }
        }
        // The bits are the position's: a path's remainder starts at p, each level takes its
        // low bit, and a tallest tree's ends at 0, so Σ bit_i·2^i = p in the field; the sum
        // is below 2^h < the modulus, so p < 2^h and the bits are its binary digits.
        let position = cur[POSITION];
        b.every_row(p[NODE] * bit * (bit - one));
        b.transition(p[LINK] * (rest - next[REST] - next[REST] - up));
        b.every_row(p[PATH_START] * (rest - position));
        b.every_row(p[TALL_END] * rest);
        // The chain: the position held down the block, compressed on its last row with the
        // digest so far, which the next block holds; the table's last row gives the digest.
        let chain_row = p[CHAIN_ROW];
        b.transition((one - chain_row) * (next[POSITION] - position));
        for i in 0..DIGEST_ELEMENTS {
            let (digest, chained) = (cur[CHAIN + i], input[DIGEST_ELEMENTS + i]);
            let right = if i == 0 { position } else { zero };
            b.every_row(chain_row * (input[i] - digest));
            b.every_row(chain_row * (chained - right));
            b.transition(next[CHAIN + i] - digest - chain_row * (output[i] - digest));
            b.first_row(digest);
            let public = f.public_inputs[self.trees.len() * DIGEST_ELEMENTS + i];
            b.last_row(output[i] - public);
        }
    }
}

/// Refuses a length other than `expected`.
pub(crate) fn expect_len(
    what: &'static str,
    expected: usize,
    got: usize,
) -> Result<(), OpeningsError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_periodic_column_count_is_the_columns() {
        for widths in [&[4][..], &[8, 16], &[11, 3], &[0, 9, 17]] {
            let trees: Vec<TreeShape> = widths
                .iter()
                .enumerate()
                .map(|(k, &row_width)| TreeShape {
                    row_width,
                    height: 3 - k.min(2),
                })
                .collect();
            let air = OpeningsAir::with_lower_trees(&trees, &[1, 6]).unwrap();
            assert_eq!(air.periodic_columns_len(), air.periodic_columns().len());
        }
    }
}
