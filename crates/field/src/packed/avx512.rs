//! Eight Goldilocks elements in a 512-bit register (AVX-512F), with unsigned comparisons
//! into mask registers and masked fix-ups.

use std::arch::x86_64::*;

use super::PackedField;
use crate::Felt;
use crate::felt::{EPSILON, HALF, P};

super::ring_ops!(Packed, "avx512f", "AVX-512F");

/// Eight field elements, lane i holding element i.
#[derive(Clone, Copy, Debug)]
pub struct Packed(__m512i);

impl Packed {
    /// The first eight elements of `values`.
    ///
    /// # Panics
    /// If `values` holds fewer than eight.
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn load(values: &[Felt]) -> Self {
        let values: &[Felt; 8] = values[..8].try_into().expect("eight elements");
        // SAFETY: `values` is 64 readable bytes (Felt is a transparent u64); loadu accepts
        // any alignment.
        Self(unsafe { _mm512_loadu_si512(values.as_ptr().cast()) })
    }

    /// Writes the eight elements to the start of `out`.
    ///
    /// # Panics
    /// If `out` holds fewer than eight.
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn store(self, out: &mut [Felt]) {
        let out: &mut [Felt; 8] = (&mut out[..8]).try_into().expect("eight elements");
        // SAFETY: `out` is 64 writable bytes; every lane is canonical (the methods keep it so),
        // which is all a Felt requires.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), self.0) }
    }

    /// `value` in every lane.
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn splat(value: Felt) -> Self {
        Self(_mm512_set1_epi64(value.as_u64() as i64))
    }

    /// Zero in every lane (`self` only proves the feature is present).
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn zero_like(self) -> Self {
        Self(_mm512_setzero_si512())
    }

    /// Bit i set where lane i is not zero.
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn nonzero_lanes(self) -> u8 {
        _mm512_test_epi64_mask(self.0, self.0)
    }

    /// Lane-wise `self + rhs`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn add(self, rhs: Self) -> Self {
        let sum = _mm512_add_epi64(self.0, rhs.0);
        // Subtract p (add 2^64 − p) when the sum wrapped or is at least p.
        let wrapped = _mm512_cmplt_epu64_mask(sum, self.0);
        let at_least_p = _mm512_cmpge_epu64_mask(sum, _mm512_set1_epi64(P as i64));
        Self(_mm512_mask_add_epi64(
            sum,
            wrapped | at_least_p,
            sum,
            _mm512_set1_epi64(EPSILON as i64),
        ))
    }

    /// Lane-wise `self − rhs`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn sub(self, rhs: Self) -> Self {
        let diff = _mm512_sub_epi64(self.0, rhs.0);
        // Add p back (subtract 2^64 − p) when the difference wrapped.
        let wrapped = _mm512_cmplt_epu64_mask(self.0, rhs.0);
        Self(_mm512_mask_sub_epi64(
            diff,
            wrapped,
            diff,
            _mm512_set1_epi64(EPSILON as i64),
        ))
    }

    /// Lane-wise `self / 2`, as [`Felt::halve`]: canonical lanes stay canonical.
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn halve(self) -> Self {
        let odd = _mm512_test_epi64_mask(self.0, _mm512_set1_epi64(1));
        let shifted = _mm512_srli_epi64::<1>(self.0);
        Self(_mm512_mask_add_epi64(
            shifted,
            odd,
            shifted,
            _mm512_set1_epi64(HALF as i64),
        ))
    }

    /// Lane-wise `self · rhs`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn mul(self, rhs: Self) -> Self {
        let (hi, lo) = mul_wide(self.0, rhs.0);
        Self(reduce(hi, lo))
    }

    /// Swaps blocks of `half` lanes between two registers: the even blocks of `self` and
    /// `other` into the first result, the odd blocks into the second, alternating. With
    /// `self`, `other` holding sixteen consecutive elements, the results pair each element of
    /// the first half of every 2·`half` block with its partner `half` further on, lane for
    /// lane, and lane k holds position k mod `half` of its block (the twiddle index). Its
    /// own inverse.
    ///
    /// # Panics
    /// If `half` is not 1, 2 or 4.
    ///
    /// # Safety
    /// The CPU must support AVX-512F: call it from code compiled for it, behind a token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn interleave(self, other: Self, half: usize) -> (Self, Self) {
        let (a, b) = (self.0, other.0);
        match half {
            1 => (
                Self(_mm512_unpacklo_epi64(a, b)),
                Self(_mm512_unpackhi_epi64(a, b)),
            ),
            2 => {
                // Indices 8..16 select `b`'s lanes.
                let even = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
                let odd = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
                (
                    Self(_mm512_permutex2var_epi64(a, even, b)),
                    Self(_mm512_permutex2var_epi64(a, odd, b)),
                )
            }
            4 => (
                Self(_mm512_shuffle_i64x2::<0x44>(a, b)),
                Self(_mm512_shuffle_i64x2::<0xee>(a, b)),
            ),
            _ => panic!("AVX-512 interleaves blocks of 1, 2 or 4 lanes, not {half}"),
        }
    }
}

/// Eight 64-bit integer lanes: [`Packed`]'s register as [`PackedField::words`] gives it.
#[derive(Clone, Copy, Debug)]
pub struct Words(__m512i);

// SAFETY (every method): a token or a value exists only where AVX-512F does.
impl super::Words for Words {
    type Token = ballast_cpu::Avx512;

    #[inline(always)]
    fn load(_: ballast_cpu::Avx512, words: &[u64]) -> Self {
        let words: &[u64; 8] = words[..8].try_into().expect("eight lanes");
        // Also: `words` is 64 readable bytes; loadu accepts any alignment.
        Self(unsafe { _mm512_loadu_si512(words.as_ptr().cast()) })
    }

