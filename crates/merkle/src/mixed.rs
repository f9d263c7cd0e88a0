//! One tree over tables of different heights: a mixed-height commitment.
//!
//! The tables have 2^h rows each, the tallest first. Tables of one height share a leaf: the
//! digest ([`MerkleHash::row`]) of their rows concatenated in table order. The tallest
//! tables' leaves are the tree's, in bit-reversed order of their rows: leaf i holds row
//! br(i). A shorter height joins at the level of 2^h nodes, where node i is
//! `node(node(left, right), leaf)` with `leaf` that height's leaf of row br_h(i). The path of
//! the tallest tables' row p thus passes through row p mod 2^h of every shorter table: an
//! opening of position p carries those rows and no digest more than a plain tree's.

use ballast_cpu::Kernels;
use ballast_field::{Felt, RowBlocks};
use ballast_ntt::bit_reverse;
use rayon::prelude::*;

use crate::tree::{batch_opening_nodes, climb, pair_nodes, row_digests};
use crate::{Digest, MerkleError, MerkleHash, MerkleTree, batch_opening_len, check_indices};

/// Rows gathered per parallel task where tables of one height share a leaf.
const ROWS_PER_TASK: usize = 1 << 8;

/// One table of a mixed tree: log2 of its height and its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableShape {
    /// log2 of the number of rows.
    pub log_height: usize,
    /// Elements in a row.
    pub width: usize,
}

/// The tables a mixed tree commits, tallest first: what a verifier must know (and a
/// transcript bind) before it reads a root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixedShape {
    tables: Vec<TableShape>,
}

impl MixedShape {
    /// The shape of these tables.
    ///
    /// # Errors
    /// [`MerkleError::Tables`] when there are none, a height increases, or a table is too
    /// tall to address.
    pub fn new(tables: Vec<TableShape>) -> Result<Self, MerkleError> {
        if tables.is_empty() {
            return Err(MerkleError::Tables("no tables to commit"));
        }
        if tables.windows(2).any(|w| w[0].log_height < w[1].log_height) {
            return Err(MerkleError::Tables(
                "tables are not in order of decreasing height",
            ));
        }
        if tables[0].log_height >= usize::BITS as usize {
            return Err(MerkleError::Tables("a table is too tall to address"));
        }
        Ok(Self { tables })
    }

    /// The tables, tallest first.
    pub fn tables(&self) -> &[TableShape] {
        &self.tables
    }

    /// The tree's height (path length): log2 of the tallest table's height.
    pub fn height(&self) -> usize {
        self.tables[0].log_height
    }

    /// `rows`, the rows an opening of `positions` positions carries (each position's, one
    /// table's after another), as one slice a table a position; `None` unless they are
    /// exactly that many elements.
    pub fn split_rows<'r>(&self, rows: &'r [Felt], positions: usize) -> Option<Vec<&'r [Felt]>> {
        let widths = self.tables.iter().map(|t| t.width);
        if rows.len() != positions * widths.clone().sum::<usize>() {
            return None;
        }
        let mut rest = rows;
        let mut split = Vec::with_capacity(positions * self.tables.len());
        for _ in 0..positions {
            for width in widths.clone() {
                let (row, after) = rest.split_at(width);
                split.push(row);
                rest = after;
            }
        }
        Some(split)
    }

    /// The row of `table` that an opening of `position` (a row of the tallest tables) carries:
    /// `position mod` that table's height.
    pub fn row_of(&self, table: usize, position: usize) -> usize {
        position & ((1 << self.tables[table].log_height) - 1)
    }

    /// Nodes in the batch opening of `positions` (strictly increasing rows of the tallest
    /// tables): what [`MixedTree::open_batch`] returns and [`verify_mixed`] takes.
    ///
    /// # Panics
    /// If `positions` are not strictly increasing rows of the tallest tables.
    pub fn opening_len(&self, positions: &[usize]) -> usize {
        check_indices(self.height(), positions).expect("valid positions");
        batch_opening_len(self.height(), &leaves(self.height(), positions))
    }

    /// The tables sharing each leaf: runs of one height, tallest first, with the tree depth
    /// at which their leaf joins (0 for the tallest).
    fn groups(&self) -> impl Iterator<Item = (usize, std::ops::Range<usize>)> + '_ {
        let mut start = 0;
        std::iter::from_fn(move || {
            let first = self.tables.get(start)?;
            let len = self.tables[start..]
                .iter()
                .take_while(|t| t.log_height == first.log_height)
                .count();
            let group = start..start + len;
            start += len;
            Some((self.height() - first.log_height, group))
        })
    }
}

