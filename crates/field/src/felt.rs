//! The Goldilocks prime field, p = 2^64 − 2^32 + 1.
//!
//! Elements are stored canonically (always `< p`). Reduction uses 2^64 ≡ 2^32 − 1 and
//! 2^96 ≡ −1 (mod p), so a 128-bit product reduces with a few 64-bit operations and no
//! division. Nothing here is constant-time: a prover has no secrets to hide.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use crate::FieldElement;

/// The field modulus.
pub(crate) const P: u64 = 0xffff_ffff_0000_0001;
/// 2^64 mod p, that is 2^32 − 1.
pub(crate) const EPSILON: u64 = 0xffff_ffff;
/// (p + 1)/2, the inverse of 2.
pub(crate) const HALF: u64 = P / 2 + 1;

/// The largest `k` such that 2^k divides p − 1: subgroups of size up to 2^32 exist.
pub const TWO_ADICITY: usize = 32;

/// A primitive 2^32-th root of unity, 7^((p − 1) / 2^32).
const TWO_ADIC_ROOT: u64 = 1_753_635_133_440_165_772;

/// An element of the Goldilocks field, always in canonical form.
///
/// `repr(transparent)`: a `[Felt]` is a `[u64]` of canonical values, which the SIMD kernels
/// load and store as such.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Felt(u64);

impl Felt {
    /// The additive identity.
    pub const ZERO: Self = Self(0);
    /// The multiplicative identity.
    pub const ONE: Self = Self(1);
    /// The field modulus p.
    pub const MODULUS: u64 = P;
    /// A generator of the multiplicative group (order p − 1); also the coset shift of every
    /// evaluation domain, since it lies in no subgroup of two-power order.
    pub const GENERATOR: Self = Self(7);
    /// Bytes in the canonical little-endian encoding.
    pub const BYTES: usize = 8;

    /// The element `value mod p`.
    #[inline]
    pub const fn new(value: u64) -> Self {
        Self(if value >= P { value - P } else { value })
    }

    /// The element whose canonical value is `value`, or `None` if `value >= p`.
    #[inline]
    pub const fn from_canonical(value: u64) -> Option<Self> {
        if value < P { Some(Self(value)) } else { None }
    }

    /// The canonical representative in `[0, p)`.
    #[inline]
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// `self / 2`: the value shifted right, plus (p + 1)/2 when it is odd (then the result is
    /// (x + p)/2 < p).
    #[inline(always)]
    pub const fn halve(self) -> Self {
        Self((self.0 >> 1) + (self.0 & 1) * HALF)
    }

    /// The canonical representatives of `values`, without copying.
    #[inline]
    pub fn slice_as_u64(values: &[Felt]) -> &[u64] {
        // SAFETY: `Felt` is `repr(transparent)` over `u64`: same size, alignment and bits.
        unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), values.len()) }
    }

    /// Canonical little-endian encoding.
    #[inline]
    pub const fn to_le_bytes(self) -> [u8; 8] {
        self.0.to_le_bytes()
    }

    /// Decodes a canonical little-endian encoding; `None` for values `>= p`.
    #[inline]
    pub fn from_le_bytes(bytes: [u8; 8]) -> Option<Self> {
        Self::from_canonical(u64::from_le_bytes(bytes))
    }

    /// `self^2`.
    #[inline]
    pub fn square(self) -> Self {
        self * self
    }

    /// `2·self`.
    #[inline]
    pub fn double(self) -> Self {
        self + self
    }

    /// `self^exponent` by square-and-multiply.
    #[inline]
    pub fn pow(self, exponent: u64) -> Self {
        FieldElement::pow(self, exponent)
    }

    /// The multiplicative inverse, or `None` for zero.
    pub fn try_inverse(self) -> Option<Self> {
        (self != Self::ZERO).then(|| self.pow(P - 2))
    }

    /// The multiplicative inverse.
    ///
    /// # Panics
    /// If `self` is zero; callers invert only values they know to be non-zero.
    pub fn inverse(self) -> Self {
        self.try_inverse().expect("inverse of zero")
    }

    /// A primitive `2^log_order`-th root of unity.
    ///
    /// # Panics
    /// If `log_order > TWO_ADICITY`.
    pub fn two_adic_root(log_order: usize) -> Self {
        assert!(
            log_order <= TWO_ADICITY,
            "no subgroup of order 2^{log_order}"
        );
        Self(TWO_ADIC_ROOT).pow(1 << (TWO_ADICITY - log_order))
    }

    /// `[1, self, self^2, …]`, `len` powers.
    pub fn powers(self, len: usize) -> Vec<Self> {
        FieldElement::powers(self, len)
    }
}

/// Reduces a 128-bit value modulo p.
#[inline(always)]
pub(crate) fn reduce128(x: u128) -> u64 {
    let lo = x as u64;
    let hi = (x >> 64) as u64;
    let hi_hi = hi >> 32;
    let hi_lo = hi & EPSILON;
    // x = lo + hi_lo·2^64 + hi_hi·2^96 ≡ lo + hi_lo·EPSILON − hi_hi (mod p).
    let (mut t0, borrow) = lo.overflowing_sub(hi_hi);
    if borrow {
        // Wrapped by 2^64; adding p back is subtracting 2^64 − p = EPSILON.
        t0 = t0.wrapping_sub(EPSILON);
    }
    // hi_lo·2^64 ≡ hi_lo·EPSILON, which fits in 64 bits.
    let t1 = hi_lo * EPSILON;
    let (sum, carry) = t0.overflowing_add(t1);
    let sum = sum.wrapping_add(EPSILON * u64::from(carry));
    if sum >= P { sum - P } else { sum }
}

