//! The DEEP value at each queried position, beside the openings it is computed from: the
//! [`OpeningsAir`] of a child's trace and quotient trees, with columns that combine each
//! position's opened rows into
//!
//! f(x) = (A + B − a)/(x − z) + γ^(W+C)·(A − b)/(x − zω), A = Σ_k γ^k·T_k, B = Σ_c γ^(W+c)·Q_c
//!
//! the function FRI tests (`ballast_stark`'s DEEP composition): the value the next rows of a
//! verifier AIR, FRI's folds, start from. A segment's trees are plain, one height. A tables
//! proof's are mixed ([`DeepAir::mixed`]): each height has its function, that of one table
//! whose columns are the height's tables' concatenated (the row that joins the trees' paths
//! there), at its own point x_t = g·ζ_t^(p mod M_t), with its own ω, a and b.
//!
//! The sums ride on the leaf rows: a leaf row's 8 rate cells are 8 consecutive values of the
//! row, so the row adds `power·Σ_i γ^i·cell_i` to an accumulator, `power` stepping by γ^8
//! down the leaf. The accumulator starts at 0 on a trace leaf's first row with the power 1,
//! and on a quotient leaf's at A (that height's trace sum, kept in its own columns from the
//! row after its trace leaf) with the power γ^W: it is A + B on the row after the quotient's
//! leaf, that height's DEEP row, where f is bound. The two divisions are checked as products:
//! inverse columns with `inverse·(x − z) = 1`.
//!
//! The point is a column computed from the trace tree's path bits (the openings' bit
//! columns): SHIFT on the row before the path, times ζ^(2^e) on each path row whose bit is 1
//! (e the bit's place in p: the level in a plain tree, from the top in a mixed one), then
//! carried: x = g·ζ^p. A shorter height's point is x_t = g·(ζ^p)^(2^d), d levels above the
//! tallest leaves, where its rows join the paths, so on the quotient's path the point is
//! squared (divided by g) on each row up to the last DEEP row: it is x_t on that height's
//! join. γ^W, γ^(W+C) and zω are computed in the constraints from γ and z; the claims (γ,
//! z, then each height's a and b) are public inputs, so for now the layer's verifier
//! supplies them from the child's transcript (`ballast_stark::replay`).

use std::borrow::Cow;
use std::ops::Range;

use ballast_air::{Air, ConstraintBuilder, Frame, PeriodicColumn};
use ballast_field::{Ext3, Felt, RowBlocks, TWO_ADICITY};
use ballast_merkle::MixedShape;
use ballast_ntt::LdePlan;
use ballast_poseidon2::{FeltDigest, RATE};
use ballast_stark::DeepCoefficients;

use crate::ext::{add, ext, pow, scale, sub};
use crate::openings::{
    BIT, INPUT, LEAF_NEXT, Opened, OpeningsAir, OpeningsError, Tree, TreeShape,
    WIDTH as OPENINGS_WIDTH, expect_len,
};

/// The columns after the openings' (each an extension element, 3 base coordinates, unless
/// said), counted from the openings' last.
mod col {
    /// The sum so far of the leaf rows above this one, since its leaf's first row.
    pub(super) const SUM: usize = 0;
    /// The power of γ this leaf row's first cell takes (bound on leaf rows only).
    pub(super) const POWER: usize = SUM + 3;
    /// A: the tallest height's trace sum, the same all down the block.
    pub(super) const TRACE_SUM: usize = POWER + 3;
    /// 1/(x − z), bound on each DEEP row (the row after a height's quotient leaf) only, as
    /// are the next two.
    pub(super) const INVERSE_Z: usize = TRACE_SUM + 3;
    /// 1/(x − zω).
    pub(super) const INVERSE_ZW: usize = INVERSE_Z + 3;
    /// x, the position's point (a base value): SHIFT·ζ^(p's bits so far) on the trace
    /// path's rows, then squared over SHIFT on each quotient path row below the last DEEP
    /// row; bound from the row before the trace's path to the last DEEP row.
    pub(super) const POINT: usize = INVERSE_ZW + 3;
    /// f(x) of the tallest height: read it on its DEEP row; elsewhere it is free (FRI's
    /// rows carry and fold it).
    pub(super) const VALUE: usize = POINT + 1;
    /// Columns of one height.
    pub(super) const OWN: usize = VALUE + 3;
    /// Columns a shorter height adds after those: its trace sum (carried down the block)
    /// and its f(x_t) (bound on its DEEP row).
    pub(super) const SHORTER: usize = 3 + 3;
}

