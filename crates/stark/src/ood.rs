//! Out-of-domain evaluation of committed polynomials at the DEEP point.

use ballast_field::{
    BLOCK_ROWS, Ext3, ExtBaseSum, Felt, RowBlocks, dot_ext_base, inverse_differences,
};
use ballast_ntt::{LdePlan, bit_reversed_powers, coset_points};
use rayon::prelude::*;

/// Elements handled per parallel task when building weight tables.
const TASK: usize = 1 << 12;

/// The claimed values of every committed polynomial at z (and of the trace at z·ω).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OodValues {
    /// Trace column k at z.
    pub trace_z: Vec<Ext3>,
    /// Trace column k at z·ω (the next row).
    pub trace_zw: Vec<Ext3>,
    /// Quotient column c at z: chunk c / 3, base coordinate c mod 3.
    pub quotient_z: Vec<Ext3>,
}

/// The trace polynomials at z and at z·ω, from their LDE on g·H' (natural order, 2^`log_blowup`
/// rows per trace row): rows u·2^log_blowup hold T(g·ω^u), the trace on the coset g·H.
///
/// Barycentric form on g·H with z' = z/g: T(z) = (z'^n − 1)/n · Σ_u T(g·ω^u)·w_u with
/// w_u = ω^u/(z' − ω^u). The same weights give T(z·ω) = (z'^n − 1)/n · Σ_u T(g·ω^u)·w_(u−1),
/// since ω^u/(z'ω − ω^u) = w_(u−1). Each task sums a run of blocks for every column.
pub(crate) fn trace_at(lde: &RowBlocks, log_blowup: usize, z: Ext3) -> (Vec<Ext3>, Vec<Ext3>) {
    let n = lde.height() >> log_blowup;
    let log_n = n.trailing_zeros() as usize;
    let blowup = 1usize << log_blowup;
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
    // Blocks of the LDE that hold rows u·B, in runs of about TASK trace rows per task.
    let blocks = lde.blocks();
    let run = (TASK * blowup).div_ceil(BLOCK_ROWS).max(1);
    let (at_z, at_zw) = (0..blocks.div_ceil(run))
        .into_par_iter()
        .map(|task| {
            let mut sums = vec![[ExtBaseSum::default(); 2]; width];
            for b in task * run..((task + 1) * run).min(blocks) {
                let block = lde.block(b);
                for k in (0..BLOCK_ROWS).filter(|k| (b * BLOCK_ROWS + k).is_multiple_of(blowup)) {
                    let row = b * BLOCK_ROWS + k;
                    if row >= lde.height() {
                        break;
                    }
                    let u = row / blowup;
                    let (w, w_before) = (weights[u], weights[(u + n - 1) % n]);
                    for (sum, values) in sums.iter_mut().zip(block.chunks_exact(BLOCK_ROWS)) {
                        sum[0].add(w, values[k]);
                        sum[1].add(w_before, values[k]);
                    }
                }
            }
            let sums: (Vec<Ext3>, Vec<Ext3>) =
                sums.into_iter().map(|[a, b]| (a.sum(), b.sum())).unzip();
            sums
        })
        .reduce(
            || (vec![Ext3::ZERO; width], vec![Ext3::ZERO; width]),
            |(mut a, mut b), (c, d)| {
                a.iter_mut().zip(c).for_each(|(a, c)| *a += c);
                b.iter_mut().zip(d).for_each(|(b, d)| *b += d);
                (a, b)
            },
        );
    (
        at_z.into_iter().map(|v| v * factor).collect(),
        at_zw.into_iter().map(|v| v * factor).collect(),
    )
}

/// Polynomials given in raw form (n × coefficients, bit-reversed) evaluated at z:
/// Q(z) = (1/n)·Σ_q raw[q]·z^br(q).
pub(crate) fn raw_at(raw: &[Vec<Felt>], z: Ext3) -> Vec<Ext3> {
    let n = raw.first().map_or(1, Vec::len);
    let log_n = n.trailing_zeros() as usize;
    let n_inv = Felt::new(n as u64).inverse();
    // z^br(q)/n, in the raw form's (bit-reversed) order: one contiguous dot product per column.
    let powers: Vec<Ext3> = bit_reversed_powers(z, log_n)
        .into_iter()
        .map(|p| p.scale(n_inv))
        .collect();
    raw.par_iter()
        .map(|column| dot_ext_base(&powers, column))
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
