//! One segment proven on the device: every step of [`SegmentProver`] as launches on the
//! data the device holds, in the backend's [`Workspace`]. The trace goes up once; what comes
//! down is what the proof or the transcript needs: roots, the out-of-domain sums, the last
//! FRI layer, the grinding nonce, and the opened rows, values and nodes.

use std::sync::MutexGuard;

use ballast_backend::{
    BackendError, CompositionInput, DeepCoefficients, Geometry, OodValues, Openings, Phase,
    PhaseTimes, SegmentProver,
};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_fri::{FriLayerOpening, FriLayers, QueryPlan};
use ballast_merkle::Digest;
use ballast_ntt::LdePlan;
use ballast_transcript::{Transcript, WorkState};

use crate::CudaError;
use crate::backend::TraceSlot;
use crate::kernels::{Arg, Grid, Kernel, Launcher, Queue};
use crate::lde::{self, Source};
use crate::merkle::{self, DIGEST_WORDS, digest_of, tree_digests};
use crate::workspace::Workspace;

/// Threads per block of the column sums at most (a multiple of a warp).
const SUM_THREADS: u32 = 256;

/// One FRI layer committed on the device.
#[derive(Clone, Copy)]
struct Layer {
    /// Word offset in `layers`.
    at: usize,
    log_len: usize,
    log_arity: usize,
    /// Digest offset in `layer_trees`.
    tree_at: usize,
}

/// One segment being proven on the device.
pub(crate) struct DeviceSegment<'a, L: Launcher> {
    pub(crate) launcher: &'a L,
    pub(crate) ws: MutexGuard<'a, Option<Workspace<L::Buffer>>>,
    /// The trace as the host holds it (row blocks), on the device.
    trace: MutexGuard<'a, TraceSlot<L>>,
    /// The host's trace: what `trace()` returns if the proof fails.
    pub(crate) table: &'a RowBlocks,
    pub(crate) geometry: Geometry,
    layers: Vec<Layer>,
    /// Where the next layer goes in `layers` and `layer_trees`.
    next_layer_at: usize,
    next_tree_at: usize,
    /// The current layer's log2 length and the shift of its domain.
    current_log_len: usize,
    current_shift: Felt,
}

/// A device failure as the protocol sees it.
pub(crate) fn backend_error<L: Launcher>(err: CudaError) -> BackendError {
    BackendError {
        backend: L::NAME,
        message: err.to_string(),
    }
}

/// Times `f`'s launches with marks before and after, adding the time to `phase`.
fn timed<L: Launcher, T>(
    launcher: &L,
    times: &mut PhaseTimes,
    phase: Phase,
    f: impl FnOnce() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    let start = launcher.mark()?;
    let out = f()?;
    let end = launcher.mark()?;
    times.add(phase, launcher.elapsed(&start, &end)?);
    Ok(out)
}

impl<'a, L: Launcher> DeviceSegment<'a, L> {
    /// Starts a segment whose trace is on the device in `trace` (and on the host in
    /// `table`).
    pub(crate) fn new(
        launcher: &'a L,
        ws: MutexGuard<'a, Option<Workspace<L::Buffer>>>,
        trace: MutexGuard<'a, TraceSlot<L>>,
        table: &'a RowBlocks,
        geometry: Geometry,
    ) -> Self {
        Self {
            launcher,
            ws,
            trace,
            table,
            geometry,
            layers: Vec::new(),
            next_layer_at: 0,
            next_tree_at: 0,
            current_log_len: geometry.log_lde(),
            current_shift: LdePlan::SHIFT,
        }
    }

    fn ws(&self) -> &Workspace<L::Buffer> {
        self.ws
            .as_ref()
            .expect("the backend sets the workspace before a segment begins")
    }

    fn ws_mut(&mut self) -> &mut Workspace<L::Buffer> {
        self.ws
            .as_mut()
            .expect("the backend sets the workspace before a segment begins")
    }