/// Columns of the table over a segment's trees (156); a tables proof's has the openings'
/// columns of mixed trees, and more a shorter height.
pub const WIDTH: usize = OPENINGS_WIDTH + col::OWN;

/// The claims the DEEP functions combine: γ, the out-of-domain point z, and each height's
/// claimed sums.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeepClaims {
    /// γ.
    pub gamma: Ext3,
    /// z.
    pub z: Ext3,
    /// Each height's sums, tallest first: one for a segment.
    pub sums: Vec<ClaimedSums>,
}

impl DeepClaims {
    /// The claims of a child's DEEP functions, each height's (tallest first; one for a
    /// segment), at one z, with `gamma`.
    ///
    /// # Panics
    /// If `deeps` is empty.
    pub fn of(gamma: Ext3, deeps: &[DeepCoefficients]) -> Self {
        Self {
            gamma,
            z: deeps[0].z,
            sums: (deeps.iter())
                .map(|d| ClaimedSums {
                    at_z: d.at_z,
                    at_zw: d.at_zw,
                })
                .collect(),
        }
    }
}

/// One height's claimed sums: a = A(z) + B(z) and b = A(zω).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimedSums {
    /// a: the trace's and the quotient's claimed sums at z.
    pub at_z: Ext3,
    /// b: the trace's claimed sum at zω.
    pub at_zw: Ext3,
}

/// One height's DEEP function: its trace's and quotient's columns (its tables',
/// concatenated) and the child's rows there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Height {
    /// Its tables: one for a segment.
    tables: usize,
    trace_width: usize,
    quotient_width: usize,
    log_rows: usize,
}

/// A child's trace and quotient openings at its query positions and the DEEP value of each
/// height at each: an [`Air`] of [`WIDTH`] columns over a segment's trees (over a tables
/// proof's, the mixed openings' 4 more, and 6 more a shorter height) whose public inputs are the two roots (then those of the trees a query AIR adds) and the
/// positions' digest, then γ, z and each height's a and b (3 coordinates each).
#[derive(Clone, Debug)]
pub struct DeepAir {
    openings: OpeningsAir,
    /// Tallest first: one for a segment.
    heights: Vec<Height>,
}

/// Where a block's rows are, for the DEEP columns: one entry a height, tallest first.
struct Schedule {
    trace_leaves: Vec<Range<usize>>,
    quotient_leaves: Vec<Range<usize>>,
    /// The trace's path rows, lowest first.
    trace_path: Vec<usize>,
    /// The quotient's path rows, lowest first.
    quotient_path: Vec<usize>,
}

impl Schedule {
    /// The row after a height's trace leaf, where its trace sum is kept.
    fn keep_row(&self, height: usize) -> usize {
        self.trace_leaves[height].end
    }

    /// The row after a height's quotient leaf, where its value is bound.
    fn deep_row(&self, height: usize) -> usize {
        self.quotient_leaves[height].end
    }

    /// The row before the trace's path, where the point starts at SHIFT.
    fn point_start(&self) -> usize {
        self.trace_leaves[0].end - 1
    }

    /// The last DEEP row: the point is bound up to it.
    fn point_end(&self) -> usize {
        self.quotient_leaves.last().expect("a height").end
    }

    /// Whether block row `r` is a leaf row of either tree.
    fn absorbs(&self, r: usize) -> bool {
        self.leaves().any(|leaf| leaf.contains(&r))
    }

    /// Whether block row `r` starts a leaf of either tree.
    fn starts_leaf(&self, r: usize) -> bool {
        self.leaves().any(|leaf| leaf.start == r)
    }

    fn leaves(&self) -> impl Iterator<Item = &Range<usize>> {
        self.trace_leaves.iter().chain(&self.quotient_leaves)
    }

    /// Whether the point squares on row `r`: a quotient path row below the last DEEP row.
    fn squares(&self, r: usize) -> bool {
        r < self.point_end() && self.quotient_path.contains(&r)
    }
}

