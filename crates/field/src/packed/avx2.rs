//! Four Goldilocks elements in a 256-bit register (AVX2).
//!
//! AVX2 has no unsigned 64-bit comparison: values are compared after flipping their top bit,
//! which turns unsigned order into signed order.

use std::arch::x86_64::*;

use super::PackedField;
use crate::Felt;
use crate::felt::{EPSILON, HALF, P};

super::ring_ops!(Packed, "avx2", "AVX2");

/// Four field elements, lane i holding element i.
#[derive(Clone, Copy, Debug)]
pub struct Packed(__m256i);

const SIGN: i64 = i64::MIN;

impl Packed {
    /// The first four elements of `values`.
    ///
    /// # Panics
    /// If `values` holds fewer than four.
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn load(values: &[Felt]) -> Self {
        let values: &[Felt; 4] = values[..4].try_into().expect("four elements");
        // SAFETY: `values` is 32 readable bytes (Felt is a transparent u64); loadu accepts
        // any alignment.
        Self(unsafe { _mm256_loadu_si256(values.as_ptr().cast()) })
    }

    /// Writes the four elements to the start of `out`.
    ///
    /// # Panics
    /// If `out` holds fewer than four.
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn store(self, out: &mut [Felt]) {
        let out: &mut [Felt; 4] = (&mut out[..4]).try_into().expect("four elements");
        // SAFETY: `out` is 32 writable bytes; every lane is canonical (the methods keep it so),
        // which is all a Felt requires.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), self.0) }
    }

    /// `value` in every lane.
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn splat(value: Felt) -> Self {
        Self(_mm256_set1_epi64x(value.as_u64() as i64))
    }

    /// Zero in every lane (`self` only proves the feature is present).
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn zero_like(self) -> Self {
        Self(_mm256_setzero_si256())
    }

    /// Bit i set where lane i is not zero.
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn nonzero_lanes(self) -> u8 {
        let zero = _mm256_cmpeq_epi64(self.0, _mm256_setzero_si256());
        (!_mm256_movemask_pd(_mm256_castsi256_pd(zero)) & 0xf) as u8
    }

    /// Lane-wise `self + rhs`.
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn add(self, rhs: Self) -> Self {
        let sum = _mm256_add_epi64(self.0, rhs.0);
        // Subtract p (add 2^64 − p) when the sum wrapped or is at least p.
        let wrapped = greater(self.0, sum);
        let at_least_p = greater(sum, _mm256_set1_epi64x((P - 1) as i64));
        let fix = _mm256_and_si256(
            _mm256_or_si256(wrapped, at_least_p),
            _mm256_set1_epi64x(EPSILON as i64),
        );
        Self(_mm256_add_epi64(sum, fix))
    }

    /// Lane-wise `self − rhs`.
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn sub(self, rhs: Self) -> Self {
        let diff = _mm256_sub_epi64(self.0, rhs.0);
        // Add p back (subtract 2^64 − p) when the difference wrapped.
        let wrapped = greater(rhs.0, self.0);
        let fix = _mm256_and_si256(wrapped, _mm256_set1_epi64x(EPSILON as i64));
        Self(_mm256_sub_epi64(diff, fix))
    }

    /// Lane-wise `self / 2`, as [`Felt::halve`]: canonical lanes stay canonical.
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn halve(self) -> Self {
        let odd = _mm256_and_si256(self.0, _mm256_set1_epi64x(1));
        let mask = _mm256_sub_epi64(_mm256_setzero_si256(), odd);
        let half = _mm256_and_si256(mask, _mm256_set1_epi64x(HALF as i64));
        Self(_mm256_add_epi64(_mm256_srli_epi64::<1>(self.0), half))
    }

    /// Lane-wise `self · rhs`.
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn mul(self, rhs: Self) -> Self {
        let (hi, lo) = mul_wide(self.0, rhs.0);
        Self(reduce(hi, lo))
    }

