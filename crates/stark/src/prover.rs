//! Proving one table: trace → LDE → commit → constraints → composition → DEEP → FRI →
//! queries, the protocol's steps in order; the backend does the work of each on the data it
//! holds ([`Backend`]), the transcript stays here.

use ballast_air::{
    Air, ConstraintInfo, ConstraintProgram, ProgramError, check_trace, known_columns,
};
use ballast_backend::{Backend, CompositionInput, Geometry, SegmentAir, Staged};
use ballast_field::{Ext3, RowBlocks};
use ballast_fri::QueryPlan;
use ballast_transcript::Transcript;
use tracing::info_span;

use crate::deep::deep_coefficients;
use crate::periodic::{PeriodicPolys, periodic_at};
use crate::proof::segment_geometry;
use crate::protocol::{
    Run, absorb_pow_nonce, air_key, bind, distinct, draw_alpha, draw_gamma, draw_ood_point,
    ood_identity_holds, query_draws,
};
use crate::quotient::Composition;
use crate::{
    Phase, PhaseTimes, ProverError, QueryOpenings, SegmentProof, SegmentStatement, StarkParams,
};

/// Proves that the trace in `table` satisfies `air` with the segment's public inputs,
/// refusing a trace that does not. The backend may extend the table in place (the CPU's
/// does): on return its contents are unspecified, and its allocation can take the next
/// segment's trace.
///
/// The prover checks the identity the verifier checks at the out-of-domain point: a trace
/// that violates a constraint fails it except with probability about 2^-160, so an honest
/// trace costs no row-by-row check. When it fails, the trace is recovered from its
/// extension and checked row by row ([`check_trace`]), which names the first failure.
///
/// # Errors
/// Invalid parameters, a trace that does not satisfy the AIR (with the failing row and
/// constraint), or a backend failure.
pub fn prove<A: Air>(
    air: &A,
    table: &mut RowBlocks,
    segment: &SegmentStatement<'_>,
    params: &StarkParams,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
) -> Result<SegmentProof, ProverError> {
    prove_staged(air, table, segment, params, backend, times, None)
}

/// [`prove`] of a trace the backend already has ([`Backend::stage`]).
pub(crate) fn prove_staged<A: Air>(
    air: &A,
    table: &mut RowBlocks,
    segment: &SegmentStatement<'_>,
    params: &StarkParams,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
    staged: Option<Staged>,
) -> Result<SegmentProof, ProverError> {
    prove_with_transcript(
        air,
        table,
        segment,
        params,
        backend,
        times,
        TraceCheck::Check,
        staged,
    )
    .map(|(proof, _)| proof)
}

/// Proves without first checking the trace. For soundness tests: a trace that violates the
/// AIR yields an error or a proof the verifier rejects.
///
/// # Errors
/// As [`prove`], except that a false statement surfaces as a FRI degree error, if at all.
pub fn prove_unchecked<A: Air>(
    air: &A,
    table: &mut RowBlocks,
    segment: &SegmentStatement<'_>,
    params: &StarkParams,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
) -> Result<SegmentProof, ProverError> {
    prove_with_transcript(
        air,
        table,
        segment,
        params,
        backend,
        times,
        TraceCheck::Skip,
        None,
    )
    .map(|(proof, _)| proof)
}

/// Whether the prover checks that the trace satisfies the AIR (through the out-of-domain
/// identity, then row by row to name the failure) before it finishes the proof.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum TraceCheck {
    /// Check: [`prove`].
    Check,
    /// Do not: [`prove_unchecked`].
    Skip,
}

