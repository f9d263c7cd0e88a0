//! Small polynomial helpers: Horner evaluation and interpolation over a coset.

use ballast_field::{Ext3, Felt, FieldElement};

use crate::{Twiddles, bit_reverse, dif};

/// `Σ coeffs[i]·x^i` by Horner's rule.
pub fn evaluate_poly<E: FieldElement>(coeffs: &[E], x: E) -> E {
    coeffs.iter().rev().fold(E::ZERO, |acc, &c| acc * x + c)
}

/// The coefficients (natural order) of the polynomial of degree < m taking the values
/// `evals` on the coset `shift·H` in natural order, `H` the subgroup of size m = `evals.len()`.
///
/// # Panics
/// If `evals.len()` is not a power of two or `shift` is zero.
pub fn interpolate_coset(evals: &[Ext3], shift: Felt) -> Vec<Ext3> {
    let m = evals.len();
    assert!(m.is_power_of_two(), "coset size {m} is not a power of two");
    let log_m = m.trailing_zeros() as usize;
    let twiddles = Twiddles::inverse(log_m);
    let mut coords: [Vec<Felt>; 3] =
        std::array::from_fn(|c| evals.iter().map(|e| e.coeffs()[c]).collect());
    for coord in &mut coords {
        dif(coord, &twiddles);
    }
    // coords now hold m·a_i·shift^i at bit-reversed positions.
    let m_inv = Felt::new(m as u64).inverse();
    let shift_inv = shift.inverse();
    let mut scale = m_inv;
    (0..m)
        .map(|i| {
            let p = bit_reverse(i, log_m);
            let c = Ext3::new([coords[0][p], coords[1][p], coords[2][p]]).scale(scale);
            scale *= shift_inv;
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_inverts_evaluation_on_a_coset() {
        let coeffs: Vec<Ext3> = (0..16u32)
            .map(|i| Ext3::new([Felt::from(i), Felt::from(i * i + 1), Felt::from(3)]))
            .collect();
        let shift = Felt::GENERATOR;
        let w = Felt::two_adic_root(4);
        let evals: Vec<Ext3> = (0..16)
            .map(|j| evaluate_poly(&coeffs, Ext3::from(shift * w.pow(j))))
            .collect();
        assert_eq!(interpolate_coset(&evals, shift), coeffs);
    }

    #[test]
    fn horner_on_a_known_polynomial() {
        // 3 + 2x + x^2 at x = 5 is 38.
        let p = [Felt::new(3), Felt::new(2), Felt::new(1)];
        assert_eq!(evaluate_poly(&p, Felt::new(5)), Felt::new(38));
        assert_eq!(evaluate_poly::<Felt>(&[], Felt::new(5)), Felt::ZERO);
    }
}
