//! The arithmetic constraints are written in, and the fields that have it.
//!
//! The prover evaluates constraints on trace values (base field); the verifier evaluates the
//! same constraints at an out-of-domain point (extension field); an AIR's degree analysis
//! evaluates them over degrees. Writing constraints once over [`Algebra`] keeps the three the
//! same code.

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use crate::{Ext3, Felt};

/// A ring constraints can be written in: addition, subtraction, multiplication and the base
/// field's constants.
pub trait Algebra:
    Copy
    + Send
    + Sync
    + From<Felt>
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
{
}

impl<T> Algebra for T where
    T: Copy
        + Send
        + Sync
        + From<Felt>
        + Add<Output = T>
        + Sub<Output = T>
        + Mul<Output = T>
        + Neg<Output = T>
        + AddAssign
        + SubAssign
        + MulAssign
{
}

/// An [`Algebra`] that divides by two: a shift and a conditional addition on field
/// elements and SIMD lanes, where multiplying by 1/2 costs a full product.
pub trait Halve: Algebra {
    /// `self / 2`.
    fn halve(self) -> Self;
}

impl Halve for Felt {
    #[inline(always)]
    fn halve(self) -> Self {
        self.halve()
    }
}

/// A field in which AIR constraints can be evaluated: [`Felt`] or [`Ext3`].
pub trait FieldElement: Algebra + Debug + PartialEq {
    /// The additive identity.
    const ZERO: Self;
    /// The multiplicative identity.
    const ONE: Self;

    /// The multiplicative inverse, or `None` for zero.
    fn try_inverse(self) -> Option<Self>;

    /// `self^exponent` by square-and-multiply.
    fn pow(self, mut exponent: u64) -> Self {
        let mut base = self;
        let mut acc = Self::ONE;
        while exponent > 0 {
            if exponent & 1 == 1 {
                acc *= base;
            }
            base *= base;
            exponent >>= 1;
        }
        acc
    }

    /// `[1, self, self^2, …]`, `len` powers.
    fn powers(self, len: usize) -> Vec<Self> {
        let mut out = Vec::with_capacity(len);
        let mut acc = Self::ONE;
        for _ in 0..len {
            out.push(acc);
            acc *= self;
        }
        out
    }
}

impl FieldElement for Felt {
    const ZERO: Self = Felt::ZERO;
    const ONE: Self = Felt::ONE;

    fn try_inverse(self) -> Option<Self> {
        Felt::try_inverse(self)
    }
}

impl FieldElement for Ext3 {
    const ZERO: Self = Ext3::ZERO;
    const ONE: Self = Ext3::ONE;

    fn try_inverse(self) -> Option<Self> {
        Ext3::try_inverse(self)
    }
}
