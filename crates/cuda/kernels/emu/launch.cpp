// Host entry point of the emulated kernels: runs one kernel by name over a whole grid.
//
// Arguments come as an array of 64-bit words, in the kernel's parameter order: device
// pointers as addresses, scalars as values (every scalar parameter is a u64). The Rust side
// (ballast_cuda::Launcher) builds the same list for the real device.

#include "shim.h"

#include <cstring>

#include "../ntt.cu"
#include "../merkle.cu"

namespace {

template <typename Body>
void run_grid(unsigned grid, unsigned block, Body body) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; ++b) {
        blockIdx = {b, 0, 0};
        for (unsigned t = 0; t < block; ++t) {
            threadIdx = {t, 0, 0};
            body();
        }
    }
}

u64* buf(u64 address) { return reinterpret_cast<u64*>(static_cast<uintptr_t>(address)); }

}  // namespace

// Returns 0 on success, 1 for an unknown kernel, 2 for a wrong argument count.
extern "C" int ballast_emu_launch(const char* kernel, unsigned grid, unsigned block,
                                  const u64* a, unsigned num_args) {
#define EMU_KERNEL(NAME, ARITY, ...)                              \
    if (std::strcmp(kernel, #NAME) == 0) {                        \
        if (num_args != ARITY) return 2;                          \
        run_grid(grid, block, [&] { NAME(__VA_ARGS__); });        \
        return 0;                                                 \
    }
    EMU_KERNEL(ntt_dif_stage, 6, buf(a[0]), buf(a[1]), a[2], a[3], a[4], a[5])
    EMU_KERNEL(ntt_dit_stage, 6, buf(a[0]), buf(a[1]), a[2], a[3], a[4], a[5])
    EMU_KERNEL(lde_scatter, 6, buf(a[0]), buf(a[1]), buf(a[2]), a[3], a[4], a[5])
    EMU_KERNEL(merkle_row_leaves, 5, buf(a[0]), buf(a[1]), a[2], a[3], a[4])
    EMU_KERNEL(merkle_fri_layer_leaves, 4, buf(a[0]), buf(a[1]), a[2], a[3])
    EMU_KERNEL(merkle_level, 4, buf(a[0]), a[1], a[2], a[3])
#undef EMU_KERNEL
    return 1;
}

// The field operations on their own, for tests over chosen operand pairs (a + b = p, ...)
// that no transform reaches reliably.
extern "C" u64 ballast_emu_gl_add(u64 a, u64 b) { return gl_add(a, b); }
extern "C" u64 ballast_emu_gl_sub(u64 a, u64 b) { return gl_sub(a, b); }
extern "C" u64 ballast_emu_gl_mul(u64 a, u64 b) { return gl_mul(a, b); }
