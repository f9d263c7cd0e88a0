//! Goldilocks arithmetic on 4 (AVX2) or 8 (AVX-512) elements at once, behind one trait.
//!
//! [`PackedField`] is what every SIMD kernel is written against, once (as Plonky3's
//! `PackedField`): a kernel implements [`Kernel`], generic over the packed type, and [`run`]
//! instantiates it for the path's instruction set in one of two thin `#[target_feature]`
//! entry points, into which the kernel and these operations inline. A packed value exists
//! only on a CPU with its instructions: making one from scalars takes the `ballast_cpu` token
//! that proves it ([`PackedField::Token`]), and every operation on values is then safe.
//! Values stay canonical, and every operation is the field operation, so results are exactly
//! the scalar path's. [`ProductSum`] sums products exactly, reducing once.

use std::fmt::Debug;

use ballast_cpu::Kernels;

use crate::{Algebra, Felt, Halve};

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;

/// Goldilocks elements in one register, lane i holding element i.
pub trait PackedField: Algebra + Halve + Debug + 'static {
    /// Elements per register.
    const LANES: usize;
    /// The proof that the CPU has the register's instructions.
    type Token: Copy;
    /// The same register as 64-bit integer lanes.
    type Words: Words<Token = Self::Token>;
    /// One value per lane.
    type Array<T: Copy>: Copy + AsRef<[T]> + AsMut<[T]>;

    /// The array of `f(k)` for lanes k = 0, 1, ….
    fn array<T: Copy>(f: impl FnMut(usize) -> T) -> Self::Array<T>;

    /// The first [`LANES`](Self::LANES) elements of `values`.
    ///
    /// # Panics
    /// If `values` holds fewer.
    fn load(token: Self::Token, values: &[Felt]) -> Self;

    /// `value` in every lane.
    fn splat(token: Self::Token, value: Felt) -> Self;

    /// Writes the lanes to the start of `out`.
    ///
    /// # Panics
    /// If `out` holds fewer than [`LANES`](Self::LANES).
    fn store(self, out: &mut [Felt]);

    /// Bit k set where lane k is not zero.
    fn nonzero_lanes(self) -> u8;

    /// Swaps blocks of `half` lanes between two registers: the even blocks of `self` and
    /// `other` into the first result, the odd blocks into the second, alternating. With
    /// `self`, `other` holding 2·[`LANES`](Self::LANES) consecutive elements, the results
    /// pair each element of the first half of every 2·`half` block with its partner `half`
    /// further on, lane for lane, and lane k holds position k mod `half` of its block (the
    /// twiddle index). Its own inverse.
    ///
    /// # Panics
    /// If `half` is not a power of two below [`LANES`](Self::LANES).
    fn interleave(self, other: Self, half: usize) -> (Self, Self);

    /// The lanes as 64-bit integers.
    fn words(self) -> Self::Words;
}

/// A SIMD kernel, written once over [`PackedField`].
pub trait Kernel {
    /// What it returns.
    type Output;

    /// The kernel on `P`'s registers. Implementations are `#[inline(always)]`: [`run`]'s
    /// entry points compile them for their instruction set only by inlining them.
    fn run<P: PackedField>(self, token: P::Token) -> Self::Output;
}

/// Runs `kernel` on the SIMD path `kernels` names; `None` on the scalar path (and on CPUs
/// without x86 SIMD), where the caller runs its scalar code.
///
/// This is where the kernels' `unsafe` is justified, once: a `Kernels::Avx2` or
/// `Kernels::Avx512` holds a token that only the CPU's report of the feature makes
/// (`ballast_cpu::Avx2::detect`), so code compiled for it may run.
#[inline]
pub fn run<K: Kernel>(kernels: Kernels, kernel: K) -> Option<K::Output> {
    match kernels {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token exists only on a CPU with AVX2.
        Kernels::Avx2(token) => Some(unsafe { run_avx2(token, kernel) }),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token exists only on a CPU with AVX-512F.
        Kernels::Avx512(token) => Some(unsafe { run_avx512(token, kernel) }),
        _ => None,
    }
}

/// `kernel` compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<K: Kernel>(token: ballast_cpu::Avx2, kernel: K) -> K::Output {
    kernel.run::<avx2::Packed>(token)
}

/// `kernel` compiled for AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn run_avx512<K: Kernel>(token: ballast_cpu::Avx512, kernel: K) -> K::Output {
    kernel.run::<avx512::Packed>(token)
}

