//! The Keccak-f\[1600\] AIR: one round per row, 24 rows per permutation.
//!
//! Row i of a 24-row block computes round i; the block's last row hands the result to the
//! next block's first. Every row holds, for the state A entering it (two 32-bit limbs per
//! lane):
//!
//! | columns | count | holds |
//! |---|---|---|
//! | `A` | 50 | the state, limbs |
//! | `C` | 320 | θ's column parities of A, bits |
//! | `C'` | 320 | the column parities of A' = θ(A), bits |
//! | `A'` | 1600 | θ(A), bits |
//! | `O` | 50 | the round's output ι(χ(π(ρ(A')))), limbs |
//! | `ι` | 7 | χ's output bits of lane (0, 0) at the 7 positions ι can flip |
//! | `live`, `count` | 2 | whether the block is one of the segment's steps; steps so far |
//! | `T` | 3 | which third of its block the row is in (one-hot) |
//! | `end` | 1 | whether the row is its block's last (round 23) |
//!
//! With D[x][z] = C[x−1][z] ⊕ C[x+1][z−1], θ is A' = A ⊕ D; the constraints check that A's
//! limbs are the bits A' ⊕ D, that C' = C ⊕ D, and that C' is the parity of A' (so C is the
//! parity of A). ρ and π only move bits, so χ reads A' directly, and O's limbs must be χ's
//! bits (degree 3) with ι's round constant applied through the 7 helper bits. Every
//! constraint has degree ≤ 3, so the quotient has two chunks.
//!
//! Which round a row computes: 24 does not divide a power of two, so no periodic column can
//! say it, but blocks start at multiples of 8, so round r = 8·a + b has b = row mod 8
//! (periodic, period 8) and a = the block's third, the one-hot `T`: the first row holds
//! T = e_0 and T rotates after every row with b = 7 (a periodic selector), so row j holds
//! T = e_((j div 8) mod 3). The round constant's bits are Σ_a T_a·Q_(a,j)(b), periodic
//! columns Q of period 8 holding bit j of RC_(8a+b); `end` = T_2·[b = 7] marks round 23.
//!
//! Blocks are live (a step of the chain) or dead (the segment's steps are done): in a live
//! block the next row takes O; a dead block copies A throughout, so the last row (always in
//! a dead block: 2^k rows are never a multiple of 24) holds the last live block's output.
//! At a block's end the next live block starts from the padded digest: lanes 0..4 carried,
//! the others the Keccak-256 padding. Public inputs: the segment's first digest (8 limbs),
//! its last digest (8 limbs) and its number of steps.

use std::borrow::Cow;

use ballast_air::{Air, Algebra, ConstraintBuilder, Frame, PeriodicColumn};
use ballast_field::Felt;

use super::permutation::{IOTA_BITS, PADDING, ROUND_CONSTANTS, ROUNDS, lane, pi_source};

/// Rows per step (one permutation): one per round. Not the table's blocks of
/// [`ballast_field::BLOCK_ROWS`] rows.
pub const STEP_ROWS: usize = ROUNDS;

pub(crate) const A: usize = 0;
pub(crate) const C: usize = A + 50;
pub(crate) const C_PRIME: usize = C + 320;
pub(crate) const A_PRIME: usize = C_PRIME + 320;
pub(crate) const O: usize = A_PRIME + 1600;
pub(crate) const IOTA: usize = O + 50;
pub(crate) const LIVE: usize = IOTA + IOTA_BITS.len();
pub(crate) const COUNT: usize = LIVE + 1;
pub(crate) const THIRD: usize = COUNT + 1;
pub(crate) const END: usize = THIRD + 3;
/// Columns of the table.
pub const WIDTH: usize = END + 1;

/// Rows per third of a block: the period of the periodic columns.
const THIRD_ROWS: usize = ROUNDS / 3;
/// Periodic columns: `Q_(a,j)` at `3·j + a` (bit `IOTA_BITS[j]` of round 8a + b's constant
/// on rows with row mod 8 = b), then the selector of each third's last row.
const PERIODIC_THIRD_END: usize = 3 * IOTA_BITS.len();

/// Public inputs: first digest limbs, last digest limbs, steps.
pub(crate) const NUM_PUBLIC_INPUTS: usize = 17;