impl DeepAir {
    /// The AIR of a child of `log_rows` rows, `trace_width` trace columns and
    /// `quotient_width` quotient columns, whose LDE has 2^`log_lde` points, queried at
    /// `positions`.
    ///
    /// # Errors
    /// What [`OpeningsAir::new`] refuses, an LDE no taller than the child, or one taller
    /// than the field's two-adic subgroup.
    pub fn new(
        trace_width: usize,
        quotient_width: usize,
        log_rows: usize,
        log_lde: usize,
        positions: &[usize],
    ) -> Result<Self, OpeningsError> {
        Self::with_trees(
            trace_width,
            quotient_width,
            log_rows,
            log_lde,
            positions,
            &[],
        )
    }

    /// [`new`](Self::new), its openings followed by those of the trees `more`.
    pub(crate) fn with_trees(
        trace_width: usize,
        quotient_width: usize,
        log_rows: usize,
        log_lde: usize,
        positions: &[usize],
        more: &[TreeShape],
    ) -> Result<Self, OpeningsError> {
        check_lde(log_rows, log_lde)?;
        let tree = |row_width| {
            Tree::plain(TreeShape {
                row_width,
                height: log_lde,
            })
        };
        let height = Height {
            tables: 1,
            trace_width,
            quotient_width,
            log_rows,
        };
        let trees = [tree(trace_width), tree(quotient_width)];
        Self::build(trees, vec![height], positions, more)
    }

    /// The AIR of a tables proof's trace and quotient trees (`ballast_merkle::MixedTree`s
    /// of `trace` and `quotient`, its tables' LDEs at blowup 2^`log_blowup`), queried at
    /// `positions`: one DEEP value a height.
    ///
    /// # Errors
    /// What [`OpeningsAir::with_trees`] refuses, quotient tables of other heights than the
    /// trace's, no blowup, a table's LDE below the blowup, or an LDE taller than the field's
    /// two-adic subgroup.
    pub fn mixed(
        trace: &MixedShape,
        quotient: &MixedShape,
        log_blowup: usize,
        positions: &[usize],
    ) -> Result<Self, OpeningsError> {
        Self::mixed_with_trees(trace, quotient, log_blowup, positions, &[])
    }

    /// [`mixed`](Self::mixed), its openings followed by those of the trees `more`.
    pub(crate) fn mixed_with_trees(
        trace: &MixedShape,
        quotient: &MixedShape,
        log_blowup: usize,
        positions: &[usize],
        more: &[TreeShape],
    ) -> Result<Self, OpeningsError> {
        let heights_of = |shape: &MixedShape| -> Vec<usize> {
            shape.tables().iter().map(|t| t.log_height).collect()
        };
        if heights_of(trace) != heights_of(quotient) {
            return Err(OpeningsError::OtherTables { tree: 1 });
        }
        let trees = [Tree::mixed(trace), Tree::mixed(quotient)];
        // Each height's row widths: its own leaf's, then each join's.
        let widths = |tree: &Tree| -> Vec<usize> {
            let joins = tree.joins.iter().map(|j| j.row_width);
            std::iter::once(tree.shape.row_width).chain(joins).collect()
        };
        let log_ldes = std::iter::once(trace.height())
            .chain(trees[0].joins.iter().map(|j| trace.height() - j.depth));
        let heights = (widths(&trees[0]).into_iter().zip(widths(&trees[1])))
            .zip(log_ldes)
            .map(|((trace_width, quotient_width), log_lde)| {
                let log_rows =
                    (log_lde.checked_sub(log_blowup)).ok_or(OpeningsError::BelowBlowup {
                        log_lde,
                        log_blowup,
                    })?;
                check_lde(log_rows, log_lde)?;
                let tables = trace.tables().iter();
                Ok(Height {
                    tables: tables.filter(|t| t.log_height == log_lde).count(),
                    trace_width,
                    quotient_width,
                    log_rows,
                })
            })
            .collect::<Result<_, OpeningsError>>()?;
        Self::build(trees, heights, positions, more)
    }

    /// The AIR of the trace's and quotient's `trees`, then `more` (a query AIR's lower
    /// trees, which it binds: their openings alone would not be), with the DEEP functions of
    /// `heights`.
    fn build(
        trees: [Tree; 2],
        heights: Vec<Height>,
        positions: &[usize],
        more: &[TreeShape],
    ) -> Result<Self, OpeningsError> {
        let mut trees = trees.to_vec();
        trees.extend(more.iter().map(|&shape| Tree::plain(shape)));
        Ok(Self {
            openings: if more.is_empty() {
                OpeningsAir::with_trees(&trees, positions)?
            } else {
                OpeningsAir::with_lower_trees(&trees, positions)?
            },
            heights,
        })
    }

