//! Many leaves or nodes at once: one state per SIMD lane (a [`Kernel`] over
//! [`PackedField`]), the same permutation and sponge as one at a time, so the same digests
//! on every path.

use ballast_cpu::Kernels;
use ballast_field::Felt;
use ballast_field::packed::{Kernel, PackedField, run};

use crate::constants::CONSTANTS;
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
        let constants = CONSTANTS.lift(|c| P::splat(token, c));
        let zero = P::splat(token, Felt::ZERO);
        let groups = out.chunks_exact_mut(P::LANES);
        let count = groups.len() * P::LANES;
        for (g, digests) in groups.enumerate() {
            let group = &leaves[g * P::LANES * len..(g + 1) * P::LANES * len];
            let element = |j: usize| P::load(token, P::array(|k| group[k * len + j]).as_ref());
            store::<P>(sponge(&constants, len, zero, element), digests);
        }
        count
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
        let constants = CONSTANTS.lift(|c| P::splat(token, c));
        let zero = P::splat(token, Felt::ZERO);
        let groups = out.chunks_exact_mut(P::LANES);
        let count = groups.len() * P::LANES;
        for (g, digests) in groups.enumerate() {
            let pairs = &children[2 * g * P::LANES..2 * (g + 1) * P::LANES];
            let child = |side: usize| -> [P; DIGEST_ELEMENTS] {
                std::array::from_fn(|i| {
                    P::load(token, P::array(|k| pairs[2 * k + side][i]).as_ref())
                })
            };
            store::<P>(compress_over(&constants, child(0), child(1), zero), digests);
        }
        count
    }
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
