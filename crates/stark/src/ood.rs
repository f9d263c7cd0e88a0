//! Out-of-domain evaluation of committed polynomials at the DEEP point.

use std::ops::Range;

use ballast_cpu::Kernels;
use ballast_field::{Ext3, ExtBaseSum, Felt, RowBlocks, dot_ext_base, inverse_differences};
use ballast_ntt::{LdePlan, bit_reversed_powers, coset_points};
use rayon::prelude::*;

use ballast_field::packed::{Kernel, PackedField, run};

use crate::dots::{WeightedRows, weighted_column_sums};

/// Trace rows handled per parallel task.
const TASK: usize = 1 << 12;
/// Columns summed in one pass over a task's rows: their sums stay in the core's cache, and
/// each block is read a run of this many columns at a time.
const COLUMNS_PER_PASS: usize = 32;

/// The trace polynomials at z and at z·ω, from their LDE on g·H' (natural order, 2^`log_blowup`
/// rows per trace row): rows u·2^log_blowup hold T(g·ω^u), the trace on the coset g·H.
///
/// Barycentric form on g·H with z' = z/g: T(z) = (z'^n − 1)/n · Σ_u T(g·ω^u)·w_u with
/// w_u = ω^u/(z' − ω^u). The same weights give T(z·ω) = (z'^n − 1)/n · Σ_u T(g·ω^u)·w_(u−1),
/// since ω^u/(z'ω − ω^u) = w_(u−1). Each task sums a run of trace rows for every column.
pub(crate) fn trace_at(lde: &RowBlocks, log_blowup: usize, z: Ext3) -> (Vec<Ext3>, Vec<Ext3>) {
    trace_at_on(Kernels::active(), lde, log_blowup, z)
}

fn trace_at_on(
    kernels: Kernels,
    lde: &RowBlocks,
    log_blowup: usize,
    z: Ext3,
) -> (Vec<Ext3>, Vec<Ext3>) {
    let n = lde.height() >> log_blowup;
    let log_n = n.trailing_zeros() as usize;
    let z_coset = z * Ext3::from(LdePlan::SHIFT.inverse());
    let mut weights = vec![Ext3::ZERO; n];
    weights
        .par_chunks_mut(TASK)
        .enumerate()
        .for_each(|(task, chunk)| {
            let points = coset_points(Felt::ONE, log_n, task * TASK, chunk.len());
            let inverses = inverse_differences(&points, z_coset).expect("z is outside g·H");
            for ((w, inv), &point) in chunk.iter_mut().zip(inverses).zip(&points) {
                // ω^u/(z' − ω^u) = −ω^u/(ω^u − z').
                *w = -inv.scale(point);
            }
        });
    let factor = (z_coset.pow(n as u64) - Ext3::ONE) * Ext3::from(Felt::new(n as u64).inverse());
    let width = lde.width();
    let sums = (0..n.div_ceil(TASK))
        .into_par_iter()
        .map(|task| {
            let rows = task * TASK..((task + 1) * TASK).min(n);
            let mut sums = vec![[Ext3::ZERO; 2]; width];
            let kernel = TaskSums {
                lde,
                log_blowup,
                weights: &weights,
                rows: rows.clone(),
                out: &mut sums,
            };
            if run(kernels, kernel).is_none() {
                column_sums(lde, log_blowup, &weights, rows, &mut sums);
            }
            sums
        })
        .reduce(
            || vec![[Ext3::ZERO; 2]; width],
            |mut a, b| {
                for (a, b) in a.iter_mut().zip(b) {
                    a[0] += b[0];
                    a[1] += b[1];
                }
                a
            },
        );
    sums.into_iter()
        .map(|[at_z, at_zw]| (at_z * factor, at_zw * factor))
        .unzip()
}

/// One task's sums on the SIMD path (a [`Kernel`]): its rows grouped into registers, then
/// the columns [`COLUMNS_PER_PASS`] at a time.
struct TaskSums<'a> {
    lde: &'a RowBlocks,
    log_blowup: usize,
    weights: &'a [Ext3],
    rows: Range<usize>,
    out: &'a mut [[Ext3; 2]],
}

impl Kernel for TaskSums<'_> {
    type Output = ();

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) {
        let width = self.lde.width();
        let rows = weighted_rows::<P>(self.lde, self.log_blowup, self.weights, self.rows);
        for (c0, sums) in (0..width)
            .step_by(COLUMNS_PER_PASS)
            .zip(self.out.chunks_mut(COLUMNS_PER_PASS))
        {
            let columns = c0..(c0 + COLUMNS_PER_PASS).min(width);
            weighted_column_sums(token, self.lde.as_slice(), columns, &rows, sums);
        }
    }
}

