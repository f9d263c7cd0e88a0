//! Where the heavy, data-parallel stages run: low-degree extension and Merkle hashing.
//!
//! A [`Backend`] extends a table to the LDE domain in place and commits its rows, and
//! commits FRI layers. Everything else (constraints, DEEP, folding, the transcript) runs on
//! the CPU.
//! Every backend must produce the same values and trees as [`CpuBackend`], bit for bit:
//! proof bytes never depend on where they were computed.

use std::sync::{Arc, Mutex};

use ballast_field::{Ext3, RowBlocks};
use ballast_fri::commit_layer;
use ballast_merkle::MerkleTree;
use ballast_ntt::{ColumnForm, LdePlan};

use crate::{BackendError, Phase, PhaseTimes};

/// The stages a device may accelerate.
///
/// The prover owns the tables: one allocation holds a segment's trace and then, extended in
/// place, its low-degree extension, which the constraint evaluation, the DEEP composition
/// and the openings read on the host. A backend extends and commits that allocation; a
/// device backend uploads the columns, extends and hashes them on the device, and writes
/// the extension back into the same allocation.
pub trait Backend: Sync {
    /// A short name for reports ("cpu", "cuda").
    fn name(&self) -> &'static str;

    /// Extends `table` in place by 2^`log_blowup` and commits its rows: on entry its 2^k
    /// rows hold each column's polynomial in `form` (evaluations on H for a trace); on
    /// return it holds the evaluations on g·H' in natural order ([`LdePlan`]), and the tree
    /// whose leaf j is row j ([`MerkleTree::commit_rows`]) is returned. The two stages'
    /// times go to [`Phase::Lde`] and [`Phase::Tree`].
    ///
    /// # Errors
    /// If the device fails.
    fn extend_and_commit(
        &self,
        table: &mut RowBlocks,
        form: ColumnForm,
        log_blowup: usize,
        times: &mut PhaseTimes,
    ) -> Result<MerkleTree, BackendError>;

    /// Commits a FRI layer in cosets of 2^`log_arity` values
    /// ([`ballast_fri::commit_layer`]).
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

    fn extend_and_commit(
        &self,
        table: &mut RowBlocks,
        form: ColumnForm,
        log_blowup: usize,
        times: &mut PhaseTimes,
    ) -> Result<MerkleTree, BackendError> {
        times.time(Phase::Lde, || {
            let plan = self.plan(table.height().trailing_zeros() as usize, log_blowup);
            plan.extend_in_place(table, form);
        });
        Ok(times.time(Phase::Tree, || MerkleTree::commit_rows(table)))
    }

    fn commit_fri_layer(
        &self,
        evals: &[Ext3],
        log_arity: usize,
    ) -> Result<MerkleTree, BackendError> {
        Ok(commit_layer(evals, log_arity))
    }
}
