//! The FRI commit phase and the openings for the query phase.

use ballast_field::{Ext3, Felt};
use ballast_merkle::{Digest, MerkleTree, hash_leaves};
use ballast_ntt::{LdePlan, interpolate_coset};
use ballast_transcript::Transcript;
use rayon::prelude::*;

use crate::steps::{absorb_final_poly, round_challenge};
use crate::{FriError, FriLayerOpening, QueryPlan, fold_pair, round_arities};

/// Leaves hashed per parallel task.
const LEAVES_PER_TASK: usize = 1 << 9;

/// One committed layer: its evaluations (kept for openings) and their tree.
struct Layer {
    evals: Vec<Ext3>,
    log_arity: usize,
    tree: MerkleTree,
}

/// The prover's state after the commit phase.
pub struct FriCommitment {
    log_domain: usize,
    layers: Vec<Layer>,
    final_poly: Vec<Ext3>,
}

/// Commits a layer here, in this process (a backend may commit it elsewhere, to the same
/// tree): with a = 2^`log_arity` and s = len/a, leaf r is [`layer_leaf`](crate::layer_leaf)
/// of the values at positions r, r + s, …, r + (a − 1)·s.
///
/// # Panics
/// If `evals.len()` is not a power of two at least 2^`log_arity`.
pub fn commit_layer(evals: &[Ext3], log_arity: usize) -> MerkleTree {
    assert!(
        evals.len().is_power_of_two() && evals.len() >> log_arity >= 1,
        "a layer of {} values cannot be cut into cosets of 2^{log_arity}",
        evals.len()
    );
    let stride = evals.len() >> log_arity;
    let leaf_len = (1 << log_arity) * Ext3::BYTES;
    let mut leaves = vec![[0u8; 32]; stride];
    leaves
        .par_chunks_mut(LEAVES_PER_TASK)
        .enumerate()
        .for_each(|(task, leaves)| {
            // The leaves' bytes (`layer_leaf`'s encoding), then all their digests at once.
            let first = task * LEAVES_PER_TASK;
            let mut bytes = Vec::with_capacity(leaves.len() * leaf_len);
            for r in first..first + leaves.len() {
                for i in 0..1 << log_arity {
                    bytes.extend_from_slice(&evals[r + i * stride].to_le_bytes());
                }
            }
            hash_leaves(&bytes, leaf_len, leaves);
        });
    MerkleTree::from_leaves(leaves)
}

/// Runs the commit phase on `evals`, the input's values on g·H_N in natural order.
///
/// The N/2^`log_blowup` − 2^`log_final_poly_len` degree gap is closed by binary folds,
/// grouped into rounds ([`round_arities`]). Each round commits its layer (`commit_tree`,
/// leaf r = the coset of positions r + i·len/a, see [`commit_layer`]), absorbs the root,
/// draws β and folds a times over with β, β², β⁴, …. The final polynomial's coefficients are
/// absorbed last.
///
/// # Errors
/// [`FriError::DegreeTooHigh`] when the input is not of degree < N/2^`log_blowup` (the
/// statement was false), or the error `commit_tree` returns.
///
/// # Panics
/// If `evals.len()` is not a power of two at least 2^(`log_blowup` + `log_final_poly_len`).
pub fn commit<E: From<FriError>>(
    evals: Vec<Ext3>,
    log_blowup: usize,
    log_final_poly_len: usize,
    transcript: &mut Transcript,
    mut commit_tree: impl FnMut(&[Ext3], usize) -> Result<MerkleTree, E>,
) -> Result<FriCommitment, E> {
    let final_domain = 1usize << (log_blowup + log_final_poly_len);
    assert!(
        evals.len().is_power_of_two() && evals.len() >= final_domain,
        "fri input of {} values is too small",
        evals.len()
    );
    let log_domain = evals.len().trailing_zeros() as usize;
    let folds = (evals.len() / final_domain).trailing_zeros() as usize;
    let mut shift = LdePlan::SHIFT;
    let mut inv_two_x = inverse_twice_points(evals.len());
    let mut evals = evals;
    let mut layers = Vec::new();
    for log_arity in round_arities(folds) {
        let tree = commit_tree(&evals, log_arity)?;
        let mut beta = round_challenge(transcript, &tree.root());
        let mut folded = fold_once(&evals, beta, &inv_two_x);
        for _ in 1..log_arity {
            inv_two_x = square_points(&inv_two_x);
            beta = beta.square();
            folded = fold_once(&folded, beta, &inv_two_x);
        }
        inv_two_x = square_points(&inv_two_x);
        shift = shift.pow(1 << log_arity);
        layers.push(Layer {
            evals: std::mem::replace(&mut evals, folded),
            log_arity,
            tree,
        });
    }
    let mut coeffs = interpolate_coset(&evals, shift);
    let final_len = 1usize << log_final_poly_len;
    if coeffs[final_len..].iter().any(|&c| c != Ext3::ZERO) {
        return Err(FriError::DegreeTooHigh { bound: final_len }.into());
    }
    coeffs.truncate(final_len);
    absorb_final_poly(transcript, &coeffs);
    Ok(FriCommitment {
        log_domain,
        layers,
        final_poly: coeffs,
    })
}