/// A mixed-height tree with its levels (after the joins) kept from a depth up: every level,
/// or, built a coset at a time, those above a pruned bottom ([`MixedTree::commit_cosets`]).
#[derive(Clone, Debug)]
pub struct MixedTree {
    shape: MixedShape,
    hash: MerkleHash,
    /// The levels below this depth are not kept (0: every level is).
    pruned: usize,
    /// The levels from depth `pruned` up.
    tree: MerkleTree,
}

impl MixedTree {
    /// The tree over `tables`, tallest first, its nodes hashed with `hash`.
    ///
    /// # Errors
    /// [`MerkleError::LeafCount`] when a table's height is not a power of two,
    /// [`MerkleError::Tables`] when the heights increase.
    pub fn commit(hash: MerkleHash, tables: &[&RowBlocks]) -> Result<Self, MerkleError> {
        Self::commit_on(Kernels::active(), hash, tables)
    }

    fn commit_on(
        kernels: Kernels,
        hash: MerkleHash,
        tables: &[&RowBlocks],
    ) -> Result<Self, MerkleError> {
        if let Some(t) = tables.iter().find(|t| !t.height().is_power_of_two()) {
            return Err(MerkleError::LeafCount { leaves: t.height() });
        }
        let shape = MixedShape::new(
            tables
                .iter()
                .map(|t| TableShape {
                    log_height: t.height().trailing_zeros() as usize,
                    width: t.width(),
                })
                .collect(),
        )?;
        let mut levels: Vec<Vec<Digest>> = Vec::with_capacity(shape.height() + 1);
        for (depth, group) in shape.groups() {
            let leaves = bit_reversed(group_digests(kernels, hash, &tables[group]));
            while levels.len() < depth {
                let below = levels.last().expect("the tallest tables' leaves");
                levels.push(pair_nodes(kernels, hash, below));
            }
            let level = match levels.last() {
                None => leaves,
                Some(below) => {
                    let nodes = pair_nodes(kernels, hash, below);
                    let pairs: Vec<Digest> = nodes
                        .into_iter()
                        .zip(leaves)
                        .flat_map(|(node, leaf)| [node, leaf])
                        .collect();
                    pair_nodes(kernels, hash, &pairs)
                }
            };
            levels.push(level);
        }
        while levels.len() <= shape.height() {
            let below = levels.last().expect("the tallest tables' leaves");
            levels.push(pair_nodes(kernels, hash, below));
        }
        let tree = MerkleTree::from_levels(levels).expect("levels halve up to the root");
        Ok(Self {
            shape,
            hash,
            pruned: 0,
            tree,
        })
    }

