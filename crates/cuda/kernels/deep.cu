// Out-of-domain sums, the DEEP function and FRI folding, in the cubic extension
// (crates/stark/src/ood.rs, crates/stark/src/deep.rs, crates/fri/src/prover.rs).
//
// Extension elements are stored as three consecutive words.

#include "goldilocks.cuh"

// Barycentric weights of the trace's rows for an out-of-domain point: with z' = z / shift
// (three words), weights[u] = -w^u / (w^u - z') for u < count, w of order count
// (crates/stark/src/ood.rs's trace_at).
extern "C" __global__ void ood_weights(u64* weights, u64 count, u64 omega, u64 z0, u64 z1,
                                       u64 z2) {
    u64 u = global_thread_index();
    if (u >= count) {
        return;
    }
    u64 point = gl_pow(omega, u);
    Ext3 difference = Ext3{gl_sub(point, z0), gl_neg(z1), gl_neg(z2)};
    Ext3 w = ext_scale(ext_inv(difference), gl_neg(point));
    ext_store(weights + 3 * u, w);
}

// The powers a raw column is evaluated with at z: powers[q] = z^br(q) / n for q < count = n
// (crates/stark/src/ood.rs's raw_at).
extern "C" __global__ void raw_powers(u64* powers, u64 count, u64 log_n, u64 n_inv, u64 z0,
                                      u64 z1, u64 z2) {
    u64 q = global_thread_index();
    if (q >= count) {
        return;
    }
    Ext3 p = ext_pow(Ext3{z0, z1, z2}, bit_reverse(q, log_n));
    ext_store(powers + 3 * q, ext_scale(p, n_inv));
}

// Adds an extension element across the block: every thread passes its own, thread 0 gets the
// total. Warps add by shuffles, then warp 0 adds the warps' sums through shared memory
// (`scratch`, three words per warp).
__device__ __forceinline__ Ext3 block_sum(Ext3 value, SharedWords scratch_words) {
    for (int offset = 16; offset > 0; offset /= 2) {
        Ext3 other;
        other.c0 = __shfl_xor_sync(0xffffffffu, value.c0, offset);
        other.c1 = __shfl_xor_sync(0xffffffffu, value.c1, offset);
        other.c2 = __shfl_xor_sync(0xffffffffu, value.c2, offset);
        value = ext_add(value, other);
    }
    u32 lane = threadIdx.x & 31;
    u32 warp = threadIdx.x >> 5;
    u32 warps = blockDim.x >> 5;
    if (lane == 0) {
        scratch_words[3 * warp] = value.c0;
        scratch_words[3 * warp + 1] = value.c1;
        scratch_words[3 * warp + 2] = value.c2;
    }
    __syncthreads();
    Ext3 total = ext_from_base(0);
    if (threadIdx.x == 0) {
        for (u32 w = 0; w < warps; ++w) {
            total = ext_add(total, Ext3{scratch_words[3 * w], scratch_words[3 * w + 1],
                                        scratch_words[3 * w + 2]});
        }
    }
    return total;
}

// Weighted sums of columns: block c computes sums[c] = sum_u columns[c * rows + u * step]
// weights[u] over u < count, and with `shifted` also the sums with weights[(u - 1) mod
// count] (the next row's point), written after the first `blocks` sums. The block's size
// is a multiple of 32, with three words of shared memory per warp.
extern "C" __global__ void column_sums(const u64* columns, u64 rows, u64 step,
                                       const u64* weights, u64 count, u64 shifted, u64* sums) {
    SHARED_WORDS(scratch);
    u64 c = blockIdx.x;
    Ext3 at = ext_from_base(0);
    Ext3 next = ext_from_base(0);
    for (u64 u = threadIdx.x; u < count; u += blockDim.x) {
        u64 value = columns[c * rows + u * step];
        at = ext_add(at, ext_scale(ext_load(weights + 3 * u), value));
        if (shifted) {
            u64 before = (u + count - 1) & (count - 1);
            next = ext_add(next, ext_scale(ext_load(weights + 3 * before), value));
        }
    }
    Ext3 total = block_sum(at, scratch);
    if (threadIdx.x == 0) {
        ext_store(sums + 3 * c, total);
    }
    if (shifted) {
        __syncthreads();
        total = block_sum(next, scratch);
        if (threadIdx.x == 0) {
            ext_store(sums + 3 * (gridDim.x + c), total);
        }
    }
}

