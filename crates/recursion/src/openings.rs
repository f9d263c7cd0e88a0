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
//! A mixed tree ([`Tree::mixed`], a tables proof's: `ballast_merkle::MixedTree`) puts p at
//! leaf br(p): its path's bits are p's from the highest, each path row taking its bit times
//! its weight 2^(h − 1 − level) (a periodic column) off the remainder, down to 0. Where a
//! shorter height joins ([`Join`]), the rows after the path row below it hold that row's
//! node in four more columns, carried down the block; the joining row is hashed into its leaf with the remainder kept,
//! and the join row compresses the held node (left) with that leaf (right), the mixed
//! tree's `node(node(l, r), leaf)`.
//!
//! Blocks past the last position repeat it. The permutation's constraints have [`SBOX`]'s
//! degree (7), every other one degree at most 3.

use std::borrow::Cow;

use ballast_air::{Air, ConstraintBuilder, Frame, PeriodicColumn};
use ballast_field::{Felt, RowBlocks};
use ballast_merkle::{Digest, MerkleHash, MixedShape, batch_paths, mixed_paths};
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
/// Column: the position's bits not yet taken (p on the row before a path; on a path row
/// p >> (level + 1) in a plain tree, p mod 2^(h − 1 − level) in a mixed one).
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
    /// A join outside its tree's path, out of order, or in a plain tree.
    #[error(
        "a join at depth {depth} of a tree of height {height}: joins lie inside a mixed \
         tree's path, lowest first"
    )]
    Join {
        /// The join's depth.
        depth: usize,
        /// The tree's height.
        height: usize,
    },
    /// A tree opened as the other kind: a plain tree's rows as a mixed tree's, or the reverse.
    #[error("tree {tree} is {}: its openings are read as such", if *.mixed { "mixed" } else { "plain" })]
    Kind {
        /// The tree.
        tree: usize,
        /// Whether it is mixed.
        mixed: bool,
    },
    /// Tables of another shape than the mixed tree's.
    #[error("tree {tree}: the tables are not the mixed tree's")]
    OtherTables {
        /// The tree.
        tree: usize,
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
    /// A table's LDE of fewer points than the blowup: no table has fewer than one row.
    #[error("a table's LDE of 2^{log_lde} points is below the blowup 2^{log_blowup}")]
    BelowBlowup {
        /// log2 of its points.
        log_lde: usize,
        /// log2 of the blowup.
        log_blowup: usize,
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

/// A shorter height's rows joining a mixed tree's path: at `depth` levels above the
/// tallest leaves the node is `node(node(l, r), leaf)`, `leaf` the hash of a row of
/// `row_width` elements (the height's rows, concatenated). A table of one row, which would
/// join at the root, is not taken: a tables proof's extended tables have at least the
/// blowup's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Join {
    /// Levels above the tallest leaves.
    pub depth: usize,
    /// The elements of the joining row.
    pub row_width: usize,
}

/// A tree the openings climb: plain, position p at leaf p mod 2^h (a segment's trees, FRI's
/// layers), or mixed (`ballast_merkle::MixedTree`, a tables proof's trees): position p at
/// leaf br(p), holding the tallest height's rows, with each shorter height's joining its
/// path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    /// The leaf's row width and the tree's height.
    pub shape: TreeShape,
    /// Whether its leaves are in bit-reversed order of the positions.
    pub reversed: bool,
    /// The rows joining its path, lowest first (none for a plain tree).
    pub joins: Vec<Join>,
}

impl Tree {
    /// A plain tree of `shape`.
    pub fn plain(shape: TreeShape) -> Self {
        Self {
            shape,
            reversed: false,
            joins: Vec::new(),
        }
    }