/// [`prove`] or [`prove_unchecked`] as `check` says, also returning the final transcript
/// (tests compare it with the verifier's).
#[allow(clippy::too_many_arguments)]
pub(crate) fn prove_with_transcript<A: Air>(
    air: &A,
    table: &mut RowBlocks,
    segment: &SegmentStatement<'_>,
    params: &StarkParams,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
    check: TraceCheck,
    staged: Option<Staged>,
) -> Result<(SegmentProof, Transcript), ProverError> {
    let _span = info_span!("prove_segment", index = segment.position.index).entered();
    let log_rows = air.log_rows();
    let info = ConstraintInfo::of(air).map_err(crate::ParamsError::from)?;
    let geometry = segment_geometry(air, &info, params)?;
    if segment.public_inputs.len() != air.num_public_inputs() {
        return Err(ballast_air::AirError::PublicInputs {
            expected: air.num_public_inputs(),
            got: segment.public_inputs.len(),
        }
        .into());
    }
    if table.width() != air.width() || table.height() != 1 << log_rows {
        return Err(ballast_air::AirError::Shape {
            width: air.width(),
            height: 1 << log_rows,
            got_width: table.width(),
            got_height: table.height(),
        }
        .into());
    }
    let periodic = PeriodicPolys::new(&known_columns(air, segment.public_inputs), log_rows);
    let constraints = AirSegment { air, info: &info };

    // 0 ----- bind the statement: version, statement, AIR key, parameters, position, inputs
    let mut transcript = bind(Run::Proof, &air_key(air, &info), segment, params);
    let mut prover = backend.begin(table, &constraints, geometry, staged)?;

    // 1 ----- extend the trace and commit it; draw α
    let trace_root = prover.commit_trace(times)?;
    // Soundness: a violated constraint vanishes from the α-combination for at most T + B
    // values of α: error ≤ (T + B)/|F| < 2^-170.
    let alpha = draw_alpha(&mut transcript, &trace_root);

    // 2 ----- evaluate the composition, split it into chunks, commit them; draw z
    let coefficients = alpha.powers(info.constraints.len());
    let quotient_root = prover.commit_quotient(
        &CompositionInput {
            coefficients: &coefficients,
            public_inputs: segment.public_inputs,
            periodic: &periodic.on_quotient_coset(geometry.log_quotient_chunks),
        },
        times,
    )?;
    // Soundness: a false out-of-domain identity holds for ≲ d·n values of z: < 2^-160.
    let z = draw_ood_point(&mut transcript, &quotient_root, log_rows, params.log_blowup);

    // 3 ----- out-of-domain evaluations; draw γ
    let ood = prover.out_of_domain(z, times)?;
    if check == TraceCheck::Check {
        let composition = Composition::new(&info, alpha);
        let holds = times.time(Phase::Check, || {
            let periodic = periodic_at(air, segment.public_inputs, z);
            ood_identity_holds(
                air,
                &info,
                &composition,
                &ood,
                &periodic,
                segment.public_inputs,
                z,
            )
        });
        if !holds {
            let trace = prover.trace()?;
            times.time(Phase::Check, || {
                check_trace(air, &trace, segment.public_inputs)
            })?;
            return Err(ProverError::OodIdentity);
        }
    }
    // Soundness: batching 2W + C quotients with powers of γ keeps a far one far except for
    // ≲ (2W + C)·N/|F| values of γ: < 2^-150.
    let gamma = draw_gamma(&mut transcript, std::slice::from_ref(&ood));

    // 4 ----- DEEP composition over the LDE domain
    prover.deep(&deep_coefficients(&ood, z, log_rows, gamma), times)?;

    // 5 ----- FRI commit phase (each round's β errs with probability ≲ (a − 1)·N/|F|;
    //         queries below carry the bits: docs/protocol.md §6)
    let fri = times.time(Phase::Fri, || {
        ballast_fri::commit_phase::<_, ProverError>(
            &mut *prover,
            &[geometry.log_lde()],
            params.log_blowup,
            params.log_final_poly_len,
            &mut transcript,
        )
    })?;

    // 6 ----- proof of work: the smallest valid nonce
    let pow_nonce = prover.grind(&transcript, params.pow_bits, times)?;
    absorb_pow_nonce(&mut transcript, pow_nonce);

    // 7 ----- draw query positions and open every commitment there (each query of a δ-far
    //         function passes with probability ≤ 1 − δ; a repeated position is opened once)
    let draws = query_draws(&mut transcript, params.num_queries, geometry.log_lde());
    let positions = distinct(&draws);
    let plan = QueryPlan::new(geometry.log_lde(), &geometry.fri_arities(), &positions)?;
    let openings = prover.open(&positions, &plan, times)?;

    // 8 ----- assemble the proof
    let proof = SegmentProof {
        trace_root,
        quotient_root,
        ood,
        fri_roots: fri.layer_roots,
        final_poly: fri.final_poly,
        pow_nonce,
        queries: QueryOpenings {
            positions,
            trace_rows: openings.trace_rows,
            trace_nodes: openings.trace_nodes,
            quotient_rows: openings.quotient_rows,
            quotient_nodes: openings.quotient_nodes,
            fri: openings.fri,
        },
    };
    Ok((proof, transcript))
}

/// A segment's AIR as backends see it: compiled into a program for a device, or evaluated
/// on the host by the composition compiled for `A`.
struct AirSegment<'a, A> {
    air: &'a A,
    info: &'a ConstraintInfo,
}

impl<A: Air> SegmentAir for AirSegment<'_, A> {
    fn id(&self) -> &str {
        self.air.id()
    }

    fn program(&self) -> Result<ConstraintProgram, ProgramError> {
        ConstraintProgram::of(self.air)
    }

    fn composition_on_host(
        &self,
        lde: &RowBlocks,
        geometry: &Geometry,
        input: &CompositionInput<'_>,
    ) -> Vec<Ext3> {
        Composition::from_coefficients(self.info, input.coefficients).evaluate(
            self.air,
            lde,
            input.public_inputs,
            input.periodic,
            geometry.log_blowup,
            geometry.log_quotient_chunks,
        )
    }
}