    /// The openings this AIR checks: [`OpeningsAir::open`] (or
    /// [`open_mixed`](OpeningsAir::open_mixed)) builds their witness (tree 0 the trace's,
    /// tree 1 the quotient's). With a query AIR's lower trees they are sound only inside it,
    /// which binds those trees' path ends: prove the query AIR, not them.
    pub fn openings(&self) -> &OpeningsAir {
        &self.openings
    }

    /// The public inputs: the trace's and the quotient's roots (then any more trees'), the
    /// positions' digest, then the claims.
    ///
    /// # Errors
    /// Another count of roots than the AIR's trees, or of sums than its heights.
    pub fn public_inputs(
        &self,
        roots: &[FeltDigest],
        claims: &DeepClaims,
    ) -> Result<Vec<Felt>, OpeningsError> {
        expect_len("roots", self.openings.trees().len(), roots.len())?;
        expect_len("claimed sums", self.heights.len(), claims.sums.len())?;
        let mut inputs = self.openings.public_inputs(roots);
        let sums = claims.sums.iter().flat_map(|s| [s.at_z, s.at_zw]);
        for value in [claims.gamma, claims.z].into_iter().chain(sums) {
            inputs.extend(value.coeffs());
        }
        Ok(inputs)
    }

    /// The trace: the openings' (`opened`, the trace's then the quotient's), with the sums,
    /// powers, inverses and DEEP values of each block.
    ///
    /// # Errors
    /// Openings of another count or size than the AIR's, another count of sums than its
    /// heights, or a z (or zω) on the LDE's points, which no child's transcript draws.
    pub fn trace(
        &self,
        opened: &[Opened],
        claims: &DeepClaims,
    ) -> Result<RowBlocks, OpeningsError> {
        expect_len("claimed sums", self.heights.len(), claims.sums.len())?;
        let openings = self.openings.trace(opened)?;
        let rows = openings.height();
        let block_rows = self.openings.block_rows;
        let schedule = self.schedule();
        let gamma_powers = claims.gamma.powers(RATE + 1);
        let absorbing: Vec<bool> = (0..block_rows).map(|r| schedule.absorbs(r)).collect();
        let [start, moves, step, squares] = self.point_rules(&schedule);
        let width = self.width();
        let shift_inverse = LdePlan::SHIFT.inverse();
        // Each height's quotient leaf's first power γ^W, next-row weight γ^(W+C), and zω.
        let constants: Vec<(Ext3, Ext3, Ext3)> = (self.heights.iter())
            .map(|h| {
                let gamma = claims.gamma;
                (
                    gamma.pow(h.trace_width as u64),
                    gamma.pow((h.trace_width + h.quotient_width) as u64),
                    claims.z * Felt::two_adic_root(h.log_rows),
                )
            })
            .collect();
        let mut table = Vec::with_capacity(rows * width);
        for block in 0..rows / block_rows {
            let first = block * block_rows;
            // The point as the path's bits build it, then squared up the quotient's path.
            let mut points = vec![Felt::ZERO; block_rows];
            for r in 0..block_rows {
                if start.values[r] == Felt::ONE {
                    points[r] = LdePlan::SHIFT;
                }
                if r + 1 < block_rows && moves.values[r] == Felt::ONE {
                    let bit = openings.row(first + r + 1)[BIT];
                    points[r + 1] = points[r] * (Felt::ONE + bit * step.values[r]);
                } else if r + 1 < block_rows && squares.values[r] == Felt::ONE {
                    points[r + 1] = points[r].square() * shift_inverse;
                }
            }
            // The sums before each row and each leaf row's power, height by height; each
            // height's trace sum, inverses and value.
            let mut sums = vec![Ext3::ZERO; block_rows];
            let mut powers = vec![Ext3::ZERO; block_rows];
            let mut kept = vec![Ext3::ZERO; self.heights.len()];
            let mut deep_rows: Vec<Option<(Ext3, Ext3)>> = vec![None; block_rows];
            let mut values = vec![Ext3::ZERO; self.heights.len()];
            let combined = |r: usize| {
                let cells = openings.row(first + r);
                (0..RATE).fold(Ext3::ZERO, |acc, i| {
                    acc + gamma_powers[i] * cells[INPUT + i]
                })
            };
            // Each leaf's sums before its rows and after its last, and its powers.
            let mut after = vec![None; block_rows + 1];
            let mut leaf =
                |sums: &mut [Ext3], powers: &mut [Ext3], rows: Range<usize>, sum, power| {
                    let (mut sum, mut power) = (sum, power);
                    for r in rows.clone() {
                        sums[r] = sum;
                        powers[r] = power;
                        sum += power * combined(r);
                        power *= gamma_powers[RATE];
                    }
                    after[rows.end] = Some(sum);
                    sum
                };
            for (t, &(quotient_power, next_row, zw)) in constants.iter().enumerate() {
                let trace_leaf = schedule.trace_leaves[t].clone();
                kept[t] = leaf(&mut sums, &mut powers, trace_leaf, Ext3::ZERO, Ext3::ONE);
                let quotient_leaf = schedule.quotient_leaves[t].clone();
                let both = leaf(
                    &mut sums,
                    &mut powers,
                    quotient_leaf,
                    kept[t],
                    quotient_power,
                );
                let row = schedule.deep_row(t);
                let x = Ext3::from(points[row]);
                let (Some(inverse_z), Some(inverse_zw)) =
                    ((x - claims.z).try_inverse(), (x - zw).try_inverse())
                else {
                    return Err(OpeningsError::OnTheDomain);
                };
                let ClaimedSums { at_z, at_zw } = claims.sums[t];
                let value = (both - at_z) * inverse_z + next_row * (kept[t] - at_zw) * inverse_zw;
                deep_rows[row] = Some((inverse_z, inverse_zw));
                values[t] = value;
            }
            // Each leaf's sum carried on over the rows after it, to the next leaf.
            let mut sum = Ext3::ZERO;
            for r in 0..block_rows {
                if let Some(total) = after[r] {
                    sum = total;
                }
                if !absorbing[r] {
                    sums[r] = sum;
                }
            }
            for r in 0..block_rows {
                table.extend(openings.row(first + r));
                let (inverse_z, inverse_zw) = deep_rows[r].unwrap_or((Ext3::ZERO, Ext3::ZERO));
                for v in [sums[r], powers[r], kept[0], inverse_z, inverse_zw] {
                    table.extend(v.coeffs());
                }
                table.push(points[r]);
                table.extend(values[0].coeffs());
                for t in 1..self.heights.len() {
                    table.extend(kept[t].coeffs());
                    table.extend(values[t].coeffs());
                }
            }
        }
        Ok(RowBlocks::from_row_vec(width, table))
    }

