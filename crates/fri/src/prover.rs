//! The FRI commit phase and the openings for the query phase.

use ballast_field::{Ext3, Felt};
use ballast_merkle::{Digest, MerkleHash, MerkleTree};
use ballast_ntt::{LdePlan, interpolate_coset};
use ballast_transcript::Transcript;
use rayon::prelude::*;

use crate::steps::{absorb_final_poly, round_challenge};
use crate::{FriError, FriLayerOpening, QueryPlan, fold_pair, roll_in_arities};

/// Leaves hashed per parallel task.
const LEAVES_PER_TASK: usize = 1 << 9;

/// Where a FRI prover's layers live. [`commit_phase`] drives it round by round: commit the
/// current layer, fold it with the challenge the transcript draws from that commitment, and
/// at the end hand over the last layer, which is small.
pub trait FriLayers {
    /// Why a step failed.
    type Error;

    /// Commits the current layer in cosets of 2^`log_arity` values ([`commit_layer`]'s
    /// tree) and returns the root.
    ///
    /// # Errors
    /// If the storage fails.
    fn commit_layer(&mut self, log_arity: usize) -> Result<Digest, Self::Error>;

    /// Folds the current layer `log_arity` times, with β, β², β⁴, …; when that leaves it as
    /// long as the next input, adds β^(2^`log_arity`) times that input (rolls it in): the
    /// next layer.
    ///
    /// # Errors
    /// If the storage fails.
    fn fold(&mut self, beta: Ext3, log_arity: usize) -> Result<(), Self::Error>;

    /// The last layer's values, natural order.
    ///
    /// # Errors
    /// If the storage fails.
    fn last_layer(&mut self) -> Result<Vec<Ext3>, Self::Error>;
}

/// What the commit phase sends: each round's layer root and the final polynomial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FriCommitment {
    /// The committed layers' roots, in order.
    pub layer_roots: Vec<Digest>,
    /// The final polynomial's coefficients.
    pub final_poly: Vec<Ext3>,
}

/// One committed layer of [`HostLayers`]: its values (kept for openings) and their tree.
struct Layer {
    evals: Vec<Ext3>,
    log_arity: usize,
    tree: MerkleTree,
}

/// FRI layers in this process's memory: the CPU's.
pub struct HostLayers {
    hash: MerkleHash,
    log_domain: usize,
    current: Vec<Ext3>,
    /// The inputs still to roll in, the next one last.
    roll_ins: Vec<Vec<Ext3>>,
    /// 1/(2x) for the first half of the current layer's domain; empty until the first fold.
    inv_two_x: Vec<Felt>,
    layers: Vec<Layer>,
}

impl HostLayers {
    /// Layers starting from the first of `inputs`, each input's values on its own g·H_N in
    /// natural order, tallest first; the others are rolled in as the folds reach their
    /// sizes. Trees are hashed with `hash`.
    ///
    /// # Panics
    /// If there is no input, or the inputs' lengths are not powers of two, strictly
    /// decreasing.
    pub fn new(inputs: Vec<Vec<Ext3>>, hash: MerkleHash) -> Self {
        assert!(
            inputs.iter().all(|i| i.len().is_power_of_two())
                && inputs.windows(2).all(|w| w[0].len() > w[1].len()),
            "inputs of 2^k values, tallest first"
        );
        let mut roll_ins = inputs;
        roll_ins.reverse();
        let current = roll_ins.pop().expect("at least one input");
        Self {
            hash,
            log_domain: current.len().trailing_zeros() as usize,
            current,
            roll_ins,
            inv_two_x: Vec::new(),
            layers: Vec::new(),
        }
    }

    /// The openings of every committed layer for queries at the input `positions`
    /// (`plan` places them in each layer): the values the verifier cannot fold itself, and
    /// each tree's batch opening of the queried cosets.
    ///
    /// # Panics
    /// If the plan is not for these layers.
    pub fn open(&self, plan: &QueryPlan) -> Vec<FriLayerOpening> {
        assert_eq!(
            plan.layers().len(),
            self.layers.len(),
            "a plan for these layers"
        );
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

    /// log2 of the first (tallest) input's size.
    pub fn log_domain(&self) -> usize {
        self.log_domain
    }
}

impl FriLayers for HostLayers {
    type Error = std::convert::Infallible;

    fn commit_layer(&mut self, log_arity: usize) -> Result<Digest, Self::Error> {
        let tree = commit_layer(self.hash, &self.current, log_arity);
        let root = tree.root();
        self.layers.push(Layer {
            evals: Vec::new(),
            log_arity,
            tree,
        });
        Ok(root)
    }

