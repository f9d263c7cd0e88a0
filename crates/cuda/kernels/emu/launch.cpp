// Host entry point of the emulated kernels: runs one kernel by name over a whole grid.
//
// Arguments come as an array of 64-bit words, in the kernel's parameter order: device
// pointers as addresses, scalars as values (every scalar parameter is a u64). The Rust side
// (ballast_cuda::Launcher) builds the same list for the real device.
//
// Kernels whose threads never meet (no barrier, no shuffle, no shared memory) run thread
// after thread. In the others every thread of a block is a fiber, scheduled as shim.h
// describes; shared memory starts each block unwritten, and every access is checked.
// Fibers switch with a few instructions of assembly on x86-64 (the callee-saved registers
// and the stack pointer), and with ucontext elsewhere, whose switches make a system call.

#include "shim.h"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../constraints.cu"
#include "../deep.cu"
#include "../merkle.cu"
#include "../ntt.cu"
#include "../queries.cu"

EMU_TLS EmuDim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {

// Bytes of stack each fiber gets.
constexpr size_t STACK_BYTES = 1 << 16;

enum class Wait { Running, Barrier, Shuffle, Done };

#if defined(__x86_64__)
// Saves the callee-saved registers on the current stack, stores the stack pointer in *save,
// switches to the stack `load` and restores the registers saved there.
extern "C" void ballast_emu_switch(void** save, void* load);
asm(R"(
    .text
    .globl ballast_emu_switch
    .hidden ballast_emu_switch
    .type ballast_emu_switch, @function
ballast_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size ballast_emu_switch, .-ballast_emu_switch
)");

// A suspended execution: its stack pointer, with its registers saved on that stack.
struct Context {
    void* sp = nullptr;
};
#else
typedef ucontext_t Context;
#endif

struct Fiber {
    Context context;
    Wait wait = Wait::Running;
    u64 shuffle_value = 0;
    int shuffle_mask = 0;
};

// One shared word: its value and who touched it in which barrier interval.
struct SharedWord {
    u64 value = 0;
    bool written = false;
    unsigned writer = 0, write_epoch = 0;
    unsigned reader = 0, read_epoch = 0;
    bool many_readers = false;
};

// The state of the launch this OS thread runs (tests run launches on several threads).
struct Scheduler {
    std::vector<Fiber> fibers;
    std::vector<std::vector<char>> stacks;
    Context main;
    unsigned current = 0;
    bool cooperative = false;
    std::vector<SharedWord> shared;
    unsigned epoch = 1;
    std::string error;
    void (*body)(void*) = nullptr;
    void* body_data = nullptr;

    void fail(const std::string& message) {
        if (error.empty()) {
            error = message;
        }
    }
};

// This OS thread's scheduler, made on its first launch (only a pointer in static TLS).
EMU_TLS Scheduler* current_scheduler = nullptr;

Scheduler& sched() {
    if (current_scheduler == nullptr) {
        current_scheduler = new Scheduler();  // one per OS thread, for the process's life
    }
    return *current_scheduler;
}

std::string where() {
    return "block " + std::to_string(blockIdx.x) + ", thread " + std::to_string(threadIdx.x);
}

// Suspends `from` and resumes `to`.
void switch_to(Context& from, Context& to) {
#if defined(__x86_64__)
    ballast_emu_switch(&from.sp, to.sp);
#else
    swapcontext(&from, &to);
#endif
}

// Back to the scheduler until it resumes this fiber.
void yield(Wait wait) {
    Scheduler& s = sched();
    Fiber& self = s.fibers[s.current];
    self.wait = wait;
    switch_to(self.context, s.main);
}

// Where a fiber starts; it never returns (the scheduler does not resume a finished fiber).
extern "C" void fiber_entry() {
    sched().body(sched().body_data);
    yield(Wait::Done);
    __builtin_unreachable();
}

// Prepares `fiber` to start at fiber_entry on `stack`.
void start_fiber(Fiber& fiber, std::vector<char>& stack) {
#if defined(__x86_64__)
    // The stack's top, 16-byte aligned: a null return address for fiber_entry's frame (so
    // that it starts with the stack aligned as after a call), fiber_entry's address for
    // the switch's `ret`, and six zeros for the registers the switch pops.
    uintptr_t top = (reinterpret_cast<uintptr_t>(stack.data()) + stack.size()) & ~uintptr_t{15};
    void** sp = reinterpret_cast<void**>(top);
    *--sp = nullptr;
    *--sp = reinterpret_cast<void*>(&fiber_entry);
    for (int i = 0; i < 6; ++i) {
        *--sp = nullptr;
    }
    fiber.context.sp = sp;
#else
    static thread_local ucontext_t prototype;
    static thread_local bool ready = false;
    if (!ready) {
        getcontext(&prototype);
        ready = true;
    }
    fiber.context = prototype;
    fiber.context.uc_stack.ss_sp = stack.data();
    fiber.context.uc_stack.ss_size = stack.size();
    fiber.context.uc_link = nullptr;
    makecontext(&fiber.context, fiber_entry, 0);
#endif
}

// Runs every fiber until each has finished or waits, and resolves what they wait for;
// repeats until all have finished.
void run_fibers(unsigned threads) {
    Scheduler& s = sched();
    while (true) {
        for (unsigned t = 0; t < threads; ++t) {
            Fiber& f = s.fibers[t];
            if (f.wait != Wait::Running) {
                continue;
            }
            s.current = t;
            threadIdx = {t, 0, 0};
            switch_to(s.main, f.context);
        }
        unsigned done = 0, at_barrier = 0;
        bool progress = false;
        for (unsigned t = 0; t < threads; ++t) {
            Wait w = s.fibers[t].wait;
            done += w == Wait::Done;
            at_barrier += w == Wait::Barrier;
        }
        if (done == threads) {
            return;
        }
        // Shuffles: a warp whose lanes all wait at one exchanges values.
        for (unsigned w = 0; w * 32 < threads; ++w) {
            unsigned first = w * 32;
            unsigned last = first + 32 <= threads ? first + 32 : threads;
            bool all = last - first == 32;
            for (unsigned t = first; t < last && all; ++t) {
                all = s.fibers[t].wait == Wait::Shuffle;
            }
            if (!all) {
                continue;
            }
            u64 values[32];
            for (unsigned t = first; t < last; ++t) {
                values[t - first] = s.fibers[t].shuffle_value;
            }
            for (unsigned t = first; t < last; ++t) {
                Fiber& f = s.fibers[t];
                f.shuffle_value = values[(t - first) ^ (unsigned)f.shuffle_mask];
                f.wait = Wait::Running;
            }
            progress = true;
        }
        if (progress) {
            continue;
        }
        // A barrier: released when every thread that has not exited waits at it.
        if (at_barrier + done == threads) {
            ++s.epoch;
            for (unsigned t = 0; t < threads; ++t) {
                if (s.fibers[t].wait == Wait::Barrier) {
                    s.fibers[t].wait = Wait::Running;
                }
            }
            continue;
        }
        s.fail("block " + std::to_string(blockIdx.x) +
                       ": threads wait at different barriers or shuffles (a partial warp, or "
                       "divergent synchronisation)");
        // Unblock everyone so the fibers can finish; the launch has failed.
        for (unsigned t = 0; t < threads; ++t) {
            if (s.fibers[t].wait != Wait::Done) {
                s.fibers[t].wait = Wait::Running;
            }
        }
    }
}

template <typename Body>
void run_grid(unsigned grid, unsigned block, unsigned shared_words, bool cooperative,
              Body body) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    sched().cooperative = cooperative;
    if (!cooperative) {
        for (unsigned b = 0; b < grid; ++b) {
            blockIdx = {b, 0, 0};
            for (unsigned t = 0; t < block; ++t) {
                threadIdx = {t, 0, 0};
                body();
            }
        }
        return;
    }
    if (sched().stacks.size() < block) {
        sched().stacks.resize(block, std::vector<char>(STACK_BYTES));
    }
    sched().fibers.assign(block, Fiber{});
    sched().body = [](void* data) { (*static_cast<Body*>(data))(); };
    sched().body_data = &body;
    for (unsigned b = 0; b < grid; ++b) {
        blockIdx = {b, 0, 0};
        // Shared memory starts every block unwritten.
        sched().shared.assign(shared_words, SharedWord{});
        sched().epoch = 1;
        for (unsigned t = 0; t < block; ++t) {
            sched().fibers[t] = Fiber{};
            start_fiber(sched().fibers[t], sched().stacks[t]);
        }
        run_fibers(block);
    }
}

