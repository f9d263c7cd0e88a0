//! 64-bit lanes of one register per instruction set, with the operations Keccak-f needs.
//! Each method carries `#[target_feature]`; only code compiled for the same feature calls
//! them, and that code runs only behind a `ballast_cpu` token.

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use std::arch::x86_64::*;

    /// Four lanes.
    #[derive(Clone, Copy)]
    pub(crate) struct Lanes(__m256i);

    impl Lanes {
        pub(crate) const COUNT: usize = 4;

        /// The first four words of `words`.
        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn load(words: &[u64]) -> Self {
            let words: &[u64; 4] = words[..4].try_into().expect("four words");
            // SAFETY: `words` is 32 readable bytes; loadu accepts any alignment.
            Self(unsafe { _mm256_loadu_si256(words.as_ptr().cast()) })
        }

        /// Each lane shifted left by `N` bits.
        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn shl<const N: i32>(self) -> Self {
            Self(_mm256_slli_epi64::<N>(self.0))
        }

        /// Each lane shifted right by `N` bits.
        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn shr<const N: i32>(self) -> Self {
            Self(_mm256_srli_epi64::<N>(self.0))
        }

        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn zero() -> Self {
            Self(_mm256_setzero_si256())
        }

        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn from_array(words: [u64; 4]) -> Self {
            // SAFETY: `words` is 32 readable bytes; loadu accepts any alignment.
            Self(unsafe { _mm256_loadu_si256(words.as_ptr().cast()) })
        }

        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn to_array(self) -> [u64; 4] {
            let mut words = [0u64; 4];
            // SAFETY: `words` is 32 writable bytes; storeu accepts any alignment.
            unsafe { _mm256_storeu_si256(words.as_mut_ptr().cast(), self.0) };
            words
        }

        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn splat(word: u64) -> Self {
            Self(_mm256_set1_epi64x(word as i64))
        }

        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn xor(self, rhs: Self) -> Self {
            Self(_mm256_xor_si256(self.0, rhs.0))
        }

        /// `self ^ b ^ c`.
        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn xor3(self, b: Self, c: Self) -> Self {
            self.xor(b).xor(c)
        }

        /// `self ^ (!b & c)`: Keccak's χ.
        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn chi(self, b: Self, c: Self) -> Self {
            Self(_mm256_xor_si256(self.0, _mm256_andnot_si256(b.0, c.0)))
        }

        /// Each lane rotated left by `N` (0 < `N` < 64) bits.
        #[inline]
        #[target_feature(enable = "avx2")]
        pub(crate) fn rotate_left<const N: i32>(self) -> Self {
            let left = _mm256_sll_epi64(self.0, _mm_cvtsi32_si128(N));
            let right = _mm256_srl_epi64(self.0, _mm_cvtsi32_si128(64 - N));
            Self(_mm256_or_si256(left, right))
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use std::arch::x86_64::*;

    /// Eight lanes.
    #[derive(Clone, Copy)]
    pub(crate) struct Lanes(__m512i);

    impl Lanes {
        pub(crate) const COUNT: usize = 8;

        /// The first eight words of `words`.
        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn load(words: &[u64]) -> Self {
            let words: &[u64; 8] = words[..8].try_into().expect("eight words");
            // SAFETY: `words` is 64 readable bytes; loadu accepts any alignment.
            Self(unsafe { _mm512_loadu_si512(words.as_ptr().cast()) })
        }

        /// Each lane shifted left by `N` bits.
        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn shl<const N: u32>(self) -> Self {
            Self(_mm512_slli_epi64::<N>(self.0))
        }

        /// Each lane shifted right by `N` bits.
        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn shr<const N: u32>(self) -> Self {
            Self(_mm512_srli_epi64::<N>(self.0))
        }

        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn zero() -> Self {
            Self(_mm512_setzero_si512())
        }

        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn from_array(words: [u64; 8]) -> Self {
            // SAFETY: `words` is 64 readable bytes; loadu accepts any alignment.
            Self(unsafe { _mm512_loadu_si512(words.as_ptr().cast()) })
        }

        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn to_array(self) -> [u64; 8] {
            let mut words = [0u64; 8];
            // SAFETY: `words` is 64 writable bytes; storeu accepts any alignment.
            unsafe { _mm512_storeu_si512(words.as_mut_ptr().cast(), self.0) };
            words
        }

        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn splat(word: u64) -> Self {
            Self(_mm512_set1_epi64(word as i64))
        }

        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn xor(self, rhs: Self) -> Self {
            Self(_mm512_xor_si512(self.0, rhs.0))
        }

        /// `self ^ b ^ c`, one ternary-logic instruction (truth table 0x96).
        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn xor3(self, b: Self, c: Self) -> Self {
            Self(_mm512_ternarylogic_epi64::<0x96>(self.0, b.0, c.0))
        }

        /// `self ^ (!b & c)`: Keccak's χ, one ternary-logic instruction (truth table 0xd2).
        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn chi(self, b: Self, c: Self) -> Self {
            Self(_mm512_ternarylogic_epi64::<0xd2>(self.0, b.0, c.0))
        }

        /// Each lane rotated left by `N` (0 < `N` < 64) bits.
        #[inline]
        #[target_feature(enable = "avx512f")]
        pub(crate) fn rotate_left<const N: i32>(self) -> Self {
            Self(_mm512_rol_epi64::<N>(self.0))
        }
    }
}
