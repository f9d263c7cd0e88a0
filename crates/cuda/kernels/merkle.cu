// Merkle leaves and inner nodes with Keccak-256 or Poseidon2 (crates/merkle/src/{hash,tree}.rs
// and crates/fri/src/fold.rs), one hash per thread.
//
// Layout: digests are 4 u64 words each (the 32 bytes, little-endian), and a whole tree
// lives in one buffer, level after level: the L leaves at digest 0, the L/2 nodes above
// them at digest L, and so on up to the root at digest 2L - 2. A Poseidon2 digest's words
// are its four (canonical) elements, whose little-endian bytes are its encoding.

#include "keccak.cuh"
#include "poseidon2.cuh"

#define LEAF_PREFIX 0x00u
#define NODE_PREFIX 0x01u

// Reads the elements of row `row` of a column-major matrix, column by column.
struct RowWords {
    const u64* at;  // the row's element in the next column to read
    u64 height;

    __device__ __forceinline__ u64 next() {
        u64 w = *at;
        at += height;
        return w;
    }
};

// Reads the extension elements at positions r, r + stride, r + 2 stride, ... of a layer,
// three words each.
struct CosetWords {
    const u64* at;  // the element being read
    u64 stride;     // words between consecutive elements of the coset
    u64 word;       // the next coordinate to read in it

    __device__ __forceinline__ u64 next() {
        u64 w = at[word];
        if (++word == 3) {
            word = 0;
            at += stride;
        }
        return w;
    }
};

// Reads consecutive words.
struct ContiguousWords {
    const u64* at;

    __device__ __forceinline__ u64 next() { return *at++; }
};

__device__ __forceinline__ void store_digest(u64* out, const u64 digest[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[i] = digest[i];
    }
}

// Leaf j of a row commitment (MerkleTree::commit_rows): Keccak(0x00 || row j), every
// element 8 bytes little-endian. `count` = height leaves, written to leaves[4j .. 4j + 4].
extern "C" __global__ void merkle_row_leaves(const u64* matrix, u64* leaves, u64 count,
                                             u64 width, u64 height) {
    u64 j = global_thread_index();
    if (j >= count) {
        return;
    }
    RowWords words = {matrix + j, height};
    u64 digest[4];
    keccak256_prefixed(LEAF_PREFIX, words, width, digest);
    store_digest(leaves + 4 * j, digest);
}

// Leaf r of a FRI layer in cosets of `arity` (commit_layer): Keccak(0x00 || evals[r] ||
// evals[r + count] || ... || evals[r + (arity - 1) count]), each extension element 3
// coordinates of 8 bytes little-endian. `evals` holds arity * count elements, 3 words each.
extern "C" __global__ void merkle_fri_layer_leaves(const u64* evals, u64* leaves, u64 count,
                                                   u64 arity) {
    u64 r = global_thread_index();
    if (r >= count) {
        return;
    }
    CosetWords words = {evals + 3 * r, 3 * count, 0};
    u64 digest[4];
    keccak256_prefixed(LEAF_PREFIX, words, 3 * arity, digest);
    store_digest(leaves + 4 * r, digest);
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

// Leaf j of a row commitment with Poseidon2: the sponge of row j's `width` elements.
// `rc` is the round constants' table (poseidon2.cuh).
extern "C" __global__ void poseidon2_row_leaves(const u64* matrix, u64* leaves, const u64* rc,
                                                u64 count, u64 width, u64 height) {
    u64 j = global_thread_index();
    if (j >= count) {
        return;
    }
    RowWords words = {matrix + j, height};
    u64 digest[4];
    p2_hash_leaf(words, width, rc, digest);
    store_digest(leaves + 4 * j, digest);
}

// Leaf r of a FRI layer in cosets of `arity` with Poseidon2: the sponge of the coset's
// values' coordinates, in slot order (merkle_fri_layer_leaves' elements).
extern "C" __global__ void poseidon2_fri_layer_leaves(const u64* evals, u64* leaves,
                                                      const u64* rc, u64 count, u64 arity) {
    u64 r = global_thread_index();
    if (r >= count) {
        return;
    }
    CosetWords words = {evals + 3 * r, 3 * count, 0};
    u64 digest[4];
    p2_hash_leaf(words, 3 * arity, rc, digest);
    store_digest(leaves + 4 * r, digest);
}

// One level of inner nodes with Poseidon2: node i compresses children 2i and 2i + 1 (as
// merkle_level).
extern "C" __global__ void poseidon2_level(u64* tree, const u64* rc, u64 count, u64 below,
                                           u64 above) {
    u64 i = global_thread_index();
    if (i >= count) {
        return;
    }
    const u64* children = tree + 4 * (below + 2 * i);
    u64 digest[4];
    p2_compress(children, children + 4, rc, digest);
    store_digest(tree + 4 * (above + i), digest);
}
