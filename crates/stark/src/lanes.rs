//! The composition evaluated on a register of quotient points at once (the SIMD paths).
//!
//! An AIR's constraints are written over [`Algebra`](ballast_air::Algebra), so the same
//! `eval` runs on packed Goldilocks values: lane i of every value belongs to point i of the
//! group. The constraint values, sorted by domain, are then multiplied by their powers of α
//! (each split into base-field coordinates) and summed exactly in
//! [`ProductSum`](ballast_field::packed::avx2::ProductSum)s, reduced once per domain, and the
//! domains combined with their zerofiers, lane by lane in the registers. Field arithmetic is exact, so Q
//! is the scalar path's to the bit. The functions carry `#[target_feature]`, and the AIR's
//! `eval` is inlined into them, so its arithmetic compiles to the packed instructions.

/// One body for both instruction sets.
macro_rules! lanes {
    ($isa:ident, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        pub(crate) mod $isa {
            use ballast_air::lanes::$isa::gather;
            use ballast_air::{Air, ConstraintBuilder, Domain, Frame};
            use ballast_field::packed::$isa::{Halves, Packed, ProductSum};
            use ballast_field::{Ext3, Felt};

            use crate::task::Task;

            const LANES: usize = Packed::LANES;

            /// A packed extension element: three packed base-field coordinates.
            type PackedExt = [Packed; 3];

            /// The builder at a register of points: constraint values sorted by domain.
            struct ByDomain([Vec<Packed>; Domain::COUNT]);

            impl ConstraintBuilder for ByDomain {
                type Expr = Packed;

                #[inline(always)]
                fn assert_zero(&mut self, domain: Domain, value: Packed) {
                    self.0[domain.index()].push(value);
                }
            }

            /// Σ_i coeffs_i·values_i, coordinate by coordinate: products of the values with
            /// each coordinate of their coefficient, summed exactly and reduced once.
            #[inline]
            #[target_feature(enable = $feature)]
            fn fold(coeffs: &[Ext3], values: &[Packed]) -> PackedExt {
                let mut sums = [ProductSum::zero(); 3];
                for (c, &v) in coeffs.iter().zip(values) {
                    let v = Halves::of(v);
                    for (sum, a) in sums.iter_mut().zip(c.coeffs()) {
                        sum.add(Halves::splat(a), v);
                    }
                }
                [
                    Packed::load(&sums[0].sum()),
                    Packed::load(&sums[1].sum()),
                    Packed::load(&sums[2].sum()),
                ]
            }

            /// The task's quotient values; `chunk.len()` is a multiple of the lane count.
            #[target_feature(enable = $feature)]
            pub(crate) fn evaluate<A: Air>(task: &Task<'_, A>, chunk: &mut [Ext3]) {
                let z = task.zerofiers(chunk.len());
                let width = task.lde.width();
                let table = task.lde.as_slice();
                let zero = Packed::splat(Felt::ZERO);
                let (mut current, mut next) = (vec![zero; width], vec![zero; width]);
                let mut periodic_row = vec![zero; task.periodic.len()];
                let public: Vec<Packed> = task
                    .public_inputs
                    .iter()
                    .map(|&v| Packed::splat(v))
                    .collect();
                let mut values = ByDomain(Default::default());
                for (g, out) in chunk.chunks_exact_mut(LANES).enumerate() {
                    let j = g * LANES;
                    let t0 = task.start + j;
                    let rows: [(usize, usize); LANES] =
                        std::array::from_fn(|k| task.rows_of(t0 + k));
                    let at = rows.map(|(row, _)| task.lde.row_offset(row));
                    let after = rows.map(|(_, next)| task.lde.row_offset(next));
                    gather(table, &at, &mut current);
                    gather(table, &after, &mut next);
                    for (slot, column) in periodic_row.iter_mut().zip(task.periodic) {
                        let lane: [Felt; LANES] =
                            std::array::from_fn(|k| column[(t0 + k) % column.len()]);
                        *slot = Packed::load(&lane);
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
                        let inv = Packed::load(&inv[j..]);
                        for (q, s) in q.iter_mut().zip(fold(coeffs, values)) {
                            *q = q.add(s.mul(inv));
                        }
                    }
                    let mut coords = [[Felt::ZERO; LANES]; 3];
                    for (coord, q) in coords.iter_mut().zip(q) {
                        q.store(coord);
                    }
                    for (k, slot) in out.iter_mut().enumerate() {
                        *slot = Ext3::new([coords[0][k], coords[1][k], coords[2][k]]);
                    }
                }
            }
        }
    };
}

lanes!(avx2, "avx2");
lanes!(avx512, "avx512f");