    /// The tree [`commit`](Self::commit) makes of tables, built a coset at a time, keeping
    /// no level below depth `pruned`: `coset(v)` gives each table's rows v,
    /// v + 2^`log_cosets`, … in order (of a table extended 2^`log_cosets`-fold, its
    /// extension's coset v; of one extended fewer times, a part of a coset). In
    /// bit-reversed order those rows are one run of leaves, under one subtree in which every
    /// shorter table joins, so each coset's subtree is a mixed tree of its own and only its
    /// digests from depth `pruned` up are kept; [`open_batch`](Self::open_batch) is given
    /// the leaves below.
    ///
    /// # Errors
    /// As [`commit`](Self::commit) for a coset's tables; [`MerkleError::Tables`] as well
    /// when a coset differs in shape from another, is less than `pruned` levels tall, or a
    /// shorter table joins below `pruned`.
    pub fn commit_cosets(
        hash: MerkleHash,
        log_cosets: usize,
        pruned: usize,
        coset: impl Fn(usize) -> Vec<RowBlocks>,
    ) -> Result<Self, MerkleError> {
        let kernels = Kernels::active();
        let mut levels: Vec<Vec<Digest>> = Vec::new();
        let mut coset_shape: Option<MixedShape> = None;
        for v in 0..1usize << log_cosets {
            let tables = coset(v);
            let sub = Self::commit_on(kernels, hash, &tables.iter().collect::<Vec<_>>())?;
            match &coset_shape {
                None => {
                    if sub.shape.height() < pruned {
                        return Err(MerkleError::Tables(
                            "a coset is shorter than the levels pruned",
                        ));
                    }
                    if sub.shape.groups().skip(1).any(|(depth, _)| depth < pruned) {
                        return Err(MerkleError::Tables("a table joins below the levels kept"));
                    }
                    levels = sub.levels()[pruned..]
                        .iter()
                        .map(|level| vec![[0u8; 32]; level.len() << log_cosets])
                        .collect();
                    coset_shape = Some(sub.shape.clone());
                }
                Some(shape) if *shape != sub.shape => {
                    return Err(MerkleError::Tables("cosets of different shapes"));
                }
                Some(_) => {}
            }
            let run = bit_reverse(v, log_cosets);
            for (level, part) in levels.iter_mut().zip(&sub.levels()[pruned..]) {
                level[run * part.len()..(run + 1) * part.len()].copy_from_slice(part);
            }
        }
        while levels.last().is_some_and(|level| level.len() > 1) {
            let below = levels.last().expect("a level");
            levels.push(pair_nodes(kernels, hash, below));
        }
        let coset_shape = coset_shape.expect("at least one coset");
        let shape = MixedShape::new(
            coset_shape
                .tables
                .iter()
                .map(|t| TableShape {
                    log_height: t.log_height + log_cosets,
                    width: t.width,
                })
                .collect(),
        )?;
        let tree = MerkleTree::from_levels(levels)?;
        Ok(Self {
            shape,
            hash,
            pruned,
            tree,
        })
    }

    /// The tables committed.
    pub fn shape(&self) -> &MixedShape {
        &self.shape
    }

    /// The root digest.
    pub fn root(&self) -> Digest {
        self.tree.root()
    }

    /// The levels kept, after the joins: from depth [`pruned`](Self::pruned) (the tallest
    /// tables' leaves when it is 0) to the root.
    pub fn levels(&self) -> &[Vec<Digest>] {
        self.tree.levels()
    }

    /// The depth below which no level is kept.
    pub fn pruned(&self) -> usize {
        self.pruned
    }

    /// The batch opening of `positions` (strictly increasing rows of the tallest tables):
    /// the nodes a verifier cannot compute from the rows each position carries (see
    /// [`MixedShape::row_of`]), in the order of a plain tree's opening of their leaves. Where
    /// the tree keeps no level below depth p > 0, `block_leaves(b)` must give leaves
    /// b·2^p … (b + 1)·2^p − 1, the tallest tables' leaves (never called when p = 0).
    ///
    /// # Panics
    /// If `positions` are not strictly increasing rows of the tallest tables, or
    /// `block_leaves` gives other than 2^p leaves.
    pub fn open_batch(
        &self,
        positions: &[usize],
        block_leaves: impl Fn(usize) -> Vec<Digest>,
    ) -> Vec<Digest> {
        let height = self.shape.height();
        check_indices(height, positions).expect("valid positions");
        let leaves = leaves(height, positions);
        let kernels = Kernels::active();
        // The levels below `pruned` under each opened leaf's block, rebuilt.
        let mut below = std::collections::HashMap::new();
        let mut blocks: Vec<usize> = leaves.iter().map(|&l| l >> self.pruned).collect();
        blocks.dedup();
        for block in blocks.into_iter().filter(|_| self.pruned > 0) {
            let mut level = block_leaves(block);
            assert_eq!(
                level.len(),
                1 << self.pruned,
                "a block of 2^{} leaves",
                self.pruned
            );
            for depth in 0..self.pruned {
                let first = block << (self.pruned - depth);
                below.extend(
                    level
                        .iter()
                        .enumerate()
                        .map(|(i, &d)| ((depth, first + i), d)),
                );
                level = pair_nodes(kernels, self.hash, &level);
            }
            // Where no table joins at `pruned`, the rebuilt block's top is the node kept.
            let joined = self.shape.groups().any(|(depth, _)| depth == self.pruned);
            debug_assert!(
                joined || level == [self.tree.levels()[0][block]],
                "block {block}"
            );
        }
        batch_opening_nodes(height, &leaves)
            .into_iter()
            .map(|(depth, index)| match depth.checked_sub(self.pruned) {
                Some(kept) => self.tree.levels()[kept][index],
                None => below[&(depth, index)],
            })
            .collect()
    }
}