    fn commit_trace_on_device(&mut self, times: &mut PhaseTimes) -> Result<Digest, CudaError> {
        let (launcher, g) = (self.launcher, self.geometry);
        let ws = self.ws();
        let trace = self
            .trace
            .buffer
            .as_ref()
            .expect("the backend fills the slot");
        timed(launcher, times, Phase::Lde, || {
            lde::inverse(
                launcher,
                &ws.tables,
                Source::RowBlocks(trace),
                &ws.raw,
                g.width,
                g.log_rows,
            )?;
            lde::extend(launcher, &ws.tables, &ws.raw, &ws.scratch, &ws.lde, g.width)
        })?;
        timed(launcher, times, Phase::Tree, || {
            merkle::commit_rows(
                launcher,
                ws.tree_hash(),
                &ws.lde,
                g.width,
                g.log_lde(),
                &ws.trace_tree,
            )
        })
    }

    fn commit_quotient_on_device(
        &mut self,
        input: &CompositionInput<'_>,
        times: &mut PhaseTimes,
    ) -> Result<Digest, CudaError> {
        let (launcher, g) = (self.launcher, self.geometry);
        let log_q = g.log_quotient();
        let q = 1u64 << log_q;
        // The per-segment inputs: periodic columns (concatenated, with each one's offset
        // and length), public inputs, α's powers.
        let mut periodic = Vec::new();
        let mut periodic_at = Vec::with_capacity(2 * input.periodic.len());
        for column in input.periodic {
            periodic_at.extend([periodic.len() as u64, column.len() as u64]);
            periodic.extend(column.iter().map(|v| v.as_u64()));
        }
        let public: Vec<u64> = input.public_inputs.iter().map(|v| v.as_u64()).collect();
        let coefficients = ext_words(input.coefficients);
        let ws = self.ws_mut();
        ws.inputs.periodic.upload(launcher, &periodic)?;
        ws.inputs.periodic_at.upload(launcher, &periodic_at)?;
        ws.inputs.public_inputs.upload(launcher, &public)?;
        ws.inputs.coefficients.upload(launcher, &coefficients)?;
        let chunk_scales = chunk_scales(g);
        launcher.upload(&chunk_scales, &ws.chunk_scales, 0)?;
        let ws = self.ws();
        timed(launcher, times, Phase::Quotient, || {
            let threads = ws.composition_threads;
            launcher.launch(
                Kernel::Composition,
                Grid::items(threads)?,
                &[
                    Arg::Buffer(&ws.program),
                    Arg::Word(ws.program_len as u64),
                    Arg::Buffer(&ws.lde),
                    Arg::Word(g.log_lde() as u64),
                    Arg::Buffer(&ws.inputs.periodic.buffer),
                    Arg::Buffer(&ws.inputs.periodic_at.buffer),
                    Arg::Buffer(&ws.inputs.public_inputs.buffer),
                    Arg::Buffer(&ws.constants),
                    Arg::Buffer(&ws.inputs.coefficients.buffer),
                    Arg::Buffer(&ws.registers),
                    Arg::Buffer(&ws.quotient_values),
                    Arg::Word(q),
                    Arg::Word(g.log_rows as u64),
                    Arg::Word(g.log_blowup as u64),
                    Arg::Word(g.log_quotient_chunks as u64),
                    Arg::Word(LdePlan::SHIFT.as_u64()),
                    Arg::Word(Felt::two_adic_root(log_q).as_u64()),
                    Arg::Word(Felt::two_adic_root(g.log_rows).inverse().as_u64()),
                ],
            )?;
            // Split into chunks (ntt's split_into_chunks): the inverse transform of each
            // coordinate column, then each chunk's raw form.
            lde::inverse(
                launcher,
                &ws.tables,
                Source::Columns(&ws.quotient_values),
                &ws.quotient_values,
                3,
                log_q,
            )?;
            let count = (g.quotient_width() as u64) << g.log_rows;
            launcher.launch(
                Kernel::SplitChunks,
                Grid::items(count)?,
                &[
                    Arg::Buffer(&ws.quotient_values),
                    Arg::Buffer(&ws.raw),
                    Arg::Buffer(&ws.chunk_scales),
                    Arg::Word(count),
                    Arg::Word(g.log_rows as u64),
                    Arg::Word(g.log_quotient_chunks as u64),
                    Arg::Word(LdePlan::SHIFT.inverse().as_u64()),
                ],
            )
        })?;
        timed(launcher, times, Phase::Lde, || {
            lde::extend(
                launcher,
                &ws.tables,
                &ws.raw,
                &ws.scratch,
                &ws.quotient_lde,
                g.quotient_width(),
            )
        })?;
        timed(launcher, times, Phase::Tree, || {
            merkle::commit_rows(
                launcher,
                ws.tree_hash(),
                &ws.quotient_lde,
                g.quotient_width(),
                g.log_lde(),
                &ws.quotient_tree,
            )
        })
    }

