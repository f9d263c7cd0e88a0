//! Many leaves, nodes or states at once: one state per SIMD lane (a [`Kernel`] over
//! [`PackedField`]), two registers' groups side by side ([`Pair`]), the same permutation and
//! sponge as one at a time, so the same digests on every path.

use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use ballast_cpu::Kernels;
use ballast_field::packed::{Kernel, PackedField, run};
use ballast_field::{BLOCK_ROWS, Felt, Halve};

use crate::constants::{CONSTANTS, Constants, WIDTH};
use crate::permutation::{permute, permute_over};
use crate::sponge::{DIGEST_ELEMENTS, FeltDigest, compress, compress_over, hash_elements, sponge};

/// [`hash_elements`] of each `len`-element leaf of `leaves`, into `out`, on the given
/// kernels: a register's lanes hash as many leaves at once; the rest, and the scalar path,
/// one by one. One thread.
///
/// # Panics
/// If `leaves` is not `out.len()` leaves of `len` elements.
pub fn hash_many(kernels: Kernels, leaves: &[Felt], len: usize, out: &mut [FeltDigest]) {
    assert_eq!(
        leaves.len(),
        len * out.len(),
        "{} leaves of {len} elements",
        out.len()
    );
    let done = run(
        kernels,
        HashMany {
            leaves,
            len,
            out: &mut *out,
        },
    )
    .unwrap_or(0);
    for (k, digest) in out.iter_mut().enumerate().skip(done) {
        *digest = hash_elements(&leaves[k * len..(k + 1) * len]);
    }
}

/// [`compress`] of each pair of consecutive digests of `children`, into `out` (half as
/// many), on the given kernels, as [`hash_many`] does.
///
/// # Panics
/// If `children` is not twice `out.len()` digests.
pub fn compress_many(kernels: Kernels, children: &[FeltDigest], out: &mut [FeltDigest]) {
    assert_eq!(children.len(), 2 * out.len(), "two children a node");
    let done = run(
        kernels,
        CompressMany {
            children,
            out: &mut *out,
        },
    )
    .unwrap_or(0);
    for (k, digest) in out.iter_mut().enumerate().skip(done) {
        *digest = compress(&children[2 * k], &children[2 * k + 1]);
    }
}

/// [`permute`] of each of `states`, in place, on the given kernels, as [`hash_many`] does.
pub fn permute_many(kernels: Kernels, states: &mut [[Felt; WIDTH]]) {
    let done = run(
        kernels,
        PermuteMany {
            states: &mut *states,
        },
    )
    .unwrap_or(0);
    for state in &mut states[done..] {
        permute(state);
    }
}

/// [`hash_elements`] of each of the first `out.len()` rows of consecutive table blocks,
/// into `out`, on the given kernels: each block holds [`BLOCK_ROWS`] rows as `width` runs
/// of [`BLOCK_ROWS`] values, run c being column c of its rows (`ballast_field::RowBlocks`'
/// layout), so element c of a register's rows loads as one register.
///
/// # Panics
/// If `blocks` is not whole blocks of `width` columns holding at least `out.len()` rows.
pub fn hash_block_rows(kernels: Kernels, blocks: &[Felt], width: usize, out: &mut [FeltDigest]) {
    let block = width * BLOCK_ROWS;
    assert!(
        width == 0 || (blocks.len().is_multiple_of(block) && blocks.len() / width >= out.len()),
        "blocks of {width} columns holding {} rows",
        out.len()
    );
    let done = run(
        kernels,
        HashBlockRows {
            blocks,
            width,
            out: &mut *out,
        },
    )
    .unwrap_or(0);
    for (r, digest) in out.iter_mut().enumerate().skip(done) {
        let row = r / BLOCK_ROWS * block + r % BLOCK_ROWS;
        *digest = sponge(&CONSTANTS, width, Felt::ZERO, |c| {
            blocks[row + c * BLOCK_ROWS]
        });
    }
}

/// Blocks' rows hashed two register groups at a time; returns how many (whole groups only).
struct HashBlockRows<'a> {
    blocks: &'a [Felt],
    width: usize,
    out: &'a mut [FeltDigest],
}

impl Kernel for HashBlockRows<'_> {
    type Output = usize;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> usize {
        let Self { blocks, width, out } = self;
        assert!(
            BLOCK_ROWS.is_multiple_of(P::LANES),
            "a register's rows lie in one block"
        );
        let row = |g: usize| {
            let r = g * P::LANES;
            r / BLOCK_ROWS * width * BLOCK_ROWS + r % BLOCK_ROWS
        };
        by_groups(token, out, |constants, zero, groups| {
            let element = |c: usize| {
                Pair::of(groups, |g| {
                    P::load(token, &blocks[row(g) + c * BLOCK_ROWS..])
                })
            };
            sponge(constants, width, zero, element)
        })
    }
}

