//! A child's query phase as an AIR (a segment's, or a tables proof's:
//! [`QueriesAir::mixed`]): the [`DeepAir`] (the trace's and the quotient's openings, the
//! DEEP value f(x) at each queried position, one a height for a tables proof) followed, in
//! each position's block, by FRI's rounds. Each round's tree is opened like the others, its
//! leaf the coset that holds the position (3·arity elements). The coset must hold the value so far at the
//! position's slot, and folds into the value the next round's coset must hold; the last
//! value must be the final polynomial's at the position's point. The folds are
//! `ballast_fri::fold_coset`'s: binary folds with β, β², β⁴, pairing slots i and i + half.
//!
//! Columns after the DEEP AIR's: the coset (8 extension values, bound to its leaf rows'
//! input cells and carried to the leaf's last row, the fold row), the values of the first
//! two binary folds (4, then 2) and the three folds' challenges. A round of 4 (or 2) enters
//! at the second (or third) fold, its coset copied into that fold's inputs. The third fold
//! gives the next row's value, carried from there to the next fold row. A tables proof's
//! FRI rolls each shorter height's DEEP function in after the round that folds to its size:
//! that fold's output is β^a times the height's value more (a the round's arity), the
//! value carried from its DEEP row to the fold row.
//!
//! The position's slot in a round's coset is read off its path's remainders: a round's
//! layer of 2^(h+a) values has cosets of 2^a in a tree of height h, and its slot is
//! (p >> h) − 2^a·(p >> (h + a)), the two remainders the openings' paths end with (this
//! round's tree's and the tree before's). A column carries each path's end remainder to
//! the fold rows around it, and one-hot weight columns (8, each 0 or 1, summing to 1) must
//! weigh the slots to that number.
//!
//! That rule is also what binds a FRI tree's path end e_i, which the openings leave to this
//! AIR (they pin a tallest tree's to 0 only), by induction over the rounds. Before the
//! first round, the quotient's path ends at 0 = p >> L (p < 2^L, L the LDE's height). If
//! the round before ended at e' = p >> h', a round's weights (one-hot bits) make its end
//! e = s + 2^a·e' with s ≤ 7, a small integer; its path halves the position p into
//! p = Σ_j b_j·2^j + 2^h·e in the field, both sides integers far below the modulus, so
//! e = p >> h, the bits are p's low h digits and s is the true slot.
//!
//! The fold's other per-position constants come from the path's bits too. A round's coset
//! starts at x = s·ω^l (s the layer's shift, ω its root, l = p mod 2^h the leaf): a point
//! column is s at the path's end and, going back up the path to the fold row, takes
//! ω^(2^j) at each level j whose bit is 1 (the DEEP point's rule run backwards, so that the
//! point is whole on the fold row, before its path). Inverse columns on the fold row hold
//! 1/(2x) at the binary fold the coset enters at, then each later one's square doubled, to
//! 1/(2y) with y = x^(2^a): `2·x·inverse = 1`, then `next = 2·inverse²`. y is the position's point
//! in the next layer, so after the last round it is the final polynomial's point; its
//! powers lie on the final row in the coset's columns, which no leaf uses there.
//!
//! Every periodic column has the block's period, a function of the child's shape: the
//! positions are bound by the openings' digest, a public input. So are the challenges and
//! the final polynomial, as the DEEP claims are: the layer's verifier takes them from the
//! child's transcript.

use std::borrow::Cow;
use std::sync::OnceLock;

use ballast_air::{Air, ConstraintBuilder, Frame, Halve, PeriodicColumn};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_fri::{LOG_ARITY, fold_pair, roll_in_arities};
use ballast_merkle::MixedShape;
use ballast_ntt::LdePlan;
use ballast_poseidon2::{FeltDigest, RATE};

use crate::deep::{DeepAir, DeepClaims, WIDTH as DEEP_WIDTH};
use crate::ext::{add, ext, pow, scale, sub};
use crate::openings::{BIT, INPUT, Opened, OpeningsError, PATH_END, REST, TreeShape, expect_len};

// The layout has one column group per binary fold of a round of 8.
const _: () = assert!(LOG_ARITY == 3);

