//! Periodic columns as polynomials: the prover evaluates them on the quotient coset, the
//! verifier at the out-of-domain point.
//!
//! A column with period p holds v[i mod p] in row i. With ω_p = ω^(n/p), row i's point ω^i
//! has (ω^i)^(n/p) = ω_p^(i mod p), so the column is P(x) = p̃(x^(n/p)) where p̃ (degree < p)
//! interpolates v on ⟨ω_p⟩. P has degree (p − 1)·n/p < n, like a trace column.

use ballast_air::{Air, PeriodicColumn};
use ballast_field::{Ext3, Felt};
use ballast_ntt::{LdePlan, Twiddles, bit_reverse, dif, evaluate_poly};

/// Each of `air`'s periodic columns at `z`: the values its verifier evaluates the
/// constraints with at the out-of-domain point.
pub fn periodic_at<A: Air>(air: &A, z: Ext3) -> Vec<Ext3> {
    PeriodicPolys::new(&air.periodic_columns(), air.log_rows()).at(z)
}

/// The coefficients of each periodic column's p̃, and the table height they repeat in.
pub(crate) struct PeriodicPolys {
    log_rows: usize,
    coeffs: Vec<Vec<Felt>>,
}

impl PeriodicPolys {
    /// Interpolates every column (lengths are checked by [`ballast_air::ConstraintInfo`]).
    pub(crate) fn new(columns: &[PeriodicColumn], log_rows: usize) -> Self {
        let coeffs = columns
            .iter()
            .map(|c| {
                let p = c.values.len();
                let log_p = p.trailing_zeros() as usize;
                let mut raw = c.values.clone();
                dif(&mut raw, &Twiddles::inverse(log_p));
                let p_inv = Felt::new(p as u64).inverse();
                (0..p).map(|i| raw[bit_reverse(i, log_p)] * p_inv).collect()
            })
            .collect();
        Self { log_rows, coeffs }
    }

    /// Every column at z: p̃(z^(n/p)).
    pub(crate) fn at(&self, z: Ext3) -> Vec<Ext3> {
        self.coeffs
            .iter()
            .map(|c| {
                let ext: Vec<Ext3> = c.iter().map(|&v| Ext3::from(v)).collect();
                evaluate_poly(&ext, z.pow((1u64 << self.log_rows) / c.len() as u64))
            })
            .collect()
    }

    /// Each column on the coset g·H_q of size 2^(log_rows + log_chunks), natural order, as
    /// the 2^log_chunks·p values it cycles through: position t holds P(g·ζ^t) for
    /// t < 2^log_chunks·p, and P(g·ζ^t) = P(g·ζ^(t mod 2^log_chunks·p)).
    pub(crate) fn on_quotient_coset(&self, log_chunks: usize) -> Vec<Vec<Felt>> {
        self.coeffs
            .iter()
            .map(|c| {
                let log_p = c.len().trailing_zeros() as usize;
                let log_m = log_p + log_chunks;
                let m = 1usize << log_m;
                // (g·ζ^t)^(n/p) = g^(n/p)·ζ_m^t with ζ_m a primitive m-th root.
                let shift = LdePlan::SHIFT.pow(1u64 << (self.log_rows - log_p));
                let mut values = vec![Felt::ZERO; m];
                let mut power = Felt::ONE;
                for (slot, &coeff) in values.iter_mut().zip(c) {
                    *slot = coeff * power;
                    power *= shift;
                }
                dif(&mut values, &Twiddles::forward(log_m));
                (0..m).map(|t| values[bit_reverse(t, log_m)]).collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periodic_polynomials_take_the_column_values_on_the_rows_and_agree_off_them() {
        let column = PeriodicColumn {
            values: (0..8u32).map(|i| Felt::from(i * i + 3)).collect(),
        };
        let log_rows = 6;
        let polys = PeriodicPolys::new(std::slice::from_ref(&column), log_rows);
        let omega = Felt::two_adic_root(log_rows);
        for row in 0..64u64 {
            let value = polys.at(Ext3::from(omega.pow(row)))[0];
            assert_eq!(
                value,
                Ext3::from(column.values[row as usize % 8]),
                "row {row}"
            );
        }
        let log_chunks = 1;
        let coset = &polys.on_quotient_coset(log_chunks)[0];
        assert_eq!(coset.len(), 16);
        let zeta = Felt::two_adic_root(log_rows + log_chunks);
        for t in [0u64, 1, 7, 15, 16, 100] {
            let x = LdePlan::SHIFT * zeta.pow(t);
            assert_eq!(
                Ext3::from(coset[t as usize % 16]),
                polys.at(Ext3::from(x))[0],
                "t {t}"
            );
        }
    }
}
