//! The DEEP value at each queried position, beside the openings it is computed from: the
//! [`OpeningsAir`] of a child segment's trace and quotient trees, with columns that combine
//! each position's opened rows into
//!
//! f(x) = (A + B − a)/(x − z) + γ^(W+C)·(A − b)/(x − zω), A = Σ_k γ^k·T_k, B = Σ_c γ^(W+c)·Q_c
//!
//! the function FRI tests (`ballast_stark`'s DEEP composition): the value the next rows of a
//! verifier AIR, FRI's folds, start from.
//!
//! The sums ride on the leaf rows: a leaf row's 8 rate cells are 8 consecutive values of the
//! row, so the row adds `power·Σ_i γ^i·cell_i` to an accumulator, `power` stepping by γ^8
//! down the leaf and starting at 1 for the trace's leaf and γ^W for the quotient's. The
//! accumulator is A after the trace's leaf and A + B after the quotient's; A is kept. The
//! two divisions are checked as products: inverse columns with `inverse·(x − z) = 1`. The
//! position's point x = SHIFT·ζ^p is a column computed from the position's bits on the
//! trace tree's path (the openings' bit columns): SHIFT on the row before the path, times
//! ζ^(2^i) at level i where the bit is 1, then carried to the DEEP row. γ^W, γ^(W+C) and
//! zω are computed in the constraints from γ and z; the claims (γ, z, a, b) are public
//! inputs, so for now the layer's verifier supplies them from the child's transcript
//! (`ballast_stark::replay`).

use std::borrow::Cow;

use ballast_air::{Air, ConstraintBuilder, Frame, PeriodicColumn};
use ballast_field::{Ext3, Felt, RowBlocks, TWO_ADICITY};
use ballast_ntt::LdePlan;
use ballast_poseidon2::{FeltDigest, RATE};

use crate::ext::{add, ext, pow, scale, sub};
use crate::openings::{
    BIT, INPUT, LEAF_NEXT, Opened, OpeningsAir, OpeningsError, TreeShape, WIDTH as OPENINGS_WIDTH,
    expect_len,
};

/// Columns (each an extension element, 3 base coordinates): the sum so far of the block's
/// leaf rows above this one.
const SUM: usize = OPENINGS_WIDTH;
/// The power of γ this leaf row's first cell takes (bound on leaf rows only).
const POWER: usize = SUM + 3;
/// A: the trace row's sum, the same all down the block.
const TRACE_SUM: usize = POWER + 3;
/// 1/(x − z), bound on the block's DEEP row (the first row after the quotient's leaf)
/// only, as are the next two.
const INVERSE_Z: usize = TRACE_SUM + 3;
/// 1/(x − zω).
const INVERSE_ZW: usize = INVERSE_Z + 3;
/// x, the position's point (a base value): SHIFT·ζ^(p mod 2^(i+1)) on the trace path's
/// level i, bound from the row before the path to the DEEP row.
pub(crate) const POINT: usize = INVERSE_ZW + 3;
/// f(x): read it on the DEEP row; elsewhere it is free (FRI's rows carry and fold it).
pub(crate) const VALUE: usize = POINT + 1;
/// Columns of the table (156).
pub const WIDTH: usize = VALUE + 3;

/// The claims the DEEP function combines: γ, the out-of-domain point z, and the claimed sums
/// a = A(z) + B(z) and b = A(zω).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeepClaims {
    /// γ.
    pub gamma: Ext3,
    /// z.
    pub z: Ext3,
    /// a: the trace's and the quotient's claimed sums at z.
    pub at_z: Ext3,
    /// b: the trace's claimed sum at zω.
    pub at_zw: Ext3,
}