/// The most values a coset holds.
const ARITY: usize = 1 << LOG_ARITY;
// Columns after the DEEP AIR's, counted from its last.
/// The round's coset, [`ARITY`] extension values.
const COSET: usize = 0;
/// The first binary fold's 4 values (a round of 4's coset, copied).
const HALVES: usize = COSET + 3 * ARITY;
/// The second's 2 values (a round of 2's coset, copied).
const QUARTERS: usize = HALVES + 3 * ARITY / 2;
/// The three binary folds' challenges, first fold first.
const BETAS: usize = QUARTERS + 3 * ARITY / 4;
/// Column: the end remainder p >> h of the last path before this row (of the one after, from
/// a fold row's next row to its tree's path end).
const ENDS: usize = BETAS + 3 * LOG_ARITY;
/// On a fold row, one weight a slot: 1 at the position's slot, 0 elsewhere.
const WEIGHTS: usize = ENDS + 1;
/// Column: a round's coset point built from its path's bits: the layer's shift at the
/// path's end, x (the coset's first point) on the fold row.
const POINT: usize = WEIGHTS + ARITY;
/// On a fold row, one a binary fold from the coset's entry: 1/(2x), then each the square
/// of the one before doubled (1/(2x²), 1/(2x⁴) for a round of 8); the last is 1/(2y), y =
/// x^(2^a) the position's point in the next layer.
const INVERSES: usize = POINT + 1;
/// Columns after the DEEP AIR's.
const OWN: usize = INVERSES + LOG_ARITY + 1;
/// Columns of the table over a segment's trees (221).
pub const WIDTH: usize = DEEP_WIDTH + OWN;

/// log2 of the longest final polynomial the AIR evaluates: its point's powers are columns.
pub const MAX_LOG_FINAL_POLY_LEN: usize = 4;
/// On the final row, the final point's powers from y¹ on: the coset's columns, which no
/// leaf binds there.
const POWERS: usize = COSET;
const _: () = assert!((1 << MAX_LOG_FINAL_POLY_LEN) - 1 <= 3 * ARITY);

/// What a child segment's verifier knows of its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChildShape {
    /// Trace columns.
    pub trace_width: usize,
    /// Quotient columns.
    pub quotient_width: usize,
    /// log2 of its rows.
    pub log_rows: usize,
    /// log2 of its LDE's points.
    pub log_lde: usize,
    /// log2 of its final polynomial's coefficients.
    pub log_final_poly_len: usize,
}

/// One FRI round's place in a block.
#[derive(Clone, Copy, Debug)]
struct Round {
    log_arity: usize,
    /// log2 of the layer's values.
    log_len: usize,
    /// The block row of the leaf's first row.
    leaf_start: usize,
    leaf_rows: usize,
    /// The shorter height whose DEEP function it rolls in after its fold, if any.
    rolls_in: Option<usize>,
}

impl Round {
    /// The layer tree's height.
    fn height(&self) -> usize {
        self.log_len - self.log_arity
    }

    /// The leaf's last row, where the coset is whole and folds.
    fn fold_row(&self) -> usize {
        self.leaf_start + self.leaf_rows - 1
    }

    /// The path's last row, where the point starts at the layer's shift.
    fn path_end(&self) -> usize {
        self.fold_row() + self.height()
    }

    /// The binary fold the coset enters at: 0 for a round of 8.
    fn entry(&self) -> usize {
        LOG_ARITY - self.log_arity
    }
}

/// A child's query phase at its query positions: an [`Air`] of [`WIDTH`] columns for a
/// segment (the DEEP AIR's columns and 65 more for a tables proof) whose public inputs are
/// the trace's, the quotient's and each FRI layer's root, the positions' digest, the DEEP
/// claims, each round's β and the final polynomial's coefficients (3 coordinates each).
#[derive(Clone, Debug)]
pub struct QueriesAir {
    deep: DeepAir,
    rounds: Vec<Round>,
    log_lde: usize,
    final_len: usize,
    /// The block row where the last value meets the final polynomial.
    final_row: usize,
    /// Its periodic columns, written at the first read ([`write_periodic`](Self::write_periodic)).
    periodic: OnceLock<Vec<PeriodicColumn>>,
}

impl QueriesAir {
    /// The AIR of a child of this shape queried at `positions`.
    ///
    /// # Errors
    /// What [`DeepAir::new`] refuses, or a final polynomial longer than the trace or than
    /// 2^[`MAX_LOG_FINAL_POLY_LEN`] coefficients.
    pub fn new(child: &ChildShape, positions: &[usize]) -> Result<Self, OpeningsError> {
        let log_blowup = child.log_lde.saturating_sub(child.log_rows);
        Self::build(
            &[child.log_lde],
            log_blowup,
            child.log_final_poly_len,
            |trees| {
                DeepAir::with_trees(
                    child.trace_width,
                    child.quotient_width,
                    child.log_rows,
                    child.log_lde,
                    positions,
                    trees,
                )
            },
        )
    }