/// True when `nodes`, the batch opening of `positions` (strictly increasing), proves that
/// `rows` are the rows those positions carry in the tree of `shape` with root `root`: for
/// each position in turn, one row of each table ([`MixedShape::row_of`]), each as wide as its
/// table.
///
/// False as well when the positions are invalid, a count or width disagrees, two positions
/// carry different rows where they share one, nodes are left over, or a node is no digest
/// of `hash`.
pub fn verify_mixed(
    hash: MerkleHash,
    root: &Digest,
    shape: &MixedShape,
    positions: &[usize],
    rows: &[&[Felt]],
    nodes: &[Digest],
) -> bool {
    climb_mixed(hash, shape, positions, rows, nodes, |_, _, _| {}) == Some(*root)
}

/// Each position's authentication path in the tree of `shape` with root `root` (its
/// siblings from the tallest tables' leaf up, one a level, each a node of the tree, so
/// after any join), from the batch opening `nodes` of `rows` at `positions`, when
/// [`verify_mixed`] accepts them; `None` otherwise. The leaf a position sits at is br(p): the
/// path's bits are p's from the top.
pub fn mixed_paths(
    hash: MerkleHash,
    root: &Digest,
    shape: &MixedShape,
    positions: &[usize],
    rows: &[&[Felt]],
    nodes: &[Digest],
) -> Option<Vec<Vec<Digest>>> {
    let mut known = std::collections::HashMap::new();
    let top = climb_mixed(
        hash,
        shape,
        positions,
        rows,
        nodes,
        |depth, index, digest| {
            known.insert((depth, index), *digest);
        },
    );
    let height = shape.height();
    (top == Some(*root)).then(|| {
        positions
            .iter()
            .map(|&p| {
                let leaf = bit_reverse(p, height);
                (0..height)
                    .map(|depth| known[&(depth, (leaf >> depth) ^ 1)])
                    .collect()
            })
            .collect()
    })
}

/// The root the batch opening `nodes` of `rows` at `positions` leads to in a tree of
/// `shape`, calling `known(depth, index, digest)` for every node below it (`climb`'s);
/// `None` where [`verify_mixed`] is false for any root.
fn climb_mixed(
    hash: MerkleHash,
    shape: &MixedShape,
    positions: &[usize],
    rows: &[&[Felt]],
    nodes: &[Digest],
    known: impl FnMut(usize, usize, &Digest),
) -> Option<Digest> {
    let tables = shape.tables();
    let height = shape.height();
    if check_indices(height, positions).is_err()
        || rows.len() != positions.len() * tables.len()
        || rows
            .chunks(tables.len())
            .any(|carried| carried.iter().zip(tables).any(|(r, t)| r.len() != t.width))
    {
        return None;
    }
    let order = tree_order(height, positions);
    let mut leaves = Vec::with_capacity(positions.len());
    let mut joins = std::collections::HashMap::new();
    for (depth, group) in shape.groups() {
        // Every position's rows of the group, hashed together (SIMD lanes where the CPU has
        // them).
        let width: usize = tables[group.clone()].iter().map(|t| t.width).sum();
        let mut elements = Vec::with_capacity(order.len() * width);
        for &(_, k) in &order {
            for row in &rows[k * tables.len()..][group.clone()] {
                elements.extend_from_slice(row);
            }
        }
        let mut digests = vec![[0u8; 32]; order.len()];
        hash.rows(&elements, width, &mut digests);
        for (&(leaf, _), digest) in order.iter().zip(digests) {
            if depth == 0 {
                leaves.push(digest);
            } else if *joins.entry((depth, leaf >> depth)).or_insert(digest) != digest {
                return None;
            }
        }
    }
    let lift = |depth, index, node: Digest| match joins.get(&(depth, index)) {
        Some(leaf) => hash.node(&node, leaf),
        None => Some(node),
    };
    let at: Vec<usize> = order.iter().map(|&(leaf, _)| leaf).collect();
    climb(hash, height, &at, &leaves, nodes, known, lift)
}

