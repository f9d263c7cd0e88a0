//! Twiddle tables laid out per butterfly stage.

use ballast_field::{Felt, FieldElement};

/// Powers of the roots of unity that a size-n transform's stages use.
///
/// The stage whose butterflies span `h` elements reads `table[h − 1 .. 2h − 1]`, which holds
/// `w_{2h}^j` for `j < h` (`w_{2h}` a primitive 2h-th root). Every stage's twiddles are
/// therefore contiguous, and a sub-transform of size m uses the same table.
#[derive(Clone, Debug)]
pub struct Twiddles {
    log_n: usize,
    table: Vec<Felt>,
}

impl Twiddles {
    /// Tables for the forward transform of size 2^`log_n` (roots `w`).
    pub fn forward(log_n: usize) -> Self {
        Self::build(log_n, false)
    }

    /// Tables for the inverse transform of size 2^`log_n` (roots `w^-1`), without the 1/n.
    pub fn inverse(log_n: usize) -> Self {
        Self::build(log_n, true)
    }

    fn build(log_n: usize, inverse: bool) -> Self {
        let n = 1usize << log_n;
        let mut table = Vec::with_capacity(n.saturating_sub(1));
        for log_span in 1..=log_n {
            let root = Felt::two_adic_root(log_span);
            let root = if inverse { root.inverse() } else { root };
            table.extend(root.powers(1 << (log_span - 1)));
        }
        Self { log_n, table }
    }

    /// log2 of the largest transform these tables serve.
    pub fn log_n(&self) -> usize {
        self.log_n
    }

    /// The twiddles of the stage whose butterflies span `half` elements.
    #[inline]
    pub(crate) fn stage(&self, half: usize) -> &[Felt] {
        &self.table[half - 1..2 * half - 1]
    }
}

/// `[base^br(0), base^br(1), …]` for the 2^`log_n` indices, br reversing `log_n` bits.
///
/// Built by doubling, with sequential reads and writes only: for a table T of size m,
/// the table of size 2m holds T(k) at 2k and T(k)·base^m at 2k + 1, since
/// br_2m(2k) = br_m(k) and br_2m(2k + 1) = br_m(k) + m.
pub fn bit_reversed_powers<E: FieldElement>(base: E, log_n: usize) -> Vec<E> {
    let mut table = Vec::with_capacity(1 << log_n);
    table.push(E::ONE);
    let mut step = base;
    for _ in 0..log_n {
        table = table.iter().flat_map(|&t| [t, t * step]).collect();
        step *= step;
    }
    table
}

/// `shift·ζ^t` for t in `start..start + len`, ζ a primitive 2^`log_size`-th root of unity: a
/// run of the coset shift·H (|H| = 2^`log_size`) in natural order.
pub fn coset_points(shift: Felt, log_size: usize, start: usize, len: usize) -> Vec<Felt> {
    let zeta = Felt::two_adic_root(log_size);
    let first = shift * zeta.pow(start as u64);
    zeta.powers(len).into_iter().map(|p| first * p).collect()
}

/// Reverses the low `log_n` bits of `index`.
#[inline]
pub fn bit_reverse(index: usize, log_n: usize) -> usize {
    if log_n == 0 {
        0
    } else {
        index.reverse_bits() >> (usize::BITS as usize - log_n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_hold_powers_of_the_right_root() {
        let t = Twiddles::forward(4);
        assert_eq!(t.stage(1), &[Felt::ONE]);
        assert_eq!(t.stage(8)[1], Felt::two_adic_root(4));
        assert_eq!(t.stage(4)[3], Felt::two_adic_root(3).pow(3));
        let inv = Twiddles::inverse(4);
        assert_eq!(inv.stage(8)[1] * t.stage(8)[1], Felt::ONE);
    }

    #[test]
    fn bit_reversed_powers_match_direct_exponentiation() {
        let base = Felt::new(1234567);
        for log_n in [0, 1, 5, 10] {
            let table = bit_reversed_powers(base, log_n);
            for (q, &v) in table.iter().enumerate() {
                assert_eq!(
                    v,
                    base.pow(bit_reverse(q, log_n) as u64),
                    "log_n {log_n} index {q}"
                );
            }
        }
    }

    #[test]
    fn coset_points_run_along_the_coset() {
        let zeta = Felt::two_adic_root(5);
        let points = coset_points(Felt::GENERATOR, 5, 30, 4);
        let expected: Vec<Felt> = (30..34).map(|t| Felt::GENERATOR * zeta.pow(t)).collect();
        assert_eq!(points, expected);
    }

    #[test]
    fn bit_reverse_reverses() {
        assert_eq!(bit_reverse(0b0011, 4), 0b1100);
        assert_eq!(bit_reverse(1, 1), 1);
        assert_eq!(bit_reverse(0, 0), 0);
        assert_eq!(bit_reverse(0b100, 3), 0b001);
    }
}