// The DEEP function at every point j < count of the LDE domain, x = shift zeta^j:
// f(x) = (A + B - at_z) / (x - z) + next_row (A - at_zw) / (x - z w), A = sum_k
// trace_coeffs[k] T_k(x), B = sum_c quotient_coeffs[c] Q_c(x). `constants` holds at_z,
// at_zw, z, z w and next_row (three words each). Writes f into `layer`, three words a
// point.
extern "C" __global__ void deep_function(const u64* trace, u64 width, const u64* quotient,
                                         u64 quotient_width, const u64* trace_coeffs,
                                         const u64* quotient_coeffs, const u64* constants,
                                         u64* layer, u64 count, u64 shift, u64 zeta) {
    u64 j = global_thread_index();
    if (j >= count) {
        return;
    }
    Ext3 a = ext_from_base(0);
    for (u64 k = 0; k < width; ++k) {
        a = ext_add(a, ext_scale(ext_load(trace_coeffs + 3 * k), trace[k * count + j]));
    }
    Ext3 b = ext_from_base(0);
    for (u64 c = 0; c < quotient_width; ++c) {
        b = ext_add(b, ext_scale(ext_load(quotient_coeffs + 3 * c), quotient[c * count + j]));
    }
    Ext3 at_z = ext_load(constants);
    Ext3 at_zw = ext_load(constants + 3);
    Ext3 z = ext_load(constants + 6);
    Ext3 zw = ext_load(constants + 9);
    Ext3 next_row = ext_load(constants + 12);
    Ext3 x = ext_from_base(gl_mul(shift, gl_pow(zeta, j)));
    Ext3 f = ext_add(ext_mul(ext_sub(ext_add(a, b), at_z), ext_inv(ext_sub(x, z))),
                     ext_mul(next_row, ext_mul(ext_sub(a, at_zw), ext_inv(ext_sub(x, zw)))));
    ext_store(layer + 3 * j, f);
}

// One FRI round's folds, 2^log_arity to 1 (crates/fri/src/prover.rs's fold_once, applied
// log_arity times with beta, beta^2, ...): output m < count comes from the input's coset
// m + i count, i < 2^log_arity. A binary fold of positions j and j + len/2 is
// (lo + hi)/2 + beta (lo - hi) / (2 x_j); x_j = shift zeta^j on the round's input, and the
// next fold's points are their squares, so 1/(2 x^2) = 2 (1/(2 x))^2. `inverse_twice_shift`
// = 1/(2 shift); `zeta_inv` = 1/zeta, zeta of order count << log_arity; `half` = 1/2.
extern "C" __global__ void fri_fold(const u64* input, u64* output, u64 count, u64 log_arity,
                                    u64 beta0, u64 beta1, u64 beta2, u64 inverse_twice_shift,
                                    u64 zeta_inv, u64 half) {
    u64 m = global_thread_index();
    if (m >= count) {
        return;
    }
    // Unrolled to the largest arity, 8, so that `values` stays in registers.
    Ext3 values[8];
    u64 arity = 1ull << log_arity;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        if ((u64)i < arity) {
            values[i] = ext_load(input + 3 * (m + i * count));
        }
    }
    // 1/(2 x) at position m, then at m + i count: times zeta^-(count) per step.
    u64 inv_two_x = gl_mul(inverse_twice_shift, gl_pow(zeta_inv, m));
    u64 step = gl_pow(zeta_inv, count);
    Ext3 beta = Ext3{beta0, beta1, beta2};
#pragma unroll
    for (int len = 8; len > 1; len /= 2) {
        if ((u64)len > arity) {
            continue;
        }
        u64 inv = inv_two_x;
#pragma unroll
        for (int i = 0; i < len / 2; ++i) {
            Ext3 lo = values[i];
            Ext3 hi = values[i + len / 2];
            values[i] = ext_add(ext_scale(ext_add(lo, hi), half),
                                ext_mul(beta, ext_scale(ext_sub(lo, hi), inv)));
            inv = gl_mul(inv, step);
        }
        u64 square = gl_mul(inv_two_x, inv_two_x);
        inv_two_x = gl_add(square, square);
        step = gl_mul(step, step);
        beta = ext_mul(beta, beta);
    }
    ext_store(output + 3 * m, values[0]);
}