    fn out_of_domain_on_device(
        &mut self,
        z: Ext3,
        times: &mut PhaseTimes,
    ) -> Result<OodValues, CudaError> {
        let (launcher, g) = (self.launcher, self.geometry);
        let ws = self.ws();
        let (n, w, cq) = (1u64 << g.log_rows, g.width, g.quotient_width());
        let z_coset = z * Ext3::from(LdePlan::SHIFT.inverse());
        // A block per column; a thread per row of the column up to SUM_THREADS, in warps.
        let threads = (n.next_multiple_of(32)).min(u64::from(SUM_THREADS)) as u32;
        let column_sums =
            |columns: &L::Buffer, rows: u64, step: u64, count: usize, shifted: bool| {
                launcher.launch(
                    Kernel::ColumnSums,
                    Grid::blocks(count as u64, threads, 3 * threads / 32)?,
                    &[
                        Arg::Buffer(columns),
                        Arg::Word(rows),
                        Arg::Word(step),
                        Arg::Buffer(&ws.weights),
                        Arg::Word(n),
                        Arg::Word(u64::from(shifted)),
                        Arg::Buffer(&ws.sums),
                    ],
                )
            };
        let mut trace_sums = vec![0u64; 6 * w];
        let mut quotient_sums = vec![0u64; 3 * cq];
        timed(launcher, times, Phase::OutOfDomain, || {
            // The trace at z and zω: barycentric sums over its rows on g·H (every B-th LDE row).
            let [z0, z1, z2] = z_coset.coeffs().map(Felt::as_u64);
            launcher.launch(
                Kernel::OodWeights,
                Grid::items(n)?,
                &[
                    Arg::Buffer(&ws.weights),
                    Arg::Word(n),
                    Arg::Word(Felt::two_adic_root(g.log_rows).as_u64()),
                    Arg::Word(z0),
                    Arg::Word(z1),
                    Arg::Word(z2),
                ],
            )?;
            column_sums(&ws.lde, 1 << g.log_lde(), 1 << g.log_blowup, w, true)?;
            launcher.download(&ws.sums, 0, &mut trace_sums)?;
            // The quotient's chunks at z, from their raw form: (1/n)·Σ_q raw[q]·z^br(q).
            let [z0, z1, z2] = z.coeffs().map(Felt::as_u64);
            launcher.launch(
                Kernel::RawPowers,
                Grid::items(n)?,
                &[
                    Arg::Buffer(&ws.weights),
                    Arg::Word(n),
                    Arg::Word(g.log_rows as u64),
                    Arg::Word(Felt::new(n).inverse().as_u64()),
                    Arg::Word(z0),
                    Arg::Word(z1),
                    Arg::Word(z2),
                ],
            )?;
            column_sums(&ws.raw, n, 1, cq, false)?;
            launcher.download(&ws.sums, 0, &mut quotient_sums)
        })?;
        // The barycentric factor (z'^n − 1)/n, as ood.rs's trace_at applies it.
        let factor = (z_coset.pow(n) - Ext3::ONE) * Ext3::from(Felt::new(n).inverse());
        let ext = |words: &[u64]| -> Result<Vec<Ext3>, CudaError> { ext_values(words) };
        let trace = ext(&trace_sums)?;
        let (at_z, at_zw) = trace.split_at(w);
        Ok(OodValues {
            trace_z: at_z.iter().map(|&s| s * factor).collect(),
            trace_zw: at_zw.iter().map(|&s| s * factor).collect(),
            quotient_z: ext(&quotient_sums)?,
        })
    }