/// Leaves hashed a register group at a time; returns how many (whole groups only).
struct HashMany<'a> {
    leaves: &'a [Felt],
    len: usize,
    out: &'a mut [FeltDigest],
}

impl Kernel for HashMany<'_> {
    type Output = usize;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> usize {
        let Self { leaves, len, out } = self;
        by_groups(token, out, |constants, zero, groups| {
            let element = |j: usize| {
                Pair::of(groups, |g| {
                    let group = &leaves[g * P::LANES * len..(g + 1) * P::LANES * len];
                    P::load(token, P::array(|k| group[k * len + j]).as_ref())
                })
            };
            sponge(constants, len, zero, element)
        })
    }
}

/// Nodes compressed a register group at a time; returns how many (whole groups only).
struct CompressMany<'a> {
    children: &'a [FeltDigest],
    out: &'a mut [FeltDigest],
}

impl Kernel for CompressMany<'_> {
    type Output = usize;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> usize {
        let Self { children, out } = self;
        by_groups(token, out, |constants, zero, groups| {
            let child = |side: usize| -> [Pair<P>; DIGEST_ELEMENTS] {
                std::array::from_fn(|i| {
                    Pair::of(groups, |g| {
                        let pairs = &children[2 * g * P::LANES..2 * (g + 1) * P::LANES];
                        P::load(token, P::array(|k| pairs[2 * k + side][i]).as_ref())
                    })
                })
            };
            compress_over(constants, child(0), child(1), zero)
        })
    }
}

/// States permuted two register groups at a time; returns how many (whole groups only).
struct PermuteMany<'a> {
    states: &'a mut [[Felt; WIDTH]],
}

impl Kernel for PermuteMany<'_> {
    type Output = usize;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> usize {
        let states = self.states;
        let constants = CONSTANTS.lift(|c| Pair::splat(P::splat(token, c)));
        let groups = states.len() / P::LANES;
        for_pairs(groups, |pair| {
            let mut state: [Pair<P>; WIDTH] = std::array::from_fn(|i| {
                Pair::of(pair, |g| {
                    let group = &states[g * P::LANES..(g + 1) * P::LANES];
                    P::load(token, P::array(|k| group[k][i]).as_ref())
                })
            });
            permute_over(&mut state, &constants);
            for (i, cell) in state.into_iter().enumerate() {
                cell.store(pair, |g, lanes| {
                    for (state, &value) in states[g * P::LANES..].iter_mut().zip(lanes) {
                        state[i] = value;
                    }
                });
            }
        });
        groups * P::LANES
    }
}

/// `out` filled two register groups at a time, the digests of groups g and h (one per
/// lane) being `digest(constants, zero, [g, h])` with the constants lifted once; returns
/// how many it filled (whole groups only).
#[inline(always)]
fn by_groups<P: PackedField>(
    token: P::Token,
    out: &mut [FeltDigest],
    digest: impl Fn(&Constants<Pair<P>>, Pair<P>, [usize; 2]) -> [Pair<P>; DIGEST_ELEMENTS],
) -> usize {
    let constants = CONSTANTS.lift(|c| Pair::splat(P::splat(token, c)));
    let zero = Pair::splat(P::splat(token, Felt::ZERO));
    let groups = out.len() / P::LANES;
    for_pairs(groups, |pair| {
        for (i, cell) in digest(&constants, zero, pair).into_iter().enumerate() {
            cell.store(pair, |g, lanes| {
                for (digest, &value) in out[g * P::LANES..].iter_mut().zip(lanes) {
                    digest[i] = value;
                }
            });
        }
    });
    groups * P::LANES
}

/// `f` of groups 0 and 1, 2 and 3, …, and of the last one twice when their number is odd.
#[inline(always)]
fn for_pairs(groups: usize, mut f: impl FnMut([usize; 2])) {
    for g in (0..groups).step_by(2) {
        f([g, (g + 1).min(groups - 1)]);
    }
}

/// Two register groups' values side by side, an [`Algebra`](ballast_field::Algebra) lane by
/// lane: the permutation's rounds on both at once, so that one group's products fill the
/// other's wait (a partial round is a chain of dependent products).
#[derive(Clone, Copy, Debug)]
struct Pair<P>(P, P);

impl<P: PackedField> Pair<P> {
    #[inline(always)]
    fn splat(value: P) -> Self {
        Self(value, value)
    }

    /// `load(g)` for each of the two groups.
    #[inline(always)]
    fn of(groups: [usize; 2], load: impl Fn(usize) -> P) -> Self {
        Self(load(groups[0]), load(groups[1]))
    }

