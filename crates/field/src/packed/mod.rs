//! Goldilocks arithmetic on 4 (AVX2) or 8 (AVX-512) elements at once.
//!
//! Both types have the same inherent API, so one kernel body serves both (the NTT writes its
//! kernels once, in a macro). Every method carries `#[target_feature]`: it is safe to call
//! from code compiled for the same feature, which the kernels are, and such code only runs
//! behind a `ballast_cpu` token. Values stay canonical, and every operation is the field
//! operation, so results are exactly the scalar path's.

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;

/// Σ digits_i·2^(32·i) mod p: the value a [`ProductSum`](avx2::ProductSum) lane holds.
#[cfg(target_arch = "x86_64")]
fn fold_digits(digits: [u64; 4]) -> crate::Felt {
    use crate::Felt;
    // 2^32, 2^64 ≡ 2^32 − 1 and 2^96 ≡ −1 (mod p).
    let [d0, d1, d2, d3] = digits.map(Felt::new);
    d0 + d1 * Felt::new(1 << 32) + d2 * Felt::new(crate::felt::EPSILON) - d3
}

/// The ring operations on a packed type, so that constraints written over
/// [`Algebra`](crate::Algebra) evaluate several points at once. A packed value exists only
/// where its instructions do: the target-feature constructors run only behind a token, and
/// `From<Felt>` checks the CPU.
macro_rules! ring_ops {
    ($packed:ident, $feature:tt, $name:literal) => {
        impl From<crate::Felt> for $packed {
            #[inline(always)]
            fn from(value: crate::Felt) -> Self {
                assert!(
                    std::arch::is_x86_feature_detected!($feature),
                    concat!($name, " packed values on a CPU without ", $name)
                );
                // SAFETY: the CPU supports the feature (checked above).
                unsafe { Self::splat(value) }
            }
        }

        impl $packed {
            /// Every lane times `scalar`.
            #[inline(always)]
            pub fn scale(self, scalar: crate::Felt) -> Self {
                // SAFETY: `self` exists, so the CPU supports the feature (see `ring_ops`).
                unsafe { $packed::mul(self, $packed::splat(scalar)) }
            }
        }

        impl std::ops::Add for $packed {
            type Output = Self;
            #[inline(always)]
            fn add(self, rhs: Self) -> Self {
                // SAFETY: `self` exists, so the CPU supports the feature (see `ring_ops`).
                unsafe { $packed::add(self, rhs) }
            }
        }

        impl std::ops::Sub for $packed {
            type Output = Self;
            #[inline(always)]
            fn sub(self, rhs: Self) -> Self {
                // SAFETY: `self` exists, so the CPU supports the feature (see `ring_ops`).
                unsafe { $packed::sub(self, rhs) }
            }
        }

        impl std::ops::Mul for $packed {
            type Output = Self;
            #[inline(always)]
            fn mul(self, rhs: Self) -> Self {
                // SAFETY: `self` exists, so the CPU supports the feature (see `ring_ops`).
                unsafe { $packed::mul(self, rhs) }
            }
        }

        impl std::ops::Neg for $packed {
            type Output = Self;
            #[inline(always)]
            fn neg(self) -> Self {
                // SAFETY: `self` exists, so the CPU supports the feature (see `ring_ops`).
                unsafe { $packed::sub($packed::zero_like(self), self) }
            }
        }

        impl std::ops::AddAssign for $packed {
            #[inline(always)]
            fn add_assign(&mut self, rhs: Self) {
                *self = *self + rhs;
            }
        }

        impl std::ops::SubAssign for $packed {
            #[inline(always)]
            fn sub_assign(&mut self, rhs: Self) {
                *self = *self - rhs;
            }
        }

        impl std::ops::MulAssign for $packed {
            #[inline(always)]
            fn mul_assign(&mut self, rhs: Self) {
                *self = *self * rhs;
            }
        }
    };
}
#[cfg(target_arch = "x86_64")]
use ring_ops;
