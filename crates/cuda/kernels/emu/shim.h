// Host stand-ins for the CUDA C the kernels use, so that a C++ compiler builds the very
// same kernel sources into a host library (crates/cuda/tests/emulated_kernels.rs).
//
// launch.cpp runs a launch block by block. In kernels whose threads cooperate, each thread
// of a block is a fiber: it runs until it reaches __syncthreads() or a warp shuffle, and
// the scheduler releases a barrier when every thread of the block has reached it, a shuffle
// when every lane of the warp has. Shared memory (SHARED_WORDS) is checked word by word:
// reading a word no thread of the block wrote, or a word another thread wrote (or writing
// one another thread read or wrote) since the last barrier, is a race, and fails the
// launch; so does an index outside the launch's shared memory. A missing barrier is
// therefore an error whatever order the threads happen to run in.
#pragma once

#include <cstdint>

#define BALLAST_EMULATED 1
#define __global__
#define __device__
#define __constant__
#define __forceinline__ inline

typedef unsigned long long u64;
typedef unsigned int u32;

// The launch coordinates; the scheduler sets threadIdx before it runs each thread. Each OS
// thread runs its own launches (tests run in parallel); the initial-exec TLS model keeps
// reading them a plain load, not a call, in this dlopen()ed library.
struct EmuDim3 {
    unsigned x, y, z;
};
#define EMU_TLS thread_local __attribute__((tls_model("initial-exec")))
extern EMU_TLS EmuDim3 threadIdx, blockIdx, blockDim, gridDim;

// The high 64 bits of the 128-bit product, as the CUDA intrinsic.
inline u64 __umul64hi(u64 a, u64 b) { return (u64)(((unsigned __int128)a * b) >> 64); }

// Bit reversal, leading zeros and byte permutation, as the CUDA intrinsics.
inline u64 __brevll(u64 x) {
    u64 r = 0;
    for (int i = 0; i < 64; ++i) {
        r = (r << 1) | ((x >> i) & 1);
    }
    return r;
}
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((u64)x); }
inline u32 __byte_perm(u32 x, u32 y, u32 selector) {
    u64 bytes = ((u64)y << 32) | x;
    u32 out = 0;
    for (int i = 0; i < 4; ++i) {
        u32 pick = (selector >> (4 * i)) & 7;
        out |= (u32)((bytes >> (8 * pick)) & 0xff) << (8 * i);
    }
    return out;
}

// The scheduler's side (launch.cpp).
void emu_syncthreads();
u64 emu_shfl_xor(u64 value, int lane_mask);
u64 emu_shared_read(u64 index);
void emu_shared_write(u64 index, u64 value);

inline void __syncthreads() { emu_syncthreads(); }
inline u64 __shfl_xor_sync(unsigned /*mask: every lane*/, u64 value, int lane_mask) {
    return emu_shfl_xor(value, lane_mask);
}

// One thread runs at a time, so an atomic is a plain read-modify-write.
inline u64 atomicMin(u64* address, u64 value) {
    u64 old = *address;
    if (value < old) {
        *address = value;
    }
    return old;
}

// A word of shared memory, read and written through the race checks.
struct EmuSharedWord {
    u64 index;
    operator u64() const { return emu_shared_read(index); }
    EmuSharedWord& operator=(u64 value) {
        emu_shared_write(index, value);
        return *this;
    }
    EmuSharedWord& operator=(const EmuSharedWord& other) {
        emu_shared_write(index, (u64)other);
        return *this;
    }
};

// The launch's dynamic shared memory.
struct EmuShared {
    EmuSharedWord operator[](u64 index) const { return EmuSharedWord{index}; }
};

#define SHARED_WORDS(name) EmuShared name
typedef EmuShared SharedWords;