u64* buf(u64 address) { return reinterpret_cast<u64*>(static_cast<uintptr_t>(address)); }

}  // namespace

void emu_syncthreads() {
    if (!sched().cooperative) {
        sched().fail(where() + ": __syncthreads in a kernel the emulator runs thread by thread");
        return;
    }
    yield(Wait::Barrier);
}

u64 emu_shfl_xor(u64 value, int lane_mask) {
    Scheduler& s = sched();
    if (!s.cooperative) {
        s.fail(where() + ": a shuffle in a kernel the emulator runs thread by thread");
        return value;
    }
    Fiber& self = s.fibers[s.current];
    self.shuffle_value = value;
    self.shuffle_mask = lane_mask;
    yield(Wait::Shuffle);
    return self.shuffle_value;
}

u64 emu_shared_read(u64 index) {
    Scheduler& s = sched();
    if (index >= s.shared.size()) {
        s.fail(where() + ": shared word " + std::to_string(index) + " is outside the " +
                       std::to_string(s.shared.size()) + " the launch has");
        return 0;
    }
    SharedWord& w = s.shared[index];
    unsigned t = threadIdx.x;
    if (!w.written) {
        s.fail(where() + ": reads shared word " + std::to_string(index) +
                       ", which no thread of the block wrote");
    } else if (w.write_epoch == s.epoch && w.writer != t) {
        s.fail(where() + ": reads shared word " + std::to_string(index) + " that thread " +
                       std::to_string(w.writer) + " wrote since the last barrier");
    }
    if (w.read_epoch != s.epoch) {
        w.read_epoch = s.epoch;
        w.reader = t;
        w.many_readers = false;
    } else if (w.reader != t) {
        w.many_readers = true;
    }
    return w.value;
}

