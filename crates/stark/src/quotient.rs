//! The composition (quotient) polynomial.
//!
//! With random α, the constraints combine into
//!
//! Q(x) = Σ_i α^i·C_i(x)·(x − ω^(n−1))/(x^n − 1) + Σ_b α^(T+b)·(T_(c_b)(x) − v_b)/(x − x_b)
//!
//! where C_i are the T transition constraints (zero on every row but the last, hence the
//! zerofier (x^n − 1)/(x − ω^(n−1))) and each boundary b pins column c_b to v_b at x_b = 1
//! (first row) or ω^(n−1) (last row). Q is a polynomial of degree < max(d − 1, 1)·n exactly
//! when the trace satisfies every constraint; otherwise, except with probability about
//! (T + B)/|F| over α, it is not a polynomial at all and FRI rejects.

use ballast_air::{Air, BoundaryRow};
use ballast_field::{ColMatrix, Ext3, Felt, batch_inverse, dot_ext_base};
use ballast_ntt::{LdePlan, coset_points};
use rayon::prelude::*;

use crate::protocol::last_point;

/// Quotient points evaluated per parallel task.
const POINTS_PER_TASK: usize = 1 << 10;

/// The powers of α assigned to each constraint, and the boundary constraints grouped by row.
pub(crate) struct Composition {
    transition: Vec<Ext3>,
    first: BoundaryGroup,
    last: BoundaryGroup,
}

/// Boundary constraints on one row: Σ coeff·(T_c(x) − v) = Σ coeff·T_c(x) − offset.
struct BoundaryGroup {
    columns: Vec<usize>,
    coeffs: Vec<Ext3>,
    offset: Ext3,
}

impl BoundaryGroup {
    fn new() -> Self {
        Self {
            columns: Vec::new(),
            coeffs: Vec::new(),
            offset: Ext3::ZERO,
        }
    }

    /// The group's value on a trace row; `scratch` holds the gathered columns.
    fn eval_base(&self, row: &[Felt], scratch: &mut Vec<Felt>) -> Ext3 {
        scratch.clear();
        scratch.extend(self.columns.iter().map(|&c| row[c]));
        dot_ext_base(&self.coeffs, scratch) - self.offset
    }

    /// The group's value at an out-of-domain point.
    fn eval_ext(&self, row: &[Ext3]) -> Ext3 {
        self.columns
            .iter()
            .zip(&self.coeffs)
            .fold(Ext3::ZERO, |acc, (&c, &coeff)| acc + coeff * row[c])
            - self.offset
    }
}

impl Composition {
    /// Assigns α^0 … α^(T−1) to the transitions and the next powers to the boundaries.
    pub(crate) fn new<A: Air>(air: &A, alpha: Ext3) -> Self {
        let boundaries = air.boundaries();
        let num_transitions = air.num_transition_constraints();
        let powers = alpha.powers(num_transitions + boundaries.len());
        let (transition, boundary_powers) = powers.split_at(num_transitions);
        let (mut first, mut last) = (BoundaryGroup::new(), BoundaryGroup::new());
        for (b, &coeff) in boundaries.iter().zip(boundary_powers) {
            let group = match b.row {
                BoundaryRow::First => &mut first,
                BoundaryRow::Last => &mut last,
            };
            group.columns.push(b.column);
            group.coeffs.push(coeff);
            group.offset += coeff.scale(b.value);
        }
        Self {
            transition: transition.to_vec(),
            first,
            last,
        }
    }

