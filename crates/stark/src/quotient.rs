//! The composition (quotient) polynomial.
//!
//! With random α and constraint i asserted on domain D_i with zerofier Z_D,
//!
//! Q(x) = Σ_D (Σ_{i ∈ D} α^i·C_i(x)) / Z_D(x),
//!
//! Z_every = x^n − 1, Z_transition = (x^n − 1)/(x − ω^(n−1)), Z_first = x − 1,
//! Z_last = x − ω^(n−1). Q is a polynomial of degree < 2^c·n (c from
//! [`ConstraintInfo`]) exactly when the trace satisfies every constraint; otherwise, except
//! with probability about (#constraints)/|F| over α, it is not a polynomial at all and FRI
//! rejects.

use ballast_air::{Air, ConstraintBuilder, ConstraintInfo, Domain, Frame};
use ballast_field::{ColMatrix, Ext3, Felt, batch_inverse, dot_ext_base};
use ballast_ntt::{LdePlan, coset_points};
use rayon::prelude::*;

use crate::protocol::last_point;

/// Quotient points evaluated per parallel task.
const POINTS_PER_TASK: usize = 1 << 10;
/// Points whose rows are gathered together: each column is read as one short run.
const TILE: usize = 32;

/// The powers of α of each domain's constraints, in assertion order.
pub(crate) struct Composition {
    coeffs: [Vec<Ext3>; 4],
}

impl Composition {
    /// Assigns α^i to constraint i.
    pub(crate) fn new(info: &ConstraintInfo, alpha: Ext3) -> Self {
        let mut coeffs: [Vec<Ext3>; 4] = Default::default();
        for (&(domain, _), power) in info
            .constraints
            .iter()
            .zip(alpha.powers(info.constraints.len()))
        {
            coeffs[domain.index()].push(power);
        }
        Self { coeffs }
    }

    /// Q's evaluations on the coset g·H_q of size n·2^`log_chunks`, natural order, from the
    /// trace's LDE on g·H' (size n·2^`log_blowup`, natural order) and the periodic columns
    /// on g·H_q ([`crate::periodic::PeriodicPolys::on_quotient_coset`]).
    ///
    /// Quotient point t is LDE point t·2^(log_blowup − log_chunks); its next row is the LDE
    /// point 2^log_blowup further on.
    pub(crate) fn evaluate<A: Air>(
        &self,
        air: &A,
        lde: &ColMatrix,
        public_inputs: &[Felt],
        periodic: &[Vec<Felt>],
        log_blowup: usize,
        log_chunks: usize,
    ) -> Vec<Ext3> {
        let log_n = air.log_rows();
        let log_q = log_n + log_chunks;
        let stride = 1usize << (log_blowup - log_chunks);
        let blowup = 1usize << log_blowup;
        let omega_last = last_point(log_n);
        // x^n on g·H_q takes 2^log_chunks values: g^n·r^(t mod 2^log_chunks).
        let shift_n = LdePlan::SHIFT.pow(1 << log_n);
        let chunk_root = Felt::two_adic_root(log_chunks);
        let vanishing_inv: Vec<Felt> = (0..1u64 << log_chunks)
            .map(|k| (shift_n * chunk_root.pow(k) - Felt::ONE).inverse())
            .collect();
        let width = lde.width();
        let mut out = vec![Ext3::ZERO; 1 << log_q];
        out.par_chunks_mut(POINTS_PER_TASK)
            .enumerate()
            .for_each(|(task, chunk)| {
                let start = task * POINTS_PER_TASK;
                let xs = coset_points(LdePlan::SHIFT, log_q, start, chunk.len());
                let first_inv = invert(xs.iter().map(|&x| x - Felt::ONE));
                let last_inv = invert(xs.iter().map(|&x| x - omega_last));
                let mut current = vec![Felt::ZERO; TILE * width];
                let mut next = vec![Felt::ZERO; TILE * width];
                let mut periodic_row = vec![Felt::ZERO; periodic.len()];
                let mut values: [Vec<Felt>; 4] = Default::default();
                for (i, tile) in chunk.chunks_mut(TILE).enumerate() {
                    let t0 = start + i * TILE;
                    gather(
                        lde,
                        t0 * stride,
                        tile.len(),
                        stride,
                        blowup,
                        &mut current,
                        &mut next,
                    );
                    for (k, q) in tile.iter_mut().enumerate() {
                        let t = t0 + k;
                        for (slot, column) in periodic_row.iter_mut().zip(periodic) {
                            *slot = column[t % column.len()];
                        }
                        values.iter_mut().for_each(Vec::clear);
                        let frame = Frame {
                            current: &current[k * width..(k + 1) * width],
                            next: &next[k * width..(k + 1) * width],
                            periodic: &periodic_row,
                            public_inputs,
                        };
                        air.eval(&frame, &mut PointBuilder(&mut values));
                        let [every, transition, first, last] =
                            std::array::from_fn(|d| dot_ext_base(&self.coeffs[d], &values[d]));
                        let j = i * TILE + k;
                        let every_inv = vanishing_inv[t & ((1 << log_chunks) - 1)];
                        let transition_inv = (xs[j] - omega_last) * every_inv;
                        *q = every.scale(every_inv)
                            + transition.scale(transition_inv)
                            + first.scale(first_inv[j])
                            + last.scale(last_inv[j]);
                    }
                }
            });
        out
    }

