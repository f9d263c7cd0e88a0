//! The cubic extension F_p[x] / (x^3 − 2), the field every challenge is drawn from.
//!
//! x^3 − 2 is irreducible because p ≡ 1 (mod 3) and 2 is not a cube mod p (a test checks
//! 2^((p−1)/3) ≠ 1). Elements are `c0 + c1·x + c2·x^2` with canonical base coordinates.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use crate::{Algebra, Felt, FieldElement, Halve};

/// x^3 = `NONRESIDUE` in the extension.
const NONRESIDUE: u64 = 2;

/// An element of the degree-3 extension of Goldilocks.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Ext3 {
    coeffs: [Felt; 3],
}

/// `a·NONRESIDUE`, as a doubling.
#[inline(always)]
fn times_nonresidue<A: Algebra>(a: A) -> A {
    const { assert!(NONRESIDUE == 2, "times_nonresidue doubles") };
    a + a
}

impl Ext3 {
    /// The additive identity.
    pub const ZERO: Self = Self {
        coeffs: [Felt::ZERO; 3],
    };
    /// The multiplicative identity.
    pub const ONE: Self = Self {
        coeffs: [Felt::ONE, Felt::ZERO, Felt::ZERO],
    };
    /// Extension degree over the base field.
    pub const DEGREE: usize = 3;
    /// Bytes in the canonical encoding: three base coordinates, little-endian.
    pub const BYTES: usize = 24;

    /// The element `c0 + c1·x + c2·x^2`.
    #[inline]
    pub const fn new(coeffs: [Felt; 3]) -> Self {
        Self { coeffs }
    }

    /// The basis element x^i (i < 3), used to rebuild an extension value from the
    /// openings of its three coordinate polynomials.
    ///
    /// # Panics
    /// If `i >= 3`.
    pub fn basis(i: usize) -> Self {
        let mut coeffs = [Felt::ZERO; 3];
        coeffs[i] = Felt::ONE;
        Self { coeffs }
    }

    /// The base-field coordinates `[c0, c1, c2]`.
    #[inline]
    pub const fn coeffs(self) -> [Felt; 3] {
        self.coeffs
    }

    /// Canonical encoding: the three coordinates, each little-endian.
    pub fn to_le_bytes(self) -> [u8; 24] {
        let mut out = [0; 24];
        for (chunk, c) in out.chunks_exact_mut(8).zip(self.coeffs) {
            chunk.copy_from_slice(&c.to_le_bytes());
        }
        out
    }

    /// Decodes a canonical encoding; `None` if any coordinate is `>= p`.
    pub fn from_le_bytes(bytes: [u8; 24]) -> Option<Self> {
        let mut coeffs = [Felt::ZERO; 3];
        for (c, chunk) in coeffs.iter_mut().zip(bytes.chunks_exact(8)) {
            *c = Felt::from_le_bytes(chunk.try_into().expect("8-byte chunk"))?;
        }
        Some(Self { coeffs })
    }

    /// The product of two elements given by their coordinates over any [`Algebra`] (an
    /// AIR's expressions as well as field elements): the one definition of the extension's
    /// multiplication, a schoolbook product with x^3 = W and x^4 = W·x.
    #[inline(always)]
    pub fn mul_over<A: Algebra>(a: [A; 3], b: [A; 3]) -> [A; 3] {
        let [a0, a1, a2] = a;
        let [b0, b1, b2] = b;
        [
            a0 * b0 + times_nonresidue(a1 * b2 + a2 * b1),
            a0 * b1 + a1 * b0 + times_nonresidue(a2 * b2),
            a0 * b2 + a1 * b1 + a2 * b0,
        ]
    }

    /// `self · scalar` for a base-field scalar: three base multiplications.
    #[inline(always)]
    pub fn scale(self, scalar: Felt) -> Self {
        let [a0, a1, a2] = self.coeffs;
        Self::new([a0 * scalar, a1 * scalar, a2 * scalar])
    }

    /// `self^2`.
    #[inline]
    pub fn square(self) -> Self {
        self * self
    }

    /// `self^exponent` by square-and-multiply.
    #[inline]
    pub fn pow(self, exponent: u64) -> Self {
        FieldElement::pow(self, exponent)
    }

    /// The multiplicative inverse, or `None` for zero.
    ///
    /// With W = x^3: for a = a0 + a1·x + a2·x^2, the element
    /// b = (a0² − W·a1·a2) + (W·a2² − a0·a1)·x + (a1² − a0·a2)·x² satisfies a·b = N(a) ∈ F_p,
    /// so a⁻¹ = b / N(a).
    pub fn try_inverse(self) -> Option<Self> {
        let [a0, a1, a2] = self.coeffs;
        let b0 = a0.square() - times_nonresidue(a1 * a2);
        let b1 = times_nonresidue(a2.square()) - a0 * a1;
        let b2 = a1.square() - a0 * a2;
        let norm = a0 * b0 + times_nonresidue(a1 * b2 + a2 * b1);
        let norm_inv = norm.try_inverse()?;
        Some(Self::new([b0 * norm_inv, b1 * norm_inv, b2 * norm_inv]))
    }

    /// The multiplicative inverse.
    ///
    /// # Panics
    /// If `self` is zero; callers invert only values they know to be non-zero.
    pub fn inverse(self) -> Self {
        self.try_inverse().expect("inverse of zero")
    }

    /// `[1, self, self^2, …]`, `len` powers.
    pub fn powers(self, len: usize) -> Vec<Self> {
        FieldElement::powers(self, len)
    }
}