    /// The mixed tree of tables of `shape`: its tallest height's rows the leaf, each shorter
    /// height's joining where its nodes are as many as its rows.
    pub fn mixed(shape: &MixedShape) -> Self {
        let height = shape.height();
        let mut widths: Vec<(usize, usize)> = Vec::new();
        for table in shape.tables() {
            match widths.last_mut() {
                Some((log_height, width)) if *log_height == table.log_height => {
                    *width += table.width;
                }
                _ => widths.push((table.log_height, table.width)),
            }
        }
        let (_, row_width) = widths[0];
        Self {
            shape: TreeShape { row_width, height },
            reversed: true,
            joins: (widths[1..].iter())
                .map(|&(log_height, row_width)| Join {
                    depth: height - log_height,
                    row_width,
                })
                .collect(),
        }
    }

    /// What each of its rows does in a position's block, in order.
    fn steps(&self) -> Vec<Step> {
        let mut steps = Vec::new();
        let leaf = |steps: &mut Vec<Step>, width, join| {
            let rows = leaf_rows(width);
            steps.extend((0..rows).map(|r| Step::Leaf {
                width,
                r,
                rows,
                join,
            }));
        };
        leaf(&mut steps, self.shape.row_width, false);
        let mut joins = self.joins.iter().peekable();
        for level in 0..self.shape.height {
            steps.push(Step::Path { level });
            if let Some(join) = joins.next_if(|j| j.depth == level + 1) {
                leaf(&mut steps, join.row_width, true);
                steps.push(Step::Join);
            }
        }
        steps
    }

    /// The elements a position opens: its leaf's row, then each join's.
    fn opened_width(&self) -> usize {
        self.shape.row_width + self.joins.iter().map(|j| j.row_width).sum::<usize>()
    }
}

/// A tree's rows in a position's block ([`OpeningsAir::tree_rows`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TreeRows {
    /// The rows that hash each leaf: the tree's own, then each join's, lowest first.
    pub(crate) leaves: Vec<std::ops::Range<usize>>,
    /// The path's row at each level, the lowest first.
    pub(crate) path: Vec<usize>,
}

/// What a row of a tree's schedule does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Row `r` of the `rows` that hash a leaf of `width` elements: the tree's own, or a
    /// join's.
    Leaf {
        width: usize,
        r: usize,
        rows: usize,
        join: bool,
    },
    /// The path's row at `level` (0 the lowest): a node towards the root.
    Path { level: usize },
    /// A join: the node held and the joining leaf compressed.
    Join,
}

