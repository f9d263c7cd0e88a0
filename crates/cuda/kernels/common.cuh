// Types and indexing shared by every ballast kernel.
//
// The kernels are compiled by NVRTC, which has no standard headers: fixed-width types are
// spelled out here. Every kernel is launched on a one-dimensional grid with one thread per
// independent work item (a butterfly, an element, a hash) and returns early past `count`:
// no thread reads what another thread of the same launch writes, so no shared memory or
// barrier is needed and the launch order within a grid never matters.
#pragma once

typedef unsigned long long u64;
typedef unsigned int u32;

// This thread's index in the whole grid.
__device__ __forceinline__ u64 global_thread_index() {
    return (u64)blockIdx.x * (u64)blockDim.x + (u64)threadIdx.x;
}
