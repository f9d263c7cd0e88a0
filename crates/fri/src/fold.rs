//! The arithmetic prover and verifier share: leaf encoding and the arity-2 fold.

use ballast_field::{Ext3, Felt};
use ballast_merkle::{Digest, hash_leaf};

/// 1/2 in Goldilocks: (p + 1)/2.
const HALF: Felt = Felt::new(Felt::MODULUS.div_ceil(2));

/// The leaf digest of the pair (f(x), f(−x)): both values' canonical encodings.
pub fn layer_leaf(lo: Ext3, hi: Ext3) -> Digest {
    let mut bytes = [0u8; 2 * Ext3::BYTES];
    bytes[..Ext3::BYTES].copy_from_slice(&lo.to_le_bytes());
    bytes[Ext3::BYTES..].copy_from_slice(&hi.to_le_bytes());
    hash_leaf(&bytes)
}

/// One fold: (lo + hi)/2 + β·(lo − hi)·`inv_two_x`, where lo = f(x), hi = f(−x) and
/// `inv_two_x` = 1/(2x).
#[inline]
pub fn fold_pair(lo: Ext3, hi: Ext3, beta: Ext3, inv_two_x: Felt) -> Ext3 {
    (lo + hi).scale(HALF) + beta * (lo - hi).scale(inv_two_x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_is_one_half() {
        assert_eq!(HALF + HALF, Felt::ONE);
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
}