    #[inline(always)]
    fn splat(_: ballast_cpu::Avx512, word: u64) -> Self {
        Self(unsafe { _mm512_set1_epi64(word as i64) })
    }

    #[inline(always)]
    fn store(self, out: &mut [u64]) {
        let out: &mut [u64; 8] = (&mut out[..8]).try_into().expect("eight lanes");
        // Also: `out` is 64 writable bytes; storeu accepts any alignment.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), self.0) }
    }

    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        Self(unsafe { _mm512_add_epi64(self.0, rhs.0) })
    }

    #[inline(always)]
    fn low32(self) -> Self {
        Self(unsafe { _mm512_and_si512(self.0, _mm512_set1_epi64(EPSILON as i64)) })
    }

    #[inline(always)]
    fn high32(self) -> Self {
        Self(unsafe { _mm512_srli_epi64::<32>(self.0) })
    }

    #[inline(always)]
    fn mul32(self, rhs: Self) -> Self {
        Self(unsafe { _mm512_mul_epu32(self.0, rhs.0) })
    }

    #[inline(always)]
    fn xor(self, rhs: Self) -> Self {
        Self(unsafe { _mm512_xor_si512(self.0, rhs.0) })
    }

    /// One ternary-logic instruction (truth table 0x96).
    #[inline(always)]
    fn xor3(self, b: Self, c: Self) -> Self {
        Self(unsafe { _mm512_ternarylogic_epi64::<0x96>(self.0, b.0, c.0) })
    }

    /// One ternary-logic instruction (truth table 0xd2).
    #[inline(always)]
    fn xor_andnot(self, b: Self, c: Self) -> Self {
        Self(unsafe { _mm512_ternarylogic_epi64::<0xd2>(self.0, b.0, c.0) })
    }

    #[inline(always)]
    fn rotate_left<const N: i32>(self) -> Self {
        Self(unsafe { _mm512_rol_epi64::<N>(self.0) })
    }

    #[inline(always)]
    fn shl<const N: i32>(self) -> Self {
        Self(unsafe { _mm512_sll_epi64(self.0, _mm_cvtsi32_si128(N)) })
    }

    #[inline(always)]
    fn shr<const N: i32>(self) -> Self {
        Self(unsafe { _mm512_srl_epi64(self.0, _mm_cvtsi32_si128(N)) })
    }
}

// SAFETY (every method): a token or a value exists only where AVX-512F does.
impl PackedField for Packed {
    const LANES: usize = 8;
    type Token = ballast_cpu::Avx512;
    type Words = Words;
    type Array<T: Copy> = [T; 8];

    #[inline(always)]
    fn array<T: Copy>(f: impl FnMut(usize) -> T) -> [T; 8] {
        std::array::from_fn(f)
    }

    #[inline(always)]
    fn load(_: ballast_cpu::Avx512, values: &[Felt]) -> Self {
        unsafe { Packed::load(values) }
    }

    #[inline(always)]
    fn splat(_: ballast_cpu::Avx512, value: Felt) -> Self {
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
#[target_feature(enable = "avx512f")]
fn mul_wide(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    let a_hi = _mm512_srli_epi64::<32>(a);
    let b_hi = _mm512_srli_epi64::<32>(b);
    let ll = _mm512_mul_epu32(a, b);
    let lh = _mm512_mul_epu32(a, b_hi);
    let hl = _mm512_mul_epu32(a_hi, b);
    let hh = _mm512_mul_epu32(a_hi, b_hi);
    let low32 = _mm512_set1_epi64(EPSILON as i64);
    // None of these sums can carry: (2^32 − 1)^2 + 2·(2^32 − 1) < 2^64.
    let t = _mm512_add_epi64(hl, _mm512_srli_epi64::<32>(ll));
    let u = _mm512_add_epi64(lh, _mm512_and_si512(t, low32));
    let lo = _mm512_or_si512(_mm512_slli_epi64::<32>(u), _mm512_and_si512(ll, low32));
    let hi = _mm512_add_epi64(
        hh,
        _mm512_add_epi64(_mm512_srli_epi64::<32>(t), _mm512_srli_epi64::<32>(u)),
    );
    (hi, lo)
}

/// `hi·2^64 + lo mod p`, canonical; the scalar `reduce128` step for step.
#[inline]
#[target_feature(enable = "avx512f")]
fn reduce(hi: __m512i, lo: __m512i) -> __m512i {
    let epsilon = _mm512_set1_epi64(EPSILON as i64);
    let hi_hi = _mm512_srli_epi64::<32>(hi);
    let hi_lo = _mm512_and_si512(hi, epsilon);
    // lo − hi_hi, adding p back on a borrow.
    let borrow = _mm512_cmplt_epu64_mask(lo, hi_hi);
    let t0 = _mm512_sub_epi64(lo, hi_hi);
    let t0 = _mm512_mask_sub_epi64(t0, borrow, t0, epsilon);
    // hi_lo·(2^32 − 1), which fits in 64 bits.
    let t1 = _mm512_sub_epi64(_mm512_slli_epi64::<32>(hi_lo), hi_lo);
    let sum = _mm512_add_epi64(t0, t1);
    let carry = _mm512_cmplt_epu64_mask(sum, t1);
    let sum = _mm512_mask_add_epi64(sum, carry, sum, epsilon);
    let at_least_p = _mm512_cmpge_epu64_mask(sum, _mm512_set1_epi64(P as i64));
    _mm512_mask_add_epi64(sum, at_least_p, sum, epsilon)
}