    fn deep_on_device(
        &mut self,
        d: &DeepCoefficients,
        times: &mut PhaseTimes,
    ) -> Result<(), CudaError> {
        let (launcher, g) = (self.launcher, self.geometry);
        let ws = self.ws();
        let mut coefficients = ext_words(&d.trace);
        coefficients.extend(ext_words(&d.quotient));
        launcher.upload(&coefficients, &ws.deep_coefficients, 0)?;
        let constants = ext_words(&[d.at_z, d.at_zw, d.z, d.zw, d.next_row]);
        launcher.upload(&constants, &ws.deep_constants, 0)?;
        let count = 1u64 << g.log_lde();
        timed(launcher, times, Phase::Deep, || {
            launcher.launch(
                Kernel::DeepFunction,
                Grid::items(count)?,
                &[
                    Arg::Buffer(&ws.lde),
                    Arg::Word(g.width as u64),
                    Arg::Buffer(&ws.quotient_lde),
                    Arg::Word(g.quotient_width() as u64),
                    Arg::Buffer(&ws.deep_coefficients),
                    Arg::At(&ws.deep_coefficients, 3 * g.width),
                    Arg::Buffer(&ws.deep_constants),
                    Arg::Buffer(&ws.layers),
                    Arg::Word(count),
                    Arg::Word(LdePlan::SHIFT.as_u64()),
                    Arg::Word(Felt::two_adic_root(g.log_lde()).as_u64()),
                ],
            )
        })?;
        self.layers.clear();
        self.next_layer_at = 0;
        self.next_tree_at = 0;
        self.current_log_len = g.log_lde();
        self.current_shift = LdePlan::SHIFT;
        Ok(())
    }

    fn grind_on_device(&mut self, transcript: &Transcript, bits: u32) -> Result<u64, CudaError> {
        let launcher = self.launcher;
        let ws = self.ws();
        let (kernel, words, round_constants) = match transcript.work_state() {
            WorkState::Keccak(state) => (
                Kernel::Grind,
                state
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect::<Vec<u64>>(),
                None,
            ),
            WorkState::Poseidon2 { cells, next } => {
                let rc = ws.round_constants.as_ref().ok_or_else(|| {
                    CudaError::Input("a Poseidon2 transcript for a Keccak-256 segment".into())
                })?;
                let mut words: Vec<u64> = cells.iter().map(|c| c.as_u64()).collect();
                words.push(next as u64);
                (Kernel::GrindPoseidon2, words, Some(rc))
            }
        };
        launcher.upload(&words, &ws.grind_state, 0)?;
        let batch = launcher.grind_batch();
        let mut start = 0u64;
        loop {
            launcher.launch(
                Kernel::FillWords,
                Grid::items(1)?,
                &[
                    Arg::Buffer(&ws.grind_found),
                    Arg::Word(1),
                    Arg::Word(u64::MAX),
                ],
            )?;
            // The state, Poseidon2's round constants, the range and bits, the result.
            let mut args = vec![Arg::Buffer(&ws.grind_state)];
            args.extend(round_constants.map(Arg::Buffer));
            args.extend([start, batch, u64::from(bits)].map(Arg::Word));
            args.push(Arg::Buffer(&ws.grind_found));
            launcher.launch(kernel, Grid::items(batch)?, &args)?;
            let mut found = [0u64];
            launcher.download(&ws.grind_found, 0, &mut found)?;
            if found[0] != u64::MAX {
                return Ok(found[0]);
            }
            start = start.checked_add(batch).ok_or_else(|| {
                CudaError::BadOutput(format!("no nonce of {bits} grinding bits in 2^64 tries"))
            })?;
        }
    }

