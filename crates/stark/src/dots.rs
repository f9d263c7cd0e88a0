//! The table's dot products on the SIMD paths: the DEEP combination of a block's rows and
//! the out-of-domain sums of each column.
//!
//! Both multiply base-field values by extension coefficients, coordinate by coordinate, and
//! add the products exactly in [`ProductSum`](ballast_field::packed::avx2::ProductSum)s,
//! reducing once per result; field arithmetic is exact, so every result equals the scalar
//! path's.

/// A run of trace rows the out-of-domain sums visit, a register of rows at a time: where
/// each row of a group is in the table, and the two weights each row carries.
pub(crate) struct WeightedRows<const LANES: usize> {
    /// Per group, [`RowBlocks::row_offset`](ballast_field::RowBlocks::row_offset) of each
    /// lane's row.
    pub(crate) offsets: Vec<[usize; LANES]>,
    /// Per group, each weight's coordinates, lane by lane: `weights[g][w][i][k]`.
    pub(crate) weights: Vec<[[[ballast_field::Felt; LANES]; 3]; 2]>,
}

/// One body for both instruction sets.
macro_rules! dots {
    ($isa:ident, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        pub(crate) mod $isa {
            use ballast_field::packed::$isa::{Halves, Packed, ProductSum};
            use ballast_field::{BLOCK_ROWS, Ext3, Felt, prefetch};

            use super::WeightedRows;

            /// Elements per register.
            pub(crate) const LANES: usize = Packed::LANES;

            /// How far ahead of a block's reads to prefetch: 16 runs (1 KiB).
            const PREFETCH_AHEAD: usize = 16 * BLOCK_ROWS;

            /// The dot products of a block's rows with `coeffs` (one per column), a register
            /// of rows at a time.
            #[target_feature(enable = $feature)]
            pub(crate) fn dot_block_rows(coeffs: &[Ext3], block: &[Felt]) -> [Ext3; BLOCK_ROWS] {
                assert_eq!(
                    coeffs.len() * BLOCK_ROWS,
                    block.len(),
                    "one coefficient per column"
                );
                let mut out = [Ext3::ZERO; BLOCK_ROWS];
                for first in (0..BLOCK_ROWS).step_by(LANES) {
                    let mut sums = [ProductSum::zero(); 3];
                    for (i, (c, run)) in coeffs
                        .iter()
                        .zip(block.chunks_exact(BLOCK_ROWS))
                        .enumerate()
                    {
                        prefetch(block, i * BLOCK_ROWS + PREFETCH_AHEAD);
                        let values = Halves::of(Packed::load(&run[first..]));
                        for (sum, a) in sums.iter_mut().zip(c.coeffs()) {
                            sum.add(Halves::splat(a), values);
                        }
                    }
                    let [x, y, z] = [sums[0].sum(), sums[1].sum(), sums[2].sum()];
                    for k in 0..LANES {
                        out[first + k] = Ext3::new([x[k], y[k], z[k]]);
                    }
                }
                out
            }

            /// For each column in `columns`: Σ_rows weight·value for each of the two weights,
            /// over `rows` of the table `values` ([`ballast_field::RowBlocks::as_slice`]).
            /// Group by group (each reads one run per column from each of its blocks), with
            /// the columns' sums kept in the core's cache.
            #[target_feature(enable = $feature)]
            pub(crate) fn weighted_column_sums(
                values: &[Felt],
                columns: std::ops::Range<usize>,
                rows: &WeightedRows<LANES>,
                out: &mut [[Ext3; 2]],
            ) {
                let mut sums = vec![[[ProductSum::zero(); 3]; 2]; columns.len()];
                for (g, (offsets, weights)) in rows.offsets.iter().zip(&rows.weights).enumerate() {
                    // The groups two ahead: their rows' runs of these columns.
                    if let Some(ahead) = rows.offsets.get(g + 2) {
                        for &row in [ahead[0], ahead[LANES - 1]].iter() {
                            for c in columns.clone() {
                                prefetch(values, row + BLOCK_ROWS * c);
                            }
                        }
                    }
                    let mut halves = [[Halves::splat(Felt::ZERO); 3]; 2];
                    for (h, weight) in halves.iter_mut().zip(weights) {
                        for (h, coordinate) in h.iter_mut().zip(weight) {
                            *h = Halves::of(Packed::load(coordinate));
                        }
                    }
                    for (sums, c) in sums.iter_mut().zip(columns.clone()) {
                        let lanes: [Felt; LANES] =
                            std::array::from_fn(|k| values[offsets[k] + BLOCK_ROWS * c]);
                        let v = Halves::of(Packed::load(&lanes));
                        for (sums, h) in sums.iter_mut().zip(&halves) {
                            for (sum, &h) in sums.iter_mut().zip(h) {
                                sum.add(h, v);
                            }
                        }
                    }
                }
                for (out, sums) in out.iter_mut().zip(sums) {
                    for (slot, sums) in out.iter_mut().zip(sums) {
                        let mut coordinates = [Felt::ZERO; 3];
                        for (total, sum) in coordinates.iter_mut().zip(sums) {
                            *total = sum.sum().iter().fold(Felt::ZERO, |a, &b| a + b);
                        }
                        *slot = Ext3::new(coordinates);
                    }
                }
            }
        }
    };
}

dots!(avx2, "avx2");
dots!(avx512, "avx512f");