    /// Swaps blocks of `half` lanes between two registers: the even blocks of `self` and
    /// `other` into the first result, the odd blocks into the second, alternating. With
    /// `self`, `other` holding eight consecutive elements, the results pair each element of
    /// the first half of every 2·`half` block with its partner `half` further on, lane for
    /// lane, and lane k holds position k mod `half` of its block (the twiddle index). Its
    /// own inverse.
    ///
    /// # Panics
    /// If `half` is not 1 or 2.
    ///
    /// # Safety
    /// The CPU must support AVX2: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn interleave(self, other: Self, half: usize) -> (Self, Self) {
        let (a, b) = (self.0, other.0);
        match half {
            1 => (
                Self(_mm256_unpacklo_epi64(a, b)),
                Self(_mm256_unpackhi_epi64(a, b)),
            ),
            2 => (
                Self(_mm256_permute2x128_si256::<0x20>(a, b)),
                Self(_mm256_permute2x128_si256::<0x31>(a, b)),
            ),
            _ => panic!("AVX2 interleaves blocks of 1 or 2 lanes, not {half}"),
        }
    }
}

/// Unsigned `a > b` lane-wise, as all-ones masks.
#[inline]
#[target_feature(enable = "avx2")]
fn greater(a: __m256i, b: __m256i) -> __m256i {
    let sign = _mm256_set1_epi64x(SIGN);
    _mm256_cmpgt_epi64(_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign))
}

/// Four 64-bit integer lanes: [`Packed`]'s register as [`PackedField::words`] gives it.
#[derive(Clone, Copy, Debug)]
pub struct Words(__m256i);

// SAFETY (every method): a token or a value exists only where AVX2 does.
impl super::Words for Words {
    type Token = ballast_cpu::Avx2;

    #[inline(always)]
    fn load(_: ballast_cpu::Avx2, words: &[u64]) -> Self {
        let words: &[u64; 4] = words[..4].try_into().expect("four lanes");
        // Also: `words` is 32 readable bytes; loadu accepts any alignment.
        Self(unsafe { _mm256_loadu_si256(words.as_ptr().cast()) })
    }

    #[inline(always)]
    fn splat(_: ballast_cpu::Avx2, word: u64) -> Self {
        Self(unsafe { _mm256_set1_epi64x(word as i64) })
    }

    #[inline(always)]
    fn store(self, out: &mut [u64]) {
        let out: &mut [u64; 4] = (&mut out[..4]).try_into().expect("four lanes");
        // Also: `out` is 32 writable bytes; storeu accepts any alignment.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), self.0) }
    }

    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        Self(unsafe { _mm256_add_epi64(self.0, rhs.0) })
    }

    #[inline(always)]
    fn low32(self) -> Self {
        Self(unsafe { _mm256_and_si256(self.0, _mm256_set1_epi64x(EPSILON as i64)) })
    }

    #[inline(always)]
    fn high32(self) -> Self {
        Self(unsafe { _mm256_srli_epi64::<32>(self.0) })
    }

    #[inline(always)]
    fn mul32(self, rhs: Self) -> Self {
        Self(unsafe { _mm256_mul_epu32(self.0, rhs.0) })
    }

    #[inline(always)]
    fn xor(self, rhs: Self) -> Self {
        Self(unsafe { _mm256_xor_si256(self.0, rhs.0) })
    }

    #[inline(always)]
    fn xor3(self, b: Self, c: Self) -> Self {
        self.xor(b).xor(c)
    }

    #[inline(always)]
    fn xor_andnot(self, b: Self, c: Self) -> Self {
        Self(unsafe { _mm256_xor_si256(self.0, _mm256_andnot_si256(b.0, c.0)) })
    }

    #[inline(always)]
    fn rotate_left<const N: i32>(self) -> Self {
        // SAFETY: as above; AVX2 has no rotation, so two shifts by counts in a register.
        unsafe {
            let left = _mm256_sll_epi64(self.0, _mm_cvtsi32_si128(N));
            let right = _mm256_srl_epi64(self.0, _mm_cvtsi32_si128(64 - N));
            Self(_mm256_or_si256(left, right))
        }
    }

    #[inline(always)]
    fn shl<const N: i32>(self) -> Self {
        Self(unsafe { _mm256_slli_epi64::<N>(self.0) })
    }

    #[inline(always)]
    fn shr<const N: i32>(self) -> Self {
        Self(unsafe { _mm256_srli_epi64::<N>(self.0) })
    }
}