/// The openings at `positions` of Poseidon2 trees of the given shapes: an [`Air`] of
/// [`WIDTH`] columns (4 more where a tree is mixed) whose public inputs are the roots'
/// [`DIGEST_ELEMENTS`], tree after tree, then the positions' digest's.
#[derive(Clone, Debug)]
pub struct OpeningsAir {
    trees: Vec<Tree>,
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
        let trees: Vec<Tree> = trees.iter().map(|&t| Tree::plain(t)).collect();
        Self::with_trees(&trees, positions)
    }

    /// [`new`](Self::new) of trees plain or mixed, of one height.
    ///
    /// # Errors
    /// As [`new`](Self::new), and joins outside their tree's path or out of order.
    pub fn with_trees(trees: &[Tree], positions: &[usize]) -> Result<Self, OpeningsError> {
        let tallest = trees.iter().map(|t| t.shape.height).max().unwrap_or(0);
        if let Some(tree) = trees.iter().find(|t| t.shape.height < tallest) {
            return Err(OpeningsError::LowerTree {
                height: tree.shape.height,
                tallest,
            });
        }
        Self::build(trees.to_vec(), positions)
    }

    /// [`new`](Self::new), taking trees lower than the tallest: for an AIR that binds their
    /// paths' ends (p >> h) itself, and is proven in their place.
    pub(crate) fn with_lower_trees(
        trees: &[Tree],
        positions: &[usize],
    ) -> Result<Self, OpeningsError> {
        Self::build(trees.to_vec(), positions)
    }

    fn build(trees: Vec<Tree>, positions: &[usize]) -> Result<Self, OpeningsError> {
        if trees.is_empty() {
            return Err(OpeningsError::NoTrees);
        }
        let widths = |t: &Tree| {
            let joins = t.joins.iter().map(|j| j.row_width);
            std::iter::once(t.shape.row_width).chain(joins).max()
        };
        if let Some(tree) = trees
            .iter()
            .find(|t| t.shape.height > MAX_HEIGHT || widths(t).is_some_and(|w| w > MAX_ROW_WIDTH))
        {
            return Err(OpeningsError::TooLarge {
                height: tree.shape.height,
                row_width: widths(tree).unwrap_or(0),
            });
        }
        for tree in &trees {
            let height = tree.shape.height;
            let mut above = 0;
            for join in &tree.joins {
                if !tree.reversed || join.depth <= above || join.depth >= height {
                    return Err(OpeningsError::Join {
                        depth: join.depth,
                        height,
                    });
                }
                above = join.depth;
            }
        }
        let trees = trees.as_slice();
        if positions.is_empty() {
            return Err(OpeningsError::NoPositions);
        }
        let tallest = trees.iter().map(|t| t.shape.height).max().unwrap_or(0);
        let leaves = 1u64 << tallest;
        if let Some(&position) = positions.iter().find(|&&p| p as u64 >= leaves) {
            return Err(OpeningsError::PositionOutsideTree { position, leaves });
        }
        let scheduled: usize = trees.iter().map(|t| t.steps().len()).sum();
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
        for (tree, opened) in self.trees.iter().zip(opened) {
            let elements = self.positions.len() * tree.opened_width();
            expect_len("opened elements", elements, opened.rows.len())?;
            expect_len("paths", self.positions.len(), opened.paths.len())?;
            for path in &opened.paths {
                expect_len("siblings in a path", tree.shape.height, path.len())?;
            }
        }
        let count = self.positions.len();
        let chain = self.chain();
        let width = self.width();
        let mut table = vec![Felt::ZERO; (self.blocks * self.block_rows) * width];
        table
            .par_chunks_mut(self.block_rows * width)
            .enumerate()
            .for_each(|(block, cells)| {
                let k = block.min(count - 1);
                let position = Felt::new(self.positions[k] as u64);
                for row in cells.chunks_exact_mut(width) {
                    row[POSITION] = position;
                    row[CHAIN..WIDTH].copy_from_slice(&chain[block]);
                }
                let mut rows = cells.chunks_exact_mut(width);
                let mut permute = |input: [Felt; STATE_CELLS], at: Held| {
                    let row = rows.next().expect("a row for every permutation");
                    row[INPUT..PERMUTATION].copy_from_slice(&input);
                    row[BIT] = Felt::new(at.bit as u64);
                    row[REST] = Felt::new(at.rest as u64);
                    row[WIDTH..].copy_from_slice(&at.held[..width - WIDTH]);
                    air::fill(SBOX, input, &mut row[PERMUTATION..BIT])
                };
                let mut held = [Felt::ZERO; DIGEST_ELEMENTS];
                for (tree, opened) in self.trees.iter().zip(opened) {
                    let elements = tree.opened_width();
                    let row = &opened.rows[k * elements..(k + 1) * elements];
                    let path = &opened.paths[k];
                    hash_up(tree, self.positions[k], row, path, &mut held, &mut permute);
                }
                let idle = Held {
                    held,
                    ..Held::default()
                };
                for _ in self.scheduled_rows()..self.block_rows - 1 {
                    permute([Felt::ZERO; STATE_CELLS], idle);
                }
                let mut input = node_start(Felt::ZERO);
                input[..DIGEST_ELEMENTS].copy_from_slice(&chain[block]);
                input[DIGEST_ELEMENTS..RATE].copy_from_slice(&chained(position));
                permute(input, idle);
            });
        Ok(RowBlocks::from_row_vec(width, table))
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
        let TreeShape { row_width, height } = self.tree(tree, false)?.shape;
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
            opened.paths.push(felt_path(&paths[k]));
        }
        Ok(opened)
    }

    /// Mixed tree `tree`'s openings from its batch opening (`nodes`) against `root` of
    /// `rows`, the rows each of `positions` (strictly increasing) carries, table after table
    /// of `shape` (`ballast_merkle::verify_mixed`'s): each of the AIR's positions gets its
    /// leaf's row, then each join's row, and its path.
    ///
    /// # Errors
    /// No such mixed tree, another shape, an AIR position not among `positions`, or a batch
    /// opening that does not verify.
    pub fn open_mixed(
        &self,
        tree: usize,
        root: &FeltDigest,
        shape: &MixedShape,
        positions: &[usize],
        rows: &[&[Felt]],
        nodes: &[Digest],
    ) -> Result<Opened, OpeningsError> {
        let climbed = self.tree(tree, true)?;
        if Tree::mixed(shape) != *climbed {
            return Err(OpeningsError::OtherTables { tree });
        }
        let hash = MerkleHash::Poseidon2;
        let root = digest_to_bytes(root);
        let paths = mixed_paths(hash, &root, shape, positions, rows, nodes)
            .ok_or(OpeningsError::Rejected)?;
        let tables = shape.tables().len();
        let mut opened = Opened {
            rows: Vec::with_capacity(self.positions.len() * climbed.opened_width()),
            paths: Vec::with_capacity(self.positions.len()),
        };
        for &p in &self.positions {
            let k = positions
                .binary_search(&p)
                .map_err(|_| OpeningsError::Rejected)?;
            for row in &rows[k * tables..(k + 1) * tables] {
                opened.rows.extend_from_slice(row);
            }
            opened.paths.push(felt_path(&paths[k]));
        }
        Ok(opened)
    }

    /// Tree `tree`, plain or (`mixed`) mixed.
    fn tree(&self, tree: usize, mixed: bool) -> Result<&Tree, OpeningsError> {
        match self.trees.get(tree) {
            None => Err(OpeningsError::Shape {
                what: "tree index past the trees",
                expected: self.trees.len(),
                got: tree,
            }),
            Some(t) if t.reversed != mixed => Err(OpeningsError::Kind {
                tree,
                mixed: t.reversed,
            }),
            Some(t) => Ok(t),
        }
    }

    /// The trees.
    pub(crate) fn trees(&self) -> &[Tree] {
        &self.trees
    }

    /// Whether a tree is mixed: the table holds the node a join takes (4 columns more).
    fn mixed(&self) -> bool {
        self.trees.iter().any(|t| t.reversed)
    }

    /// Rows of a block the trees use; the rest are idle.
    fn scheduled_rows(&self) -> usize {
        self.segments().map(|(_, leaf, climb)| leaf + climb).sum()
    }

    /// Where each tree's rows start in a block, its leaf rows and the rows after them (its
    /// height for a plain tree: its path).
    pub(crate) fn segments(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        self.trees.iter().scan(0, |start, tree| {
            let rows = tree.steps().len();
            let leaf = leaf_rows(tree.shape.row_width);
            let segment = (*start, leaf, rows - leaf);
            *start += rows;
            Some(segment)
        })
    }

    /// Where tree `tree`'s leaves and path lie in a block.
    pub(crate) fn tree_rows(&self, tree: usize) -> TreeRows {
        let (start, ..) = self.segments().nth(tree).expect("a tree of the AIR");
        let mut rows = TreeRows::default();
        for (r, step) in self.trees[tree].steps().into_iter().enumerate() {
            match step {
                Step::Leaf { r: 0, rows: n, .. } => rows.leaves.push(start + r..start + r + n),
                Step::Path { .. } => rows.path.push(start + r),
                Step::Leaf { .. } | Step::Join => {}
            }
        }
        rows
    }

    /// The position block `block` opens.
    pub(crate) fn position(&self, block: usize) -> usize {
        self.positions[block.min(self.positions.len() - 1)]
    }

    /// A column of one block's period, `value(tree, steps, r)` on row r of each tree's rows
    /// (r counted from the tree's first row, `steps` what they do), zero on idle rows.
    fn scheduled(&self, value: impl Fn(usize, &[Step], usize) -> u64) -> PeriodicColumn {
        let steps: Vec<Vec<Step>> = self.trees.iter().map(Tree::steps).collect();
        let owners: Vec<(usize, usize)> = (steps.iter().enumerate())
            .flat_map(|(tree, steps)| (0..steps.len()).map(move |r| (tree, r)))
            .collect();
        self.block_column(|row| {
            owners
                .get(row)
                .map_or(0, |&(tree, r)| value(tree, &steps[tree], r))
        })
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
        let mixed = if self.mixed() { MIXED } else { 0 };
        PADDING + self.padded_cells().len() + self.trees.len() + mixed
    }

    /// The first cell of a leaf's last block that holds padding, for a row of `width`.
    fn filled(width: usize) -> usize {
        width - (leaf_rows(width) - 1) * RATE
    }

    /// The rate cells some leaf pads (a tree's own, or a join's).
    fn padded_cells(&self) -> std::ops::Range<usize> {
        let widths = self.trees.iter().flat_map(|t| {
            std::iter::once(t.shape.row_width).chain(t.joins.iter().map(|j| j.row_width))
        });
        widths.map(Self::filled).min().unwrap_or(RATE)..RATE
    }
}