/// The leaf each position sits at, with the position's index in `positions`, in leaf order.
fn tree_order(height: usize, positions: &[usize]) -> Vec<(usize, usize)> {
    let mut order: Vec<(usize, usize)> = positions
        .iter()
        .enumerate()
        .map(|(k, &p)| (bit_reverse(p, height), k))
        .collect();
    order.sort_unstable();
    order
}

/// The leaves `positions` sit at, in leaf order.
fn leaves(height: usize, positions: &[usize]) -> Vec<usize> {
    tree_order(height, positions)
        .into_iter()
        .map(|(leaf, _)| leaf)
        .collect()
}

/// `digests` with digest j moved to index br(j).
fn bit_reversed(digests: Vec<Digest>) -> Vec<Digest> {
    let log_n = digests.len().trailing_zeros() as usize;
    (0..digests.len())
        .map(|i| digests[bit_reverse(i, log_n)])
        .collect()
}

/// The leaf of each row shared by `tables` (of one height): the digest of their rows
/// concatenated in order.
fn group_digests(kernels: Kernels, hash: MerkleHash, tables: &[&RowBlocks]) -> Vec<Digest> {
    if let [table] = tables {
        return row_digests(kernels, hash, table);
    }
    let width: usize = tables.iter().map(|t| t.width()).sum();
    let mut digests = vec![[0u8; 32]; tables[0].height()];
    digests
        .par_chunks_mut(ROWS_PER_TASK)
        .enumerate()
        .for_each(|(task, out)| {
            let mut rows = vec![Felt::ZERO; out.len() * width];
            for (r, row) in rows.chunks_mut(width).enumerate() {
                let mut at = 0;
                for table in tables {
                    table.read_row(task * ROWS_PER_TASK + r, &mut row[at..at + table.width()]);
                    at += table.width();
                }
            }
            hash.rows_on(kernels, &rows, width, out);
        });
    digests
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of 2^`log_height` rows and `width` columns whose values name the table, row
    /// and column.
    fn table(id: u64, log_height: usize, width: usize) -> RowBlocks {
        let columns: Vec<Vec<Felt>> = (0..width as u64)
            .map(|c| {
                (0..1u64 << log_height)
                    .map(|r| Felt::new(id << 40 | r << 8 | c))
                    .collect()
            })
            .collect();
        RowBlocks::from_columns(&columns)
    }

    /// Heights 2^6 (two tables sharing a leaf), 2^4, 2^1 and 2^0 (two tables joining at the
    /// root).
    fn tables() -> Vec<RowBlocks> {
        [(6, 3), (6, 2), (4, 5), (1, 1), (0, 2), (0, 1)]
            .into_iter()
            .enumerate()
            .map(|(id, (h, w))| table(id as u64, h, w))
            .collect()
    }

    fn commit(hash: MerkleHash, tables: &[RowBlocks]) -> MixedTree {
        MixedTree::commit(hash, &tables.iter().collect::<Vec<_>>()).expect("tallest first")
    }

    /// The rows `positions` carry, position after position, table after table.
    fn carried(tree: &MixedTree, tables: &[RowBlocks], positions: &[usize]) -> Vec<Vec<Felt>> {
        positions
            .iter()
            .flat_map(|&p| {
                let shape = tree.shape();
                tables
                    .iter()
                    .enumerate()
                    .map(move |(t, table)| table.row(shape.row_of(t, p)))
            })
            .collect()
    }

    fn verify(hash: MerkleHash, tree: &MixedTree, positions: &[usize], rows: &[Vec<Felt>]) -> bool {
        let rows: Vec<&[Felt]> = rows.iter().map(Vec::as_slice).collect();
        let nodes = tree.open_batch(positions, |_| unreachable!());
        verify_mixed(hash, &tree.root(), tree.shape(), positions, &rows, &nodes)
    }

    /// The node at `depth` and `index` from the definition, top down: the leaf of the
    /// tallest rows at the bottom, and above it the node of the two children, then of that
    /// and the rows of every table as tall as the level is wide.
    fn oracle(hash: MerkleHash, tables: &[RowBlocks], depth: usize, index: usize) -> Digest {
        let top = tables[0].height().trailing_zeros() as usize;
        let width = 1usize << (top - depth);
        let rows: Vec<Felt> = tables
            .iter()
            .filter(|t| t.height() == width)
            .flat_map(|t| t.row(bit_reverse(index, top - depth)))
            .collect();
        if depth == 0 {
            return hash.row(&rows);
        }
        let below = |i| oracle(hash, tables, depth - 1, i);
        let node = hash.node(&below(2 * index), &below(2 * index + 1)).unwrap();
        if rows.is_empty() {
            node
        } else {
            hash.node(&node, &hash.row(&rows)).unwrap()
        }
    }

    /// Rows v, v + 2^`log_cosets`, … of `table`.
    fn coset_of(table: &RowBlocks, log_cosets: usize, v: usize) -> RowBlocks {
        let rows: Vec<Felt> = (v..table.height())
            .step_by(1 << log_cosets)
            .flat_map(|r| table.row(r))
            .collect();
        RowBlocks::from_row_vec(table.width(), rows)
    }

    #[test]
    fn a_tree_built_a_coset_at_a_time_is_the_whole_trees() {
        // One coset (the whole tables); two, down to a table of two rows; eight.
        let two = [
            table(1, 6, 3),
            table(2, 6, 2),
            table(3, 4, 5),
            table(4, 1, 1),
        ];
        let eight = [table(5, 5, 4), table(6, 3, 1)];
        let cases: [(&[RowBlocks], usize); 3] = [(&tables(), 0), (&two, 1), (&eight, 3)];
        for hash in MerkleHash::ALL {
            for (tables, log_cosets) in cases {
                let whole = commit(hash, tables);
                let positions = [0, 3, 5, (1 << whole.shape().height()) - 1];
                let opening = whole.open_batch(&positions, |_| unreachable!());
                // Pruned up to the lowest join.
                let (lowest, _) = whole.shape().groups().nth(1).expect("a join");
                for pruned in [0, 1, lowest] {
                    let cosets = MixedTree::commit_cosets(hash, log_cosets, pruned, |v| {
                        tables.iter().map(|t| coset_of(t, log_cosets, v)).collect()
                    })
                    .unwrap();
                    let at = format!("{hash}, 2^{log_cosets} cosets, pruned {pruned}");
                    assert_eq!(cosets.levels(), &whole.levels()[pruned..], "{at}");
                    assert_eq!(cosets.shape(), whole.shape(), "{at}");
                    let block = |b: usize| whole.levels()[0][b << pruned..][..1 << pruned].to_vec();
                    assert_eq!(cosets.open_batch(&positions, block), opening, "{at}");
                }
            }
        }
        // A table joining below the levels kept is refused.
        let joins_low = MixedTree::commit_cosets(MerkleHash::Keccak256, 1, 3, |v| {
            two.iter().map(|t| coset_of(t, 1, v)).collect()
        });
        assert!(matches!(joins_low, Err(MerkleError::Tables(_))));
        // As is a coset less tall than the levels pruned.
        let short = MixedTree::commit_cosets(MerkleHash::Keccak256, 1, 3, |v| {
            vec![coset_of(&table(1, 3, 1), 1, v)]
        });
        assert!(matches!(short, Err(MerkleError::Tables(_))));
        // A coset of another shape is refused.
        let odd =
            MixedTree::commit_cosets(MerkleHash::Keccak256, 1, 0, |v| vec![table(1, 2 + v, 1)]);
        assert!(matches!(odd, Err(MerkleError::Tables(_))));
    }

    #[test]
    fn roots_match_the_definition() {
        for hash in MerkleHash::ALL {
            let tables = tables();
            let tree = commit(hash, &tables);
            assert_eq!(tree.root(), oracle(hash, &tables, 6, 0), "{hash}");
            for (depth, level) in tree.levels().iter().enumerate() {
                for (index, node) in level.iter().enumerate() {
                    assert_eq!(*node, oracle(hash, &tables, depth, index), "{hash}");
                }
            }
            // By hand: rows 0 and 2 of a 4-row table pair up, and join row 0 of a 2-row one.
            let (a, b) = (table(7, 2, 2), table(8, 1, 3));
            let tree = commit(hash, &[a.clone(), b.clone()]);
            let leaf = |t: &RowBlocks, r| hash.row(&t.row(r));
            let node = |l: &Digest, r: &Digest| hash.node(l, r).unwrap();
            let left = node(&node(&leaf(&a, 0), &leaf(&a, 2)), &leaf(&b, 0));
            let right = node(&node(&leaf(&a, 1), &leaf(&a, 3)), &leaf(&b, 1));
            assert_eq!(tree.root(), node(&left, &right), "{hash}");
        }
    }

    #[test]
    fn one_table_is_a_plain_tree_of_its_rows_in_bit_reversed_order() {
        for hash in MerkleHash::ALL {
            let t = table(3, 5, 4);
            let leaves = (0..32).map(|i| hash.row(&t.row(bit_reverse(i, 5))));
            let plain = MerkleTree::from_leaves(hash, leaves.collect());
            let tree = commit(hash, std::slice::from_ref(&t));
            assert_eq!(tree.levels(), plain.levels(), "{hash}");
            // Position p sits at leaf br(p): its opening is the plain tree's there.
            assert_eq!(
                tree.open_batch(&[1, 6], |_| unreachable!()),
                plain.open_batch(&[12, 16])
            );
        }
    }

    #[test]
    fn every_path_builds_the_same_tree() {
        for hash in MerkleHash::ALL {
            let tables = tables();
            let refs: Vec<&RowBlocks> = tables.iter().collect();
            let scalar = MixedTree::commit_on(Kernels::Scalar, hash, &refs).unwrap();
            for kernels in Kernels::supported() {
                let tree = MixedTree::commit_on(kernels, hash, &refs).unwrap();
                assert_eq!(tree.levels(), scalar.levels(), "{hash} {}", kernels.path());
            }
        }
    }

    #[test]
    fn honest_openings_verify() {
        for hash in MerkleHash::ALL {
            let tables = tables();
            let tree = commit(hash, &tables);
            for positions in [
                vec![0],
                vec![63],
                vec![5, 21],
                vec![1, 2, 3, 17, 33, 49],
                (0..64).collect(),
            ] {
                let rows = carried(&tree, &tables, &positions);
                assert!(
                    verify(hash, &tree, &positions, &rows),
                    "{hash} {positions:?}"
                );
                assert_eq!(
                    tree.shape().opening_len(&positions),
                    tree.open_batch(&positions, |_| unreachable!()).len()
                );
            }
        }
    }

    /// [`tables`]' tree, positions whose rows are shared in several ways (5 and 21 share
    /// their rows of every shorter table; 17 and 33 those of heights 2^4 and below), the
    /// rows they carry and their batch opening.
    fn opened(hash: MerkleHash) -> (Vec<RowBlocks>, MixedTree, [usize; 6], Vec<Vec<Felt>>) {
        let tables = tables();
        let tree = commit(hash, &tables);
        let positions = [2, 5, 17, 21, 33, 60];
        let rows = carried(&tree, &tables, &positions);
        (tables, tree, positions, rows)
    }

    #[test]
    fn each_positions_path_is_its_siblings_in_the_tree() {
        for hash in MerkleHash::ALL {
            let (tables, tree, positions, rows) = opened(hash);
            let rows: Vec<&[Felt]> = rows.iter().map(Vec::as_slice).collect();
            let nodes = tree.open_batch(&positions, |_| unreachable!());
            let paths = mixed_paths(hash, &tree.root(), tree.shape(), &positions, &rows, &nodes)
                .expect("an honest opening");
            for (&p, path) in positions.iter().zip(&paths) {
                let leaf = bit_reverse(p, 6);
                let siblings: Vec<Digest> = (0..6)
                    .map(|depth| oracle(hash, &tables, depth, (leaf >> depth) ^ 1))
                    .collect();
                assert_eq!(*path, siblings, "{hash} position {p}");
            }
            let mut changed = nodes.clone();
            changed[0][0] ^= 1;
            let other = mixed_paths(
                hash,
                &tree.root(),
                tree.shape(),
                &positions,
                &rows,
                &changed,
            );
            assert_eq!(other, None, "{hash}");
        }
    }

    #[test]
    fn every_tampered_row_or_node_is_refused() {
        for hash in MerkleHash::ALL {
            let (_, tree, positions, rows) = opened(hash);
            let nodes = tree.open_batch(&positions, |_| unreachable!());
            let check = |rows: &[Vec<Felt>], nodes: &[Digest]| {
                let rows: Vec<&[Felt]> = rows.iter().map(Vec::as_slice).collect();
                verify_mixed(hash, &tree.root(), tree.shape(), &positions, &rows, nodes)
            };
            assert!(check(&rows, &nodes));
            for r in 0..rows.len() {
                for c in 0..rows[r].len() {
                    let mut bad = rows.clone();
                    bad[r][c] += Felt::ONE;
                    assert!(!check(&bad, &nodes), "{hash}: row {r}, element {c}");
                }
            }
            for k in 0..nodes.len() {
                let mut bad = nodes.clone();
                bad[k][5] ^= 1;
                assert!(!check(&rows, &bad), "{hash}: node {k}");
            }
            assert!(!check(&rows, &nodes[1..]));
            assert!(!check(&rows, &[nodes.clone(), vec![nodes[0]]].concat()));
        }
    }

    #[test]
    fn a_row_at_the_wrong_index_is_refused() {
        let hash = MerkleHash::Poseidon2;
        let tables = tables();
        let tree = commit(hash, &tables);
        let positions = [37];
        let mut rows = carried(&tree, &tables, &positions);
        assert!(verify(hash, &tree, &positions, &rows));
        // Table 2 (2^4 rows) at 37 >> 2 = 9 instead of 37 mod 16 = 5.
        rows[2] = tables[2].row(9);
        assert!(!verify(hash, &tree, &positions, &rows));
    }

    #[test]
    fn bad_shapes_counts_and_widths_are_refused() {
        let hash = MerkleHash::Keccak256;
        let (tall, short) = (table(0, 3, 2), table(1, 2, 2));
        assert!(MixedTree::commit(hash, &[&short, &tall]).is_err());
        assert!(MixedTree::commit(hash, &[]).is_err());
        let odd = RowBlocks::from_rows(1, &[Felt::ONE; 3]);
        assert!(MixedTree::commit(hash, &[&tall, &odd]).is_err());

        let tables = tables();
        let tree = commit(hash, &tables);
        let positions = [4, 9];
        let rows = carried(&tree, &tables, &positions);
        assert!(verify(hash, &tree, &positions, &rows));
        assert!(!verify(hash, &tree, &positions, &rows[1..]));
        let mut wide = rows.clone();
        wide[0].push(Felt::ZERO);
        assert!(!verify(hash, &tree, &positions, &wide));
        // Elements moved between two tables that share a leaf: the same concatenation.
        let mut moved = rows.clone();
        let element = moved[0].pop().unwrap();
        moved[1].insert(0, element);
        assert!(!verify(hash, &tree, &positions, &moved));
        let flat: Vec<&[Felt]> = rows.iter().map(Vec::as_slice).collect();
        let nodes = tree.open_batch(&positions, |_| unreachable!());
        let root = tree.root();
        let shape = tree.shape();
        assert!(!verify_mixed(hash, &root, shape, &[9, 4], &flat, &nodes));
        assert!(!verify_mixed(hash, &root, shape, &[4, 64], &flat, &nodes));
        let other = MixedShape::new(vec![TableShape {
            log_height: 6,
            width: 5,
        }])
        .unwrap();
        assert!(!verify_mixed(
            hash,
            &root,
            &other,
            &positions,
            &flat[..2],
            &nodes
        ));
        assert!(MixedShape::new(vec![]).is_err());
        let increasing = [1, 2].map(|log_height| TableShape {
            log_height,
            width: 1,
        });
        assert!(MixedShape::new(increasing.to_vec()).is_err());
    }
}
