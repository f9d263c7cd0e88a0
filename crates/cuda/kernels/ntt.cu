// Transforms in passes of several radix-2 stages in shared memory (crates/ntt/src/lde.rs's
// coset low-degree extension, and the inverse transform that splits the quotient).
//
// A size-n transform (n = 2^log_n) has log_n stages; stage s pairs positions i and
// i + 2^s (bit s of i clear). The decimation-in-frequency (DIF) butterfly is
// (x, y) -> (x + y, (x - y) w), run from s = log_n - 1 down to 0; the decimation-in-time
// (DIT) butterfly is (x, y) -> (x + y w, x - y w), run from s = 0 up. Twiddle
// w = twiddles[2^s - 1 + (i mod 2^s)] = w_{2^(s+1)}^(i mod 2^s) (crates/ntt/src/twiddles.rs).
//
// A pass runs `stages` consecutive stages [first, first + stages) on tiles of 2^log_tile
// elements held in shared memory: a tile is 2^(log_tile - stages) groups, and a group is
// the 2^stages positions that differ only in bits [first, first + stages). With the free
// index f of a group (its bits below `first`, then its bits above), position
// (f, j) = (f >> first) << (first + stages) | j << first | f mod 2^first. Consecutive f are
// consecutive positions while they stay below bit `first`, so tiles read and write runs of
// memory. Element e of a tile is group e mod 2^(log_tile - stages), j = e >> (log_tile -
// stages). Blocks are (column, tile); a launch covers every column.
//
// Where a pass reads (src_layout) and writes (dst_layout):
//   LAYOUT_COLUMNS     column c's position i at c n + i;
//   LAYOUT_ROW_BLOCKS  (read) the host's RowBlocks table of `width` columns: blocks of 8
//                      rows, column after column inside a block;
//   LAYOUT_SCALED      (read) columns, each value times scales[coset n + i] (the coset
//                      shift of the extension, crates/ntt/src/lde.rs's block_scales);
//   LAYOUT_EXTENSION   (write) the low-degree extension: column c of 2^log_blowup n rows,
//                      position i of coset v at c (n << log_blowup) + (i << log_blowup) + v.

#include "goldilocks.cuh"

#define LAYOUT_COLUMNS 0
#define LAYOUT_ROW_BLOCKS 1
#define LAYOUT_SCALED 2
#define LAYOUT_EXTENSION 3

// Position of group f, element j, for a pass over bits [first, first + stages).
__device__ __forceinline__ u64 pass_position(u64 f, u64 j, u64 first, u64 stages) {
    u64 low = f & ((1ull << first) - 1);
    return ((f >> first) << (first + stages)) | (j << first) | low;
}

extern "C" __global__ void ntt_pass(const u64* src, u64* dst, const u64* twiddles,
                                    const u64* scales, u64 log_n, u64 first, u64 stages,
                                    u64 dit, u64 log_tile, u64 src_layout, u64 dst_layout,
                                    u64 width, u64 coset, u64 log_blowup) {
    SHARED_WORDS(tile);
    u64 n = 1ull << log_n;
    u64 tiles = 1ull << (log_n - log_tile);
    u64 column = blockIdx.x / tiles;
    u64 tile_index = blockIdx.x % tiles;
    u64 log_groups = log_tile - stages;
    u64 groups = 1ull << log_groups;
    u64 size = 1ull << log_tile;

    for (u64 e = threadIdx.x; e < size; e += blockDim.x) {
        u64 f = tile_index * groups + (e & (groups - 1));
        u64 i = pass_position(f, e >> log_groups, first, stages);
        u64 value;
        if (src_layout == LAYOUT_ROW_BLOCKS) {
            value = src[((i >> 3) * width + column) * 8 + (i & 7)];
        } else {
            value = src[column * n + i];
            if (src_layout == LAYOUT_SCALED) {
                value = gl_mul(value, scales[coset * n + i]);
            }
        }
        tile[e] = value;
    }
    __syncthreads();

    for (u64 k = 0; k < stages; ++k) {
        // DIF runs the pass's stages from the top, DIT from the bottom.
        u64 bit = dit ? k : stages - 1 - k;
        u64 s = first + bit;
        u64 half = 1ull << s;
        for (u64 b = threadIdx.x; b < size / 2; b += blockDim.x) {
            u64 g = b & (groups - 1);
            u64 rest = b >> log_groups;  // j without its bit `bit`
            u64 j0 = ((rest >> bit) << (bit + 1)) | (rest & ((1ull << bit) - 1));
            u64 e0 = (j0 << log_groups) | g;
            u64 e1 = e0 | (1ull << (bit + log_groups));
            u64 f = tile_index * groups + g;
            u64 i0 = pass_position(f, j0, first, stages);
            u64 w = twiddles[half - 1 + (i0 & (half - 1))];
            u64 x = tile[e0];
            u64 y = tile[e1];
            if (dit) {
                u64 yw = gl_mul(y, w);
                tile[e0] = gl_add(x, yw);
                tile[e1] = gl_sub(x, yw);
            } else {
                tile[e0] = gl_add(x, y);
                tile[e1] = gl_mul(gl_sub(x, y), w);
            }
        }
        __syncthreads();
    }

    for (u64 e = threadIdx.x; e < size; e += blockDim.x) {
        u64 f = tile_index * groups + (e & (groups - 1));
        u64 i = pass_position(f, e >> log_groups, first, stages);
        if (dst_layout == LAYOUT_EXTENSION) {
            dst[column * (n << log_blowup) + (i << log_blowup) + coset] = tile[e];
        } else {
            dst[column * n + i] = tile[e];
        }
    }
}

