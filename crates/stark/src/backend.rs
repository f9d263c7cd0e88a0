//! The CPU backend: every step of a segment on the host, with rayon and the SIMD path the
//! CPU has. The trace is extended in place in the prover's table, so the host holds the
//! LDE once; the quotient's chunks, the trees and the FRI layers live beside it.
//!
//! Every backend must produce the same values and trees as this one, bit for bit: proof
//! bytes never depend on where they were computed.

use std::sync::{Arc, Mutex};

use ballast_backend::{
    Backend, BackendError, CompositionInput, DeepCoefficients, Geometry, OodValues, Openings,
    Phase, PhaseTimes, SegmentAir, SegmentProver, Staged,
};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_fri::{FriLayers, HostLayers, QueryPlan};
use ballast_merkle::{Digest, MerkleTree};
use ballast_ntt::{ColumnForm, LdePlan, split_into_chunks};
use ballast_transcript::Transcript;

use crate::deep::evaluate_all;
use crate::ood::{raw_at, trace_at};

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

    fn trace_table(&self, width: usize, log_rows: usize, log_blowup: usize) -> RowBlocks {
        // Room for the extension: the trace is extended in place.
        let rows = 1usize << log_rows;
        RowBlocks::zeroed(width, rows, rows << log_blowup)
    }

    fn begin<'a>(
        &'a self,
        table: &'a mut RowBlocks,
        air: &'a dyn SegmentAir,
        geometry: Geometry,
        _staged: Option<Staged>,
    ) -> Result<Box<dyn SegmentProver + 'a>, BackendError> {
        geometry
            .check_trace(table)
            .map_err(|message| BackendError {
                backend: self.name(),
                message,
            })?;
        Ok(Box::new(CpuSegment {
            plan: self.plan(geometry.log_rows, geometry.log_blowup),
            table,
            air,
            geometry,
            trace_tree: None,
            quotient: None,
            fri: None,
        }))
    }
}

/// One segment on the host. The steps fill the fields in protocol order.
struct CpuSegment<'a> {
    plan: Arc<LdePlan>,
    /// The trace, and after step 1 its LDE.
    table: &'a mut RowBlocks,
    air: &'a dyn SegmentAir,
    geometry: Geometry,
    trace_tree: Option<MerkleTree>,
    quotient: Option<Quotient>,
    fri: Option<HostLayers>,
}

/// The quotient's chunks: raw (for their values at z, until step 3), extended, and
/// committed.
struct Quotient {
    raw: Vec<Vec<Felt>>,
    lde: RowBlocks,
    tree: MerkleTree,
}

/// What a step needs from an earlier one: its absence means the protocol skipped a step.
fn earlier<'s, T>(step: &'s Option<T>, what: &str) -> &'s T {
    step.as_ref()
        .unwrap_or_else(|| panic!("{what} is made by an earlier step"))
}

