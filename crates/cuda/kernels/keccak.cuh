// Keccak-256 (the original Keccak padding 0x01 ... 0x80, not SHA3's 0x06), one hash per
// thread with the 25-lane state in registers, as crates/merkle/src/hash.rs computes it
// with the sha3 crate.
//
// Every message ballast hashes is one prefix byte (0x00 for a leaf, 0x01 for an inner
// node) followed by 64-bit words, each in little-endian byte order. Such a message never
// fills a lane exactly: lane L of the message (bytes 8L .. 8L+7) is the top byte of word
// L-1 (or the prefix, for L = 0) followed by the low seven bytes of word L. The absorber
// therefore carries one byte from word to word and never indexes the state at run time,
// which keeps the state out of local memory.
#pragma once

#include "common.cuh"

// Bytes absorbed per permutation: 1088 bits, 17 lanes.
#define KECCAK_RATE_LANES 17

__constant__ u64 KECCAK_ROUND_CONSTANTS[24] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808aull,
    0x8000000080008000ull, 0x000000000000808bull, 0x0000000080000001ull,
    0x8000000080008081ull, 0x8000000000008009ull, 0x000000000000008aull,
    0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000aull,
    0x000000008000808bull, 0x800000000000008bull, 0x8000000000008089ull,
    0x8000000000008003ull, 0x8000000000008002ull, 0x8000000000000080ull,
    0x000000000000800aull, 0x800000008000000aull, 0x8000000080008081ull,
    0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull,
};

// x rotated left by n (0 <= n < 64); n is a constant at every call site.
__device__ __forceinline__ u64 rotl64(u64 x, u32 n) {
    return (x << n) | (x >> ((64 - n) & 63));
}

// Keccak-f[1600] on s, lane (x, y) at s[x + 5y].
__device__ __forceinline__ void keccak_f1600(u64 s[25]) {
    for (int round = 0; round < 24; ++round) {
        // theta: xor each column's parity into its two neighbours.
        u64 c[5];
#pragma unroll
        for (int x = 0; x < 5; ++x) {
            c[x] = s[x] ^ s[x + 5] ^ s[x + 10] ^ s[x + 15] ^ s[x + 20];
        }
#pragma unroll
        for (int x = 0; x < 5; ++x) {
            u64 d = c[(x + 4) % 5] ^ rotl64(c[(x + 1) % 5], 1);
#pragma unroll
            for (int y = 0; y < 25; y += 5) {
                s[x + y] ^= d;
            }
        }
        // rho and pi: lane (x, y) rotates by its offset and moves to (y, 2x + 3y).
        u64 b[25];
        b[0] = rotl64(s[0], 0);
        b[1] = rotl64(s[6], 44);
        b[2] = rotl64(s[12], 43);
        b[3] = rotl64(s[18], 21);
        b[4] = rotl64(s[24], 14);
        b[5] = rotl64(s[3], 28);
        b[6] = rotl64(s[9], 20);
        b[7] = rotl64(s[10], 3);
        b[8] = rotl64(s[16], 45);
        b[9] = rotl64(s[22], 61);
        b[10] = rotl64(s[1], 1);
        b[11] = rotl64(s[7], 6);
        b[12] = rotl64(s[13], 25);
        b[13] = rotl64(s[19], 8);
        b[14] = rotl64(s[20], 18);
        b[15] = rotl64(s[4], 27);
        b[16] = rotl64(s[5], 36);
        b[17] = rotl64(s[11], 10);
        b[18] = rotl64(s[17], 15);
        b[19] = rotl64(s[23], 56);
        b[20] = rotl64(s[2], 62);
        b[21] = rotl64(s[8], 55);
        b[22] = rotl64(s[14], 39);
        b[23] = rotl64(s[15], 41);
        b[24] = rotl64(s[21], 2);
        // chi: the only non-linear step, row by row.
#pragma unroll
        for (int y = 0; y < 25; y += 5) {
#pragma unroll
            for (int x = 0; x < 5; ++x) {
                s[x + y] = b[x + y] ^ (~b[(x + 1) % 5 + y] & b[(x + 2) % 5 + y]);
            }
        }
        // iota
        s[0] ^= KECCAK_ROUND_CONSTANTS[round];
    }
}

// Keccak-256 of (prefix byte || num_words words from `words.next()`, little-endian), into
// digest[0..4] (the digest's 32 bytes as four little-endian words).
template <typename Words>
__device__ __forceinline__ void keccak256_prefixed(u32 prefix, Words& words, u64 num_words,
                                                   u64 digest[4]) {
    u64 s[25];
#pragma unroll
    for (int i = 0; i < 25; ++i) {
        s[i] = 0;
    }
    u64 carry = prefix;  // the byte that opens the next lane
    u64 left = num_words;
    bool padded = false;
    while (true) {
#pragma unroll
        for (int k = 0; k < KECCAK_RATE_LANES; ++k) {
            u64 lane = 0;
            if (left > 0) {
                u64 w = words.next();
                lane = carry | (w << 8);
                carry = w >> 56;
                --left;
            } else if (!padded) {
                // The message ends after `carry`: the first padding byte 0x01 follows it.
                lane = carry | (0x01ull << 8);
                padded = true;
            }
            if (k == KECCAK_RATE_LANES - 1 && padded) {
                // The last padding byte, 0x80, ends the block the padding started in.
                lane ^= 0x80ull << 56;
            }
            s[k] ^= lane;
        }
        keccak_f1600(s);
        if (padded) {
            break;
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        digest[i] = s[i];
    }
}
