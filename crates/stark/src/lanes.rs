//! The composition evaluated on a register of quotient points at once (the SIMD paths),
//! written once over [`PackedField`].
//!
//! An AIR's constraints are written over [`Algebra`](ballast_air::Algebra), so the same
//! `eval` runs on packed Goldilocks values: lane i of every value belongs to point i of the
//! group. The constraint values, sorted by domain, are then multiplied by their powers of α
//! (each split into base-field coordinates) and summed exactly in [`ProductSum`]s, reduced
//! once per domain, and the domains combined with their zerofiers, lane by lane in the
//! registers. Field arithmetic is exact, so Q is the scalar path's to the bit. The AIR's
//! `eval` is inlined into the kernel, and the kernel into its instruction set's entry point
//! ([`ballast_field::packed::run`]), so its arithmetic compiles to the packed instructions.

use ballast_air::lanes::gather;
use ballast_air::{Air, ConstraintBuilder, Domain, Frame};
use ballast_field::packed::{Halves, Kernel, PackedField, ProductSum};
use ballast_field::{Ext3, Felt};

use crate::task::Task;

/// The builder at a register of points: constraint values sorted by domain.
struct ByDomain<P>([Vec<P>; Domain::COUNT]);

impl<P: PackedField> ConstraintBuilder for ByDomain<P> {
    type Expr = P;

    #[inline(always)]
    fn assert_zero(&mut self, domain: Domain, value: P) {
        self.0[domain.index()].push(value);
    }
}

/// Σ_i coeffs_i·values_i, coordinate by coordinate: products of the values with each
/// coordinate of their coefficient, summed exactly and reduced once.
#[inline(always)]
fn fold<P: PackedField>(token: P::Token, coeffs: &[Ext3], values: &[P]) -> [P; 3] {
    let mut sums = [ProductSum::<P>::zero(token); 3];
    for (c, &v) in coeffs.iter().zip(values) {
        let v = Halves::of(v);
        for (sum, a) in sums.iter_mut().zip(c.coeffs()) {
            sum.add(Halves::splat(token, a), v);
        }
    }
    sums.map(|s| P::load(token, s.sum().as_ref()))
}

/// The task's quotient values into `chunk` (a multiple of the lane count long): a
/// [`Kernel`].
pub(crate) struct Evaluate<'t, 'a, A> {
    pub(crate) task: &'t Task<'a, A>,
    pub(crate) chunk: &'t mut [Ext3],
}

impl<A: Air> Kernel for Evaluate<'_, '_, A> {
    type Output = ();

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) {
        let Self { task, chunk } = self;
        let z = task.zerofiers(chunk.len());
        let width = task.lde.width();
        let table = task.lde.as_slice();
        let zero = P::splat(token, Felt::ZERO);
        let (mut current, mut next) = (vec![zero; width], vec![zero; width]);
        let mut periodic_row = vec![zero; task.periodic.len()];
        let public: Vec<P> = task
            .public_inputs
            .iter()
            .map(|&v| P::splat(token, v))
            .collect();
        let mut values = ByDomain::<P>(Default::default());
        for (g, out) in chunk.chunks_exact_mut(P::LANES).enumerate() {
            let j = g * P::LANES;
            let u0 = task.start + j;
            let rows = P::array(|k| task.rows_of(u0 + k));
            let rows = rows.as_ref();
            let at = P::array(|k| task.lde.row_offset(rows[k].0));
            let after = P::array(|k| task.lde.row_offset(rows[k].1));
            gather(token, table, at.as_ref(), &mut current);
            gather(token, table, after.as_ref(), &mut next);
            for (slot, column) in periodic_row.iter_mut().zip(task.periodic) {
                let lane = P::array(|k| column[task.geometry.point(u0 + k) % column.len()]);
                *slot = P::load(token, lane.as_ref());
            }
            let frame = Frame {
                current: &current,
                next: &next,
                periodic: &periodic_row,
                public_inputs: &public,
            };
            values.0.iter_mut().for_each(Vec::clear);
            task.air.eval(&frame, &mut values);
            let inverses = [&z.every, &z.transition, &z.first, &z.last];
            let mut q = [zero; 3];
            for ((coeffs, values), inv) in task.coeffs.iter().zip(&values.0).zip(inverses) {
                let inv = P::load(token, &inv[j..]);
                for (q, s) in q.iter_mut().zip(fold(token, coeffs, values)) {
                    *q += s * inv;
                }
            }
            let coords = q.map(|q| {
                let mut lanes = P::array(|_| Felt::ZERO);
                q.store(lanes.as_mut());
                lanes
            });
            for (k, slot) in out.iter_mut().enumerate() {
                *slot = Ext3::new([
                    coords[0].as_ref()[k],
                    coords[1].as_ref()[k],
                    coords[2].as_ref()[k],
                ]);
            }
        }
    }
}
