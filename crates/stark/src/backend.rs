//! Where the heavy, data-parallel stages run: low-degree extension and Merkle hashing.
//!
//! A [`Backend`] extends columns to the LDE domain and commits their rows, and commits FRI
//! layers. Everything else (constraints, DEEP, folding, the transcript) runs on the CPU.
//! Every backend must produce the same values and trees as [`CpuBackend`], bit for bit:
//! proof bytes never depend on where they were computed.

use std::sync::{Arc, Mutex};

use ballast_field::{ColMatrix, Ext3};
use ballast_fri::commit_layer_cpu;
use ballast_merkle::MerkleTree;
use ballast_ntt::LdePlan;

use crate::BackendError;

/// Columns extended to the LDE domain (natural order on g·H') and the tree over its rows.
pub struct Committed {
    /// The extended columns.
    pub lde: ColMatrix,
    /// The Merkle tree whose leaf j is row j of `lde` ([`MerkleTree::commit_rows`]).
    pub tree: MerkleTree,
}

/// The stages a device may accelerate.
pub trait Backend: Sync {
    /// A short name for reports ("cpu", "cuda").
    fn name(&self) -> &'static str;

    /// Extends `trace` (evaluations on H, natural order) by 2^`log_blowup` and commits
    /// its rows.
    ///
    /// # Errors
    /// If the device fails.
    fn commit_trace(&self, trace: &ColMatrix, log_blowup: usize)
    -> Result<Committed, BackendError>;

    /// Extends columns given in raw form (n × coefficients, bit-reversed; see
    /// [`ballast_ntt::split_into_chunks`]) and commits their rows.
    ///
    /// # Errors
    /// If the device fails.
    fn commit_raw(&self, raw: &ColMatrix, log_blowup: usize) -> Result<Committed, BackendError>;

    /// Commits a FRI layer in cosets of 2^`log_arity` values
    /// ([`ballast_fri::commit_layer_cpu`]).
    ///
    /// # Errors
    /// If the device fails.
    fn commit_fri_layer(
        &self,
        evals: &[Ext3],
        log_arity: usize,
    ) -> Result<MerkleTree, BackendError>;
}

/// The reference backend: rayon on the host.
#[derive(Default)]
pub struct CpuBackend {
    /// The last plan built; segments of one statement share their shape.
    plan: Mutex<Option<Arc<LdePlan>>>,
}

impl CpuBackend {
    /// A CPU backend.
    pub fn new() -> Self {
        Self::default()
    }

    fn plan(&self, log_n: usize, log_blowup: usize) -> Arc<LdePlan> {
        let mut cached = self.plan.lock().unwrap_or_else(|e| e.into_inner());
        match &*cached {
            Some(p) if p.log_n() == log_n && p.log_blowup() == log_blowup => Arc::clone(p),
            _ => {
                let p = Arc::new(LdePlan::new(log_n, log_blowup));
                *cached = Some(Arc::clone(&p));
                p
            }
        }
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn commit_trace(
        &self,
        trace: &ColMatrix,
        log_blowup: usize,
    ) -> Result<Committed, BackendError> {
        let plan = self.plan(trace.height().trailing_zeros() as usize, log_blowup);
        let lde = plan.extend(trace);
        let tree = MerkleTree::commit_rows(&lde);
        Ok(Committed { lde, tree })
    }

    fn commit_raw(&self, raw: &ColMatrix, log_blowup: usize) -> Result<Committed, BackendError> {
        let plan = self.plan(raw.height().trailing_zeros() as usize, log_blowup);
        let lde = plan.extend_raw(raw);
        let tree = MerkleTree::commit_rows(&lde);
        Ok(Committed { lde, tree })
    }

    fn commit_fri_layer(
        &self,
        evals: &[Ext3],
        log_arity: usize,
    ) -> Result<MerkleTree, BackendError> {
        Ok(commit_layer_cpu(evals, log_arity))
    }
}
