//! Many leaves or nodes at once: one state per SIMD lane (a [`Kernel`] over
//! [`PackedField`]), the same permutation and sponge as one at a time, so the same digests
//! on every path.

use ballast_cpu::Kernels;
use ballast_field::Felt;
use ballast_field::packed::{Kernel, PackedField, run};

use crate::constants::{CONSTANTS, Constants};
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

/// [`hash_elements`] of each of the rows of a table block, into `out`, on the given kernels:
/// `block` holds `width` runs of `out.len()` values, run c being column c of the rows
/// (`ballast_field::RowBlocks`' layout), so element c of every row loads as one register.
///
/// # Panics
/// If `block` is not `width` runs of `out.len()` values.
pub fn hash_block_rows(kernels: Kernels, block: &[Felt], width: usize, out: &mut [FeltDigest]) {
    let rows = out.len();
    assert_eq!(block.len(), width * rows, "{width} runs of {rows} values");
    let done = run(
        kernels,
        HashBlockRows {
            block,
            width,
            out: &mut *out,
        },
    )
    .unwrap_or(0);
    for (r, digest) in out.iter_mut().enumerate().skip(done) {
        *digest = sponge(&CONSTANTS, width, Felt::ZERO, |c| block[c * rows + r]);
    }
}

/// A block's rows hashed a register group at a time; returns how many (whole groups only).
struct HashBlockRows<'a> {
    block: &'a [Felt],
    width: usize,
    out: &'a mut [FeltDigest],
}

impl Kernel for HashBlockRows<'_> {
    type Output = usize;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> usize {
        let Self { block, width, out } = self;
        let rows = out.len();
        by_groups(token, out, |constants, zero, g| {
            let element = |c: usize| P::load(token, &block[c * rows + g * P::LANES..]);
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
        by_groups(token, out, |constants, zero, g| {
            let group = &leaves[g * P::LANES * len..(g + 1) * P::LANES * len];
            let element = |j: usize| P::load(token, P::array(|k| group[k * len + j]).as_ref());
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
        by_groups(token, out, |constants, zero, g| {
            let pairs = &children[2 * g * P::LANES..2 * (g + 1) * P::LANES];
            let child = |side: usize| -> [P; DIGEST_ELEMENTS] {
                std::array::from_fn(|i| {
                    P::load(token, P::array(|k| pairs[2 * k + side][i]).as_ref())
                })
            };
            compress_over(constants, child(0), child(1), zero)
        })
    }
}

/// `out` filled a register group at a time, group g's digests (one per lane) being
/// `digest(constants, zero, g)` with the constants lifted into `P` once; returns how many
/// it filled (whole groups only).
#[inline(always)]
fn by_groups<P: PackedField>(
    token: P::Token,
    out: &mut [FeltDigest],
    digest: impl Fn(&Constants<P>, P, usize) -> [P; DIGEST_ELEMENTS],
) -> usize {
    let constants = CONSTANTS.lift(|c| P::splat(token, c));
    let zero = P::splat(token, Felt::ZERO);
    let groups = out.chunks_exact_mut(P::LANES);
    let count = groups.len() * P::LANES;
    for (g, digests) in groups.enumerate() {
        store::<P>(digest(&constants, zero, g), digests);
    }
    count
}

/// Lane k of each digest cell into `out[k]`.
#[inline(always)]
fn store<P: PackedField>(digest: [P; DIGEST_ELEMENTS], out: &mut [FeltDigest]) {
    for (i, cell) in digest.into_iter().enumerate() {
        let mut lanes = P::array(|_| Felt::ZERO);
        cell.store(lanes.as_mut());
        for (digest, &value) in out.iter_mut().zip(lanes.as_ref()) {
            digest[i] = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use ballast_testkit::SplitMix64;

    use super::*;

    #[test]
    fn many_at_once_match_one_at_a_time_on_every_path() {
        let mut rng = SplitMix64::new(0x9054);
        for kernels in Kernels::supported() {
            for (len, count) in [(0, 9), (1, 17), (8, 8), (13, 19), (24, 33)] {
                let leaves: Vec<Felt> = (&mut rng).take(len * count).map(Felt::new).collect();
                let mut digests = vec![[Felt::ZERO; DIGEST_ELEMENTS]; count];
                hash_many(kernels, &leaves, len, &mut digests);
                for (k, digest) in digests.iter().enumerate() {
                    let leaf = &leaves[k * len..(k + 1) * len];
                    assert_eq!(*digest, hash_elements(leaf), "{} leaf {k}", kernels.path());
                }
                // The same leaves as a block's rows: `len` runs of `count` values.
                let block: Vec<Felt> = (0..len * count)
                    .map(|i| leaves[(i % count) * len + i / count])
                    .collect();
                let mut rows = vec![[Felt::ZERO; DIGEST_ELEMENTS]; count];
                hash_block_rows(kernels, &block, len, &mut rows);
                assert_eq!(rows, digests, "{} block rows", kernels.path());
                let mut nodes = vec![[Felt::ZERO; DIGEST_ELEMENTS]; count / 2];
                compress_many(kernels, &digests[..count / 2 * 2], &mut nodes);
                for (k, node) in nodes.iter().enumerate() {
                    let expected = compress(&digests[2 * k], &digests[2 * k + 1]);
                    assert_eq!(*node, expected, "{} node {k}", kernels.path());
                }
            }
        }
    }
}