    /// Where the trees' leaves and paths lie in a block.
    fn schedule(&self) -> Schedule {
        let [trace, quotient] = [0, 1].map(|tree| self.openings.tree_rows(tree));
        Schedule {
            trace_leaves: trace.leaves,
            quotient_leaves: quotient.leaves,
            trace_path: trace.path,
            quotient_path: quotient.path,
        }
    }

    /// The point's periodic columns: its start, the rows it moves on (to the next row,
    /// times the step there where the next row's bit is 1), the steps (ζ^(2^e) − 1 on the
    /// row before the trace path's row taking p's bit e), and the rows it squares on.
    fn point_rules(&self, schedule: &Schedule) -> [PeriodicColumn; 4] {
        let block_rows = self.openings.block_rows;
        let trace = &self.openings.trees()[0];
        let height = trace.shape.height;
        let zeta = Felt::two_adic_root(height);
        let mut step = vec![Felt::ZERO; block_rows];
        for (level, &row) in schedule.trace_path.iter().enumerate() {
            let place = if trace.reversed {
                height - 1 - level
            } else {
                level
            };
            step[row - 1] = zeta.pow(1 << place) - Felt::ONE;
        }
        let start = schedule.point_start();
        let end = schedule.point_end();
        [
            self.block_column(|r| r == start),
            self.block_column(|r| (start..end).contains(&r) && !schedule.squares(r)),
            PeriodicColumn { values: step },
            self.block_column(|r| schedule.squares(r)),
        ]
    }

    /// The block rows where each height's DEEP value is bound, tallest first.
    pub fn deep_rows(&self) -> Vec<usize> {
        let schedule = self.schedule();
        (0..self.heights.len())
            .map(|t| schedule.deep_row(t))
            .collect()
    }

    /// The column of height `t`'s DEEP value (bound on its DEEP row), tallest first.
    pub fn value_column(&self, t: usize) -> usize {
        self.openings.width() + Self::height_columns(t).1
    }