    /// Gathers `count` items of `words` words each at `indices` (in items) of `src`.
    fn gather(
        &mut self,
        src: impl Fn(&Workspace<L::Buffer>) -> &L::Buffer,
        indices: &[u64],
        words: usize,
    ) -> Result<Vec<u64>, CudaError> {
        let launcher = self.launcher;
        let count = indices.len() * words;
        let mut out = vec![0u64; count];
        if count == 0 {
            return Ok(out);
        }
        self.grow_gather(indices.len(), count)?;
        let ws = self.ws();
        launcher.upload(indices, &ws.indices, 0)?;
        launcher.launch(
            Kernel::GatherItems,
            Grid::items(count as u64)?,
            &[
                Arg::Buffer(src(ws)),
                Arg::Buffer(&ws.indices),
                Arg::Word(words as u64),
                Arg::Word(count as u64),
                Arg::Buffer(&ws.gathered),
            ],
        )?;
        launcher.download(&ws.gathered, 0, &mut out)?;
        Ok(out)
    }

    /// Rows `positions` of a column-major table of `width` columns × the LDE's rows.
    fn gather_rows(
        &mut self,
        table: impl Fn(&Workspace<L::Buffer>) -> &L::Buffer,
        width: usize,
        positions: &[u64],
    ) -> Result<Vec<Felt>, CudaError> {
        let launcher = self.launcher;
        let count = positions.len() * width;
        self.grow_gather(positions.len(), count)?;
        let ws = self.ws();
        launcher.upload(positions, &ws.indices, 0)?;
        launcher.launch(
            Kernel::GatherRows,
            Grid::items(count as u64)?,
            &[
                Arg::Buffer(table(ws)),
                Arg::Word(1 << self.geometry.log_lde()),
                Arg::Word(width as u64),
                Arg::Buffer(&ws.indices),
                Arg::Word(count as u64),
                Arg::Buffer(&ws.gathered),
            ],
        )?;
        let mut out = vec![0u64; count];
        launcher.download(&ws.gathered, 0, &mut out)?;
        felts(&out)
    }

    /// Makes room for `indices` indices and `words` gathered words.
    fn grow_gather(&mut self, indices: usize, words: usize) -> Result<(), CudaError> {
        let launcher = self.launcher;
        let ws = self.ws_mut();
        if indices > L::buffer_len(&ws.indices) {
            ws.indices = launcher.alloc(indices)?;
        }
        if words > L::buffer_len(&ws.gathered) {
            ws.gathered = launcher.alloc(words)?;
        }
        Ok(())
    }