    fn fold(&mut self, beta: Ext3, log_arity: usize) -> Result<(), Self::Error> {
        if self.inv_two_x.is_empty() {
            self.inv_two_x = inverse_twice_points(self.current.len());
        }
        let mut beta = beta;
        let mut folded = fold_once(&self.current, beta, &self.inv_two_x);
        for _ in 1..log_arity {
            self.inv_two_x = square_points(&self.inv_two_x);
            beta = beta.square();
            folded = fold_once(&folded, beta, &self.inv_two_x);
        }
        self.inv_two_x = square_points(&self.inv_two_x);
        if self
            .roll_ins
            .last()
            .is_some_and(|i| i.len() == folded.len())
        {
            let input = self.roll_ins.pop().expect("an input of this size");
            let coefficient = beta.square();
            folded
                .par_iter_mut()
                .zip(&input)
                .for_each(|(f, &v)| *f += coefficient * v);
        }
        let layer = self
            .layers
            .last_mut()
            .expect("a layer is committed before it folds");
        layer.evals = std::mem::replace(&mut self.current, folded);
        Ok(())
    }

    fn last_layer(&mut self) -> Result<Vec<Ext3>, Self::Error> {
        assert!(
            self.roll_ins.is_empty(),
            "an input was never rolled in: its size is no round boundary of the schedule"
        );
        Ok(self.current.clone())
    }
}

/// Commits a layer here, in this process (a backend may commit it elsewhere, to the same
/// tree), with `hash`: with a = 2^`log_arity` and s = len/a, leaf r is
/// [`layer_leaf`](crate::layer_leaf) of the values at positions r, r + s, …, r + (a − 1)·s.
///
/// # Panics
/// If `evals.len()` is not a power of two at least 2^`log_arity`.
pub fn commit_layer(hash: MerkleHash, evals: &[Ext3], log_arity: usize) -> MerkleTree {
    assert!(
        evals.len().is_power_of_two() && evals.len() >> log_arity >= 1,
        "a layer of {} values cannot be cut into cosets of 2^{log_arity}",
        evals.len()
    );
    let stride = evals.len() >> log_arity;
    let leaf_len = (1 << log_arity) * Ext3::DEGREE;
    let mut leaves = vec![[0u8; 32]; stride];
    leaves
        .par_chunks_mut(LEAVES_PER_TASK)
        .enumerate()
        .for_each(|(task, leaves)| {
            // The leaves' elements (`layer_leaf`'s), then all their digests at once.
            let first = task * LEAVES_PER_TASK;
            let mut elements = Vec::with_capacity(leaves.len() * leaf_len);
            for r in first..first + leaves.len() {
                for i in 0..1 << log_arity {
                    elements.extend_from_slice(&evals[r + i * stride].coeffs());
                }
            }
            hash.rows(&elements, leaf_len, leaves);
        });
    MerkleTree::from_leaves(hash, leaves)
}

/// Runs the commit phase on `layers`, whose inputs have 2^`log_domains[i]` values (tallest
/// first, strictly decreasing): each a function's values on g·H_N in natural order.
///
/// Each input's N/2^`log_blowup` − 2^`log_final_poly_len` degree gap is closed by binary
/// folds, grouped into rounds that stop at every input's size ([`roll_in_arities`]). Each
/// round commits its layer (leaf r = the coset of positions r + i·len/a, see
/// [`commit_layer`]), absorbs the root, draws β, folds a times over with β, β², β⁴, … and
/// rolls in an input of the folded size with the next power, β^a. The final polynomial's
/// coefficients, interpolated from the last layer, are absorbed last.
///
/// # Errors
/// [`FriError::DegreeTooHigh`] when an input is not of degree < N/2^`log_blowup` (the
/// statement was false), or the error a layer step returns.
///
/// # Panics
/// If the sizes do not decrease to at least 2^(`log_blowup` + `log_final_poly_len`), or
/// the last layer is not as long as the rounds leave it.
pub fn commit_phase<L, E>(
    layers: &mut L,
    log_domains: &[usize],
    log_blowup: usize,
    log_final_poly_len: usize,
    transcript: &mut Transcript,
) -> Result<FriCommitment, E>
where
    L: FriLayers + ?Sized,
    E: From<FriError> + From<L::Error>,
{
    let log_final_domain = log_blowup + log_final_poly_len;
    let mut layer_roots = Vec::new();
    for log_arity in roll_in_arities(log_domains, log_final_domain) {
        let root = layers.commit_layer(log_arity)?;
        let beta = round_challenge(transcript, &root);
        layers.fold(beta, log_arity)?;
        layer_roots.push(root);
    }
    let evals = layers.last_layer()?;
    assert_eq!(
        evals.len(),
        1 << log_final_domain,
        "the last layer's length"
    );
    let shift = LdePlan::SHIFT.pow(1 << (log_domains[0] - log_final_domain));
    let mut coeffs = interpolate_coset(&evals, shift);
    let final_len = 1usize << log_final_poly_len;
    if coeffs[final_len..].iter().any(|&c| c != Ext3::ZERO) {
        return Err(FriError::DegreeTooHigh { bound: final_len }.into());
    }
    coeffs.truncate(final_len);
    absorb_final_poly(transcript, &coeffs);
    Ok(FriCommitment {
        layer_roots,
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