pub(crate) const fn a_limb(lane: usize, half: usize) -> usize {
    A + 2 * lane + half
}
pub(crate) const fn c_bit(x: usize, z: usize) -> usize {
    C + 64 * x + z
}
pub(crate) const fn c_prime_bit(x: usize, z: usize) -> usize {
    C_PRIME + 64 * x + z
}
pub(crate) const fn a_prime_bit(lane: usize, z: usize) -> usize {
    A_PRIME + 64 * lane + z
}
pub(crate) const fn o_limb(lane: usize, half: usize) -> usize {
    O + 2 * lane + half
}

/// The column of bit z of lane l of B = π(ρ(A')), at `64·l + z`: π moves lanes and ρ
/// rotates them, so every bit of B is a bit of A'.
const B_SOURCE: [usize; 1600] = {
    let mut table = [0; 1600];
    let mut l = 0;
    while l < 25 {
        let (xs, ys, r) = pi_source(l % 5, l / 5);
        let mut z = 0;
        while z < 64 {
            table[64 * l + z] = a_prime_bit(lane(xs, ys), (z + 64 - r as usize) % 64);
            z += 1;
        }
        l += 1;
    }
    table
};

/// One segment of the chain: 2^`log_rows` rows, 2^(`log_rows` − 5) permutations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeccakChainAir {
    /// log2 of the rows.
    pub log_rows: usize,
}

/// a ⊕ b for bits.
#[inline(always)]
fn xor<E: Algebra>(a: E, b: E) -> E {
    let ab = a * b;
    a + b - ab - ab
}

impl Air for KeccakChainAir {
    fn id(&self) -> &str {
        "ballast/keccak-chain/v5"
    }

    fn width(&self) -> usize {
        WIDTH
    }

    fn log_rows(&self) -> usize {
        self.log_rows
    }

    fn num_public_inputs(&self) -> usize {
        NUM_PUBLIC_INPUTS
    }

    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        let column = |f: &dyn Fn(usize) -> bool| PeriodicColumn {
            values: (0..THIRD_ROWS)
                .map(|b| if f(b) { Felt::ONE } else { Felt::ZERO })
                .collect(),
        };
        let mut columns = Vec::with_capacity(PERIODIC_THIRD_END + 1);
        for &z in &IOTA_BITS {
            for a in 0..3 {
                columns.push(column(&|b| {
                    (ROUND_CONSTANTS[THIRD_ROWS * a + b] >> z) & 1 == 1
                }));
            }
        }
        columns.push(column(&|b| b == THIRD_ROWS - 1));
        columns.into()
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let one = B::Expr::from(Felt::ONE);
        let two = one + one;
        let four = two + two;
        let (cur, next, periodic, public) = (f.current, f.next, f.periodic, f.public_inputs);
        let third = &cur[THIRD..THIRD + 3];
        let third_end = periodic[PERIODIC_THIRD_END];

