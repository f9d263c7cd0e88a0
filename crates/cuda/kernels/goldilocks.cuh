// Goldilocks arithmetic, p = 2^64 - 2^32 + 1, exactly as crates/field/src/felt.rs, and the
// cubic extension F_p[x]/(x^3 - 2) of crates/field/src/ext.rs.
//
// Inputs and outputs are canonical (< p): these values are hashed and compared byte for
// byte with the CPU's, so no partially reduced form ever leaves a function. Any correct
// formula gives the same canonical values; these follow the CPU's step for step.
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

// -a mod p.
__device__ __forceinline__ u64 gl_neg(u64 a) { return a == 0 ? 0 : GL_P - a; }

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

// a^e by square-and-multiply.
__device__ __forceinline__ u64 gl_pow(u64 a, u64 e) {
    u64 acc = 1;
    while (e != 0) {
        if (e & 1) {
            acc = gl_mul(acc, a);
        }
        a = gl_mul(a, a);
        e >>= 1;
    }
    return acc;
}

// 1/a = a^(p - 2) for a != 0 (and 0 for 0, which no caller passes).
__device__ __forceinline__ u64 gl_inv(u64 a) { return gl_pow(a, GL_P - 2); }

// The low `bits` bits of i in reverse order.
__device__ __forceinline__ u64 bit_reverse(u64 i, u64 bits) {
    return bits == 0 ? 0 : __brevll(i) >> (64 - bits);
}

// An element c0 + c1 x + c2 x^2 of the extension, x^3 = 2.
struct Ext3 {
    u64 c0, c1, c2;
};

__device__ __forceinline__ Ext3 ext_from_base(u64 a) { return Ext3{a, 0, 0}; }

__device__ __forceinline__ Ext3 ext_load(const u64* at) { return Ext3{at[0], at[1], at[2]}; }

__device__ __forceinline__ void ext_store(u64* at, Ext3 a) {
    at[0] = a.c0;
    at[1] = a.c1;
    at[2] = a.c2;
}

__device__ __forceinline__ Ext3 ext_add(Ext3 a, Ext3 b) {
    return Ext3{gl_add(a.c0, b.c0), gl_add(a.c1, b.c1), gl_add(a.c2, b.c2)};
}

__device__ __forceinline__ Ext3 ext_sub(Ext3 a, Ext3 b) {
    return Ext3{gl_sub(a.c0, b.c0), gl_sub(a.c1, b.c1), gl_sub(a.c2, b.c2)};
}

// a * s for a base-field s.
__device__ __forceinline__ Ext3 ext_scale(Ext3 a, u64 s) {
    return Ext3{gl_mul(a.c0, s), gl_mul(a.c1, s), gl_mul(a.c2, s)};
}

// Schoolbook product, then x^3 = 2 and x^4 = 2x (ext.rs).
__device__ __forceinline__ Ext3 ext_mul(Ext3 a, Ext3 b) {
    u64 t = gl_add(gl_mul(a.c1, b.c2), gl_mul(a.c2, b.c1));
    u64 c0 = gl_add(gl_mul(a.c0, b.c0), gl_add(t, t));
    u64 u = gl_mul(a.c2, b.c2);
    u64 c1 = gl_add(gl_add(gl_mul(a.c0, b.c1), gl_mul(a.c1, b.c0)), gl_add(u, u));
    u64 c2 = gl_add(gl_add(gl_mul(a.c0, b.c2), gl_mul(a.c1, b.c1)), gl_mul(a.c2, b.c0));
    return Ext3{c0, c1, c2};
}

// a^e by square-and-multiply.
__device__ __forceinline__ Ext3 ext_pow(Ext3 a, u64 e) {
    Ext3 acc = ext_from_base(1);
    while (e != 0) {
        if (e & 1) {
            acc = ext_mul(acc, a);
        }
        a = ext_mul(a, a);
        e >>= 1;
    }
    return acc;
}

// 1/a for a != 0: b = (a0^2 - 2 a1 a2) + (2 a2^2 - a0 a1) x + (a1^2 - a0 a2) x^2 has
// a b = N(a) in F_p (ext.rs's try_inverse).
__device__ __forceinline__ Ext3 ext_inv(Ext3 a) {
    u64 t = gl_mul(a.c1, a.c2);
    u64 b0 = gl_sub(gl_mul(a.c0, a.c0), gl_add(t, t));
    u64 s = gl_mul(a.c2, a.c2);
    u64 b1 = gl_sub(gl_add(s, s), gl_mul(a.c0, a.c1));
    u64 b2 = gl_sub(gl_mul(a.c1, a.c1), gl_mul(a.c0, a.c2));
    u64 w = gl_add(gl_mul(a.c1, b2), gl_mul(a.c2, b1));
    u64 norm = gl_add(gl_mul(a.c0, b0), gl_add(w, w));
    u64 inv = gl_inv(norm);
    return Ext3{gl_mul(b0, inv), gl_mul(b1, inv), gl_mul(b2, inv)};
}