    /// Q's evaluations on the coset g·H_q of size n·2^`log_chunks`, natural order, from the
    /// trace's LDE on g·H' (size n·2^`log_blowup`, natural order).
    ///
    /// Quotient point t is LDE point t·2^(log_blowup − log_chunks); its next row is the LDE
    /// point 2^log_blowup further on.
    pub(crate) fn evaluate<A: Air>(
        &self,
        air: &A,
        lde: &ColMatrix,
        log_blowup: usize,
        log_chunks: usize,
    ) -> Vec<Ext3> {
        let log_n = air.log_rows();
        let log_q = log_n + log_chunks;
        let stride = 1usize << (log_blowup - log_chunks);
        let blowup = 1usize << log_blowup;
        let lde_mask = lde.height() - 1;
        let omega_last = last_point(log_n);
        // x^n on g·H_q takes 2^log_chunks values: g^n·r^(t mod 2^log_chunks).
        let shift_n = LdePlan::SHIFT.pow(1 << log_n);
        let chunk_root = Felt::two_adic_root(log_chunks);
        let vanishing_inv: Vec<Felt> = (0..1u64 << log_chunks)
            .map(|k| (shift_n * chunk_root.pow(k) - Felt::ONE).inverse())
            .collect();
        let width = lde.width();
        let num_constraints = air.num_transition_constraints();

        let mut out = vec![Ext3::ZERO; 1 << log_q];
        out.par_chunks_mut(POINTS_PER_TASK)
            .enumerate()
            .for_each(|(task, chunk)| {
                let start = task * POINTS_PER_TASK;
                let xs = coset_points(LdePlan::SHIFT, log_q, start, chunk.len());
                let first_inv = invert(xs.iter().map(|&x| x - Felt::ONE));
                let last_inv = invert(xs.iter().map(|&x| x - omega_last));
                let (mut current, mut next) = (vec![Felt::ZERO; width], vec![Felt::ZERO; width]);
                let mut constraints = vec![Felt::ZERO; num_constraints];
                let mut scratch = Vec::with_capacity(width);
                for (k, q) in chunk.iter_mut().enumerate() {
                    let t = start + k;
                    let row = t * stride;
                    let next_row = (row + blowup) & lde_mask;
                    lde.read_row(row, &mut current);
                    lde.read_row(next_row, &mut next);
                    air.eval_transition(&current, &next, &mut constraints);
                    let transition = dot_ext_base(&self.transition, &constraints);
                    let zerofier_inv =
                        (xs[k] - omega_last) * vanishing_inv[t & ((1 << log_chunks) - 1)];
                    let first = self.first.eval_base(&current, &mut scratch);
                    let last = self.last.eval_base(&current, &mut scratch);
                    *q = transition.scale(zerofier_inv)
                        + first.scale(first_inv[k])
                        + last.scale(last_inv[k]);
                }
            });
        out
    }

    /// Q(z) from the trace polynomials' values at z and z·ω (the verifier's side).
    pub(crate) fn evaluate_at<A: Air>(
        &self,
        air: &A,
        trace_z: &[Ext3],
        trace_zw: &[Ext3],
        z: Ext3,
    ) -> Ext3 {
        let log_n = air.log_rows();
        let omega_last = Ext3::from(last_point(log_n));
        let mut constraints = vec![Ext3::ZERO; air.num_transition_constraints()];
        air.eval_transition(trace_z, trace_zw, &mut constraints);
        let transition = self
            .transition
            .iter()
            .zip(&constraints)
            .fold(Ext3::ZERO, |acc, (&coeff, &c)| acc + coeff * c);
        let vanishing = z.pow(1 << log_n) - Ext3::ONE;
        // draw_ood_point keeps z out of H, so none of these denominators is zero.
        let zerofier_inv = (z - omega_last) * vanishing.inverse();
        let first = self.first.eval_ext(trace_z);
        let last = self.last.eval_ext(trace_z);
        transition * zerofier_inv
            + first * (z - Ext3::ONE).inverse()
            + last * (z - omega_last).inverse()
    }
}

/// Inverses of non-zero base-field values (points of g·H_q are never 1 or ω^(n−1)).
fn invert(values: impl Iterator<Item = Felt>) -> Vec<Felt> {
    let values: Vec<Felt> = values.collect();
    batch_inverse(&values).expect("coset points avoid the trace domain")
}