void emu_shared_write(u64 index, u64 value) {
    Scheduler& s = sched();
    if (index >= s.shared.size()) {
        s.fail(where() + ": shared word " + std::to_string(index) + " is outside the " +
                       std::to_string(s.shared.size()) + " the launch has");
        return;
    }
    SharedWord& w = s.shared[index];
    unsigned t = threadIdx.x;
    if (w.write_epoch == s.epoch && w.writer != t) {
        s.fail(where() + ": writes shared word " + std::to_string(index) +
                       " that thread " + std::to_string(w.writer) +
                       " wrote since the last barrier");
    } else if (w.read_epoch == s.epoch && (w.many_readers || w.reader != t)) {
        s.fail(where() + ": writes shared word " + std::to_string(index) +
                       " that another thread read since the last barrier");
    }
    w.value = value;
    w.written = true;
    w.writer = t;
    w.write_epoch = s.epoch;
}

// Returns 0 on success, 1 for an unknown kernel, 2 for a wrong argument count, 3 when the
// kernel failed (a race, a stray index, divergent barriers), with the reason in `error`.
extern "C" int ballast_emu_launch(const char* kernel, unsigned grid, unsigned block,
                                  unsigned shared_words, const u64* a, unsigned num_args,
                                  char* error, unsigned error_len) {
    sched().error.clear();
    int status = 1;
#define EMU_KERNEL(NAME, COOPERATIVE, ARITY, ...)                              \
    if (status == 1 && std::strcmp(kernel, #NAME) == 0) {                      \
        if (num_args != ARITY) return 2;                                       \
        run_grid(grid, block, shared_words, COOPERATIVE, [&] { NAME(__VA_ARGS__); }); \
        status = 0;                                                            \
    }
    EMU_KERNEL(ntt_pass, true, 14, buf(a[0]), buf(a[1]), buf(a[2]), buf(a[3]), a[4], a[5],
               a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13])
    EMU_KERNEL(ntt_twiddles, false, 4, buf(a[0]), a[1], a[2], a[3])
    EMU_KERNEL(lde_scales, false, 6, buf(a[0]), a[1], a[2], a[3], a[4], a[5])
    EMU_KERNEL(split_chunks, false, 7, buf(a[0]), buf(a[1]), buf(a[2]), a[3], a[4], a[5], a[6])
    EMU_KERNEL(merkle_row_leaves, false, 5, buf(a[0]), buf(a[1]), a[2], a[3], a[4])
    EMU_KERNEL(merkle_fri_layer_leaves, false, 4, buf(a[0]), buf(a[1]), a[2], a[3])
    EMU_KERNEL(merkle_level, false, 4, buf(a[0]), a[1], a[2], a[3])
    EMU_KERNEL(poseidon2_row_leaves, false, 6, buf(a[0]), buf(a[1]), buf(a[2]), a[3], a[4], a[5])
    EMU_KERNEL(poseidon2_fri_layer_leaves, false, 5, buf(a[0]), buf(a[1]), buf(a[2]), a[3], a[4])
    EMU_KERNEL(poseidon2_level, false, 5, buf(a[0]), buf(a[1]), a[2], a[3], a[4])
    EMU_KERNEL(composition, false, 18, buf(a[0]), a[1], buf(a[2]), a[3], buf(a[4]), buf(a[5]),
               buf(a[6]), buf(a[7]), buf(a[8]), buf(a[9]), buf(a[10]), a[11], a[12], a[13],
               a[14], a[15], a[16], a[17])
    EMU_KERNEL(ood_weights, false, 6, buf(a[0]), a[1], a[2], a[3], a[4], a[5])
    EMU_KERNEL(raw_powers, false, 7, buf(a[0]), a[1], a[2], a[3], a[4], a[5], a[6])
    EMU_KERNEL(column_sums, true, 7, buf(a[0]), a[1], a[2], buf(a[3]), a[4], a[5], buf(a[6]))
    EMU_KERNEL(deep_function, false, 11, buf(a[0]), a[1], buf(a[2]), a[3], buf(a[4]),
               buf(a[5]), buf(a[6]), buf(a[7]), a[8], a[9], a[10])
    EMU_KERNEL(fri_fold, false, 10, buf(a[0]), buf(a[1]), a[2], a[3], a[4], a[5], a[6], a[7],
               a[8], a[9])
    EMU_KERNEL(grind, false, 5, buf(a[0]), a[1], a[2], a[3], buf(a[4]))
    EMU_KERNEL(grind_poseidon2, false, 6, buf(a[0]), buf(a[1]), a[2], a[3], a[4], buf(a[5]))
    EMU_KERNEL(gather_rows, false, 6, buf(a[0]), a[1], a[2], buf(a[3]), a[4], buf(a[5]))
    EMU_KERNEL(gather_items, false, 5, buf(a[0]), buf(a[1]), a[2], a[3], buf(a[4]))
    EMU_KERNEL(fill_words, false, 3, buf(a[0]), a[1], a[2])
#undef EMU_KERNEL
    if (status == 0 && !sched().error.empty()) {
        std::snprintf(error, error_len, "%s", sched().error.c_str());
        status = 3;
    }
    return status;
}

// The field operations on their own, for tests over chosen operand pairs (a + b = p, ...)
// that no transform reaches reliably.
extern "C" u64 ballast_emu_gl_add(u64 a, u64 b) { return gl_add(a, b); }
extern "C" u64 ballast_emu_gl_sub(u64 a, u64 b) { return gl_sub(a, b); }
extern "C" u64 ballast_emu_gl_mul(u64 a, u64 b) { return gl_mul(a, b); }
