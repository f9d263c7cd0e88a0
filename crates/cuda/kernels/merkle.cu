// Merkle leaves and inner nodes with Keccak-256 (crates/merkle/src/{hash,tree}.rs and
// crates/fri/src/fold.rs), one hash per thread.
//
// Layout: digests are 4 u64 words each (the 32 bytes, little-endian), and a whole tree
// lives in one buffer, level after level: the L leaves at digest 0, the L/2 nodes above
// them at digest L, and so on up to the root at digest 2L - 2.

#include "keccak.cuh"

#define LEAF_PREFIX 0x00u
#define NODE_PREFIX 0x01u

// Reads the elements of rows `row` and `row + height/2` of a column-major matrix, each
// row's columns in order.
struct RowPairWords {
    const u64* matrix;
    u64 width;
    u64 height;
    u64 row;     // the row being read
    u64 column;  // the next column to read in it

    __device__ __forceinline__ u64 next() {
        u64 w = matrix[column * height + row];
        if (++column == width) {
            column = 0;
            row += height >> 1;
        }
        return w;
    }
};

// Reads consecutive words.
struct ContiguousWords {
    const u64* at;

    __device__ __forceinline__ u64 next() { return *at++; }
};

// Reads words from two places: `first_len` words at `first`, then the rest at `second`.
struct TwoPartWords {
    const u64* first;
    const u64* second;
    u64 first_len;

    __device__ __forceinline__ u64 next() {
        if (first_len > 0) {
            --first_len;
            return *first++;
        }
        return *second++;
    }
};

__device__ __forceinline__ void store_digest(u64* out, const u64 digest[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[i] = digest[i];
    }
}

// Leaf j of a row-pair commitment (MerkleTree::commit_row_pairs):
// Keccak(0x00 || row j || row j + height/2), every element 8 bytes little-endian.
// `count` = height / 2 leaves, written to leaves[4j .. 4j + 4].
extern "C" __global__ void merkle_row_pair_leaves(const u64* matrix, u64* leaves, u64 count,
                                                  u64 width, u64 height) {
    u64 j = global_thread_index();
    if (j >= count) {
        return;
    }
    RowPairWords words = {matrix, width, height, j, 0};
    u64 digest[4];
    keccak256_prefixed(LEAF_PREFIX, words, 2 * width, digest);
    store_digest(leaves + 4 * j, digest);
}

// Leaf j of a FRI layer (layer_leaf): Keccak(0x00 || evals[j] || evals[j + count]), each
// extension element 3 coordinates of 8 bytes little-endian. `evals` holds 2 * count
// elements, 3 words each.
extern "C" __global__ void merkle_fri_layer_leaves(const u64* evals, u64* leaves, u64 count) {
    u64 j = global_thread_index();
    if (j >= count) {
        return;
    }
    TwoPartWords words = {evals + 3 * j, evals + 3 * (j + count), 3};
    u64 digest[4];
    keccak256_prefixed(LEAF_PREFIX, words, 6, digest);
    store_digest(leaves + 4 * j, digest);
}

// One level of inner nodes: node i = Keccak(0x01 || child 2i || child 2i + 1), reading the
// level that starts at digest `below` and writing the one at digest `above`, both in
// `tree`. `count` = nodes in the new level.
extern "C" __global__ void merkle_level(u64* tree, u64 count, u64 below, u64 above) {
    u64 i = global_thread_index();
    if (i >= count) {
        return;
    }
    ContiguousWords words = {tree + 4 * (below + 2 * i)};
    u64 digest[4];
    keccak256_prefixed(NODE_PREFIX, words, 8, digest);
    store_digest(tree + 4 * (above + i), digest);
}