    fn open_on_device(
        &mut self,
        positions: &[usize],
        plan: &QueryPlan,
    ) -> Result<Openings, CudaError> {
        let g = self.geometry;
        let at: Vec<u64> = positions.iter().map(|&p| p as u64).collect();
        let trace_rows = self.gather_rows(|ws| &ws.lde, g.width, &at)?;
        let quotient_rows = self.gather_rows(|ws| &ws.quotient_lde, g.quotient_width(), &at)?;
        let nodes = merkle::opening_nodes(g.log_lde(), positions, 0);
        let trace_nodes = digests(&self.gather(|ws| &ws.trace_tree, &nodes, DIGEST_WORDS)?);
        let quotient_nodes = digests(&self.gather(|ws| &ws.quotient_tree, &nodes, DIGEST_WORDS)?);
        if plan.layers().len() != self.layers.len() {
            return Err(CudaError::Input(format!(
                "a query plan of {} layers for {} committed",
                plan.layers().len(),
                self.layers.len()
            )));
        }
        let mut fri = Vec::with_capacity(plan.layers().len());
        for (layer, planned) in self.layers.clone().into_iter().zip(plan.layers()) {
            let stride = 1usize << (layer.log_len - layer.log_arity);
            let values: Vec<u64> = planned
                .unknown_slots()
                .map(|(leaf, slot)| (layer.at / 3 + leaf + slot * stride) as u64)
                .collect();
            let nodes = merkle::opening_nodes(
                layer.log_len - layer.log_arity,
                planned.leaves(),
                layer.tree_at,
            );
            fri.push(FriLayerOpening {
                values: ext_values(&self.gather(|ws| &ws.layers, &values, 3)?)?,
                nodes: digests(&self.gather(|ws| &ws.layer_trees, &nodes, DIGEST_WORDS)?),
            });
        }
        Ok(Openings {
            trace_rows,
            trace_nodes,
            quotient_rows,
            quotient_nodes,
            fri,
        })
    }
}

/// `2^-c·g^-(j·n)` for each chunk j: ntt's split_into_chunks's chunk scales.
fn chunk_scales(g: Geometry) -> Vec<u64> {
    let shift_inv = LdePlan::SHIFT.inverse();
    let scale = Felt::new(1 << g.log_quotient_chunks).inverse();
    (0..1u64 << g.log_quotient_chunks)
        .map(|j| (scale * shift_inv.pow(j << g.log_rows)).as_u64())
        .collect()
}

/// Extension elements as words, three each.
fn ext_words(values: &[Ext3]) -> Vec<u64> {
    values
        .iter()
        .flat_map(|v| v.coeffs().map(Felt::as_u64))
        .collect()
}

/// Words from the device as field elements; a non-canonical word is a device fault.
fn felts(words: &[u64]) -> Result<Vec<Felt>, CudaError> {
    words
        .iter()
        .map(|&w| {
            Felt::from_canonical(w).ok_or_else(|| {
                CudaError::BadOutput(format!("the non-canonical field element {w:#x}"))
            })
        })
        .collect()
}

/// Words from the device as extension elements, three each.
fn ext_values(words: &[u64]) -> Result<Vec<Ext3>, CudaError> {
    Ok(felts(words)?
        .chunks_exact(3)
        .map(|c| Ext3::new([c[0], c[1], c[2]]))
        .collect())
}

/// Words from the device as digests, four each.
fn digests(words: &[u64]) -> Vec<Digest> {
    words.chunks_exact(DIGEST_WORDS).map(digest_of).collect()
}

impl<L: Launcher> SegmentProver for DeviceSegment<'_, L> {
    fn commit_trace(&mut self, times: &mut PhaseTimes) -> Result<Digest, BackendError> {
        self.commit_trace_on_device(times)
            .map_err(backend_error::<L>)
    }

    fn commit_quotient(
        &mut self,
        input: &CompositionInput<'_>,
        times: &mut PhaseTimes,
    ) -> Result<Digest, BackendError> {
        self.commit_quotient_on_device(input, times)
            .map_err(backend_error::<L>)
    }

    fn out_of_domain(
        &mut self,
        z: Ext3,
        times: &mut PhaseTimes,
    ) -> Result<OodValues, BackendError> {
        self.out_of_domain_on_device(z, times)
            .map_err(backend_error::<L>)
    }

    fn trace(&mut self) -> Result<RowBlocks, BackendError> {
        // The device never changes the host's trace.
        Ok(self.table.clone())
    }

    fn deep(
        &mut self,
        coefficients: &DeepCoefficients,
        times: &mut PhaseTimes,
    ) -> Result<(), BackendError> {
        self.deep_on_device(coefficients, times)
            .map_err(backend_error::<L>)
    }

    fn grind(
        &mut self,
        transcript: &Transcript,
        bits: u32,
        times: &mut PhaseTimes,
    ) -> Result<u64, BackendError> {
        let launcher = self.launcher;
        timed(launcher, times, Phase::Grind, || {
            self.grind_on_device(transcript, bits)
        })
        .map_err(backend_error::<L>)
    }

    fn open(
        &mut self,
        positions: &[usize],
        plan: &QueryPlan,
        times: &mut PhaseTimes,
    ) -> Result<Openings, BackendError> {
        let launcher = self.launcher;
        timed(launcher, times, Phase::Queries, || {
            self.open_on_device(positions, plan)
        })
        .map_err(backend_error::<L>)
    }
}