// Twiddles of every stage of a size-2^log_n transform: entry h - 1 + j (h = 2^s) is
// w_{2h}^j, w_{2h} = root^(2^log_n / 2h) for `root` a primitive 2^log_n-th root (or its
// inverse, for the inverse transform's table). `count` = 2^log_n - 1 entries.
extern "C" __global__ void ntt_twiddles(u64* table, u64 count, u64 log_n, u64 root) {
    u64 t = global_thread_index();
    if (t >= count) {
        return;
    }
    u64 log_h = 63 - __clzll(t + 1);  // the stage: h = 2^log_h <= t + 1 < 2h
    u64 j = t + 1 - (1ull << log_h);
    u64 stage_root = gl_pow(root, 1ull << (log_n - 1 - log_h));
    table[t] = gl_pow(stage_root, j);
}

// The extension's coset scales: scales[v n + p] = (shift zeta^v)^br(p) / n for the
// 2^log_blowup cosets shift zeta^v H (zeta a primitive (n << log_blowup)-th root).
// `count` = n << log_blowup entries.
extern "C" __global__ void lde_scales(u64* scales, u64 count, u64 log_n, u64 shift, u64 zeta,
                                      u64 n_inv) {
    u64 t = global_thread_index();
    if (t >= count) {
        return;
    }
    u64 v = t >> log_n;
    u64 p = t & ((1ull << log_n) - 1);
    u64 base = gl_mul(shift, gl_pow(zeta, v));
    scales[t] = gl_mul(gl_pow(base, bit_reverse(p, log_n)), n_inv);
}

// Splits a polynomial Q of degree < 2^log_chunks n, given in `raw` as the inverse DIF of its
// evaluations on the coset shift H'' (n 2^log_chunks values, ntt.rs's split_into_chunks),
// into chunks in the extension's raw form: chunk j's position q is
// raw[br(j) + q 2^log_chunks] (2^-log_chunks shift^-(j n)) shift^-br(q). `src` holds 3
// coordinate columns; column 3 j + coordinate of `dst` is chunk j of that coordinate.
// `chunk_scales[j]` = 2^-log_chunks shift^-(j n). `count` = 3 2^log_chunks n.
extern "C" __global__ void split_chunks(const u64* raw, u64* chunks, const u64* chunk_scales,
                                        u64 count, u64 log_n, u64 log_chunks, u64 shift_inv) {
    u64 t = global_thread_index();
    if (t >= count) {
        return;
    }
    u64 n = 1ull << log_n;
    u64 q = t & (n - 1);
    u64 column = t >> log_n;  // 3 j + coordinate
    u64 j = column / 3;
    u64 coordinate = column % 3;
    u64 at = bit_reverse(j, log_chunks) + (q << log_chunks);
    u64 value = raw[coordinate * (n << log_chunks) + at];
    chunks[t] = gl_mul(gl_mul(value, chunk_scales[j]), gl_pow(shift_inv, bit_reverse(q, log_n)));
}