        // Bits are bits.
        for &v in &cur[C..O] {
            b.every_row(v * v - v);
        }
        // C' is the parity of A': Σ_y A'[x][y][z] − C'[x][z] ∈ {0, 2, 4}.
        for x in 0..5 {
            for z in 0..64 {
                let sum = (0..5).fold(B::Expr::from(Felt::ZERO), |acc, y| {
                    acc + cur[a_prime_bit(lane(x, y), z)]
                });
                let e = sum - cur[c_prime_bit(x, z)];
                b.every_row(e * (e - two) * (e - four));
            }
        }
        // D[x][z] = C[x−1][z] ⊕ C[x+1][z−1]: C' = C ⊕ D, and A's limbs are the bits A' ⊕ D.
        // Half a column x of D at a time, with every constraint that reads it, so that a
        // compiled program holds 32 values of D at once, not all 320. (Loops rather than
        // closures: `eval` is inlined into the SIMD paths' evaluation, and closures would be
        // compiled apart from it, without their instructions.)
        let zero = B::Expr::from(Felt::ZERO);
        for x in 0..5 {
            for half in 0..2 {
                let mut d = [zero; 32];
                for (k, d_z) in d.iter_mut().enumerate() {
                    let z = 32 * half + k;
                    *d_z = xor(
                        cur[c_bit((x + 4) % 5, z)],
                        cur[c_bit((x + 1) % 5, (z + 63) % 64)],
                    );
                    let expected = xor(cur[c_bit(x, z)], *d_z);
                    b.every_row(cur[c_prime_bit(x, z)] - expected);
                }
                for y in 0..5 {
                    let l = lane(x, y);
                    let limb = (0..32).rev().fold(B::Expr::from(Felt::ZERO), |acc, k| {
                        acc + acc + xor(cur[a_prime_bit(l, 32 * half + k)], d[k])
                    });
                    b.every_row(cur[a_limb(l, half)] - limb);
                }
            }
        }
        // O's limbs are the bits of χ on B = π(ρ(A')), lane by lane, with ι through the
        // helper bits on lane (0, 0).
        for l in 0..25 {
            let (x, y) = (l % 5, l / 5);
            let (l1, l2) = (lane((x + 1) % 5, y), lane((x + 2) % 5, y));
            let mut bits = [zero; 64];
            for (z, bit) in bits.iter_mut().enumerate() {
                let (b0, b1, b2) = (
                    cur[B_SOURCE[64 * l + z]],
                    cur[B_SOURCE[64 * l1 + z]],
                    cur[B_SOURCE[64 * l2 + z]],
                );
                let t = b2 - b1 * b2;
                let bt = b0 * t;
                *bit = b0 + t - bt - bt;
            }
            // ι's helper bits are χ's, asserted before ι flips them.
            if l == 0 {
                for (j, &z) in IOTA_BITS.iter().enumerate() {
                    b.every_row(cur[IOTA + j] - bits[z]);
                }
                for (j, &z) in IOTA_BITS.iter().enumerate() {
                    // Bit z of the row's round constant, through the row's third.
                    let q = &periodic[3 * j..3 * j + 3];
                    let rc = third[0] * q[0] + third[1] * q[1] + third[2] * q[2];
                    let h = cur[IOTA + j];
                    let hr = h * rc;
                    bits[z] = h + rc - hr - hr;
                }
            }
            for half in 0..2 {
                let limb = bits[32 * half..32 * half + 32]
                    .iter()
                    .rev()
                    .fold(B::Expr::from(Felt::ZERO), |acc, &bit| acc + acc + bit);
                b.every_row(cur[o_limb(l, half)] - limb);
            }
        }
        let (live, next_live) = (cur[LIVE], next[LIVE]);
        b.every_row(live * live - live);

        // The third moves on after each third's last row; `end` is the last third's last row.
        for a in 0..3 {
            let before = third[(a + 2) % 3];
            b.transition(next[THIRD + a] - third[a] - third_end * (before - third[a]));
        }
        let block_end = cur[END];
        b.every_row(block_end - third[2] * third_end);
        // The next row: a live block takes O, a dead one copies A, and a block's end hands
        // the next live block its padded input (O's digest lanes and the padding).
        for l in 0..25 {
            for half in 0..2 {
                let (a, o) = (cur[a_limb(l, half)], cur[o_limb(l, half)]);
                let mut expected = a + live * (o - a);
                if l >= 4 {
                    let pad = B::Expr::from(Felt::new(limb_of(PADDING[l], half)));
                    expected += block_end * next_live * (pad - o);
                }
                b.transition(next[a_limb(l, half)] - expected);
            }
        }
        b.transition((one - block_end) * (next_live - live));
        b.transition(block_end * next_live * (one - live));
        b.transition(next[COUNT] - cur[COUNT] - block_end * next_live);

        // The segment starts from its first digest, padded, in a live block.
        for l in 0..25 {
            for half in 0..2 {
                let start = if l < 4 {
                    public[2 * l + half]
                } else {
                    B::Expr::from(Felt::new(limb_of(PADDING[l], half)))
                };
                b.first_row(cur[a_limb(l, half)] - start);
            }
        }
        b.first_row(live - one);
        b.first_row(cur[COUNT] - one);
        b.first_row(third[0] - one);
        b.first_row(third[1]);
        b.first_row(third[2]);
        // It ends at its last digest after its number of steps.
        for i in 0..8 {
            b.last_row(cur[a_limb(i / 2, i % 2)] - public[8 + i]);
        }
        b.last_row(cur[COUNT] - public[16]);
    }
}

/// The low (`half` = 0) or high 32 bits of a lane.
pub(crate) const fn limb_of(lane: u64, half: usize) -> u64 {
    (lane >> (32 * half)) & 0xffff_ffff
}
