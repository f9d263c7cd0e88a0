//! The table's dot products on the SIMD paths, written once over [`PackedField`]: the DEEP
//! combination of a block's rows and the out-of-domain sums of each column.
//!
//! Both multiply base-field values by extension coefficients, coordinate by coordinate, and
//! add the products exactly in [`ProductSum`]s, reducing once per result; field arithmetic is
//! exact, so every result equals the scalar path's.

use std::ops::Range;

use ballast_field::packed::{Halves, Kernel, PackedField, ProductSum};
use ballast_field::{BLOCK_ROWS, Ext3, Felt, prefetch};

/// How far ahead of a block's reads to prefetch: 16 runs (1 KiB).
const PREFETCH_AHEAD: usize = 16 * BLOCK_ROWS;

/// A run of trace rows the out-of-domain sums visit, a register of rows at a time: where
/// each row of a group is in the table, and the two weights each row carries.
pub(crate) struct WeightedRows<P: PackedField> {
    /// Per group, [`RowBlocks::row_offset`](ballast_field::RowBlocks::row_offset) of each
    /// lane's row.
    pub(crate) offsets: Vec<P::Array<usize>>,
    /// Per group, each weight's coordinates, lane by lane: `weights[g][w][i].as_ref()[k]`.
    pub(crate) weights: Vec<[[P::Array<Felt>; 3]; 2]>,
}

/// The dot products of a block's rows with `coeffs` (one per column), a register of rows at
/// a time: a [`Kernel`].
pub(crate) struct DotBlockRows<'a> {
    pub(crate) coeffs: &'a [Ext3],
    pub(crate) block: &'a [Felt],
}

impl Kernel for DotBlockRows<'_> {
    type Output = [Ext3; BLOCK_ROWS];

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> [Ext3; BLOCK_ROWS] {
        let Self { coeffs, block } = self;
        assert_eq!(
            coeffs.len() * BLOCK_ROWS,
            block.len(),
            "one coefficient per column"
        );
        let mut out = [Ext3::ZERO; BLOCK_ROWS];
        for first in (0..BLOCK_ROWS).step_by(P::LANES) {
            let mut sums = [ProductSum::<P>::zero(token); 3];
            for (i, (c, run)) in coeffs
                .iter()
                .zip(block.chunks_exact(BLOCK_ROWS))
                .enumerate()
            {
                prefetch(block, i * BLOCK_ROWS + PREFETCH_AHEAD);
                let values = Halves::of(P::load(token, &run[first..]));
                for (sum, a) in sums.iter_mut().zip(c.coeffs()) {
                    sum.add(Halves::splat(token, a), values);
                }
            }
            let [x, y, z] = sums.map(ProductSum::sum);
            for k in 0..P::LANES {
                out[first + k] = Ext3::new([x.as_ref()[k], y.as_ref()[k], z.as_ref()[k]]);
            }
        }
        out
    }
}

/// For each column in `columns`: Σ_rows weight·value for each of the two weights, over
/// `rows` of the table `values` ([`ballast_field::RowBlocks::as_slice`]). Group by group
/// (each reads one run per column from each of its blocks), with the columns' sums kept in
/// the core's cache.
#[inline(always)]
pub(crate) fn weighted_column_sums<P: PackedField>(
    token: P::Token,
    values: &[Felt],
    columns: Range<usize>,
    rows: &WeightedRows<P>,
    out: &mut [[Ext3; 2]],
) {
    let lanes = P::LANES;
    let mut sums = vec![[[ProductSum::<P>::zero(token); 3]; 2]; columns.len()];
    for (g, (offsets, weights)) in rows.offsets.iter().zip(&rows.weights).enumerate() {
        let offsets = offsets.as_ref();
        // The groups two ahead: their rows' runs of these columns.
        if let Some(ahead) = rows.offsets.get(g + 2) {
            let ahead = ahead.as_ref();
            for &row in [ahead[0], ahead[lanes - 1]].iter() {
                for c in columns.clone() {
                    prefetch(values, row + BLOCK_ROWS * c);
                }
            }
        }
        let halves = weights.map(|weight| weight.map(|w| Halves::of(P::load(token, w.as_ref()))));
        for (sums, c) in sums.iter_mut().zip(columns.clone()) {
            let lanes = P::array(|k| values[offsets[k] + BLOCK_ROWS * c]);
            let v = Halves::of(P::load(token, lanes.as_ref()));
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
                *total = sum.sum().as_ref().iter().fold(Felt::ZERO, |a, &b| a + b);
            }
            *slot = Ext3::new(coordinates);
        }
    }
}
