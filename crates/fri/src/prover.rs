//! The FRI commit phase and the openings for the query phase.

use ballast_field::{Ext3, Felt};
use ballast_merkle::{Digest, MerkleTree};
use ballast_ntt::{LdePlan, interpolate_coset};
use ballast_transcript::Transcript;
use rayon::prelude::*;

use crate::{FriError, FriLayerProof, fold_pair, layer_leaf};

/// One committed layer: its evaluations (kept for openings) and their tree.
struct Layer {
    evals: Vec<Ext3>,
    tree: MerkleTree,
}

/// The prover's state after the commit phase.
pub struct FriCommitment {
    layers: Vec<Layer>,
    final_poly: Vec<Ext3>,
}

/// Commits a layer on the CPU: leaf j hashes the pair at positions j and j + len/2.
pub fn commit_layer_cpu(evals: &[Ext3]) -> MerkleTree {
    let half = evals.len() / 2;
    let (lo, hi) = evals.split_at(half);
    let leaves = lo
        .par_iter()
        .zip(hi)
        .map(|(&l, &h)| layer_leaf(l, h))
        .collect();
    MerkleTree::from_leaves(leaves)
}

/// Runs the commit phase on `evals`, the input's values on g·H_N in natural order.
///
/// The input itself is not committed: it is a function of commitments the caller already
/// made (its openings come in pairs x, −x), so the first folding challenge is drawn at once.
/// Every later layer is committed (`commit_layer`, leaf j = [`layer_leaf`] of positions j
/// and j + len/2) and its root absorbed before its challenge. Folding stops when the degree
/// bound is 2^`log_final_poly_len`; the final polynomial's coefficients are absorbed last.
///
/// # Errors
/// [`FriError::DegreeTooHigh`] when the input is not of degree < N/2^`log_blowup` (the
/// statement was false), or the error `commit_layer` returns.
///
/// # Panics
/// If `evals.len()` is not a power of two at least 2^(`log_blowup` + `log_final_poly_len`).
pub fn commit<E: From<FriError>>(
    evals: Vec<Ext3>,
    log_blowup: usize,
    log_final_poly_len: usize,
    transcript: &mut Transcript,
    mut commit_layer: impl FnMut(&[Ext3]) -> Result<MerkleTree, E>,
) -> Result<FriCommitment, E> {
    let final_domain = 1usize << (log_blowup + log_final_poly_len);
    assert!(
        evals.len().is_power_of_two() && evals.len() >= final_domain,
        "fri input of {} values is too small",
        evals.len()
    );
    let folds = (evals.len() / final_domain).trailing_zeros();
    let mut shift = LdePlan::SHIFT;
    let mut inv_two_x = inverse_twice_points(evals.len());
    let mut evals = evals;
    let mut layers = Vec::new();
    for round in 0..folds {
        // Round 0 folds the input, which is not committed; later rounds commit first.
        let tree = if round == 0 {
            None
        } else {
            let tree = commit_layer(&evals)?;
            transcript.absorb("fri-layer-root", &tree.root());
            Some(tree)
        };
        let beta = transcript.challenge_ext("fri-fold");
        let half = evals.len() / 2;
        let (lo, hi) = evals.split_at(half);
        let folded = lo
            .par_iter()
            .zip(hi)
            .zip(&inv_two_x)
            .map(|((&l, &h), &inv)| fold_pair(l, h, beta, inv))
            .collect();
        // The next layer's points are the squares: 1/(2x²) = 2·(1/(2x))².
        inv_two_x = inv_two_x[..half / 2]
            .par_iter()
            .map(|&inv| {
                let sq = inv * inv;
                sq + sq
            })
            .collect();
        if let Some(tree) = tree {
            layers.push(Layer { evals, tree });
        }
        evals = folded;
        shift = shift.square();
    }
    let mut coeffs = interpolate_coset(&evals, shift);
    let final_len = 1usize << log_final_poly_len;
    if coeffs[final_len..].iter().any(|&c| c != Ext3::ZERO) {
        return Err(FriError::DegreeTooHigh { bound: final_len }.into());
    }
    coeffs.truncate(final_len);
    transcript.absorb_ext("fri-final-poly", &coeffs);
    Ok(FriCommitment {
        layers,
        final_poly: coeffs,
    })
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
    /// The committed layer roots, in order (layers 1, 2, …; the input is not committed).
    pub fn layer_roots(&self) -> Vec<Digest> {
        self.layers.iter().map(|l| l.tree.root()).collect()
    }

    /// The final polynomial's coefficients.
    pub fn final_poly(&self) -> &[Ext3] {
        &self.final_poly
    }

    /// The openings a verifier needs to follow query `pair` (the pair of input positions
    /// `pair` and `pair` + N/2, which folds to position `pair` of layer 1).
    pub fn open(&self, pair: usize) -> Vec<FriLayerProof> {
        let mut index = pair;
        self.layers
            .iter()
            .map(|layer| {
                let half = layer.evals.len() / 2;
                let leaf = index % half;
                let sibling = if index < half {
                    layer.evals[leaf + half]
                } else {
                    layer.evals[leaf]
                };
                index = leaf;
                FriLayerProof {
                    sibling,
                    path: layer.tree.open(leaf),
                }
            })
            .collect()
    }
}
