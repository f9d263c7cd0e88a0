//! The composition evaluated on a register of quotient points at once (the SIMD paths).
//!
//! An AIR's constraints are written over [`Algebra`](ballast_air::Algebra), so the same
//! `eval` runs on packed Goldilocks values: lane i of every value belongs to point i of the
//! group. Each constraint's value is multiplied by its power of α (split into base-field
//! coordinates: three packed products) and summed per domain as it is asserted, then the
//! domains are combined with their zerofiers lane by lane. Field arithmetic is exact, so Q
//! is the scalar path's to the bit. The functions carry `#[target_feature]`, and the AIR's
//! `eval` is inlined into them, so its arithmetic compiles to the packed instructions.

/// One body for both instruction sets.
macro_rules! lanes {
    ($isa:ident, $packed:path, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        pub(crate) mod $isa {
            use ballast_air::lanes::$isa::gather;
            use ballast_air::{Air, ConstraintBuilder, Domain, Frame};
            use ballast_field::{Ext3, Felt};
            use $packed as Packed;

            use crate::quotient::Task;

            const LANES: usize = Packed::LANES;

            /// A packed extension element: three packed base-field coordinates.
            type PackedExt = [Packed; 3];

            /// The builder at a register of points: each constraint's value times its power
            /// of α, summed per domain.
            struct Folder<'a> {
                coeffs: &'a [Vec<Ext3>; 4],
                used: [usize; 4],
                sums: [PackedExt; 4],
            }

            impl ConstraintBuilder for Folder<'_> {
                type Expr = Packed;

                #[inline(always)]
                fn assert_zero(&mut self, domain: Domain, value: Packed) {
                    let d = domain.index();
                    let [a0, a1, a2] = self.coeffs[d][self.used[d]].coeffs();
                    self.used[d] += 1;
                    let sum = &mut self.sums[d];
                    sum[0] += value.scale(a0);
                    sum[1] += value.scale(a1);
                    sum[2] += value.scale(a2);
                }
            }

            /// The task's quotient values; `chunk.len()` is a multiple of the lane count.
            #[target_feature(enable = $feature)]
            pub(crate) fn evaluate<A: Air>(task: &Task<'_, A>, chunk: &mut [Ext3]) {
                let z = task.zerofiers(chunk.len());
                let width = task.lde.width();
                let values = task.lde.as_slice();
                let zero = Packed::splat(Felt::ZERO);
                let (mut current, mut next) = (vec![zero; width], vec![zero; width]);
                let mut periodic_row = vec![zero; task.periodic.len()];
                let public: Vec<Packed> = task
                    .public_inputs
                    .iter()
                    .map(|&v| Packed::splat(v))
                    .collect();
                for (g, out) in chunk.chunks_exact_mut(LANES).enumerate() {
                    let j = g * LANES;
                    let t0 = task.start + j;
                    let rows: [(usize, usize); LANES] =
                        std::array::from_fn(|k| task.rows_of(t0 + k));
                    let at = rows.map(|(row, _)| task.lde.row_offset(row));
                    let after = rows.map(|(_, next)| task.lde.row_offset(next));
                    gather(values, &at, &mut current);
                    gather(values, &after, &mut next);
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
                    let mut folder = Folder {
                        coeffs: &task.composition.coeffs,
                        used: [0; 4],
                        sums: [[zero; 3]; 4],
                    };
                    task.air.eval(&frame, &mut folder);
                    let inverses = [&z.every, &z.transition, &z.first, &z.last]
                        .map(|inv| Packed::load(&inv[j..]));
                    let mut q = [zero; 3];
                    for (sum, inv) in folder.sums.iter().zip(inverses) {
                        for (q, s) in q.iter_mut().zip(sum) {
                            *q += *s * inv;
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

lanes!(avx2, ballast_field::packed::avx2::Packed, "avx2");
lanes!(avx512, ballast_field::packed::avx512::Packed, "avx512f");