    /// The column of the position's point.
    pub(crate) fn point_column(&self) -> usize {
        self.openings.width() + col::POINT
    }

    /// Each height's tables and log2 of its rows, tallest first.
    pub(crate) fn heights(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.heights.iter().map(|h| (h.tables, h.log_rows))
    }

    /// Where the claims (γ, z, each height's a and b) start in the public inputs: after the
    /// openings'.
    pub(crate) fn claims(&self) -> usize {
        self.openings.num_public_inputs()
    }

    /// How many periodic columns [`periodic_columns`](Air::periodic_columns) gives.
    pub(crate) fn periodic_columns_len(&self) -> usize {
        self.openings.periodic_columns_len() + PERIODIC + PER_HEIGHT * self.heights.len()
    }

    /// A column of one block's period, 1 on the rows `on` picks.
    fn block_column(&self, on: impl Fn(usize) -> bool) -> PeriodicColumn {
        self.openings.block_column(|r| u64::from(on(r)))
    }

    /// Where height `t`'s trace sum and value are, after the openings' columns.
    fn height_columns(t: usize) -> (usize, usize) {
        match t {
            0 => (col::TRACE_SUM, col::VALUE),
            _ => {
                let at = col::OWN + col::SHORTER * (t - 1);
                (at, at + 3)
            }
        }
    }
}

/// Refuses an LDE no taller than the child's rows, or taller than the field's two-adic
/// subgroup.
fn check_lde(log_rows: usize, log_lde: usize) -> Result<(), OpeningsError> {
    if log_lde <= log_rows {
        return Err(OpeningsError::LdeTooShort { log_rows, log_lde });
    }
    if log_lde > TWO_ADICITY {
        return Err(OpeningsError::LdeTooTall { log_lde });
    }
    Ok(())
}

// The periodic columns after the openings', in `periodic_columns`'s order: those of the
// block, then the point's, then one of each kind a height.
/// A trace leaf's first row: the sum starts at 0, the power at 1.
const TRACE_START: usize = 0;
/// Rows before another of the block.
const CARRY: usize = 1;
/// Rows whose sum goes on to the next row: all but the last and those before a leaf.
const SUM_CARRY: usize = 2;
const ABSORB: usize = 3;
/// The row before the trace's path, where the point starts at SHIFT.
const POINT_START: usize = 4;
/// Rows from there to the last DEEP row, but those where it squares: the point goes on to
/// the next row.
const POINT_MOVES: usize = 5;
/// ζ^(2^e) − 1 on the row before the trace path's row that takes p's bit e.
const POINT_STEP: usize = 6;
/// The quotient's path rows below the last DEEP row: the next row's point is this one's
/// squared, over SHIFT.
const POINT_SQUARES: usize = 7;
const PERIODIC: usize = POINT_SQUARES + 1;
// A height's, after those: its quotient leaf's first row (the sum starts at its trace
// sum, the power at γ^W), the row after its trace leaf (the trace sum kept), its DEEP row.
const QUOTIENT_START: usize = 0;
const KEEP_TRACE_SUM: usize = 1;
const DEEP_ROW: usize = 2;
const PER_HEIGHT: usize = DEEP_ROW + 1;

/// Each claim's elements in the public inputs: 3 coordinates.
const CLAIM_LEN: usize = 3;

impl Air for DeepAir {
    fn id(&self) -> &str {
        "ballast/deep-values"
    }

    fn width(&self) -> usize {
        self.openings.width() + col::OWN + col::SHORTER * (self.heights.len() - 1)
    }

    fn log_rows(&self) -> usize {
        self.openings.log_rows()
    }

    fn num_public_inputs(&self) -> usize {
        self.claims() + CLAIM_LEN * (2 + 2 * self.heights.len())
    }

    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        let schedule = self.schedule();
        let block_rows = self.openings.block_rows;
        let mut columns = self.openings.periodic_columns().into_owned();
        columns.extend([
            self.block_column(|r| schedule.trace_leaves.iter().any(|l| l.start == r)),
            self.block_column(|r| r + 1 < block_rows),
            self.block_column(|r| r + 1 < block_rows && !schedule.starts_leaf(r + 1)),
            self.block_column(|r| schedule.absorbs(r)),
        ]);
        columns.extend(self.point_rules(&schedule));
        for t in 0..self.heights.len() {
            columns.extend([
                self.block_column(|r| r == schedule.quotient_leaves[t].start),
                self.block_column(|r| r == schedule.keep_row(t)),
                self.block_column(|r| r == schedule.deep_row(t)),
            ]);
        }
        columns.into()
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let own = self.openings.periodic_columns_len();
        let claims = self.claims();
        let o = self.openings.width();
        let inner = Frame {
            current: &f.current[..o],
            next: &f.next[..o],
            periodic: &f.periodic[..own],
            public_inputs: &f.public_inputs[..claims],
        };
        self.openings.eval(&inner, b);

