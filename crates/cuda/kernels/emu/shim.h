// Host stand-ins for the CUDA C the kernels use, so that a C++ compiler builds the very
// same kernel sources into a host library (crates/cuda/tests/emulated_kernels.rs).
//
// A kernel launch becomes a loop over every (block, thread) of the grid (launch.cpp). That
// is faithful because ballast's kernels never share data between the threads of a launch:
// no shared memory, no barriers, no atomics, and each thread writes only its own outputs.
#pragma once

#include <cstdint>

#define __global__
#define __device__
#define __constant__
#define __forceinline__ inline

// The launch coordinates, set by the grid loop before each emulated thread runs.
struct EmuDim3 {
    unsigned x, y, z;
};
static thread_local EmuDim3 threadIdx, blockIdx, blockDim, gridDim;

// The high 64 bits of the 128-bit product, as the CUDA intrinsic.
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
