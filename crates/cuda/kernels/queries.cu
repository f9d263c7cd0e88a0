// Proof of work (Keccak-256 or Poseidon2 transcripts) and the openings: the only values the
// host reads of a segment's tables (crates/transcript/src/pow.rs, crates/stark's openings).

#include "keccak.cuh"
#include "poseidon2.cuh"

// The proof-of-work domain byte (ballast_keccak::HashDomain::ProofOfWork).
#define POW_PREFIX 0x06u

// x with its eight bytes in reverse order.
__device__ __forceinline__ u64 byte_swap(u64 x) {
    u64 low = __byte_perm((u32)x, 0, 0x0123);
    u64 high = __byte_perm((u32)(x >> 32), 0, 0x0123);
    return (low << 32) | high;
}

// Reads the transcript state's four words, then the nonce.
struct PowWords {
    const u64* state;
    u64 nonce;
    u32 at;

    __device__ __forceinline__ u64 next() { return at < 4 ? state[at++] : nonce; }
};

// Nonces start .. start + count: each whose Keccak(0x06 || state || nonce) has at least
// `bits` leading zero bits (of its first 8 bytes read big-endian) lowers `*found` to it,
// so `*found` ends at the smallest valid nonce of the range (or stays where it was).
extern "C" __global__ void grind(const u64* state, u64 start, u64 count, u64 bits,
                                 u64* found) {
    u64 i = global_thread_index();
    if (i >= count) {
        return;
    }
    u64 nonce = start + i;
    PowWords words = {state, nonce, 0};
    u64 digest[4];
    keccak256_prefixed(POW_PREFIX, words, 5, digest);
    // The first 8 bytes big-endian are the first little-endian word byte-reversed.
    u64 prefix = byte_swap(digest[0]);
    if (bits == 0 || (u64)__clzll((long long)prefix) >= bits) {
        atomicMin(found, nonce);
    }
}

// Nonces start .. start + count of a Poseidon2 transcript: `duplex` is its 12 cells after
// the work message's kind was absorbed, and in word 12 the rate cell the nonce's low half
// is added to (below 8: Transcript::work_state). As WorkState::word: the nonce's halves are added there and in
// the next cell (permuting first when the block is full), the duplex is permuted, and a
// nonce whose cell 0 has at least `bits` leading zero bits lowers `*found` to it.
extern "C" __global__ void grind_poseidon2(const u64* duplex, const u64* rc, u64 start,
                                           u64 count, u64 bits, u64* found) {
    u64 i = global_thread_index();
    if (i >= count) {
        return;
    }
    u64 nonce = start + i;
    u64 low = nonce & 0xffffffffull;
    u64 high = nonce >> 32;
    u64 s[P2_WIDTH];
#pragma unroll
    for (int k = 0; k < P2_WIDTH; ++k) {
        s[k] = duplex[k];
    }
    u64 next = duplex[P2_WIDTH];
    // Selected, not indexed: the state stays in registers.
#pragma unroll
    for (int k = 0; k < P2_RATE; ++k) {
        if ((u64)k == next) {
            s[k] = gl_add(s[k], low);
        }
        if ((u64)k == next + 1) {
            s[k] = gl_add(s[k], high);
        }
    }
    if (next + 1 == P2_RATE) {
        p2_permute(s, rc);
        s[0] = gl_add(s[0], high);
    }
    p2_permute(s, rc);
    if (bits == 0 || (u64)__clzll((long long)s[0]) >= bits) {
        atomicMin(found, nonce);
    }
}

// Rows of a column-major table at `positions`: out[q * width + c] = table[c * rows +
// positions[q]], for count = queries * width threads.
extern "C" __global__ void gather_rows(const u64* table, u64 rows, u64 width,
                                       const u64* positions, u64 count, u64* out) {
    u64 t = global_thread_index();
    if (t >= count) {
        return;
    }
    u64 q = t / width;
    u64 c = t % width;
    out[t] = table[c * rows + positions[q]];
}

// Items of `words` words each: out[i * words + k] = src[indices[i] * words + k], for
// count = items * words threads (digests of a tree, values of a FRI layer).
extern "C" __global__ void gather_items(const u64* src, const u64* indices, u64 words,
                                        u64 count, u64* out) {
    u64 t = global_thread_index();
    if (t >= count) {
        return;
    }
    out[t] = src[indices[t / words] * words + t % words];
}

// Sets count words to `value`.
extern "C" __global__ void fill_words(u64* dst, u64 count, u64 value) {
    u64 t = global_thread_index();
    if (t < count) {
        dst[t] = value;
    }
}
