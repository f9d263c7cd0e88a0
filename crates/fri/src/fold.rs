//! What prover and verifier share: the round schedule, the leaf encoding and the fold.

use ballast_field::{Ext3, Felt};
use ballast_merkle::{Digest, MerkleHash};

/// 1/2 in Goldilocks: (p + 1)/2.
const HALF: Felt = Felt::new(Felt::MODULUS.div_ceil(2));

/// log2 of the folding arity of every round but the last, which folds what remains.
pub const LOG_ARITY: usize = 3;

/// log2 of each round's arity for `folds` binary folds in all: [`LOG_ARITY`] each, the last
/// round taking the remainder. Empty when there is nothing to fold.
pub fn round_arities(folds: usize) -> Vec<usize> {
    let mut arities = vec![LOG_ARITY; folds / LOG_ARITY];
    if !folds.is_multiple_of(LOG_ARITY) {
        arities.push(folds % LOG_ARITY);
    }
    arities
}

/// log2 of each round's arity when inputs of 2^`log_domains[i]` values (tallest first,
/// strictly decreasing) fold down to 2^`log_final_domain`: [`round_arities`] from each
/// input's size to the next one's and from the last to the final domain, so that every
/// input's size is a round boundary, where it is rolled in.
///
/// # Panics
/// If the sizes are not strictly decreasing down to at least the final domain.
pub fn roll_in_arities(log_domains: &[usize], log_final_domain: usize) -> Vec<usize> {
    assert!(
        log_domains.windows(2).all(|w| w[0] > w[1])
            && log_domains.last().is_some_and(|&l| l >= log_final_domain),
        "input sizes 2^{log_domains:?} do not decrease to the final domain 2^{log_final_domain}"
    );
    log_domains
        .iter()
        .zip(log_domains[1..].iter().chain([&log_final_domain]))
        .flat_map(|(&from, &to)| round_arities(from - to))
        .collect()
}

/// The leaf digest of one coset of a layer: the hash of its [`layer_row`]
/// ([`MerkleHash::row`]).
pub fn layer_leaf(hash: MerkleHash, values: &[Ext3]) -> Digest {
    hash.row(&layer_row(values))
}

/// The row a layer's tree holds for one coset: its values' base coordinates, slot by slot.
pub fn layer_row(values: &[Ext3]) -> Vec<Felt> {
    values.iter().flat_map(|v| v.coeffs()).collect()
}

/// One binary fold: (lo + hi)/2 + β·(lo − hi)·`inv_two_x`, where lo = f(x), hi = f(−x) and
/// `inv_two_x` = 1/(2x).
#[inline]
pub fn fold_pair(lo: Ext3, hi: Ext3, beta: Ext3, inv_two_x: Felt) -> Ext3 {
    (lo + hi).scale(HALF) + beta * (lo - hi).scale(inv_two_x)
}

/// Folds one coset's values `values[i]` = f(x·ω^i) (ω of order `values.len()`, a power of
/// two) to the value at x^len of Σ_t β^t·f_t, where f(X) = Σ_t X^t·f_t(X^len): binary folds
/// with β, β², β⁴, …, pairing slots i and i + half each time.
pub fn fold_coset(values: &mut Vec<Ext3>, x: Felt, beta: Ext3) -> Ext3 {
    let log_len = values.len().trailing_zeros() as usize;
    let mut omega_inv = Felt::two_adic_root(log_len).inverse();
    let mut inv_two_x = (x + x).inverse();
    let mut beta = beta;
    while values.len() > 1 {
        let half = values.len() / 2;
        let mut inv = inv_two_x;
        for i in 0..half {
            values[i] = fold_pair(values[i], values[i + half], beta, inv);
            inv *= omega_inv;
        }
        values.truncate(half);
        // The folded points are the squares: 1/(2y²) = 2·(1/(2y))².
        let sq = inv_two_x * inv_two_x;
        inv_two_x = sq + sq;
        omega_inv = omega_inv.square();
        beta = beta.square();
    }
    values[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_ntt::evaluate_poly;

    #[test]
    fn half_is_one_half() {
        assert_eq!(HALF + HALF, Felt::ONE);
    }

    #[test]
    fn schedules_sum_to_the_folds() {
        assert!(round_arities(0).is_empty());
        for folds in 1..40 {
            let arities = round_arities(folds);
            assert_eq!(arities.iter().sum::<usize>(), folds);
            assert!(arities.iter().all(|&a| (1..=LOG_ARITY).contains(&a)));
            assert_eq!(arities.len(), folds.div_ceil(LOG_ARITY));
        }
    }

    #[test]
    fn every_input_size_is_a_round_boundary() {
        assert_eq!(roll_in_arities(&[19], 5), round_arities(14));
        assert_eq!(roll_in_arities(&[19, 16, 12], 5), [3, 3, 1, 3, 3, 1]);
        assert_eq!(roll_in_arities(&[6, 5, 4], 4), [1, 1]);
        for log_domains in [[10, 9, 3], [12, 7, 5], [20, 13, 4]] {
            let mut at = log_domains[0];
            let mut boundaries = vec![at];
            for a in roll_in_arities(&log_domains, 3) {
                at -= a;
                boundaries.push(at);
            }
            assert_eq!(at, 3);
            assert!(log_domains.iter().all(|l| boundaries.contains(l)));
        }
    }

    #[test]
    #[should_panic(expected = "do not decrease")]
    fn inputs_of_one_size_have_no_schedule() {
        roll_in_arities(&[8, 8], 2);
    }

    #[test]
    fn folding_splits_even_and_odd_parts() {
        // f(x) = a + b·x: f_e = a, f_o = b, so the fold is a + β·b at every x.
        let (a, b) = (Ext3::from(Felt::new(5)), Ext3::from(Felt::new(9)));
        let beta = Ext3::new([Felt::new(2), Felt::new(3), Felt::new(4)]);
        let x = Felt::new(1234);
        let (lo, hi) = (a + b.scale(x), a - b.scale(x));
        let inv_two_x = (x + x).inverse();
        assert_eq!(fold_pair(lo, hi, beta, inv_two_x), a + beta * b);
    }

    #[test]
    fn a_coset_folds_to_the_beta_combination_of_its_parts() {
        // f(X) = Σ_t X^t·f_t(X^8) with f_t of degree < 3: the fold is Σ_t β^t·f_t(x^8).
        let parts: Vec<Vec<Ext3>> = (0..8u64)
            .map(|t| {
                (0..3u64)
                    .map(|k| Ext3::from(Felt::new(t * 17 + k * 5 + 1)))
                    .collect()
            })
            .collect();
        let f = |y: Felt| {
            let y8 = Ext3::from(y.pow(8));
            (0..8).fold(Ext3::ZERO, |acc, t| {
                acc + evaluate_poly(&parts[t], y8).scale(y.pow(t as u64))
            })
        };
        let beta = Ext3::new([Felt::new(7), Felt::new(11), Felt::new(13)]);
        let x = Felt::new(987_654_321);
        let omega = Felt::two_adic_root(3);
        let mut values: Vec<Ext3> = (0..8).map(|i| f(x * omega.pow(i))).collect();
        let expected = (0..8).fold(Ext3::ZERO, |acc, t| {
            acc + beta.pow(t as u64) * evaluate_poly(&parts[t], Ext3::from(x.pow(8)))
        });
        assert_eq!(fold_coset(&mut values, x, beta), expected);
    }
}
