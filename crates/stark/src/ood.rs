//! Out-of-domain evaluation of committed polynomials at the DEEP point.

use ballast_field::{ColMatrix, Ext3, Felt, dot_ext_base, inverse_differences};
use ballast_ntt::{bit_reversed_powers, coset_points};
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

/// The trace polynomials at z and at z·ω, from their evaluations on H (natural order).
///
/// Barycentric form on H = ⟨ω⟩: T(z) = (z^n − 1)/n · Σ_i T(ω^i)·w_i with
/// w_i = ω^i/(z − ω^i). The same weights give T(z·ω) = (z^n − 1)/n · Σ_i T(ω^(i+1))·w_i,
/// since ω^i/(zω − ω^i) = w_(i−1).
pub(crate) fn trace_at(trace: &ColMatrix, z: Ext3) -> (Vec<Ext3>, Vec<Ext3>) {
    let n = trace.height();
    let log_n = n.trailing_zeros() as usize;
    let mut weights = vec![Ext3::ZERO; n];
    weights
        .par_chunks_mut(TASK)
        .enumerate()
        .for_each(|(task, chunk)| {
            let points = coset_points(Felt::ONE, log_n, task * TASK, chunk.len());
            let inverses = inverse_differences(&points, z).expect("z is outside H");
            for ((w, inv), &point) in chunk.iter_mut().zip(inverses).zip(&points) {
                // ω^i/(z − ω^i) = −ω^i/(ω^i − z).
                *w = -inv.scale(point);
            }
        });
    let factor = (z.pow(n as u64) - Ext3::ONE) * Ext3::from(Felt::new(n as u64).inverse());
    trace
        .par_columns()
        .map(|column| {
            // T(ω^i) meets w_i for z, and w_(i−1) for z·ω.
            let at_z = dot_ext_base(&weights, column);
            let at_zw =
                dot_ext_base(&weights[..n - 1], &column[1..]) + weights[n - 1].scale(column[0]);
            (at_z * factor, at_zw * factor)
        })
        .unzip()
}

/// Polynomials given in raw form (n × coefficients, bit-reversed) evaluated at z:
/// Q(z) = (1/n)·Σ_q raw[q]·z^br(q).
pub(crate) fn raw_at(raw: &ColMatrix, z: Ext3) -> Vec<Ext3> {
    let n = raw.height();
    let log_n = n.trailing_zeros() as usize;
    let n_inv = Felt::new(n as u64).inverse();
    // z^br(q)/n, in the raw form's (bit-reversed) order: one contiguous dot product per column.
    let powers: Vec<Ext3> = bit_reversed_powers(z, log_n)
        .into_iter()
        .map(|p| p.scale(n_inv))
        .collect();
    raw.par_columns()
        .map(|column| dot_ext_base(&powers, column))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_ntt::{LdePlan, evaluate_poly, split_into_chunks};

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
        let (at_z, at_zw) = trace_at(&ColMatrix::from_columns(&[evals]), z);
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
        let raw = ColMatrix::from_columns(&split_into_chunks(&evals, log_n, log_chunks));
        let z = sample_point();
        let values = raw_at(&raw, z);
        for (j, chunk) in coeffs.chunks(1 << log_n).enumerate() {
            let ext: Vec<Ext3> = chunk.iter().map(|&c| Ext3::from(c)).collect();
            assert_eq!(values[j], evaluate_poly(&ext, z), "chunk {j}");
        }
    }
}