/// A verified path's nodes as digests of elements.
fn felt_path(path: &[Digest]) -> Vec<FeltDigest> {
    path.iter()
        .map(|node| digest_from_bytes(node).expect("a verified node is a digest"))
        .collect()
}

/// What a block's last row compresses the positions' digest with: its position, then zeros.
fn chained(position: Felt) -> FeltDigest {
    let mut right = [Felt::ZERO; DIGEST_ELEMENTS];
    right[0] = position;
    right
}

/// What a row keeps besides its permutation: the position's bit at its level, its
/// remainder, and the node held for a join (where a tree is mixed).
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    bit: usize,
    rest: usize,
    held: FeltDigest,
}

/// Hashes `row` (the leaf's, then each join's) into its leaves and up `path` for
/// `position` in `tree`, one permutation a row: `permute(input, kept)`, which returns the
/// output state. A leaf's last row holds the position; a plain tree's path takes p's bits
/// from the lowest, a mixed tree's from the highest, each row holding what is left; a join
/// holds the node below it (`held`, carried from row to row) while its leaf is hashed.
fn hash_up(
    tree: &Tree,
    position: usize,
    row: &[Felt],
    path: &[FeltDigest],
    held: &mut FeltDigest,
    permute: &mut impl FnMut([Felt; STATE_CELLS], Held) -> [Felt; STATE_CELLS],
) {
    let height = tree.shape.height;
    let (leaf, mut joined) = row.split_at(tree.shape.row_width);
    let kept = Held {
        bit: 0,
        rest: position,
        held: *held,
    };
    let mut state = sponge(leaf, kept, false, permute);
    for (level, sibling) in path.iter().enumerate() {
        let digest: FeltDigest = std::array::from_fn(|i| state[i]);
        let (bit, rest) = if tree.reversed {
            let bit = position >> (height - 1 - level) & 1;
            (bit, (position & ((1 << (height - 1 - level)) - 1)))
        } else {
            (position >> level & 1, position >> (level + 1))
        };
        let (left, right) = if bit == 0 {
            (digest, *sibling)
        } else {
            (*sibling, digest)
        };
        let mut input = node_start(Felt::ZERO);
        input[..DIGEST_ELEMENTS].copy_from_slice(&left);
        input[DIGEST_ELEMENTS..RATE].copy_from_slice(&right);
        let kept = Held {
            bit,
            rest,
            held: *held,
        };
        state = permute(input, kept);
        if let Some(join) = tree.joins.iter().find(|j| j.depth == level + 1) {
            *held = std::array::from_fn(|i| state[i]);
            let (elements, rest_of) = joined.split_at(join.row_width);
            joined = rest_of;
            let kept = Held {
                bit: 0,
                rest,
                held: *held,
            };
            let leaf = sponge(elements, kept, true, permute);
            let mut input = node_start(Felt::ZERO);
            input[..DIGEST_ELEMENTS].copy_from_slice(held);
            input[DIGEST_ELEMENTS..RATE].copy_from_slice(&leaf[..DIGEST_ELEMENTS]);
            state = permute(input, kept);
        }
    }
}