        // This AIR's columns, from the openings' last on.
        let (cur, next, p) = (&f.current[o..], &f.next[o..], &f.periodic[own..]);
        let zero = B::Expr::from(Felt::ZERO);
        let one = [B::Expr::from(Felt::ONE), zero, zero];
        let public = |k: usize| ext(f.public_inputs, claims + CLAIM_LEN * k);
        let (gamma, z) = (public(0), public(1));

        // The leaf row's cells, combined with γ^0..γ^7.
        let mut gamma_power = one;
        let mut combined = [zero; 3];
        for i in 0..RATE {
            combined = add(combined, scale(gamma_power, f.current[INPUT + i]));
            gamma_power = Ext3::mul_over(gamma_power, gamma);
        }
        let gamma_rate = gamma_power;
        let (sum, power) = (ext(cur, col::SUM), ext(cur, col::POWER));
        let step = Ext3::mul_over(power, combined);
        let stepped_power = Ext3::mul_over(power, gamma_rate);
        for c in 0..3 {
            b.every_row(p[TRACE_START] * sum[c]);
            b.every_row(p[TRACE_START] * (power[c] - one[c]));
            b.transition(p[SUM_CARRY] * (next[col::SUM + c] - sum[c]) - p[ABSORB] * step[c]);
            b.transition(f.periodic[LEAF_NEXT] * (next[col::POWER + c] - stepped_power[c]));
        }

        let x = cur[col::POINT];
        let inverse_z = ext(cur, col::INVERSE_Z);
        let inverse_zw = ext(cur, col::INVERSE_ZW);
        let check_z = Ext3::mul_over(inverse_z, sub([x, zero, zero], z));
        for (t, height) in self.heights.iter().enumerate() {
            let h = &p[PERIODIC + PER_HEIGHT * t..];
            let (trace_sum_at, value_at) = Self::height_columns(t);
            let trace_sum = ext(cur, trace_sum_at);
            let (at_z, at_zw) = (public(2 + 2 * t), public(3 + 2 * t));
            let omega = B::Expr::from(Felt::two_adic_root(height.log_rows));
            let zw = scale(z, omega);
            let check_zw = Ext3::mul_over(inverse_zw, sub([x, zero, zero], zw));
            let quotient_power = pow(gamma, height.trace_width as u64, one);
            let widths = height.trace_width + height.quotient_width;
            let next_row = pow(gamma, widths as u64, one);
            let value = add(
                Ext3::mul_over(sub(sum, at_z), inverse_z),
                Ext3::mul_over(next_row, Ext3::mul_over(sub(trace_sum, at_zw), inverse_zw)),
            );
            for c in 0..3 {
                b.every_row(h[QUOTIENT_START] * (sum[c] - trace_sum[c]));
                b.every_row(h[QUOTIENT_START] * (power[c] - quotient_power[c]));
                b.transition(p[CARRY] * (next[trace_sum_at + c] - trace_sum[c]));
                b.every_row(h[KEEP_TRACE_SUM] * (trace_sum[c] - sum[c]));
                b.every_row(h[DEEP_ROW] * (check_z[c] - one[c]));
                b.every_row(h[DEEP_ROW] * (check_zw[c] - one[c]));
                b.every_row(h[DEEP_ROW] * (cur[value_at + c] - value[c]));
            }
        }
        // x: SHIFT, then times ζ^(2^e) at each path row whose bit is 1, then carried, then
        // squared (over SHIFT) up the quotient's path.
        let shift = B::Expr::from(LdePlan::SHIFT);
        b.every_row(p[POINT_START] * (x - shift));
        b.transition(p[POINT_MOVES] * (next[col::POINT] - x) - x * f.next[BIT] * p[POINT_STEP]);
        b.transition(p[POINT_SQUARES] * (next[col::POINT] * shift - x * x));
    }
}
