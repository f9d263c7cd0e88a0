//! The composition evaluated on a register of quotient points at once (the SIMD paths).
//!
//! An AIR's constraints are written over [`Algebra`](ballast_air::Algebra), so the same
//! `eval` runs on packed Goldilocks values: lane i of every value belongs to point i of the
//! group. Each group's constraint values are then split by lane and combined exactly as on
//! the scalar path, so Q is the same to the bit. The functions carry `#[target_feature]`, and
//! the AIR's `eval` is inlined into them, so its arithmetic compiles to the packed
//! instructions.

/// One body for both instruction sets.
macro_rules! lanes {
    ($isa:ident, $packed:path, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        pub(crate) mod $isa {
            use ballast_air::{Air, Frame};
            use ballast_field::{Ext3, Felt};
            use $packed as Packed;

            use crate::quotient::{PointBuilder, TILE, Task};

            const LANES: usize = Packed::LANES;

            /// The task's quotient values; `chunk.len()` is a multiple of [`TILE`].
            #[target_feature(enable = $feature)]
            pub(crate) fn evaluate<A: Air>(task: &Task<'_, A>, chunk: &mut [Ext3]) {
                let z = task.zerofiers(chunk.len());
                let width = task.lde.width();
                let mut current = vec![Felt::ZERO; TILE * width];
                let mut next = vec![Felt::ZERO; TILE * width];
                let zero = Packed::splat(Felt::ZERO);
                let (mut row, mut next_row) = (vec![zero; width], vec![zero; width]);
                let mut periodic_row = vec![zero; task.periodic.len()];
                let public: Vec<Packed> = task
                    .public_inputs
                    .iter()
                    .map(|&v| Packed::splat(v))
                    .collect();
                let mut values: [Vec<Packed>; 4] = Default::default();
                let mut lanes: [Vec<Felt>; 4] = Default::default();
                let mut lane_values: [Vec<Felt>; 4] = Default::default();
                for (i, tile) in chunk.chunks_mut(TILE).enumerate() {
                    let t0 = task.start + i * TILE;
                    task.gather_tile(t0, TILE, &mut current, &mut next);
                    for g in (0..TILE).step_by(LANES) {
                        for c in 0..width {
                            row[c] = Packed::load(&current[c * TILE + g..]);
                            next_row[c] = Packed::load(&next[c * TILE + g..]);
                        }
                        for (slot, column) in periodic_row.iter_mut().zip(task.periodic) {
                            let lane: [Felt; LANES] =
                                std::array::from_fn(|k| column[(t0 + g + k) % column.len()]);
                            *slot = Packed::load(&lane);
                        }
                        values.iter_mut().for_each(Vec::clear);
                        let frame = Frame {
                            current: &row,
                            next: &next_row,
                            periodic: &periodic_row,
                            public_inputs: &public,
                        };
                        task.air.eval(&frame, &mut PointBuilder(&mut values));
                        // Constraint j's lane k at lanes[d][j·LANES + k].
                        for (flat, packed) in lanes.iter_mut().zip(&values) {
                            flat.resize(packed.len() * LANES, Felt::ZERO);
                            for (out, v) in flat.chunks_exact_mut(LANES).zip(packed) {
                                v.store(out);
                            }
                        }
                        for k in 0..LANES {
                            for (one, flat) in lane_values.iter_mut().zip(&lanes) {
                                one.clear();
                                one.extend(flat.iter().skip(k).step_by(LANES));
                            }
                            let j = i * TILE + g + k;
                            tile[g + k] =
                                task.combine(&z, j, std::array::from_fn(|d| &lane_values[d][..]));
                        }
                    }
                }
            }
        }
    };
}

lanes!(avx2, ballast_field::packed::avx2::Packed, "avx2");
lanes!(avx512, ballast_field::packed::avx512::Packed, "avx512f");
