//! Proving one table: trace → LDE → commit → constraints → composition → DEEP → FRI →
//! queries.

use ballast_air::{Air, ConstraintInfo, check_trace};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_ntt::{ColumnForm, LdePlan, split_into_chunks};
use ballast_transcript::Transcript;
use tracing::info_span;

use crate::backend::Backend;
use crate::deep::DeepComposer;
use crate::ood::{raw_at, trace_at};
use crate::periodic::PeriodicPolys;
use crate::proof::SegmentShape;
use crate::protocol::{
    absorb_pow_nonce, bind, draw_alpha, draw_gamma, draw_ood_point, ood_identity_holds,
    query_positions,
};
use crate::quotient::Composition;
use crate::{
    OodValues, Phase, PhaseTimes, ProverError, QueryOpenings, SegmentProof, SegmentStatement,
    StarkParams,
};

/// Proves that the trace in `table` satisfies `air` with the segment's public inputs,
/// refusing a trace that does not. The table is extended in place: on return it holds the
/// trace's low-degree extension, and its allocation can take the next segment's trace.
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
    prove_with_transcript(air, table, segment, params, backend, times, true).map(|(proof, _)| proof)
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
    prove_with_transcript(air, table, segment, params, backend, times, false)
        .map(|(proof, _)| proof)
}

/// [`prove`] (`check`) or [`prove_unchecked`], also returning the final transcript (tests
/// compare it with the verifier's).
pub(crate) fn prove_with_transcript<A: Air>(
    air: &A,
    table: &mut RowBlocks,
    segment: &SegmentStatement<'_>,
    params: &StarkParams,
    backend: &dyn Backend,
    times: &mut PhaseTimes,
    check: bool,
) -> Result<(SegmentProof, Transcript), ProverError> {
    let _span = info_span!("prove_segment", index = segment.position.index).entered();
    let log_rows = air.log_rows();
    let info = ConstraintInfo::of(air).map_err(crate::ParamsError::from)?;
    let shape = SegmentShape::new(air, &info, params)?;
    let log_chunks = shape.log_quotient_chunks;
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
    let periodic = PeriodicPolys::new(&air.periodic_columns(), log_rows);

    // 0 ----- bind the statement: version, AIR, shape, parameters, public inputs, fingerprint
    let mut transcript = bind(air, &info, segment, params);

    // 1 ----- extend the trace in place and commit it; draw α
    let trace_tree =
        backend.extend_and_commit(table, ColumnForm::Evaluations, params.log_blowup, times)?;
    let lde: &RowBlocks = table;
    // Soundness: a violated constraint vanishes from the α-combination for at most T + B
    // values of α: error ≤ (T + B)/|F| < 2^-170.
    let alpha = draw_alpha(&mut transcript, &trace_tree.root());

    // 2 ----- evaluate the composition, split it into chunks, commit them; draw z
    let composition = Composition::new(&info, alpha);
    let quotient_raw = times.time(Phase::Quotient, || {
        let evals = composition.evaluate(
            air,
            lde,
            segment.public_inputs,
            &periodic.on_quotient_coset(log_chunks),
            params.log_blowup,
            log_chunks,
        );
        quotient_columns(&evals, log_rows, log_chunks)
    });
    let mut quotient_lde = RowBlocks::from_columns(&quotient_raw);
    let quotient_tree =
        backend.extend_and_commit(&mut quotient_lde, ColumnForm::Raw, params.log_blowup, times)?;
    // Soundness: a false out-of-domain identity holds for ≲ d·n values of z: < 2^-160.
    let z = draw_ood_point(
        &mut transcript,
        &quotient_tree.root(),
        log_rows,
        params.log_blowup,
    );

    // 3 ----- out-of-domain evaluations; draw γ
    let ood = times.time(Phase::OutOfDomain, || {
        let (trace_z, trace_zw) = trace_at(lde, params.log_blowup, z);
        OodValues {
            trace_z,
            trace_zw,
            quotient_z: raw_at(&quotient_raw, z),
        }
    });
    drop(quotient_raw);
    if check {
        times.time(Phase::Check, || {
            if ood_identity_holds(air, &info, &composition, &ood, segment.public_inputs, z) {
                return Ok(());
            }
            let trace = LdePlan::new(log_rows, params.log_blowup).restrict(lde);
            check_trace(air, &trace, segment.public_inputs)?;
            Err(ProverError::OodIdentity)
        })?;
    }
    // Soundness: batching 2W + C quotients with powers of γ keeps a far one far except for
    // ≲ (2W + C)·N/|F| values of γ: < 2^-150.
    let gamma = draw_gamma(&mut transcript, &ood);

    // 4 ----- DEEP composition over the LDE domain
    let deep = DeepComposer::new(&ood, z, log_rows, gamma);
    let f = times.time(Phase::Deep, || deep.evaluate_all(lde, &quotient_lde));

    // 5 ----- FRI commit phase (each round's β errs with probability ≲ (a − 1)·N/|F|;
    //         queries below carry the bits: docs/protocol.md §6)
    let fri = times.time(Phase::Fri, || {
        ballast_fri::commit(
            f,
            params.log_blowup,
            params.log_final_poly_len,
            &mut transcript,
            |layer, log_arity| {
                backend
                    .commit_fri_layer(layer, log_arity)
                    .map_err(ProverError::from)
            },
        )
    })?;

    // 6 ----- proof of work: the smallest valid nonce
    let pow_nonce = times.time(Phase::Grind, || transcript.grind(params.pow_bits));
    absorb_pow_nonce(&mut transcript, pow_nonce);

    // 7 ----- draw query positions and open every commitment there (each query of a δ-far
    //         function passes with probability ≤ 1 − δ; a repeated position is opened once)
    let positions = query_positions(&mut transcript, params.num_queries, shape.log_lde());
    let rows =
        |lde: &RowBlocks| -> Vec<Felt> { positions.iter().flat_map(|&j| lde.row(j)).collect() };
    let queries = times.time(Phase::Queries, || QueryOpenings {
        trace_rows: rows(lde),
        trace_nodes: trace_tree.open_batch(&positions),
        quotient_rows: rows(&quotient_lde),
        quotient_nodes: quotient_tree.open_batch(&positions),
        fri: fri.open(&positions),
        positions: positions.clone(),
    });

    // 8 ----- assemble the proof
    let proof = SegmentProof {
        trace_root: trace_tree.root(),
        quotient_root: quotient_tree.root(),
        ood,
        fri_roots: fri.layer_roots(),
        final_poly: fri.final_poly().to_vec(),
        pow_nonce,
        queries,
    };
    Ok((proof, transcript))
}

/// The quotient's base-coordinate chunks in raw form: column 3j + c is coordinate c of
/// chunk j.
fn quotient_columns(evals: &[Ext3], log_rows: usize, log_chunks: usize) -> Vec<Vec<Felt>> {
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