/// 64-bit integer lanes of one register: what [`ProductSum`] computes in, and what the
/// multi-lane Keccak sponge (`ballast-keccak`) hashes with.
pub trait Words: Copy + Debug {
    /// The proof that the CPU has the register's instructions.
    type Token: Copy;
    /// The first lanes' worth of `words`.
    ///
    /// # Panics
    /// If `words` holds fewer lanes than the register.
    fn load(token: Self::Token, words: &[u64]) -> Self;
    /// `word` in every lane.
    fn splat(token: Self::Token, word: u64) -> Self;
    /// Writes the lanes to the start of `out`.
    ///
    /// # Panics
    /// If `out` holds fewer lanes than the register.
    fn store(self, out: &mut [u64]);
    /// Lane-wise `self + rhs`, wrapping.
    fn add(self, rhs: Self) -> Self;
    /// Lane-wise low 32 bits.
    fn low32(self) -> Self;
    /// Lane-wise `self >> 32`.
    fn high32(self) -> Self;
    /// Lane-wise product of the low 32 bits of `self` and `rhs`, 64 bits wide.
    fn mul32(self, rhs: Self) -> Self;
    /// Lane-wise `self ^ rhs`.
    fn xor(self, rhs: Self) -> Self;
    /// Lane-wise `self ^ b ^ c`.
    fn xor3(self, b: Self, c: Self) -> Self;
    /// Lane-wise `self ^ (!b & c)` (Keccak's χ).
    fn xor_andnot(self, b: Self, c: Self) -> Self;
    /// Each lane rotated left by `N` (0 < `N` < 64) bits.
    fn rotate_left<const N: i32>(self) -> Self;
    /// Each lane shifted left by `N` bits.
    fn shl<const N: i32>(self) -> Self;
    /// Each lane shifted right by `N` bits.
    fn shr<const N: i32>(self) -> Self;
}

/// A factor of [`ProductSum::add`]: a register of field elements split into 32-bit halves.
#[derive(Clone, Copy, Debug)]
pub struct Halves<P: PackedField> {
    /// The values (the products read their low 32 bits).
    low: P::Words,
    /// The values shifted right by 32 bits.
    high: P::Words,
}

impl<P: PackedField> Halves<P> {
    /// The lanes of `packed`.
    #[inline(always)]
    pub fn of(packed: P) -> Self {
        let low = packed.words();
        Self {
            low,
            high: low.high32(),
        }
    }

    /// `value` in every lane.
    #[inline(always)]
    pub fn splat(token: P::Token, value: Felt) -> Self {
        Self::of(P::splat(token, value))
    }
}

/// Lane-wise Σ a·b of field elements, exact and reduced once: the four 32-bit digits of
/// every 128-bit product are summed in their own 64-bit lanes (each addition adds less than
/// 3·2^32 to a digit, so up to 2^30 products fit), and [`sum`](Self::sum) folds them mod p.
#[derive(Clone, Copy, Debug)]
pub struct ProductSum<P: PackedField>([P::Words; 4]);

impl<P: PackedField> ProductSum<P> {
    /// The empty sum.
    #[inline(always)]
    pub fn zero(token: P::Token) -> Self {
        Self([P::Words::splat(token, 0); 4])
    }

    /// Adds `a·b` in every lane.
    #[inline(always)]
    pub fn add(&mut self, a: Halves<P>, b: Halves<P>) {
        let ll = a.low.mul32(b.low);
        let lh = a.low.mul32(b.high);
        let hl = a.high.mul32(b.low);
        let hh = a.high.mul32(b.high);
        let [d0, d1, d2, d3] = &mut self.0;
        *d0 = d0.add(ll.low32());
        let mid = lh.low32().add(hl.low32());
        *d1 = d1.add(mid.add(ll.high32()));
        let top = lh.high32().add(hl.high32());
        *d2 = d2.add(top.add(hh.low32()));
        *d3 = d3.add(hh.high32());
    }

    /// The sums, lane by lane: Σ digit_i·2^(32·i) mod p.
    #[inline(always)]
    pub fn sum(self) -> P::Array<Felt> {
        let digits = self.0.map(|d| {
            let mut words = P::array(|_| 0u64);
            d.store(words.as_mut());
            words
        });
        P::array(|k| fold_digits([0, 1, 2, 3].map(|i| digits[i].as_ref()[k])))
    }
}

/// Σ digits_i·2^(32·i) mod p: the value a [`ProductSum`] lane holds.
fn fold_digits(digits: [u64; 4]) -> Felt {
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

        impl crate::Halve for $packed {
            #[inline(always)]
            fn halve(self) -> Self {
                // SAFETY: `self` exists, so the CPU supports the feature (see `ring_ops`).
                unsafe { $packed::halve(self) }
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