impl<L: Launcher> Drop for DeviceSegment<'_, L> {
    fn drop(&mut self) {
        // A copy of the next trace into this slot waits until the compute queue is done
        // with it. Without a ticket (a lost context), nothing will run again anyway.
        self.trace.released = self.launcher.signal(Queue::Compute).ok();
    }
}

impl<L: Launcher> FriLayers for DeviceSegment<'_, L> {
    type Error = BackendError;

    fn commit_layer(&mut self, log_arity: usize) -> Result<Digest, BackendError> {
        let launcher = self.launcher;
        let (at, tree_at, log_len) = (self.next_layer_at, self.next_tree_at, self.current_log_len);
        let ws = self.ws();
        let root = merkle::commit_layer(
            launcher,
            ws.tree_hash(),
            &ws.layers,
            at,
            log_len,
            log_arity,
            &ws.layer_trees,
            tree_at,
        )
        .map_err(backend_error::<L>)?;
        self.layers.push(Layer {
            at,
            log_len,
            log_arity,
            tree_at,
        });
        self.next_tree_at += tree_digests(log_len - log_arity);
        Ok(root)
    }

    fn fold(&mut self, beta: Ext3, log_arity: usize) -> Result<(), BackendError> {
        // `fri_fold` holds up to 8 values a coset.
        if log_arity > 3 {
            return Err(backend_error::<L>(CudaError::TooLarge {
                what: "log2 of a FRI round's arity",
                size: log_arity as u64,
                max: 3,
            }));
        }
        let launcher = self.launcher;
        let (at, log_len, shift) = (self.next_layer_at, self.current_log_len, self.current_shift);
        let count = 1u64 << (log_len - log_arity);
        let next_at = at + (3 << log_len);
        let [b0, b1, b2] = beta.coeffs().map(Felt::as_u64);
        let ws = self.ws();
        launcher
            .launch(
                Kernel::FriFold,
                Grid::items(count).map_err(backend_error::<L>)?,
                &[
                    Arg::At(&ws.layers, at),
                    Arg::At(&ws.layers, next_at),
                    Arg::Word(count),
                    Arg::Word(log_arity as u64),
                    Arg::Word(b0),
                    Arg::Word(b1),
                    Arg::Word(b2),
                    Arg::Word((shift + shift).inverse().as_u64()),
                    Arg::Word(Felt::two_adic_root(log_len).inverse().as_u64()),
                    Arg::Word(Felt::new(2).inverse().as_u64()),
                ],
            )
            .map_err(backend_error::<L>)?;
        self.next_layer_at = next_at;
        self.current_log_len = log_len - log_arity;
        self.current_shift = shift.pow(1 << log_arity);
        Ok(())
    }

    fn last_layer(&mut self) -> Result<Vec<Ext3>, BackendError> {
        let launcher = self.launcher;
        let mut words = vec![0u64; 3 << self.current_log_len];
        launcher
            .download(&self.ws().layers, self.next_layer_at, &mut words)
            .map_err(backend_error::<L>)?;
        ext_values(&words).map_err(backend_error::<L>)
    }
}