/// A child segment's trace and quotient openings at its query positions and the DEEP value
/// at each: an [`Air`] of [`WIDTH`] columns whose public inputs are the two roots (then
/// those of the trees a query AIR adds) and the positions' digest, then γ, z, a and b (3
/// coordinates each).
#[derive(Clone, Debug)]
pub struct DeepAir {
    openings: OpeningsAir,
    trace_width: usize,
    quotient_width: usize,
    /// log2 of the child's rows: zω's ω.
    log_rows: usize,
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
        if log_lde <= log_rows {
            return Err(OpeningsError::LdeTooShort { log_rows, log_lde });
        }
        if log_lde > TWO_ADICITY {
            return Err(OpeningsError::LdeTooTall { log_lde });
        }
        let mut trees = vec![
            TreeShape {
                row_width: trace_width,
                height: log_lde,
            },
            TreeShape {
                row_width: quotient_width,
                height: log_lde,
            },
        ];
        trees.extend_from_slice(more);
        Ok(Self {
            openings: if more.is_empty() {
                OpeningsAir::new(&trees, positions)?
            } else {
                OpeningsAir::with_lower_trees(&trees, positions)?
            },
            trace_width,
            quotient_width,
            log_rows,
        })
    }

    /// The openings this AIR checks: [`OpeningsAir::open`] builds their witness (tree 0 the
    /// trace's, tree 1 the quotient's). With a query AIR's lower trees they are sound only
    /// inside it, which binds those trees' path ends: prove the query AIR, not them.
    pub fn openings(&self) -> &OpeningsAir {
        &self.openings
    }

    /// The public inputs: the trace's and the quotient's roots (then any more trees'), the
    /// positions' digest, then the claims.
    ///
    /// # Errors
    /// Another count of roots than the AIR's trees.
    pub fn public_inputs(
        &self,
        roots: &[FeltDigest],
        claims: &DeepClaims,
    ) -> Result<Vec<Felt>, OpeningsError> {
        expect_len("roots", self.openings.trees().len(), roots.len())?;
        let mut inputs = self.openings.public_inputs(roots);
        for value in [claims.gamma, claims.z, claims.at_z, claims.at_zw] {
            inputs.extend(value.coeffs());
        }
        Ok(inputs)
    }

    /// The trace: the openings' (`opened`, the trace's then the quotient's), with the sums,
    /// powers, inverses and DEEP value of each block.
    ///
    /// # Errors
    /// Openings of another count or size than the AIR's, or a z (or zω) on the LDE's
    /// points, which no child's transcript draws.
    pub fn trace(
        &self,
        opened: &[Opened],
        claims: &DeepClaims,
    ) -> Result<RowBlocks, OpeningsError> {
        let openings = self.openings.trace(opened)?;
        let rows = openings.height();
        let block_rows = self.openings.block_rows;
        let [trace_leaf, quotient_leaf] = self.leaves();
        let gamma_powers = claims.gamma.powers(RATE + 1);
        let zw = claims.z * Felt::two_adic_root(self.log_rows);
        let next_row = claims
            .gamma
            .pow((self.trace_width + self.quotient_width) as u64);
        let quotient_power = claims.gamma.pow(self.trace_width as u64);
        let absorbing: Vec<bool> = (0..block_rows).map(|r| self.absorbs(r)).collect();
        let path_start = self.trace_path_start();
        let deep_row = self.deep_row();
        let steps = self.point_steps();
        let mut table = Vec::with_capacity(rows * WIDTH);
        for block in 0..rows / block_rows {
            let position = self.openings.position(block) as u64;
            // The point as the path's bits build it: p's low bits up to each level.
            let mut points = vec![Felt::ZERO; block_rows];
            let mut point = LdePlan::SHIFT;
            for (level, slot) in points[path_start..=deep_row].iter_mut().enumerate() {
                *slot = point;
                if level < steps.len() && (position >> level) & 1 == 1 {
                    point *= steps[level];
                }
            }
            let x = Ext3::from(points[deep_row]);
            let (Some(inverse_z), Some(inverse_zw)) =
                ((x - claims.z).try_inverse(), (x - zw).try_inverse())
            else {
                return Err(OpeningsError::OnTheDomain);
            };
            let first = block * block_rows;
            // The sums before each row, and each leaf row's power.
            let mut sums = vec![Ext3::ZERO; block_rows];
            let mut powers = vec![Ext3::ZERO; block_rows];
            for (start, leaf, first_power) in [
                (trace_leaf.0, trace_leaf.1, Ext3::ONE),
                (quotient_leaf.0, quotient_leaf.1, quotient_power),
            ] {
                let mut power = first_power;
                for slot in &mut powers[start..start + leaf] {
                    *slot = power;
                    power *= gamma_powers[RATE];
                }
            }
            let mut sum = Ext3::ZERO;
            for r in 0..block_rows {
                sums[r] = sum;
                if absorbing[r] {
                    let cells = openings.row(first + r);
                    let combined = (0..RATE).fold(Ext3::ZERO, |acc, i| {
                        acc + gamma_powers[i] * cells[INPUT + i]
                    });
                    sum += powers[r] * combined;
                }
            }
            let trace_sum = sums[trace_leaf.0 + trace_leaf.1];
            let both = sums[quotient_leaf.0 + quotient_leaf.1];
            let value = (both - claims.at_z) * inverse_z
                + next_row * (trace_sum - claims.at_zw) * inverse_zw;
            for r in 0..block_rows {
                table.extend(openings.row(first + r));
                for v in [sums[r], powers[r], trace_sum, inverse_z, inverse_zw] {
                    table.extend(v.coeffs());
                }
                table.push(points[r]);
                table.extend(value.coeffs());
            }
        }
        Ok(RowBlocks::from_rows(WIDTH, &table))
    }

    /// The (first row, leaf rows) of the trace's and the quotient's leaves in a block.
    fn leaves(&self) -> [(usize, usize); 2] {
        let mut segments = self.openings.segments();
        [0, 1].map(|_| {
            let (start, leaf, _) = segments.next().expect("two trees");
            (start, leaf)
        })
    }

    /// The block row before the trace's path, where the point starts at SHIFT.
    fn trace_path_start(&self) -> usize {
        let [(start, leaf), _] = self.leaves();
        start + leaf - 1
    }

    /// ζ^(2^i) for each level i of the trace's path: what its bit 1 multiplies the point by.
    fn point_steps(&self) -> Vec<Felt> {
        let zeta = Felt::two_adic_root(self.log_lde());
        std::iter::successors(Some(zeta), |step| Some(step.square()))
            .take(self.log_lde())
            .collect()
    }

    /// The block row where the DEEP value is bound: the first after the quotient's leaf.
    pub(crate) fn deep_row(&self) -> usize {
        let [_, (start, leaf)] = self.leaves();
        start + leaf
    }

    /// log2 of the child's rows.
    pub(crate) fn child_log_rows(&self) -> usize {
        self.log_rows
    }

    /// log2 of the child's LDE points.
    fn log_lde(&self) -> usize {
        self.openings.trees()[0].shape.height
    }

    /// Where the claims (γ, z, a, b) start in the public inputs: after the openings'.
    pub(crate) fn claims(&self) -> usize {
        self.openings.num_public_inputs()
    }

    /// How many periodic columns [`periodic_columns`](Air::periodic_columns) gives.
    pub(crate) fn periodic_columns_len(&self) -> usize {
        self.openings.periodic_columns_len() + PERIODIC
    }

    /// Whether block row `r` is a leaf row of either tree.
    fn absorbs(&self, r: usize) -> bool {
        self.leaves()
            .iter()
            .any(|&(start, leaf)| (start..start + leaf).contains(&r))
    }

    /// A column of one block's period, 1 on the rows `on` picks.
    fn block_column(&self, on: impl Fn(usize) -> bool) -> PeriodicColumn {
        self.openings.block_column(|r| u64::from(on(r)))
    }
}

