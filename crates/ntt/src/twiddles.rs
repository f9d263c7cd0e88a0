//! Twiddle tables laid out per butterfly stage.

use ballast_field::Felt;

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
    fn bit_reverse_reverses() {
        assert_eq!(bit_reverse(0b0011, 4), 0b1100);
        assert_eq!(bit_reverse(1, 1), 1);
        assert_eq!(bit_reverse(0, 0), 0);
        assert_eq!(bit_reverse(0b100, 3), 0b001);
    }
}