    /// The AIR of a tables proof's query phase (`ballast_stark::prove_tables`'s): its
    /// trace and quotient trees of tables of `trace` and `quotient` (their LDEs at blowup
    /// 2^`log_blowup`), a final polynomial of 2^`log_final_poly_len` coefficients, queried
    /// at `positions`. FRI rolls each shorter height's DEEP function in after the round
    /// that folds to its size, with β^a (a the round's arity): one more term in that
    /// round's fold, the height's value carried from its DEEP row.
    ///
    /// # Errors
    /// What [`DeepAir::mixed`] refuses, or a final polynomial longer than the shortest table
    /// or than 2^[`MAX_LOG_FINAL_POLY_LEN`] coefficients.
    pub fn mixed(
        trace: &MixedShape,
        quotient: &MixedShape,
        log_blowup: usize,
        log_final_poly_len: usize,
        positions: &[usize],
    ) -> Result<Self, OpeningsError> {
        let mut log_ldes: Vec<usize> = trace.tables().iter().map(|t| t.log_height).collect();
        log_ldes.dedup();
        Self::build(&log_ldes, log_blowup, log_final_poly_len, |trees| {
            DeepAir::mixed_with_trees(trace, quotient, log_blowup, positions, trees)
        })
    }

    /// The AIR over inputs of 2^`log_ldes[t]` values (tallest first, strictly decreasing)
    /// folded at blowup 2^`log_blowup` to a final polynomial of 2^`log_final`
    /// coefficients, on the DEEP AIR `deep` builds with FRI's layer trees.
    fn build(
        log_ldes: &[usize],
        log_blowup: usize,
        log_final: usize,
        deep: impl FnOnce(&[TreeShape]) -> Result<DeepAir, OpeningsError>,
    ) -> Result<Self, OpeningsError> {
        let shortest = log_ldes.last().copied().unwrap_or(0);
        if log_final + log_blowup > shortest || log_final > MAX_LOG_FINAL_POLY_LEN {
            return Err(OpeningsError::FinalPolynomial { log_len: log_final });
        }
        // Each layer's tree: cosets of 2^a values (3 coordinates each), 2^a fewer leaves
        // than the layer before has values.
        let mut log_len = log_ldes[0];
        let layers: Vec<(usize, TreeShape)> = roll_in_arities(log_ldes, log_blowup + log_final)
            .into_iter()
            .map(|log_arity| {
                let layer = TreeShape {
                    row_width: 3 << log_arity,
                    height: log_len - log_arity,
                };
                log_len = layer.height;
                (log_arity, layer)
            })
            .collect();
        let trees: Vec<TreeShape> = layers.iter().map(|&(_, tree)| tree).collect();
        let deep = deep(&trees)?;
        let rounds: Vec<Round> = deep
            .openings()
            .segments()
            .skip(2)
            .zip(&layers)
            .map(|((leaf_start, leaf_rows, _), &(log_arity, tree))| Round {
                log_arity,
                log_len: tree.height + log_arity,
                leaf_start,
                leaf_rows,
                rolls_in: (log_ldes.iter().skip(1))
                    .position(|&l| l == tree.height)
                    .map(|t| t + 1),
            })
            .collect();
        let final_row = rounds
            .last()
            .map_or(deep.deep_rows()[0], |r| r.fold_row() + 1);
        Ok(Self {
            deep,
            rounds,
            log_lde: log_ldes[0],
            final_len: 1 << log_final,
            final_row,
            periodic: OnceLock::new(),
        })
    }

    /// The DEEP AIR the queries extend: its openings' [`open`](crate::OpeningsAir::open)
    /// builds their witness (tree 0 the trace's, 1 the quotient's, 2 + i FRI round i's,
    /// from the rows `ballast_fri::verify_queries` returns). Its openings of the FRI trees
    /// are sound only inside this AIR, which binds their paths' ends: prove this AIR.
    pub fn deep(&self) -> &DeepAir {
        &self.deep
    }

    /// Its periodic columns' values: the DEEP AIR's, then each leaf row's and fold's flags,
    /// the paths' columns and each rolled height's carry.
    fn write_periodic(&self) -> Vec<PeriodicColumn> {
        let openings = self.deep.openings();
        let in_leaf = |r: usize| {
            self.rounds
                .iter()
                .find(|round| (round.leaf_start..=round.fold_row()).contains(&r))
        };
        let is_fold = |r: usize| self.rounds.iter().any(|round| round.fold_row() == r);
        let mut columns = self.deep.periodic_columns().into_owned();
        for j in 0..3 {
            columns.push(openings.block_column(|r| {
                u64::from(in_leaf(r).is_some_and(|round| r - round.leaf_start == j))
            }));
        }
        columns.push(
            openings
                .block_column(|r| u64::from(in_leaf(r).is_some_and(|round| r < round.fold_row()))),
        );
        let deep_rows = self.deep.deep_rows();
        columns.push(openings.block_column(|r| {
            u64::from((deep_rows[0]..self.final_row).contains(&r) && !is_fold(r))
        }));
        let carrying = self.carrying_ends();
        columns.push(openings.block_column(|r| u64::from(carrying.contains(&r) && !is_fold(r))));
        columns.push(openings.block_column(|r| u64::from(r == self.final_row)));
        let on_path_end = |round: &Round, j: usize| Felt::new(u64::from(j == round.height()));
        columns.extend([
            self.path_column(|round, j| Felt::new(u64::from(j < round.height()))),
            self.path_column(|round, j| {
                steps(round)
                    .get(j)
                    .map_or(Felt::ZERO, |&step| step - Felt::ONE)
            }),
            self.path_column(on_path_end),
            self.path_column(|round, j| on_path_end(round, j) * self.shift(round.log_len)),
        ]);
        for round in &self.rounds {
            columns.push(openings.block_column(|r| u64::from(r == round.fold_row())));
        }
        for round in &self.rounds {
            if let Some(t) = round.rolls_in {
                let carried = deep_rows[t]..round.fold_row();
                columns.push(openings.block_column(|r| u64::from(carried.contains(&r))));
            }
        }
        columns
    }

