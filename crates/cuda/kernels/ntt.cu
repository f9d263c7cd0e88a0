// The coset low-degree extension, one radix-2 stage per launch (crates/ntt/src/lde.rs).
//
// Layout: a matrix is column-major, one column of `rows` u64 values after another. The
// transforms act on the columns; within a column, logical position u of a transform of
// size n = 2^log_n lives at u * 2^log_stride + v, where v < 2^log_stride picks one of
// 2^log_stride interleaved transforms. Stride 1 is a plain column; stride B (the blowup)
// lets the B coset transforms of one column share the LDE column in its final natural
// order, position t = u * B + v holding T(g * zeta^t).
//
// Twiddles: the stage whose butterflies span `half` positions reads twiddles[half - 1 + j]
// = w_{2 half}^j for j < half (crates/ntt/src/twiddles.rs).
//
// Thread t of a stage launch does one butterfly. With half_n = n/2, its coordinates are
// v = t mod stride, k = (t / stride) mod half_n and column c = t / (stride * half_n); the
// butterfly is j = k mod half in block k / half, pairing positions
// u = block * 2 half + j and u + half.

#include "goldilocks.cuh"

// Element index of position u of transform v in column c.
__device__ __forceinline__ u64 ntt_index(u64 c, u64 u, u64 v, u64 log_n, u64 log_stride) {
    return (((c << log_n) + u) << log_stride) + v;
}

// Decodes butterfly `t` of the stage spanning 2^log_half positions: the indices of its
// two elements and its twiddle index.
__device__ __forceinline__ void ntt_butterfly(u64 t, u64 log_n, u64 log_stride, u64 log_half,
                                              u64* lo, u64* hi, u64* twiddle) {
    u64 v = t & ((1ull << log_stride) - 1);
    u64 rest = t >> log_stride;
    u64 k = rest & ((1ull << (log_n - 1)) - 1);
    u64 c = rest >> (log_n - 1);
    u64 half = 1ull << log_half;
    u64 j = k & (half - 1);
    u64 u = ((k >> log_half) << (log_half + 1)) + j;
    *lo = ntt_index(c, u, v, log_n, log_stride);
    *hi = ntt_index(c, u + half, v, log_n, log_stride);
    *twiddle = half - 1 + j;
}

// One decimation-in-frequency stage (Gentleman-Sande): (x, y) -> (x + y, (x - y) w).
// Stages run from half = n/2 down to 1; with inverse twiddles the column ends as
// n * its coefficients in bit-reversed order. `count` = columns * strides * n/2.
extern "C" __global__ void ntt_dif_stage(u64* data, const u64* twiddles, u64 count, u64 log_n,
                                         u64 log_stride, u64 log_half) {
    u64 t = global_thread_index();
    if (t >= count) {
        return;
    }
    u64 lo, hi, tw;
    ntt_butterfly(t, log_n, log_stride, log_half, &lo, &hi, &tw);
    u64 x = data[lo];
    u64 y = data[hi];
    data[lo] = gl_add(x, y);
    data[hi] = gl_mul(gl_sub(x, y), twiddles[tw]);
}

// One decimation-in-time stage (Cooley-Tukey): (x, y) -> (x + y w, x - y w).
// Stages run from half = 1 up to n/2, turning bit-reversed coefficients into evaluations
// in natural order. `count` = columns * strides * n/2.
extern "C" __global__ void ntt_dit_stage(u64* data, const u64* twiddles, u64 count, u64 log_n,
                                         u64 log_stride, u64 log_half) {
    u64 t = global_thread_index();
    if (t >= count) {
        return;
    }
    u64 lo, hi, tw;
    ntt_butterfly(t, log_n, log_stride, log_half, &lo, &hi, &tw);
    u64 x = data[lo];
    u64 y = gl_mul(data[hi], twiddles[tw]);
    data[lo] = gl_add(x, y);
    data[hi] = gl_sub(x, y);
}

// Spreads raw columns (n * coefficients, bit-reversed) over the LDE matrix, scaled for
// each coset: lde[(c * n + p) * B + v] = raw[c * n + p] * scales[v * n + p], with
// scales[v * n + p] = (g zeta^v)^br(p) / n. Thread t writes lde[t]; `count` = columns * n * B.
extern "C" __global__ void lde_scatter(const u64* raw, const u64* scales, u64* lde, u64 count,
                                       u64 log_n, u64 log_blowup) {
    u64 t = global_thread_index();
    if (t >= count) {
        return;
    }
    u64 v = t & ((1ull << log_blowup) - 1);
    u64 row = t >> log_blowup;  // c * n + p
    u64 p = row & ((1ull << log_n) - 1);
    lde[t] = gl_mul(raw[row], scales[(v << log_n) + p]);
}