/// One binary fold of a whole layer: position j pairs with j + len/2.
fn fold_once(evals: &[Ext3], beta: Ext3, inv_two_x: &[Felt]) -> Vec<Ext3> {
    let (lo, hi) = evals.split_at(evals.len() / 2);
    lo.par_iter()
        .zip(hi)
        .zip(inv_two_x)
        .map(|((&l, &h), &inv)| fold_pair(l, h, beta, inv))
        .collect()
}

/// The next layer's 1/(2x) from this one's: its points are the squares of the first
/// half's, and 1/(2x²) = 2·(1/(2x))².
fn square_points(inv_two_x: &[Felt]) -> Vec<Felt> {
    inv_two_x[..inv_two_x.len() / 2]
        .par_iter()
        .map(|&inv| {
            let sq = inv * inv;
            sq + sq
        })
        .collect()
}

/// 1/(2x) for the first half of g·H_N in natural order (x = g·ζ^j, j < N/2).
fn inverse_twice_points(len: usize) -> Vec<Felt> {
    const CHUNK: usize = 1 << 12;
    let zeta_inv = Felt::two_adic_root(len.trailing_zeros() as usize).inverse();
    let start = (LdePlan::SHIFT + LdePlan::SHIFT).inverse();
    let mut out = vec![Felt::ZERO; len / 2];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut acc = start * zeta_inv.pow((c * CHUNK) as u64);
            for slot in chunk {
                *slot = acc;
                acc *= zeta_inv;
            }
        });
    out
}

impl FriCommitment {
    /// The committed layer roots, in order.
    pub fn layer_roots(&self) -> Vec<Digest> {
        self.layers.iter().map(|l| l.tree.root()).collect()
    }

    /// The final polynomial's coefficients.
    pub fn final_poly(&self) -> &[Ext3] {
        &self.final_poly
    }

    /// The openings of every layer for queries at the input `positions` (strictly
    /// increasing): the values the verifier cannot fold itself, and each tree's batch
    /// opening of the queried cosets.
    ///
    /// # Panics
    /// If the positions are not strictly increasing positions of the input domain.
    pub fn open(&self, positions: &[usize]) -> Vec<FriLayerOpening> {
        let arities: Vec<usize> = self.layers.iter().map(|l| l.log_arity).collect();
        let plan =
            QueryPlan::new(self.log_domain, &arities, positions).expect("valid query positions");
        self.layers
            .iter()
            .zip(plan.layers())
            .map(|(layer, planned)| {
                let stride = layer.evals.len() >> layer.log_arity;
                FriLayerOpening {
                    values: planned
                        .unknown_slots()
                        .map(|(leaf, slot)| layer.evals[leaf + slot * stride])
                        .collect(),
                    nodes: layer.tree.open_batch(planned.leaves()),
                }
            })
            .collect()
    }
}