/// Trace rows `rows` in groups of the lane count: where each lies in the LDE, with its
/// weights w_u and w_(u−1) (a group past the last row is filled with row 0 and zero weights).
#[inline(always)]
fn weighted_rows<P: PackedField>(
    lde: &RowBlocks,
    log_blowup: usize,
    weights: &[Ext3],
    rows: Range<usize>,
) -> WeightedRows<P> {
    let n = weights.len();
    let lanes = P::LANES;
    let groups = rows.len().div_ceil(lanes);
    let mut offsets = vec![P::array(|_| 0); groups];
    let mut coordinates = vec![[[P::array(|_| Felt::ZERO); 3]; 2]; groups];
    for (i, u) in rows.enumerate() {
        let (g, k) = (i / lanes, i % lanes);
        offsets[g].as_mut()[k] = lde.row_offset(u << log_blowup);
        for (w, weight) in [weights[u], weights[(u + n - 1) % n]].iter().enumerate() {
            for (coordinate, value) in weight.coeffs().into_iter().enumerate() {
                coordinates[g][w][coordinate].as_mut()[k] = value;
            }
        }
    }
    WeightedRows {
        offsets,
        weights: coordinates,
    }
}

/// The scalar path of [`trace_at`]'s sums: column by column over `rows`.
fn column_sums(
    lde: &RowBlocks,
    log_blowup: usize,
    weights: &[Ext3],
    rows: Range<usize>,
    out: &mut [[Ext3; 2]],
) {
    let n = weights.len();
    for (c, out) in out.iter_mut().enumerate() {
        let mut sums = [ExtBaseSum::default(); 2];
        for u in rows.clone() {
            let value = lde.get(u << log_blowup, c);
            sums[0].add(weights[u], value);
            sums[1].add(weights[(u + n - 1) % n], value);
        }
        *out = sums.map(ExtBaseSum::sum);
    }
}

/// Polynomials given in raw form (n × coefficients, bit-reversed) evaluated at z:
/// Q(z) = (1/n)·Σ_q raw[q]·z^br(q).
pub(crate) fn raw_at<C: AsRef<[Felt]> + Sync>(raw: &[C], z: Ext3) -> Vec<Ext3> {
    let n = raw.first().map_or(1, |c| c.as_ref().len());
    let log_n = n.trailing_zeros() as usize;
    let n_inv = Felt::new(n as u64).inverse();
    // z^br(q)/n, in the raw form's (bit-reversed) order: one contiguous dot product per column.
    let powers: Vec<Ext3> = bit_reversed_powers(z, log_n)
        .into_iter()
        .map(|p| p.scale(n_inv))
        .collect();
    raw.par_iter()
        .map(|column| dot_ext_base(&powers, column.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_ntt::{ColumnForm, evaluate_poly, split_into_chunks};

    fn sample_point() -> Ext3 {
        Ext3::new([Felt::new(123_456_789), Felt::new(987), Felt::new(55)])
    }

    #[test]
    fn barycentric_matches_direct_evaluation() {
        let log_n = 6;
        let coeffs: Vec<Felt> = (0..1u64 << log_n).map(|i| Felt::new(i * i + 7)).collect();
        let omega = Felt::two_adic_root(log_n);
        let evals: Vec<Felt> = (0..1u64 << log_n)
            .map(|i| evaluate_poly(&coeffs, omega.pow(i)))
            .collect();
        let z = sample_point();
        let mut lde = RowBlocks::from_columns(&[evals]);
        LdePlan::new(log_n, 2).extend_in_place(&mut lde, ColumnForm::Evaluations);
        let (at_z, at_zw) = trace_at(&lde, 2, z);
        let ext: Vec<Ext3> = coeffs.iter().map(|&c| Ext3::from(c)).collect();
        assert_eq!(at_z, vec![evaluate_poly(&ext, z)]);
        assert_eq!(at_zw, vec![evaluate_poly(&ext, z * Ext3::from(omega))]);
    }

    #[test]
    fn every_path_sums_the_same() {
        // 2^13 rows by 4: several tasks; 11 columns of arbitrary values.
        let (log_n, log_blowup) = (13, 2);
        let columns: Vec<Vec<Felt>> = (0..11u64)
            .map(|c| {
                (0..1u64 << (log_n + log_blowup))
                    .map(|r| Felt::new(r.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (c << 60)))
                    .collect()
            })
            .collect();
        let lde = RowBlocks::from_columns(&columns);
        let z = sample_point();
        let scalar = trace_at_on(Kernels::Scalar, &lde, log_blowup, z);
        for kernels in Kernels::supported() {
            assert!(
                trace_at_on(kernels, &lde, log_blowup, z) == scalar,
                "{} path",
                kernels.path()
            );
        }
    }

    #[test]
    fn raw_form_evaluates_each_chunk() {
        let (log_n, log_chunks) = (5, 1);
        let coeffs: Vec<Felt> = (0..2u64 << log_n).map(|i| Felt::new(3 * i + 1)).collect();
        let zeta = Felt::two_adic_root(log_n + log_chunks);
        let evals: Vec<Felt> = (0..2u64 << log_n)
            .map(|t| evaluate_poly(&coeffs, LdePlan::SHIFT * zeta.pow(t)))
            .collect();
        let raw = split_into_chunks(&evals, log_n, log_chunks);
        let z = sample_point();
        let values = raw_at(&raw, z);
        for (j, chunk) in coeffs.chunks(1 << log_n).enumerate() {
            let ext: Vec<Ext3> = chunk.iter().map(|&c| Ext3::from(c)).collect();
            assert_eq!(values[j], evaluate_poly(&ext, z), "chunk {j}");
        }
    }
}