    /// Where each shorter height rolls in: (its height, tallest first; the round, first
    /// first; the block row of that round's fold).
    pub fn roll_ins(&self) -> Vec<(usize, usize, usize)> {
        (self.rounds.iter().enumerate())
            .filter_map(|(i, round)| round.rolls_in.map(|t| (t, i, round.fold_row())))
            .collect()
    }

    /// FRI's rounds: how many β the public inputs hold, after the DEEP AIR's.
    pub(crate) fn rounds(&self) -> usize {
        self.rounds.len()
    }

    /// How many public inputs the final polynomial's coefficients are, the last ones.
    pub(crate) fn final_poly_inputs(&self) -> usize {
        3 * self.final_len
    }

    /// The public inputs: the roots (the trace's, the quotient's, each FRI layer's), the
    /// positions' digest, the DEEP claims, each round's β and the final polynomial's
    /// coefficients.
    ///
    /// # Errors
    /// Another count of roots, challenges or coefficients than the child's.
    pub fn public_inputs(
        &self,
        roots: &[FeltDigest],
        claims: &DeepClaims,
        betas: &[Ext3],
        final_poly: &[Ext3],
    ) -> Result<Vec<Felt>, OpeningsError> {
        let rounds = self.rounds.len();
        expect_len("folding challenges", rounds, betas.len())?;
        expect_len("final coefficients", self.final_len, final_poly.len())?;
        let mut inputs = self.deep.public_inputs(roots, claims)?;
        inputs.extend(betas.iter().chain(final_poly).flat_map(|v| v.coeffs()));
        Ok(inputs)
    }

    /// The trace: the DEEP AIR's (`opened`: the trace's, the quotient's, then each FRI
    /// layer's openings), with each round's coset, folds and challenges (`betas`), and the
    /// value each fold passes on (on every later row of the block; none past the final row
    /// is read).
    ///
    /// # Errors
    /// What [`DeepAir::trace`] refuses, or another count of challenges than rounds.
    pub fn trace(
        &self,
        opened: &[Opened],
        claims: &DeepClaims,
        betas: &[Ext3],
    ) -> Result<RowBlocks, OpeningsError> {
        expect_len("folding challenges", self.rounds.len(), betas.len())?;
        let deep = self.deep.trace(opened, claims)?;
        let openings = self.deep.openings();
        let block_rows = openings.block_rows;
        let (d, width) = (self.deep.width(), self.width());
        let value = self.deep.value_column(0);
        let mut table = vec![Felt::ZERO; deep.height() * width];
        for (r, row) in table.chunks_exact_mut(width).enumerate() {
            row[..d].copy_from_slice(&deep.row(r));
        }
        let last = openings.positions().len() - 1;
        let deep_rows = self.deep.deep_rows();
        for (block, cells) in table.chunks_exact_mut(block_rows * width).enumerate() {
            let k = block.min(last);
            let mut rows: Vec<&mut [Felt]> = cells.chunks_exact_mut(width).collect();
            let position = openings.position(block);
            for (r, row) in rows.iter_mut().enumerate() {
                let folded = self.rounds.iter().rev().find(|round| round.fold_row() < r);
                let end = folded.map_or(0, |round| position >> round.height());
                row[d + ENDS] = Felt::new(end as u64);
            }
            for (i, (round, opened)) in self.rounds.iter().zip(&opened[2..]).enumerate() {
                let coset_width = 3 << round.log_arity;
                let coset = &opened.rows[k * coset_width..(k + 1) * coset_width];
                for row in &mut rows[round.leaf_start..=round.fold_row()] {
                    row[d + COSET..d + COSET + coset_width].copy_from_slice(coset);
                }
                let values: Vec<Ext3> = coset
                    .chunks_exact(3)
                    .map(|c| Ext3::new([c[0], c[1], c[2]]))
                    .collect();
                let level_betas = level_betas(round, betas[i]);
                let points = self.points(round, position);
                for (row, point) in rows[round.fold_row()..=round.path_end()]
                    .iter_mut()
                    .zip(&points)
                {
                    row[d + POINT] = *point;
                }
                let inverses = inverses(round, points[0]);
                let folds = inverses[..LOG_ARITY].try_into().expect("3 inverses");
                let (halves, quarters, mut folded) =
                    fold_levels(round, &values, folds, level_betas);
                if let Some(t) = round.rolls_in {
                    let at = self.deep.value_column(t);
                    let row = &rows[deep_rows[t]];
                    let rolled = Ext3::new([row[at], row[at + 1], row[at + 2]]);
                    folded += betas[i].pow(1 << round.log_arity) * rolled;
                }
                let fold_row = &mut rows[round.fold_row()];
                fold_row[d + INVERSES..d + OWN].copy_from_slice(&inverses);
                for (at, v) in (d + HALVES..)
                    .step_by(3)
                    .zip(halves.iter().chain(&quarters))
                {
                    fold_row[at..at + 3].copy_from_slice(&v.coeffs());
                }
                for (at, v) in (d + BETAS..).step_by(3).zip(level_betas) {
                    fold_row[at..at + 3].copy_from_slice(&v.coeffs());
                }
                fold_row[d + WEIGHTS + self.slot(block, i)] = Felt::ONE;
                for row in &mut rows[round.fold_row() + 1..] {
                    row[value..value + 3].copy_from_slice(&folded.coeffs());
                }
            }
            let powers = self.final_point(position).powers(self.final_len);
            let powers_at = d + POWERS;
            rows[self.final_row][powers_at..powers_at + self.final_len - 1]
                .copy_from_slice(&powers[1..]);
        }
        Ok(RowBlocks::from_row_vec(width, table))
    }

