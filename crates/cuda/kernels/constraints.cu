// The composition polynomial on the quotient coset, by interpreting the AIR's constraint
// program (crates/air/src/program.rs; crates/stark/src/quotient.rs computes the same on the
// CPU):
//
//   Q(x) = sum over domains D of (sum_{i in D} alpha^i C_i(x)) / Z_D(x)
//
// with Z_every = x^n - 1, Z_transition = (x^n - 1)/(x - w_last), Z_first = x - 1 and
// Z_last = x - w_last. Quotient point t is x = shift zeta_q^t (zeta_q of order
// n 2^log_chunks); its row is LDE row t 2^(log_blowup - log_chunks) and its next row is
// 2^log_blowup rows further on, cyclically.
//
// The program is one 64-bit word per instruction: the opcode in bits 0..4; operands a and
// b in bits 4..24 and 24..44, each a 3-bit kind above a 17-bit index; the destination
// register in bits 44..64. An assertion has its value in a, its domain in bits 24..26 and
// its constraint index in bits 32..64. Registers live in `registers`, register r of
// thread g at r * threads + g (threads = the grid's size), so a warp's accesses are
// contiguous.

#include "goldilocks.cuh"

#define OP_ADD 0
#define OP_SUB 1
#define OP_MUL 2
#define OP_NEG 3
#define OP_ASSERT 4

#define KIND_REGISTER 0
#define KIND_CURRENT 1
#define KIND_NEXT 2
#define KIND_PERIODIC 3
#define KIND_PUBLIC 4
#define KIND_CONSTANT 5

// Where one thread's operands come from at its point.
struct Point {
    const u64* lde;          // the trace's extension, column-major
    u64 lde_rows;            // its rows
    u64 row, next_row;       // the point's row and next row in it
    const u64* periodic;     // every periodic column's values on the quotient coset
    const u64* periodic_at;  // column c's values start at periodic_at[2c], length periodic_at[2c+1]
    u64 t;                   // the point's index on the quotient coset
    const u64* public_inputs;
    const u64* constants;
    u64* registers;  // this thread's register 0
    u64 stride;      // words between a thread's consecutive registers
};

__device__ __forceinline__ u64 read_operand(const Point& p, u64 bits) {
    u64 index = bits & 0x1ffff;
    switch (bits >> 17) {
        case KIND_REGISTER:
            return p.registers[index * p.stride];
        case KIND_CURRENT:
            return p.lde[index * p.lde_rows + p.row];
        case KIND_NEXT:
            return p.lde[index * p.lde_rows + p.next_row];
        case KIND_PERIODIC:
            return p.periodic[p.periodic_at[2 * index] + (p.t & (p.periodic_at[2 * index + 1] - 1))];
        case KIND_PUBLIC:
            return p.public_inputs[index];
        default:
            return p.constants[index];
    }
}

// Q at every point t < count of the quotient coset, into three coordinate columns:
// quotient[c * count + t] is coordinate c of Q(x_t). `coefficients` holds alpha^i for
// constraint i, three words each. Points: shift zeta_q^t with zeta_q of order count; x^n
// with n = 2^log_rows.
extern "C" __global__ void composition(const u64* program, u64 program_len, const u64* lde,
                                       u64 log_lde_rows, const u64* periodic,
                                       const u64* periodic_at, const u64* public_inputs,
                                       const u64* constants, const u64* coefficients,
                                       u64* registers, u64* quotient, u64 count, u64 log_rows,
                                       u64 log_blowup, u64 log_chunks, u64 shift, u64 zeta_q,
                                       u64 omega_last) {
    u64 threads = grid_threads();
    u64 lde_rows = 1ull << log_lde_rows;
    for (u64 t = global_thread_index(); t < count; t += threads) {
        Point p;
        p.lde = lde;
        p.lde_rows = lde_rows;
        p.row = t << (log_blowup - log_chunks);
        p.next_row = (p.row + (1ull << log_blowup)) & (lde_rows - 1);
        p.periodic = periodic;
        p.periodic_at = periodic_at;
        p.t = t;
        p.public_inputs = public_inputs;
        p.constants = constants;
        p.registers = registers + global_thread_index();
        p.stride = threads;

        // One sum per domain, in registers: every row, transition, first row, last row.
        Ext3 every = ext_from_base(0), transition = every, first = every, last = every;
        for (u64 k = 0; k < program_len; ++k) {
            u64 word = program[k];
            u64 op = word & 15;
            u64 a = read_operand(p, (word >> 4) & 0xfffff);
            if (op == OP_ASSERT) {
                Ext3 term = ext_scale(ext_load(coefficients + 3 * (word >> 32)), a);
                switch ((word >> 24) & 3) {
                    case 0:
                        every = ext_add(every, term);
                        break;
                    case 1:
                        transition = ext_add(transition, term);
                        break;
                    case 2:
                        first = ext_add(first, term);
                        break;
                    default:
                        last = ext_add(last, term);
                }
                continue;
            }
            u64 value;
            if (op == OP_NEG) {
                value = gl_neg(a);
            } else {
                u64 b = read_operand(p, (word >> 24) & 0xfffff);
                value = op == OP_ADD ? gl_add(a, b) : op == OP_SUB ? gl_sub(a, b) : gl_mul(a, b);
            }
            p.registers[(word >> 44) * p.stride] = value;
        }

        // The zerofiers' inverses at x.
        u64 x = gl_mul(shift, gl_pow(zeta_q, t));
        u64 every_inv = gl_inv(gl_sub(gl_pow(x, 1ull << log_rows), 1));
        u64 transition_inv = gl_mul(gl_sub(x, omega_last), every_inv);
        u64 first_inv = gl_inv(gl_sub(x, 1));
        u64 last_inv = gl_inv(gl_sub(x, omega_last));
        Ext3 q = ext_add(ext_add(ext_scale(every, every_inv), ext_scale(transition, transition_inv)),
                         ext_add(ext_scale(first, first_inv), ext_scale(last, last_inv)));
        quotient[t] = q.c0;
        quotient[count + t] = q.c1;
        quotient[2 * count + t] = q.c2;
    }
}
