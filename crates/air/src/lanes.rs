//! The trace check on a register of rows at once (the SIMD paths): constraints are written
//! over [`Algebra`](crate::Algebra), so `eval` runs on packed values, lane i holding row i
//! of the group. A group passes when every constraint that applies to a lane's row is zero
//! there; a tile with any failure is checked again row by row, which names the first one.

/// One body for both instruction sets.
macro_rules! lanes {
    ($isa:ident, $packed:path, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        pub(crate) mod $isa {
            use ballast_field::Felt;
            use $packed as Packed;

            use crate::{Air, ConstraintBuilder, Domain, Frame, PeriodicColumn};

            const LANES: usize = Packed::LANES;

            /// Which lanes hold a non-zero value, per domain.
            struct Nonzero([u8; 4]);

            impl ConstraintBuilder for Nonzero {
                type Expr = Packed;

                #[inline(always)]
                fn assert_zero(&mut self, domain: Domain, value: Packed) {
                    // SAFETY: `value` exists, so the CPU supports the feature.
                    self.0[domain.index()] |= unsafe { value.nonzero_lanes() };
                }
            }

            /// True when rows `first .. first + tile` all satisfy the AIR. `columns` holds,
            /// column after column, each column's values at rows `first ..= first + tile`
            /// (`tile + 1` of them); `tile` is a multiple of the lane count.
            #[target_feature(enable = $feature)]
            pub(crate) fn tile_passes<A: Air>(
                air: &A,
                columns: &[Felt],
                tile: usize,
                first: usize,
                last: usize,
                periodic: &[PeriodicColumn],
                public_inputs: &[Felt],
            ) -> bool {
                let width = air.width();
                let zero = Packed::splat(Felt::ZERO);
                let (mut current, mut next) = (vec![zero; width], vec![zero; width]);
                let mut periodic_row = vec![zero; periodic.len()];
                let public: Vec<Packed> = public_inputs.iter().map(|&v| Packed::splat(v)).collect();
                for g in (0..tile).step_by(LANES) {
                    for c in 0..width {
                        current[c] = Packed::load(&columns[c * (tile + 1) + g..]);
                        next[c] = Packed::load(&columns[c * (tile + 1) + g + 1..]);
                    }
                    for (slot, column) in periodic_row.iter_mut().zip(periodic) {
                        let values = &column.values;
                        let lane: [Felt; LANES] =
                            std::array::from_fn(|k| values[(first + g + k) % values.len()]);
                        *slot = Packed::load(&lane);
                    }
                    let frame = Frame {
                        current: &current,
                        next: &next,
                        periodic: &periodic_row,
                        public_inputs: &public,
                    };
                    let mut nonzero = Nonzero([0; 4]);
                    air.eval(&frame, &mut nonzero);
                    let [every, transition, first_row, last_row] = nonzero.0;
                    for k in 0..LANES {
                        let row = first + g + k;
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
        }
    };
}

lanes!(avx2, ballast_field::packed::avx2::Packed, "avx2");
lanes!(avx512, ballast_field::packed::avx512::Packed, "avx512f");