    /// The point on round `round`'s rows from its fold row to its path's end, for
    /// `position`: x = s·ω^l on the fold row, then ω's powers of l's bits from level j up
    /// on row j of the path, down to s.
    fn points(&self, round: &Round, position: usize) -> Vec<Felt> {
        let height = round.height();
        let steps = steps(round);
        let mut points = vec![self.shift(round.log_len); height + 1];
        for j in (0..height).rev() {
            points[j] = points[j + 1];
            if (position >> j) & 1 == 1 {
                points[j] *= steps[j];
            }
        }
        points
    }

    /// The coset shift of a layer of 2^`log_len` values: SHIFT to the power of the values
    /// folded into each.
    fn shift(&self, log_len: usize) -> Felt {
        LdePlan::SHIFT.pow(1 << (self.log_lde - log_len))
    }

    /// The position's slot in round `round`'s coset.
    fn slot(&self, block: usize, round: usize) -> usize {
        let r = &self.rounds[round];
        (self.deep.openings().position(block) & ((1 << r.log_len) - 1)) >> r.height()
    }

    /// The point `position` folds to in the final polynomial's domain.
    fn final_point(&self, position: usize) -> Felt {
        let log_len = self.rounds.last().map_or(self.log_lde, Round::height);
        let position = position & ((1 << log_len) - 1);
        self.shift(log_len) * Felt::two_adic_root(log_len).pow(position as u64)
    }
}

/// ω^(2^j) for each level j of `round`'s path, ω the layer's root: what a bit 1 at level
/// j multiplies the point by.
fn steps(round: &Round) -> Vec<Felt> {
    let omega = Felt::two_adic_root(round.log_len);
    std::iter::successors(Some(omega), |step| Some(step.square()))
        .take(round.height())
        .collect()
}

/// 1/(2x), 1/(2x²), … for a coset whose first point is `x`, placed from the binary fold
/// `round` enters at (zero before) to the last slot, 1/(2y) with y = x^(2^a).
fn inverses(round: &Round, x: Felt) -> [Felt; LOG_ARITY + 1] {
    let mut inverse = (x + x).inverse();
    let mut inverses = [Felt::ZERO; LOG_ARITY + 1];
    for slot in &mut inverses[round.entry()..] {
        *slot = inverse;
        let square = inverse * inverse;
        inverse = square + square;
    }
    inverses
}

/// β, β², β⁴ placed at the binary folds `round` makes (zero before).
fn level_betas(round: &Round, beta: Ext3) -> [Ext3; LOG_ARITY] {
    let mut betas = [Ext3::ZERO; LOG_ARITY];
    let mut power = beta;
    for slot in &mut betas[round.entry()..] {
        *slot = power;
        power = power.square();
    }
    betas
}