impl From<Felt> for Ext3 {
    #[inline(always)]
    fn from(value: Felt) -> Self {
        Self::new([value, Felt::ZERO, Felt::ZERO])
    }
}

impl Halve for Ext3 {
    /// Each coordinate halved: halving is multiplying by the base field's 1/2.
    #[inline(always)]
    fn halve(self) -> Self {
        Self::new(self.coeffs().map(Felt::halve))
    }
}

impl Add for Ext3 {
    type Output = Self;
    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        let [a0, a1, a2] = self.coeffs;
        let [b0, b1, b2] = rhs.coeffs;
        Self::new([a0 + b0, a1 + b1, a2 + b2])
    }
}

impl Sub for Ext3 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, rhs: Self) -> Self {
        let [a0, a1, a2] = self.coeffs;
        let [b0, b1, b2] = rhs.coeffs;
        Self::new([a0 - b0, a1 - b1, a2 - b2])
    }
}

impl Neg for Ext3 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        let [a0, a1, a2] = self.coeffs;
        Self::new([-a0, -a1, -a2])
    }
}

impl Mul for Ext3 {
    type Output = Self;
    #[inline(always)]
    fn mul(self, rhs: Self) -> Self {
        Self::new(Self::mul_over(self.coeffs, rhs.coeffs))
    }
}

impl Mul<Felt> for Ext3 {
    type Output = Self;
    #[inline(always)]
    fn mul(self, rhs: Felt) -> Self {
        self.scale(rhs)
    }
}

impl Add<Felt> for Ext3 {
    type Output = Self;
    #[inline(always)]
    fn add(self, rhs: Felt) -> Self {
        let [a0, a1, a2] = self.coeffs;
        Self::new([a0 + rhs, a1, a2])
    }
}

impl Sub<Felt> for Ext3 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, rhs: Felt) -> Self {
        let [a0, a1, a2] = self.coeffs;
        Self::new([a0 - rhs, a1, a2])
    }
}

impl AddAssign for Ext3 {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl SubAssign for Ext3 {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Self) {
        *self = *self - rhs;
    }
}

impl MulAssign for Ext3 {
    #[inline(always)]
    fn mul_assign(&mut self, rhs: Self) {
        *self = *self * rhs;
    }
}

impl fmt::Debug for Ext3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a0, a1, a2] = self.coeffs;
        write!(f, "({a0} + {a1}·x + {a2}·x²)")
    }
}

impl fmt::Display for Ext3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ext(a: u64, b: u64, c: u64) -> Ext3 {
        Ext3::new([Felt::new(a), Felt::new(b), Felt::new(c)])
    }

    #[test]
    fn two_is_not_a_cube_so_the_modulus_is_irreducible() {
        let p = Felt::MODULUS;
        assert_eq!((p - 1) % 3, 0);
        assert_ne!(Felt::new(NONRESIDUE).pow((p - 1) / 3), Felt::ONE);
    }

    #[test]
    fn x_cubed_is_the_nonresidue() {
        let x = Ext3::basis(1);
        assert_eq!(x * x * x, Ext3::from(Felt::new(NONRESIDUE)));
        assert_eq!(x * x, Ext3::basis(2));
    }

    #[test]
    fn frobenius_has_order_three() {
        // a^(p^3) = a for every element of a field with p^3 elements.
        let a = ext(3, 1_000_000_007, 42);
        let p = Felt::MODULUS;
        assert_eq!(a.pow(p).pow(p).pow(p), a);
        assert_ne!(a.pow(p), a);
    }

    #[test]
    fn encoding_round_trips_and_rejects_non_canonical() {
        let a = ext(1, 2, Felt::MODULUS - 1);
        assert_eq!(Ext3::from_le_bytes(a.to_le_bytes()), Some(a));
        let mut bad = a.to_le_bytes();
        bad[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(Ext3::from_le_bytes(bad), None);
    }

    proptest! {
        #[test]
        fn halving_is_the_product_with_one_half(a in any::<[u64; 3]>()) {
            let a = ext(a[0], a[1], a[2]);
            prop_assert_eq!(a.halve(), a * Ext3::from(Felt::ONE.halve()));
            prop_assert_eq!(a.halve() + a.halve(), a);
        }

        #[test]
        fn field_axioms(a in any::<[u64; 3]>(), b in any::<[u64; 3]>(), c in any::<[u64; 3]>()) {
            let (a, b, c) = (ext(a[0], a[1], a[2]), ext(b[0], b[1], b[2]), ext(c[0], c[1], c[2]));
            prop_assert_eq!(a * b, b * a);
            prop_assert_eq!((a * b) * c, a * (b * c));
            prop_assert_eq!(a * (b + c), a * b + a * c);
            prop_assert_eq!(a - b + b, a);
            prop_assert_eq!(a + (-a), Ext3::ZERO);
            if a != Ext3::ZERO {
                prop_assert_eq!(a * a.inverse(), Ext3::ONE);
            }
        }

        #[test]
        fn base_field_embedding_is_a_homomorphism(a in any::<u64>(), b in any::<u64>()) {
            let (a, b) = (Felt::new(a), Felt::new(b));
            prop_assert_eq!(Ext3::from(a) * Ext3::from(b), Ext3::from(a * b));
            prop_assert_eq!(Ext3::from(a).scale(b), Ext3::from(a * b));
        }
    }

    #[test]
    fn zero_has_no_inverse() {
        assert_eq!(Ext3::ZERO.try_inverse(), None);
    }
}