    /// `write(g, lanes)` with each group's lanes, the second only when it is another group.
    #[inline(always)]
    fn store(self, groups: [usize; 2], mut write: impl FnMut(usize, &[Felt])) {
        for (g, value) in [(groups[0], self.0), (groups[1], self.1)] {
            let mut lanes = P::array(|_| Felt::ZERO);
            value.store(lanes.as_mut());
            write(g, lanes.as_ref());
            if groups[0] == groups[1] {
                break;
            }
        }
    }
}

impl<P: PackedField> From<Felt> for Pair<P> {
    #[inline(always)]
    fn from(value: Felt) -> Self {
        Self::splat(P::from(value))
    }
}

impl<P: PackedField> Halve for Pair<P> {
    #[inline(always)]
    fn halve(self) -> Self {
        Self(self.0.halve(), self.1.halve())
    }
}

impl<P: PackedField> Neg for Pair<P> {
    type Output = Self;

    #[inline(always)]
    fn neg(self) -> Self {
        Self(-self.0, -self.1)
    }
}

/// Each binary operator lane by lane, and its assigning form.
macro_rules! pair_ops {
    ($($op:ident $method:ident $assign:ident $assign_method:ident),*) => {$(
        impl<P: PackedField> $op for Pair<P> {
            type Output = Self;

            #[inline(always)]
            fn $method(self, rhs: Self) -> Self {
                Self(self.0.$method(rhs.0), self.1.$method(rhs.1))
            }
        }

        impl<P: PackedField> $assign for Pair<P> {
            #[inline(always)]
            fn $assign_method(&mut self, rhs: Self) {
                *self = self.$method(rhs);
            }
        }
    )*};
}

pair_ops!(Add add AddAssign add_assign, Sub sub SubAssign sub_assign, Mul mul MulAssign mul_assign);

#[cfg(test)]
mod tests {
    use ballast_testkit::SplitMix64;

    use super::*;

    #[test]
    fn many_at_once_match_one_at_a_time_on_every_path() {
        let mut rng = SplitMix64::new(0x9054);
        for kernels in Kernels::supported() {
            // Counts with an odd number of register groups (of 4 and of 8 lanes) and without.
            for (len, count) in [
                (0, 9),
                (1, 17),
                (8, 8),
                (5, 12),
                (13, 19),
                (24, 33),
                (2, 43),
            ] {
                let leaves: Vec<Felt> = (&mut rng).take(len * count).map(Felt::new).collect();
                let mut digests = vec![[Felt::ZERO; DIGEST_ELEMENTS]; count];
                hash_many(kernels, &leaves, len, &mut digests);
                for (k, digest) in digests.iter().enumerate() {
                    let leaf = &leaves[k * len..(k + 1) * len];
                    assert_eq!(*digest, hash_elements(leaf), "{} leaf {k}", kernels.path());
                }
                // The same leaves as the rows of blocks (the last one part-filled).
                let mut blocks = vec![Felt::ZERO; count.div_ceil(BLOCK_ROWS) * BLOCK_ROWS * len];
                for (r, leaf) in leaves.chunks_exact(len.max(1)).enumerate() {
                    for (c, &value) in leaf.iter().enumerate() {
                        blocks[(r / BLOCK_ROWS * len + c) * BLOCK_ROWS + r % BLOCK_ROWS] = value;
                    }
                }
                let mut rows = vec![[Felt::ZERO; DIGEST_ELEMENTS]; count];
                hash_block_rows(kernels, &blocks, len, &mut rows);
                assert_eq!(rows, digests, "{} block rows", kernels.path());
                let mut nodes = vec![[Felt::ZERO; DIGEST_ELEMENTS]; count / 2];
                compress_many(kernels, &digests[..count / 2 * 2], &mut nodes);
                for (k, node) in nodes.iter().enumerate() {
                    let expected = compress(&digests[2 * k], &digests[2 * k + 1]);
                    assert_eq!(*node, expected, "{} node {k}", kernels.path());
                }
                let mut states: Vec<[Felt; WIDTH]> = leaves
                    .chunks_exact(len.max(1))
                    .map(|leaf| std::array::from_fn(|i| leaf[i % leaf.len()] + Felt::new(i as u64)))
                    .collect();
                let expected: Vec<[Felt; WIDTH]> = states
                    .iter()
                    .map(|&state| {
                        let mut state = state;
                        permute(&mut state);
                        state
                    })
                    .collect();
                permute_many(kernels, &mut states);
                assert_eq!(states, expected, "{} states", kernels.path());
            }
        }
    }
}
