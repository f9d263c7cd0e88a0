// The Poseidon2 permutation of 12 Goldilocks elements (crates/poseidon2/src/permutation.rs),
// one state per thread in registers, and its leaf sponge and node compression
// (crates/poseidon2/src/sponge.rs).
//
// The round constants are not written here: the host uploads ballast_poseidon2's table
// (Constants, in round order: 4 x 12 initial, 22 partial, 4 x 12 terminal), so the
// constants have one definition. Every thread of a launch reads the same word at the same
// time, which the cache serves once.
#pragma once

#include "goldilocks.cuh"

#define P2_WIDTH 12
#define P2_RATE 8
#define P2_HALF_FULL 4
#define P2_PARTIAL 22
// The capacity cell holding a leaf's length, and the one that marks an inner node.
#define P2_LENGTH_CELL 8
#define P2_NODE_CELL 9
// (p + 1) / 2, the inverse of 2.
#define GL_HALF 0x7fffffff80000001ull

// a / 2 mod p: felt.rs's halve (a canonical input gives a canonical output).
__device__ __forceinline__ u64 gl_halve(u64 a) { return (a >> 1) + (a & 1) * GL_HALF; }

__device__ __forceinline__ u64 p2_sbox(u64 x) {
    u64 x2 = gl_mul(x, x);
    u64 x3 = gl_mul(x2, x);
    return gl_mul(gl_mul(x3, x2), x2);
}

// [[2 3 1 1] [1 2 3 1] [1 1 2 3] [3 1 1 2]] on cells at, at + 1, at + 2, at + 3.
__device__ __forceinline__ void p2_m4(u64 s[P2_WIDTH], int at) {
    u64 x0 = s[at], x1 = s[at + 1], x2 = s[at + 2], x3 = s[at + 3];
    u64 sum = gl_add(gl_add(gl_add(x0, x1), x2), x3);
    s[at] = gl_add(gl_add(gl_add(sum, x0), x1), x1);
    s[at + 1] = gl_add(gl_add(gl_add(sum, x1), x2), x2);
    s[at + 2] = gl_add(gl_add(gl_add(sum, x2), x3), x3);
    s[at + 3] = gl_add(gl_add(gl_add(sum, x3), x0), x0);
}

// circ(2 M4, M4, M4).
__device__ __forceinline__ void p2_external(u64 s[P2_WIDTH]) {
    p2_m4(s, 0);
    p2_m4(s, 4);
    p2_m4(s, 8);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        u64 sum = gl_add(gl_add(s[k], s[k + 4]), s[k + 8]);
        s[k] = gl_add(s[k], sum);
        s[k + 4] = gl_add(s[k + 4], sum);
        s[k + 8] = gl_add(s[k + 8], sum);
    }
}

// 1 + diag(mu), mu = (-2, 1, 2, 1/2, 3, 4, -1/2, -3, -4, 1/4, -1/4, 1/8).
__device__ __forceinline__ void p2_internal(u64 s[P2_WIDTH]) {
    u64 sum = s[0];
#pragma unroll
    for (int i = 1; i < P2_WIDTH; ++i) {
        sum = gl_add(sum, s[i]);
    }
    s[0] = gl_sub(sum, gl_add(s[0], s[0]));
    s[1] = gl_add(sum, s[1]);
    s[2] = gl_add(sum, gl_add(s[2], s[2]));
    s[3] = gl_add(sum, gl_halve(s[3]));
    s[4] = gl_add(sum, gl_add(gl_add(s[4], s[4]), s[4]));
    u64 d5 = gl_add(s[5], s[5]);
    s[5] = gl_add(sum, gl_add(d5, d5));
    s[6] = gl_sub(sum, gl_halve(s[6]));
    s[7] = gl_sub(sum, gl_add(gl_add(s[7], s[7]), s[7]));
    u64 d8 = gl_add(s[8], s[8]);
    s[8] = gl_sub(sum, gl_add(d8, d8));
    s[9] = gl_add(sum, gl_halve(gl_halve(s[9])));
    s[10] = gl_sub(sum, gl_halve(gl_halve(s[10])));
    s[11] = gl_add(sum, gl_halve(gl_halve(gl_halve(s[11]))));
}

__device__ __forceinline__ void p2_full_round(u64 s[P2_WIDTH], const u64* rc) {
#pragma unroll
    for (int i = 0; i < P2_WIDTH; ++i) {
        s[i] = p2_sbox(gl_add(s[i], rc[i]));
    }
    p2_external(s);
}

// The permutation, in place; `rc` is the round constants' table.
__device__ __forceinline__ void p2_permute(u64 s[P2_WIDTH], const u64* rc) {
    p2_external(s);
    for (int r = 0; r < P2_HALF_FULL; ++r) {
        p2_full_round(s, rc + r * P2_WIDTH);
    }
    const u64* partial = rc + P2_HALF_FULL * P2_WIDTH;
    for (int r = 0; r < P2_PARTIAL; ++r) {
        s[0] = p2_sbox(gl_add(s[0], partial[r]));
        p2_internal(s);
    }
    const u64* terminal = partial + P2_PARTIAL;
    for (int r = 0; r < P2_HALF_FULL; ++r) {
        p2_full_round(s, terminal + r * P2_WIDTH);
    }
}

// The digest of a leaf of `len` elements read from `words`: the state starts with len in
// the length cell, the elements overwrite the rate 8 at a time (the last block filled with
// zeros), a permutation after each block (one for the empty leaf); cells 0-3.
template <typename Words>
__device__ __forceinline__ void p2_hash_leaf(Words& words, u64 len, const u64* rc,
                                             u64 digest[4]) {
    u64 s[P2_WIDTH];
#pragma unroll
    for (int i = 0; i < P2_WIDTH; ++i) {
        s[i] = 0;
    }
    s[P2_LENGTH_CELL] = len;
    u64 left = len;
    do {
#pragma unroll
        for (int i = 0; i < P2_RATE; ++i) {
            s[i] = (u64)i < left ? words.next() : 0;
        }
        left = left > P2_RATE ? left - P2_RATE : 0;
        p2_permute(s, rc);
    } while (left > 0);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        digest[i] = s[i];
    }
}

// The digest of an inner node: one permutation of left || right with the node cell set.
__device__ __forceinline__ void p2_compress(const u64 left[4], const u64 right[4],
                                            const u64* rc, u64 digest[4]) {
    u64 s[P2_WIDTH];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        s[i] = left[i];
        s[i + 4] = right[i];
        s[i + 8] = 0;
    }
    s[P2_NODE_CELL] = 1;
    p2_permute(s, rc);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        digest[i] = s[i];
    }
}