    /// Q(z) from the constraint values at z in assertion order (the verifier's side).
    pub(crate) fn combine_at(
        &self,
        info: &ConstraintInfo,
        values: &[Ext3],
        z: Ext3,
        log_rows: usize,
    ) -> Ext3 {
        let mut sums = [Ext3::ZERO; 4];
        let mut used = [0usize; 4];
        for (&(domain, _), &value) in info.constraints.iter().zip(values) {
            let d = domain.index();
            sums[d] += self.coeffs[d][used[d]] * value;
            used[d] += 1;
        }
        let omega_last = Ext3::from(last_point(log_rows));
        let vanishing = z.pow(1 << log_rows) - Ext3::ONE;
        // draw_ood_point keeps z out of H, so none of these denominators is zero.
        let every_inv = vanishing.inverse();
        let zerofier_inv = |domain: Domain| match domain {
            Domain::EveryRow => every_inv,
            Domain::Transition => (z - omega_last) * every_inv,
            Domain::FirstRow => (z - Ext3::ONE).inverse(),
            Domain::LastRow => (z - omega_last).inverse(),
        };
        Domain::ALL.iter().fold(Ext3::ZERO, |acc, &d| {
            acc + sums[d.index()] * zerofier_inv(d)
        })
    }
}

/// Rows `first_row`, `first_row + stride`, … (`count` of them) of `lde` and the rows
/// `blowup` after each, gathered row-major into `current` and `next`: one short run per
/// column instead of one scattered read per value.
fn gather(
    lde: &ColMatrix,
    first_row: usize,
    count: usize,
    stride: usize,
    blowup: usize,
    current: &mut [Felt],
    next: &mut [Felt],
) {
    let width = lde.width();
    let mask = lde.height() - 1;
    for (c, column) in lde.columns().enumerate() {
        for k in 0..count {
            let row = first_row + k * stride;
            current[k * width + c] = column[row];
            next[k * width + c] = column[(row + blowup) & mask];
        }
    }
}

/// The prover's builder at one quotient point: constraint values sorted by domain.
struct PointBuilder<'a>(&'a mut [Vec<Felt>; 4]);

impl ConstraintBuilder for PointBuilder<'_> {
    type Expr = Felt;

    fn assert_zero(&mut self, domain: Domain, value: Felt) {
        self.0[domain.index()].push(value);
    }
}

/// Inverses of non-zero base-field values (points of g·H_q are never 1 or ω^(n−1)).
fn invert(values: impl Iterator<Item = Felt>) -> Vec<Felt> {
    let values: Vec<Felt> = values.collect();
    batch_inverse(&values).expect("coset points avoid the trace domain")
}