// SAFETY (every method): a token or a value exists only where AVX2 does.
impl PackedField for Packed {
    const LANES: usize = 4;
    type Token = ballast_cpu::Avx2;
    type Words = Words;
    type Array<T: Copy> = [T; 4];

    #[inline(always)]
    fn array<T: Copy>(f: impl FnMut(usize) -> T) -> [T; 4] {
        std::array::from_fn(f)
    }

    #[inline(always)]
    fn load(_: ballast_cpu::Avx2, values: &[Felt]) -> Self {
        unsafe { Packed::load(values) }
    }

    #[inline(always)]
    fn splat(_: ballast_cpu::Avx2, value: Felt) -> Self {
        unsafe { Packed::splat(value) }
    }

    #[inline(always)]
    fn store(self, out: &mut [Felt]) {
        unsafe { Packed::store(self, out) }
    }

    #[inline(always)]
    fn nonzero_lanes(self) -> u8 {
        unsafe { Packed::nonzero_lanes(self) }
    }

    #[inline(always)]
    fn interleave(self, other: Self, half: usize) -> (Self, Self) {
        unsafe { Packed::interleave(self, other, half) }
    }

    #[inline(always)]
    fn words(self) -> Words {
        Words(self.0)
    }
}

/// The 128-bit products `a·b`, as (high, low) 64-bit halves, from four 32×32-bit products.
#[inline]
#[target_feature(enable = "avx2")]
fn mul_wide(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    let a_hi = _mm256_srli_epi64::<32>(a);
    let b_hi = _mm256_srli_epi64::<32>(b);
    let ll = _mm256_mul_epu32(a, b);
    let lh = _mm256_mul_epu32(a, b_hi);
    let hl = _mm256_mul_epu32(a_hi, b);
    let hh = _mm256_mul_epu32(a_hi, b_hi);
    let low32 = _mm256_set1_epi64x(EPSILON as i64);
    // None of these sums can carry: (2^32 − 1)^2 + 2·(2^32 − 1) < 2^64.
    let t = _mm256_add_epi64(hl, _mm256_srli_epi64::<32>(ll));
    let u = _mm256_add_epi64(lh, _mm256_and_si256(t, low32));
    let lo = _mm256_or_si256(_mm256_slli_epi64::<32>(u), _mm256_and_si256(ll, low32));
    let hi = _mm256_add_epi64(
        hh,
        _mm256_add_epi64(_mm256_srli_epi64::<32>(t), _mm256_srli_epi64::<32>(u)),
    );
    (hi, lo)
}

/// `hi·2^64 + lo mod p`, canonical; the scalar `reduce128` step for step.
#[inline]
#[target_feature(enable = "avx2")]
fn reduce(hi: __m256i, lo: __m256i) -> __m256i {
    let epsilon = _mm256_set1_epi64x(EPSILON as i64);
    let hi_hi = _mm256_srli_epi64::<32>(hi);
    let hi_lo = _mm256_and_si256(hi, epsilon);
    // lo − hi_hi, adding p back on a borrow.
    let borrow = greater(hi_hi, lo);
    let t0 = _mm256_sub_epi64(
        _mm256_sub_epi64(lo, hi_hi),
        _mm256_and_si256(borrow, epsilon),
    );
    // hi_lo·(2^32 − 1), which fits in 64 bits.
    let t1 = _mm256_sub_epi64(_mm256_slli_epi64::<32>(hi_lo), hi_lo);
    let sum = _mm256_add_epi64(t0, t1);
    let carry = greater(t1, sum);
    let sum = _mm256_add_epi64(sum, _mm256_and_si256(carry, epsilon));
    let at_least_p = greater(sum, _mm256_set1_epi64x((P - 1) as i64));
    _mm256_add_epi64(sum, _mm256_and_si256(at_least_p, epsilon))
}
