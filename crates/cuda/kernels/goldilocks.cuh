// Goldilocks arithmetic, p = 2^64 - 2^32 + 1, exactly as crates/field/src/felt.rs.
//
// Inputs and outputs are canonical (< p): these values are hashed and compared byte for
// byte with the CPU's, so no partially reduced form ever leaves a function.
#pragma once

#include "common.cuh"

#define GL_P 0xffffffff00000001ull
// 2^64 mod p = 2^32 - 1.
#define GL_EPSILON 0xffffffffull

// a + b mod p. A wrapped sum (carry out of 64 bits) or a sum >= p loses p once.
__device__ __forceinline__ u64 gl_add(u64 a, u64 b) {
    u64 sum = a + b;
    bool over = sum < a;
    bool under = sum < GL_P;
    return (over || !under) ? sum - GL_P : sum;
}

// a - b mod p.
__device__ __forceinline__ u64 gl_sub(u64 a, u64 b) {
    u64 diff = a - b;
    return a < b ? diff + GL_P : diff;
}

// a * b mod p. The 128-bit product lo + hi * 2^64 is split as
// lo + hi_lo * 2^64 + hi_hi * 2^96 = lo + hi_lo * (2^32 - 1) - hi_hi (mod p),
// using 2^64 = 2^32 - 1 and 2^96 = -1 (mod p): felt.rs's reduce128, step for step.
__device__ __forceinline__ u64 gl_mul(u64 a, u64 b) {
    u64 lo = a * b;
    u64 hi = __umul64hi(a, b);
    u64 hi_hi = hi >> 32;
    u64 hi_lo = hi & GL_EPSILON;
    u64 t0 = lo - hi_hi;
    if (lo < hi_hi) {
        // Wrapped by 2^64; adding p back is subtracting 2^64 - p = EPSILON.
        t0 -= GL_EPSILON;
    }
    u64 t1 = hi_lo * GL_EPSILON;  // < 2^64: both factors are < 2^32
    u64 sum = t0 + t1;
    if (sum < t0) {
        // Wrapped by 2^64 = EPSILON (mod p).
        sum += GL_EPSILON;
    }
    return sum >= GL_P ? sum - GL_P : sum;
}