/// `values` (the coset) folded: the first binary fold's 4 values, the second's 2 and the
/// third's 1, a coset of fewer values copied in where it enters (zeros in the inputs of
/// folds it does not make, which no constraint reads).
fn fold_levels(
    round: &Round,
    values: &[Ext3],
    inverses: [Felt; LOG_ARITY],
    betas: [Ext3; LOG_ARITY],
) -> ([Ext3; 4], [Ext3; 2], Ext3) {
    let fold = |inputs: &[Ext3], level: usize| -> Vec<Ext3> {
        let half = inputs.len() / 2;
        let omega_inv = Felt::two_adic_root(LOG_ARITY - level).inverse();
        (0..half)
            .map(|i| {
                let inv = inverses[level] * omega_inv.pow(i as u64);
                fold_pair(inputs[i], inputs[i + half], betas[level], inv)
            })
            .collect()
    };
    let padded = |n: usize| -> Vec<Ext3> {
        (0..n)
            .map(|i| values.get(i).copied().unwrap_or(Ext3::ZERO))
            .collect()
    };
    let halves = if round.entry() == 0 {
        fold(values, 0)
    } else {
        padded(4)
    };
    let quarters = if round.entry() <= 1 {
        fold(&halves, 1)
    } else {
        padded(2)
    };
    let folded = fold(&quarters, 2)[0];
    (
        halves.try_into().expect("4 values"),
        quarters.try_into().expect("2 values"),
        folded,
    )
}

// The periodic columns after the DEEP AIR's, in `periodic_columns`'s order: a FRI leaf's
// rows 0, 1 and 2; its rows followed by another of the leaf; the rows that carry the value;
// the rows that carry the end remainder; the final row; the point's columns; then one a
// round, its fold row; then one a round that rolls a height in, the rows that carry its
// value from its DEEP row to that fold.
const COSET_ROW: usize = 0;
const COSET_NEXT: usize = 3;
const CARRY_VALUE: usize = 4;
const CARRY_ENDS: usize = 5;
const FINAL: usize = 6;
/// A FRI path's rows from its fold row to the row before its end: the point takes the
/// next row's, times the step where the next row's bit is 1.
const POINT_MOVES: usize = 7;
/// ω^(2^j) − 1 on row j of a FRI path (from its fold row), ω the layer's root.
const POINT_STEP: usize = 8;
/// A FRI path's last row, where the point is the layer's shift.
const POINT_END: usize = 9;
/// The layer's shift on that row.
const END_SHIFT: usize = 10;
const FOLD: usize = 11;

impl QueriesAir {
    /// A column of one block's period, `value(round, j)` on row j of each FRI round's rows
    /// from its fold row to its path's end, zero elsewhere.
    fn path_column(&self, value: impl Fn(&Round, usize) -> Felt) -> PeriodicColumn {
        let mut values = vec![Felt::ZERO; self.deep.openings().block_rows];
        for round in &self.rounds {
            for j in 0..=round.height() {
                values[round.fold_row() + j] = value(round, j);
            }
        }
        PeriodicColumn { values }
    }

    /// The block rows that pass the end remainder on to the next row, fold rows aside: from
    /// the trace's path end to the last path end. Every tree has a path (the last FRI layer's
    /// tree has blowup × final length leaves, at least 2), so each run of these rows holds a
    /// path end that pins it.
    fn carrying_ends(&self) -> std::ops::Range<usize> {
        let mut ends = self
            .deep
            .openings()
            .segments()
            .map(|(start, leaf, height)| start + leaf + height - 1);
        let first = ends.next().unwrap_or(0);
        first..ends.fold(first, usize::max)
    }
}

impl Air for QueriesAir {
    fn id(&self) -> &str {
        "ballast/fri-queries"
    }

    fn width(&self) -> usize {
        self.deep.width() + OWN
    }

    fn log_rows(&self) -> usize {
        self.deep.log_rows()
    }

    fn num_public_inputs(&self) -> usize {
        self.deep.num_public_inputs() + 3 * self.rounds.len() + self.final_poly_inputs()
    }

    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        Cow::Borrowed(self.periodic.get_or_init(|| self.write_periodic()))
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let own = self.deep.periodic_columns_len();
        let deep_inputs = self.deep.num_public_inputs();
        let d = self.deep.width();
        let inner = Frame {
            current: &f.current[..d],
            next: &f.next[..d],
            periodic: &f.periodic[..own],
            public_inputs: &f.public_inputs[..deep_inputs],
        };
        self.deep.eval(&inner, b);

        // This AIR's columns, from the DEEP AIR's last on.
        let (cur, next, p) = (&f.current[d..], &f.next[d..], &f.periodic[own..]);
        let value_at = self.deep.value_column(0);
        let zero = B::Expr::from(Felt::ZERO);
        let one = [B::Expr::from(Felt::ONE), zero, zero];
        let rounds = self.rounds.len();
        let public = |k: usize| ext(f.public_inputs, deep_inputs + 3 * k);
        let value = ext(f.current, value_at);
        let coset = |s: usize| ext(cur, COSET + 3 * s);