impl Add for Felt {
    type Output = Self;
    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        let (sum, over) = self.0.overflowing_add(rhs.0);
        let (reduced, under) = sum.overflowing_sub(P);
        Self(if over || !under { reduced } else { sum })
    }
}

impl Sub for Felt {
    type Output = Self;
    #[inline(always)]
    fn sub(self, rhs: Self) -> Self {
        let (diff, under) = self.0.overflowing_sub(rhs.0);
        Self(if under { diff.wrapping_add(P) } else { diff })
    }
}

impl Mul for Felt {
    type Output = Self;
    #[inline(always)]
    fn mul(self, rhs: Self) -> Self {
        Self(reduce128(u128::from(self.0) * u128::from(rhs.0)))
    }
}

impl Neg for Felt {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self(if self.0 == 0 { 0 } else { P - self.0 })
    }
}

impl AddAssign for Felt {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl SubAssign for Felt {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Self) {
        *self = *self - rhs;
    }
}

impl MulAssign for Felt {
    #[inline(always)]
    fn mul_assign(&mut self, rhs: Self) {
        *self = *self * rhs;
    }
}

impl From<u32> for Felt {
    fn from(value: u32) -> Self {
        Self(u64::from(value))
    }
}

impl fmt::Debug for Felt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for Felt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_mul(a: u64, b: u64) -> u64 {
        ((u128::from(a) * u128::from(b)) % u128::from(P)) as u64
    }

    #[test]
    fn edge_values_reduce_like_u128_arithmetic() {
        let edges = [
            0,
            1,
            2,
            EPSILON,
            EPSILON + 1,
            P - 2,
            P - 1,
            1 << 63,
            (1 << 32) + 5,
        ];
        for &a in &edges {
            for &b in &edges {
                let (fa, fb) = (Felt::new(a), Felt::new(b));
                let (a, b) = (fa.as_u64(), fb.as_u64());
                assert_eq!((fa * fb).as_u64(), naive_mul(a, b), "{a} * {b}");
                let sum = ((u128::from(a) + u128::from(b)) % u128::from(P)) as u64;
                assert_eq!((fa + fb).as_u64(), sum, "{a} + {b}");
                let diff = ((u128::from(a) + u128::from(P) - u128::from(b)) % u128::from(P)) as u64;
                assert_eq!((fa - fb).as_u64(), diff, "{a} - {b}");
            }
            let half = Felt::new(a).halve();
            assert_eq!(half + half, Felt::new(a), "{a} / 2");
            assert_eq!(half, Felt::new(a) * Felt::new(2).inverse(), "{a} / 2");
        }
    }

    #[test]
    fn non_canonical_encodings_are_refused() {
        assert_eq!(Felt::from_canonical(P), None);
        assert_eq!(Felt::from_le_bytes(u64::MAX.to_le_bytes()), None);
        assert_eq!(Felt::from_le_bytes((P - 1).to_le_bytes()), Some(-Felt::ONE));
        assert_eq!(Felt::new(P + 3), Felt::new(3));
    }

    #[test]
    fn two_adic_roots_have_exact_order() {
        for log in [0, 1, 5, 20, 32] {
            let w = Felt::two_adic_root(log);
            assert_eq!(w.pow(1 << log), Felt::ONE);
            if log > 0 {
                assert_eq!(w.pow(1 << (log - 1)), -Felt::ONE, "order of root 2^{log}");
            }
        }
        assert_eq!(
            Felt::GENERATOR.pow((P - 1) >> TWO_ADICITY),
            Felt::two_adic_root(32)
        );
    }

    #[test]
    fn generator_generates_the_multiplicative_group() {
        // p − 1 = 2^32 · 3 · 5 · 17 · 257 · 65537.
        for factor in [2, 3, 5, 17, 257, 65537] {
            assert_ne!(Felt::GENERATOR.pow((P - 1) / factor), Felt::ONE);
        }
    }

    proptest! {
        #[test]
        fn multiplication_matches_u128(a in any::<u64>(), b in any::<u64>()) {
            let (fa, fb) = (Felt::new(a), Felt::new(b));
            prop_assert_eq!((fa * fb).as_u64(), naive_mul(fa.as_u64(), fb.as_u64()));
        }

        #[test]
        fn field_axioms(a in any::<u64>(), b in any::<u64>(), c in any::<u64>()) {
            let (a, b, c) = (Felt::new(a), Felt::new(b), Felt::new(c));
            prop_assert_eq!(a + b, b + a);
            prop_assert_eq!(a * b, b * a);
            prop_assert_eq!((a + b) + c, a + (b + c));
            prop_assert_eq!((a * b) * c, a * (b * c));
            prop_assert_eq!(a * (b + c), a * b + a * c);
            prop_assert_eq!(a - b + b, a);
            prop_assert_eq!(a + (-a), Felt::ZERO);
            if a != Felt::ZERO {
                prop_assert_eq!(a * a.inverse(), Felt::ONE);
            }
        }
    }
}