/// Hashes `elements` into a leaf, one permutation a block of [`RATE`]: a tree's own leaf
/// keeps its position (`kept.rest`) on its last row alone, a join's keeps the remainder on
/// every row.
fn sponge(
    elements: &[Felt],
    kept: Held,
    join: bool,
    permute: &mut impl FnMut([Felt; STATE_CELLS], Held) -> [Felt; STATE_CELLS],
) -> [Felt; STATE_CELLS] {
    let mut state = leaf_start(elements.len(), Felt::ZERO);
    let blocks = leaf_rows(elements.len());
    for block in 0..blocks {
        for (i, cell) in state[..RATE].iter_mut().enumerate() {
            *cell = elements
                .get(block * RATE + i)
                .copied()
                .unwrap_or(Felt::ZERO);
        }
        let rest = if join || block + 1 == blocks {
            kept.rest
        } else {
            0
        };
        state = permute(state, Held { rest, ..kept });
    }
    state
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
// Where a tree is mixed, after the roots' columns (offsets from there):
/// Rows followed by a mixed tree's path row: the remainder loses the next row's bit times
/// its weight.
const REVERSED_LINK: usize = 0;
/// On those rows, the next path row's weight: 2^(h − 1 − level).
const WEIGHT: usize = 1;
/// The path row below a join, whose output the held node takes.
const CAPTURE: usize = 2;
/// The rows from there to the join, which keep the remainder.
const CARRY: usize = 3;
/// A join's leaf's last row, whose output is the join's right half.
const INTO_JOIN: usize = 4;
/// A join row: its left half is the held node.
const JOIN: usize = 5;
const MIXED: usize = 6;
/// Columns: the node a join takes, held from the path row below it.
const HELD: usize = WIDTH;

impl Air for OpeningsAir {
    fn id(&self) -> &str {
        "ballast/merkle-openings"
    }

    fn width(&self) -> usize {
        if self.mixed() {
            HELD + DIGEST_ELEMENTS
        } else {
            WIDTH
        }
    }

    fn log_rows(&self) -> usize {
        (self.blocks * self.block_rows).trailing_zeros() as usize
    }

    fn num_public_inputs(&self) -> usize {
        (self.trees.len() + 1) * DIGEST_ELEMENTS
    }

    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        let tallest = self.trees.iter().map(|t| t.shape.height).max().unwrap_or(0);
        let height = |tree: usize| self.trees[tree].shape.height;
        let leaf_row = |step: Option<&Step>, join: bool, first: bool, last: bool| match step {
            Some(&Step::Leaf {
                r, rows, join: j, ..
            }) => j == join && (!first || r == 0) && (!last || r + 1 == rows),
            _ => false,
        };
        let path_end = |tree: usize, step: &Step| matches!(*step, Step::Path { level } if level + 1 == height(tree));
        let linked = |steps: &[Step], r: usize| matches!(steps.get(r + 1), Some(Step::Path { .. }));
        let mut node = self
            .scheduled(|_, steps, r| u64::from(matches!(steps[r], Step::Path { .. } | Step::Join)));
        node.values[self.block_rows - 1] = Felt::ONE;
        let mut columns = vec![
            self.scheduled(|_, steps, r| u64::from(matches!(steps[r], Step::Leaf { r: 0, .. }))),
            self.scheduled(|_, steps, r| match steps[r] {
                Step::Leaf { r: 0, width, .. } => width as u64,
                _ => 0,
            }),
            self.scheduled(|_, steps, r| {
                u64::from(matches!(steps[r], Step::Leaf { r, rows, .. } if r + 1 < rows))
            }),
            node,
            self.scheduled(|_, steps, r| u64::from(linked(steps, r))),
            self.scheduled(|tree, steps, r| {
                u64::from(leaf_row(steps.get(r), false, false, true) && height(tree) > 0)
            }),
            self.scheduled(|tree, steps, r| u64::from(path_end(tree, &steps[r]))),
            self.scheduled(|tree, steps, r| {
                u64::from(path_end(tree, &steps[r]) && height(tree) == tallest)
            }),
            self.block_column(|r| u64::from(r + 1 == self.block_rows)),
        ];
        for cell in self.padded_cells() {
            columns.push(self.scheduled(|_, steps, r| match steps[r] {
                Step::Leaf { r, rows, width, .. } => {
                    u64::from(r + 1 == rows && cell >= Self::filled(width))
                }
                _ => 0,
            }));
        }
        for root in 0..self.trees.len() {
            columns.push(
                self.scheduled(|tree, steps, r| u64::from(tree == root && r + 1 == steps.len())),
            );
        }
        if self.mixed() {
            let reversed = |tree: usize| self.trees[tree].reversed;
            let next_level = |steps: &[Step], r: usize| match steps.get(r + 1) {
                Some(&Step::Path { level }) => Some(level),
                _ => None,
            };
            let captures = |steps: &[Step], r: usize| {
                matches!(steps[r], Step::Path { .. })
                    && leaf_row(steps.get(r + 1), true, true, false)
            };
            columns.extend([
                self.scheduled(|tree, steps, r| u64::from(reversed(tree) && linked(steps, r))),
                self.scheduled(|tree, steps, r| match next_level(steps, r) {
                    Some(level) if reversed(tree) => 1 << (height(tree) - 1 - level),
                    _ => 0,
                }),
                self.scheduled(|_, steps, r| u64::from(captures(steps, r))),
                self.scheduled(|_, steps, r| {
                    u64::from(captures(steps, r) || leaf_row(Some(&steps[r]), true, false, false))
                }),
                self.scheduled(|_, steps, r| {
                    u64::from(leaf_row(Some(&steps[r]), true, false, true))
                }),
                self.scheduled(|_, steps, r| u64::from(steps[r] == Step::Join)),
            ]);
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
        let mixed = roots + self.trees.len();
        // A plain tree's link halves the remainder; a mixed tree's takes the next row's bit
        // times its weight off it (its bits are p's from the highest), down to 0 likewise.
        let halving = if self.mixed() {
            p[LINK] - p[mixed + REVERSED_LINK]
        } else {
            p[LINK]
        };
        b.transition(halving * (rest - next[REST] - next[REST] - up));
        if self.mixed() {
            let q = |k: usize| p[mixed + k];
            b.transition(q(REVERSED_LINK) * (rest - next[REST] - up * q(WEIGHT)));
            b.transition(q(CARRY) * (next[REST] - rest));
            // The held node: taken from the path row below a join, kept down the block, the
            // join's left half; the join's leaf is its right half.
            let block = one - p[CHAIN_ROW];
            for i in 0..DIGEST_ELEMENTS {
                let held = cur[HELD + i];
                b.transition(block * (next[HELD + i] - held - q(CAPTURE) * (output[i] - held)));
                b.transition(q(INTO_JOIN) * (next[INPUT + DIGEST_ELEMENTS + i] - output[i]));
                b.every_row(q(JOIN) * (input[i] - held));
            }
        }
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
            let trees: Vec<Tree> = widths
                .iter()
                .enumerate()
                .map(|(k, &row_width)| {
                    Tree::plain(TreeShape {
                        row_width,
                        height: 3 - k.min(2),
                    })
                })
                .collect();
            let air = OpeningsAir::with_lower_trees(&trees, &[1, 6]).unwrap();
            assert_eq!(air.periodic_columns_len(), air.periodic_columns().len());
        }
        let mixed = Tree {
            shape: TreeShape {
                row_width: 5,
                height: 6,
            },
            reversed: true,
            joins: vec![
                Join {
                    depth: 2,
                    row_width: 3,
                },
                Join {
                    depth: 5,
                    row_width: 17,
                },
            ],
        };
        let plain = Tree::plain(TreeShape {
            row_width: 9,
            height: 6,
        });
        let air = OpeningsAir::with_trees(&[mixed, plain], &[1, 6]).unwrap();
        assert_eq!(air.periodic_columns_len(), air.periodic_columns().len());
    }
}
