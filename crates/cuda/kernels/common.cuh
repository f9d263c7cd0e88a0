// Types, indexing and shared memory for every ballast kernel.
//
// The kernels are compiled by NVRTC, which has no standard headers: fixed-width types are
// spelled out here. A launch is one-dimensional. Kernels whose threads cooperate (the NTT
// passes, the reductions) take their shared memory as the launch's dynamic shared memory,
// declared with SHARED_WORDS, and order it with __syncthreads(); the host emulation
// (kernels/emu) gives SHARED_WORDS a race-checking stand-in.
#pragma once

typedef unsigned long long u64;
typedef unsigned int u32;

// This thread's index in the whole grid.
__device__ __forceinline__ u64 global_thread_index() {
    return (u64)blockIdx.x * (u64)blockDim.x + (u64)threadIdx.x;
}

// Threads in the whole grid.
__device__ __forceinline__ u64 grid_threads() {
    return (u64)gridDim.x * (u64)blockDim.x;
}

#ifndef BALLAST_EMULATED
// The launch's dynamic shared memory, as 64-bit words named `name`.
#define SHARED_WORDS(name) extern __shared__ u64 name[]
// How a device function takes shared memory.
typedef u64* SharedWords;
#endif