        // The coset: bound to each leaf row's input cells, carried down the leaf.
        for j in 0..3 {
            for i in 0..RATE {
                let input = f.current[INPUT + i];
                b.every_row(p[COSET_ROW + j] * (cur[COSET + RATE * j + i] - input));
            }
        }
        for c in COSET..HALVES {
            b.transition(p[COSET_NEXT] * (next[c] - cur[c]));
        }
        // The gates of the rounds `on` picks: the sum of their fold rows' columns.
        let gate = |on: &dyn Fn(&Round) -> bool| {
            (0..rounds)
                .filter(|&i| on(&self.rounds[i]))
                .fold(zero, |acc, i| acc + p[FOLD + i])
        };
        let fold_row = gate(&|_| true);
        let weight = |s: usize| cur[WEIGHTS + s];

        // The value so far sits at the position's slot.
        let mut at_slot = [zero; 3];
        for s in 0..ARITY {
            at_slot = add(at_slot, scale(sub(coset(s), value), fold_row * weight(s)));
        }
        for constraint in at_slot {
            b.every_row(constraint);
        }
        let level_gates: [B::Expr; LOG_ARITY] =
            std::array::from_fn(|level| gate(&|r: &Round| r.entry() <= level));
        let used: [bool; LOG_ARITY] =
            std::array::from_fn(|level| self.rounds.iter().any(|r| r.entry() <= level));
        // Each fold's challenge: β, β², β⁴ of its round.
        let beta = |level: usize| ext(cur, BETAS + 3 * level);
        for level in (0..LOG_ARITY).filter(|&l| used[l]) {
            let mut expected = [zero; 3];
            for i in 0..rounds {
                let entry = self.rounds[i].entry();
                if entry <= level {
                    let power = pow(public(i), 1 << (level - entry), one);
                    expected = add(expected, scale(power, p[FOLD + i]));
                }
            }
            let bound = sub(scale(beta(level), level_gates[level]), expected);
            for constraint in bound {
                b.every_row(constraint);
            }
        }
        // The copies of a round of 4's or 2's coset into its entry fold's inputs.
        for (level, inputs) in [(1, HALVES), (2, QUARTERS)] {
            let copy = gate(&|r: &Round| r.entry() == level);
            if self.rounds.iter().any(|r| r.entry() == level) {
                for s in 0..ARITY >> level {
                    let copied = sub(ext(cur, inputs + 3 * s), coset(s));
                    for difference in copied {
                        b.every_row(copy * difference);
                    }
                }
            }
        }
        // A shorter height's value rolled in after the round that folds to its size:
        // β^a times it, on that round's fold row, carried there from its DEEP row.
        let mut rolled = [zero; 3];
        let mut carries = FOLD + rounds;
        for (i, round) in self.rounds.iter().enumerate() {
            if let Some(t) = round.rolls_in {
                let at = self.deep.value_column(t);
                let coefficient = pow(public(i), 1 << round.log_arity, one);
                let term = Ext3::mul_over(coefficient, ext(f.current, at));
                rolled = add(rolled, scale(term, p[FOLD + i]));
                for c in 0..3 {
                    b.transition(p[carries] * (f.next[at + c] - f.current[at + c]));
                }
                carries += 1;
            }
        }
        // The binary folds: outputs (lo + hi)/2 + β·(lo − hi)/(2x·ω^i), the third's on the
        // next row (with the value rolled in).
        let fold = |b: &mut B, level: usize, inputs: usize, outputs: &[B::Expr], i: usize| {
            let half = ARITY >> (level + 1);
            let (lo, hi) = (ext(cur, inputs + 3 * i), ext(cur, inputs + 3 * (i + half)));
            let twiddle = Felt::two_adic_root(LOG_ARITY - level)
                .inverse()
                .pow(i as u64);
            let inverse = cur[INVERSES + level] * B::Expr::from(twiddle);
            let spread = scale(Ext3::mul_over(beta(level), sub(lo, hi)), inverse);
            let mean = add(lo, hi).map(Halve::halve);
            for c in 0..3 {
                let constraint = level_gates[level] * (outputs[c] - mean[c]) - spread[c];
                if level + 1 == LOG_ARITY {
                    b.transition(constraint - rolled[c]);
                } else {
                    b.every_row(constraint);
                }
            }
        };
        if used[0] {
            for i in 0..ARITY / 2 {
                fold(b, 0, COSET, &cur[HALVES + 3 * i..HALVES + 3 * i + 3], i);
            }
        }
        if used[1] {
            for i in 0..ARITY / 4 {
                fold(
                    b,
                    1,
                    HALVES,
                    &cur[QUARTERS + 3 * i..QUARTERS + 3 * i + 3],
                    i,
                );
            }
        }
        if used[2] {
            fold(b, 2, QUARTERS, &f.next[value_at..value_at + 3], 0);
        }

