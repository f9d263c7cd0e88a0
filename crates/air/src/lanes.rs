//! The trace check on a register of rows at once (the SIMD paths): constraints are written
//! over [`Algebra`](crate::Algebra), so `eval` runs on packed values, lane i holding row i
//! of the group. A group passes when every constraint that applies to a lane's row is zero
//! there; a task with any failure is checked again row by row, which names the first one.
//! [`gather`](avx2::gather) loads a column of several rows of a
//! [`RowBlocks`](ballast_field::RowBlocks) table into one register; the prover's composition
//! uses it too.

/// One body for both instruction sets.
macro_rules! lanes {
    ($isa:ident, $packed:path, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[doc = concat!("The ", $feature, " bodies.")]
        pub mod $isa {
            use std::ops::Range;

            use ballast_field::{BLOCK_ROWS, Felt, RowBlocks, prefetch};
            use $packed as Packed;

            use crate::{Air, ConstraintBuilder, Domain, Frame, PeriodicColumn};

            const LANES: usize = Packed::LANES;

            /// Which lanes hold a non-zero value, per domain.
            struct Nonzero([u8; Domain::COUNT]);

            impl ConstraintBuilder for Nonzero {
                type Expr = Packed;

                #[inline(always)]
                fn assert_zero(&mut self, domain: Domain, value: Packed) {
                    // SAFETY: `value` exists, so the CPU supports the feature.
                    self.0[domain.index()] |= unsafe { value.nonzero_lanes() };
                }
            }

            /// True when `rows` (a multiple of the lane count) all satisfy the AIR.
            #[target_feature(enable = $feature)]
            pub(crate) fn rows_pass<A: Air>(
                air: &A,
                trace: &RowBlocks,
                rows: Range<usize>,
                periodic: &[PeriodicColumn],
                public_inputs: &[Felt],
            ) -> bool {
                let width = air.width();
                let height = trace.height();
                let last = height - 1;
                let values = trace.as_slice();
                let zero = Packed::splat(Felt::ZERO);
                let (mut current, mut next) = (vec![zero; width], vec![zero; width]);
                let mut periodic_row = vec![zero; periodic.len()];
                let public: Vec<Packed> = public_inputs.iter().map(|&v| Packed::splat(v)).collect();
                for first in rows.step_by(LANES) {
                    let at: [usize; LANES] = std::array::from_fn(|k| trace.row_offset(first + k));
                    let after: [usize; LANES] =
                        std::array::from_fn(|k| trace.row_offset((first + k + 1) % height));
                    gather(values, &at, &mut current);
                    gather(values, &after, &mut next);
                    for (slot, column) in periodic_row.iter_mut().zip(periodic) {
                        let values = &column.values;
                        let lane: [Felt; LANES] =
                            std::array::from_fn(|k| values[(first + k) % values.len()]);
                        *slot = Packed::load(&lane);
                    }
                    let frame = Frame {
                        current: &current,
                        next: &next,
                        periodic: &periodic_row,
                        public_inputs: &public,
                    };
                    let mut nonzero = Nonzero([0; Domain::COUNT]);
                    air.eval(&frame, &mut nonzero);
                    let [every, transition, first_row, last_row] = nonzero.0;
                    for k in 0..LANES {
                        let row = first + k;
                        let bit = |mask: u8| mask >> k & 1 == 1;
                        if bit(every)
                            || (row != last && bit(transition))
                            || (row == 0 && bit(first_row))
                            || (row == last && bit(last_row))
                        {
                            return false;
                        }
                    }
                }
                true
            }

            /// Column c of the rows at `offsets` ([`RowBlocks::row_offset`]) into `out[c]`,
            /// one row per lane: a plain load where the rows are consecutive in a block.
            ///
            /// # Safety
            /// The CPU must support the instruction set: call it from code compiled for it,
            /// behind a `ballast_cpu` token.
            #[inline]
            #[target_feature(enable = $feature)]
            pub fn gather(values: &[Felt], offsets: &[usize; LANES], out: &mut [Packed]) {
                // The runs are read in order through each block: prefetch ahead of them.
                const AHEAD: usize = 16 * BLOCK_ROWS;
                let base = offsets[0];
                if offsets.iter().enumerate().all(|(k, &o)| o == base + k) {
                    for (c, slot) in out.iter_mut().enumerate() {
                        prefetch(values, base + BLOCK_ROWS * c + AHEAD);
                        *slot = Packed::load(&values[base + BLOCK_ROWS * c..]);
                    }
                } else {
                    let last = offsets[LANES - 1];
                    for (c, slot) in out.iter_mut().enumerate() {
                        prefetch(values, base + BLOCK_ROWS * c + AHEAD);
                        prefetch(values, last + BLOCK_ROWS * c + AHEAD);
                        let lanes: [Felt; LANES] =
                            std::array::from_fn(|k| values[offsets[k] + BLOCK_ROWS * c]);
                        *slot = Packed::load(&lanes);
                    }
                }
            }
        }
    };
}

lanes!(avx2, ballast_field::packed::avx2::Packed, "avx2");
lanes!(avx512, ballast_field::packed::avx512::Packed, "avx512f");