// The periodic columns after the openings', in `periodic_columns`'s order.
const BLOCK_START: usize = 0;
const CARRY: usize = 1;
const ABSORB: usize = 2;
const TRACE_POWER: usize = 3;
const QUOTIENT_POWER: usize = 4;
const KEEP_TRACE_SUM: usize = 5;
const DEEP_ROW: usize = 6;
/// The row before the trace's path, where the point starts at SHIFT.
const POINT_START: usize = 7;
/// Rows from there to the one before the DEEP row: the point goes on to the next row.
const POINT_MOVES: usize = 8;
/// ζ^(2^i) − 1 on the row before the trace path's level i: what a bit 1 multiplies in.
const POINT_STEP: usize = 9;
/// Periodic columns after the openings'.
const PERIODIC: usize = POINT_STEP + 1;

/// The claims' elements in the public inputs: γ, z, a and b, 3 coordinates each.
const CLAIMS_LEN: usize = 4 * 3;

impl Air for DeepAir {
    fn id(&self) -> &str {
        "ballast/deep-values"
    }

    fn width(&self) -> usize {
        WIDTH
    }

    fn log_rows(&self) -> usize {
        self.openings.log_rows()
    }

    fn num_public_inputs(&self) -> usize {
        self.claims() + CLAIMS_LEN
    }

    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        let [trace_leaf, quotient_leaf] = self.leaves();
        let block_rows = self.openings.block_rows;
        let deep_row = self.deep_row();
        let path_start = self.trace_path_start();
        let mut columns = self.openings.periodic_columns().into_owned();
        columns.extend([
            self.block_column(|r| r == 0),
            self.block_column(|r| r + 1 < block_rows),
            self.block_column(|r| self.absorbs(r)),
            self.block_column(|r| r == trace_leaf.0),
            self.block_column(|r| r == quotient_leaf.0),
            self.block_column(|r| r == trace_leaf.0 + trace_leaf.1),
            self.block_column(|r| r == deep_row),
            self.block_column(|r| r == path_start),
            self.block_column(|r| (path_start..deep_row).contains(&r)),
        ]);
        let steps = self.point_steps();
        columns.push(PeriodicColumn {
            values: (0..block_rows)
                .map(
                    |r| match r.checked_sub(path_start).and_then(|level| steps.get(level)) {
                        Some(&step) => step - Felt::ONE,
                        None => Felt::ZERO,
                    },
                )
                .collect(),
        });
        columns.into()
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let own = self.openings.periodic_columns_len();
        let claims = self.claims();
        let inner = Frame {
            current: &f.current[..OPENINGS_WIDTH],
            next: &f.next[..OPENINGS_WIDTH],
            periodic: &f.periodic[..own],
            public_inputs: &f.public_inputs[..claims],
        };
        self.openings.eval(&inner, b);