        // The value carried to the next fold, and the last one on the final polynomial.
        let mut on_final = public(rounds);
        for power in 1..self.final_len {
            let column = cur[POWERS + power - 1];
            on_final = add(on_final, scale(public(rounds + power), column));
        }
        for c in 0..3 {
            b.transition(p[CARRY_VALUE] * (f.next[value_at + c] - value[c]));
            b.every_row(p[FINAL] * (value[c] - on_final[c]));
        }

        // The slot: each path's end remainder p >> h, carried to the fold rows around it;
        // a round's slot is its tree's end remainder less 2^a times the tree's before, and
        // the weights are one-hot at it.
        let ends = cur[ENDS];
        b.every_row(f.periodic[PATH_END] * (ends - f.current[REST]));
        b.transition(p[CARRY_ENDS] * (next[ENDS] - ends));
        for s in 0..ARITY {
            b.every_row(fold_row * weight(s) * (weight(s) - one[0]));
        }
        let weights = (0..ARITY).fold(zero, |sum, s| sum + weight(s));
        let weighted = (0..ARITY).fold(zero, |sum, s| {
            sum + weight(s) * B::Expr::from(Felt::new(s as u64))
        });
        b.every_row(fold_row * (weights - one[0]));
        for (i, round) in self.rounds.iter().enumerate() {
            let before = ends * B::Expr::from(Felt::new(1 << round.log_arity));
            b.transition(p[FOLD + i] * (weighted - next[ENDS] + before));
        }

        // The point: the layer's shift at the path's end, times ω^(2^j) going up past each
        // level j whose bit is 1, to x on the fold row.
        let point = cur[POINT];
        b.every_row(p[POINT_END] * point - p[END_SHIFT]);
        b.transition(
            p[POINT_MOVES] * (point - next[POINT]) - next[POINT] * f.next[BIT] * p[POINT_STEP],
        );
        // The inverses: 1/(2x) at the coset's entry, then each the next one's 2·inverse².
        let two = B::Expr::from(Felt::new(2));
        let inverse = |level: usize| cur[INVERSES + level];
        for level in 0..LOG_ARITY {
            if self.rounds.iter().any(|r| r.entry() == level) {
                let entry = gate(&|r: &Round| r.entry() == level);
                b.every_row(entry * (two * point * inverse(level) - one[0]));
            }
        }
        for level in (0..LOG_ARITY).filter(|&l| used[l]) {
            let square = inverse(level) * inverse(level);
            b.every_row(level_gates[level] * (inverse(level + 1) - two * square));
        }
        // The final point y and its powers: y·2·(1/(2y)) = 1 on the row after the last fold
        // (the DEEP point where there is no round), then each power times y.
        if self.final_len > 1 {
            let y = cur[POWERS];
            match self.rounds.len().checked_sub(1) {
                Some(last) => b.transition(
                    p[FOLD + last] * (two * next[POWERS] * inverse(LOG_ARITY) - one[0]),
                ),
                None => b.every_row(p[FINAL] * (y - f.current[self.deep.point_column()])),
            }
            for power in 2..self.final_len {
                let product = cur[POWERS + power - 2] * y;
                b.every_row(p[FINAL] * (cur[POWERS + power - 1] - product));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ballast_merkle::TableShape;

    use super::*;

    #[test]
    fn the_periodic_column_count_is_the_columns() {
        for log_final_poly_len in 0..4 {
            let child = ChildShape {
                trace_width: 5,
                quotient_width: 6,
                log_rows: 6,
                log_lde: 7,
                log_final_poly_len,
            };
            let air = QueriesAir::new(&child, &[3, 100]).unwrap();
            let len = air.deep.periodic_columns_len() + FOLD + air.rounds.len();
            assert_eq!(len, air.periodic_columns().len());
        }
        // A tables proof's: LDEs of 2^9 (two tables), 2^6 and 2^4 points at blowup 4, the
        // shorter two rolled in, a carry column each.
        let shape = |widths: [usize; 4]| {
            let tables = [9, 9, 6, 4].into_iter().zip(widths);
            let tables = tables.map(|(log_height, width)| TableShape { log_height, width });
            MixedShape::new(tables.collect()).unwrap()
        };
        let air = QueriesAir::mixed(&shape([3, 2, 10, 5]), &shape([3, 3, 6, 3]), 2, 1, &[3, 100])
            .unwrap();
        assert_eq!(air.roll_ins().len(), 2);
        let len = air.deep.periodic_columns_len() + FOLD + air.rounds.len() + 2;
        assert_eq!(len, air.periodic_columns().len());
    }
}