impl SegmentProver for CpuSegment<'_> {
    fn commit_trace(&mut self, times: &mut PhaseTimes) -> Result<Digest, BackendError> {
        times.time(Phase::Lde, || {
            self.plan
                .extend_in_place(self.table, ColumnForm::Evaluations);
        });
        let tree = times.time(Phase::Tree, || {
            MerkleTree::commit_rows(self.geometry.hash, self.table)
        });
        let root = tree.root();
        self.trace_tree = Some(tree);
        Ok(root)
    }

    fn commit_quotient(
        &mut self,
        input: &CompositionInput<'_>,
        times: &mut PhaseTimes,
    ) -> Result<Digest, BackendError> {
        let geometry = self.geometry;
        let raw = times.time(Phase::Quotient, || {
            let evals = self.air.composition_on_host(self.table, &geometry, input);
            quotient_columns(&evals, geometry.log_rows, geometry.log_quotient_chunks)
        });
        let mut lde = RowBlocks::from_columns(&raw);
        times.time(Phase::Lde, || {
            self.plan.extend_in_place(&mut lde, ColumnForm::Raw);
        });
        let tree = times.time(Phase::Tree, || MerkleTree::commit_rows(geometry.hash, &lde));
        let root = tree.root();
        self.quotient = Some(Quotient { raw, lde, tree });
        Ok(root)
    }

    fn out_of_domain(
        &mut self,
        z: Ext3,
        times: &mut PhaseTimes,
    ) -> Result<OodValues, BackendError> {
        // The raw chunks are read here for the last time.
        let raw = std::mem::take(&mut self.quotient.as_mut().expect("the quotient").raw);
        Ok(times.time(Phase::OutOfDomain, || {
            let (trace_z, trace_zw) = trace_at(self.table, self.geometry.log_blowup, z);
            OodValues {
                trace_z,
                trace_zw,
                quotient_z: raw_at(&raw, z),
            }
        }))
    }

    fn trace(&mut self) -> Result<RowBlocks, BackendError> {
        Ok(self.plan.restrict(self.table))
    }

    fn deep(
        &mut self,
        coefficients: &DeepCoefficients,
        times: &mut PhaseTimes,
    ) -> Result<(), BackendError> {
        let quotient = earlier(&self.quotient, "the quotient");
        let f = times.time(Phase::Deep, || {
            evaluate_all(coefficients, self.table, &quotient.lde)
        });
        self.fri = Some(HostLayers::new(vec![f], self.geometry.hash));
        Ok(())
    }

    fn grind(
        &mut self,
        transcript: &Transcript,
        bits: u32,
        times: &mut PhaseTimes,
    ) -> Result<u64, BackendError> {
        Ok(times.time(Phase::Grind, || transcript.grind(bits)))
    }

    fn open(
        &mut self,
        positions: &[usize],
        plan: &QueryPlan,
        times: &mut PhaseTimes,
    ) -> Result<Openings, BackendError> {
        let trace_tree = earlier(&self.trace_tree, "the trace tree");
        let quotient = earlier(&self.quotient, "the quotient");
        let fri = earlier(&self.fri, "the FRI layers");
        let rows =
            |lde: &RowBlocks| -> Vec<Felt> { positions.iter().flat_map(|&j| lde.row(j)).collect() };
        Ok(times.time(Phase::Queries, || Openings {
            trace_rows: rows(self.table),
            trace_nodes: trace_tree.open_batch(positions),
            quotient_rows: rows(&quotient.lde),
            quotient_nodes: quotient.tree.open_batch(positions),
            fri: fri.open(plan),
        }))
    }
}

impl FriLayers for CpuSegment<'_> {
    type Error = BackendError;

    fn commit_layer(&mut self, log_arity: usize) -> Result<Digest, BackendError> {
        let fri = self
            .fri
            .as_mut()
            .expect("the DEEP step makes the first layer");
        let Ok(root) = fri.commit_layer(log_arity);
        Ok(root)
    }

    fn fold(&mut self, beta: Ext3, log_arity: usize) -> Result<(), BackendError> {
        let fri = self
            .fri
            .as_mut()
            .expect("the DEEP step makes the first layer");
        let Ok(()) = fri.fold(beta, log_arity);
        Ok(())
    }

    fn last_layer(&mut self) -> Result<Vec<Ext3>, BackendError> {
        let fri = self
            .fri
            .as_mut()
            .expect("the DEEP step makes the first layer");
        let Ok(values) = fri.last_layer();
        Ok(values)
    }
}

/// The quotient's base-coordinate chunks in raw form: column 3j + c is coordinate c of
/// chunk j.
pub(crate) fn quotient_columns(
    evals: &[Ext3],
    log_rows: usize,
    log_chunks: usize,
) -> Vec<Vec<Felt>> {
    let mut columns: Vec<Vec<Felt>> = vec![Vec::new(); Ext3::DEGREE << log_chunks];
    for coordinate in 0..Ext3::DEGREE {
        let values: Vec<Felt> = evals.iter().map(|e| e.coeffs()[coordinate]).collect();
        for (j, chunk) in split_into_chunks(&values, log_rows, log_chunks)
            .into_iter()
            .enumerate()
        {
            columns[Ext3::DEGREE * j + coordinate] = chunk;
        }
    }
    columns
}