        let (cur, next, p) = (f.current, f.next, &f.periodic[own..]);
        let zero = B::Expr::from(Felt::ZERO);
        let one = [B::Expr::from(Felt::ONE), zero, zero];
        let public = |k: usize| ext(f.public_inputs, claims + 3 * k);
        let (gamma, z, at_z, at_zw) = (public(0), public(1), public(2), public(3));
        let omega = B::Expr::from(Felt::two_adic_root(self.log_rows));
        let zw = scale(z, omega);

        // The leaf row's cells, combined with γ^0..γ^7.
        let mut gamma_power = one;
        let mut combined = [zero; 3];
        for i in 0..RATE {
            combined = add(combined, scale(gamma_power, cur[INPUT + i]));
            gamma_power = Ext3::mul_over(gamma_power, gamma);
        }
        let gamma_rate = gamma_power;
        let (sum, power) = (ext(cur, SUM), ext(cur, POWER));
        let step = Ext3::mul_over(power, combined);
        let trace_power = pow(gamma, self.trace_width as u64, one);
        let next_row = pow(gamma, (self.trace_width + self.quotient_width) as u64, one);
        let stepped_power = Ext3::mul_over(power, gamma_rate);
        let x = cur[POINT];
        let inverse_z = ext(cur, INVERSE_Z);
        let inverse_zw = ext(cur, INVERSE_ZW);
        let check_z = Ext3::mul_over(inverse_z, sub([x, zero, zero], z));
        let check_zw = Ext3::mul_over(inverse_zw, sub([x, zero, zero], zw));
        let value = add(
            Ext3::mul_over(sub(sum, at_z), inverse_z),
            Ext3::mul_over(
                next_row,
                Ext3::mul_over(sub(ext(cur, TRACE_SUM), at_zw), inverse_zw),
            ),
        );
        for c in 0..3 {
            b.every_row(p[BLOCK_START] * sum[c]);
            b.transition(p[CARRY] * (next[SUM + c] - sum[c]) - p[ABSORB] * step[c]);
            b.every_row(p[TRACE_POWER] * (power[c] - one[c]));
            b.every_row(p[QUOTIENT_POWER] * (power[c] - trace_power[c]));
            b.transition(f.periodic[LEAF_NEXT] * (next[POWER + c] - stepped_power[c]));
            b.transition(p[CARRY] * (next[TRACE_SUM + c] - cur[TRACE_SUM + c]));
            b.every_row(p[KEEP_TRACE_SUM] * (cur[TRACE_SUM + c] - sum[c]));
            b.every_row(p[DEEP_ROW] * (check_z[c] - one[c]));
            b.every_row(p[DEEP_ROW] * (check_zw[c] - one[c]));
            b.every_row(p[DEEP_ROW] * (cur[VALUE + c] - value[c]));
        }
        // x: SHIFT, then times ζ^(2^i) at each level whose bit is 1, then carried.
        b.every_row(p[POINT_START] * (x - B::Expr::from(LdePlan::SHIFT)));
        b.transition(p[POINT_MOVES] * (next[POINT] - x) - x * next[BIT] * p[POINT_STEP]);
    }
}
