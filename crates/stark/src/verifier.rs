//! Verifying one table's proof. The steps mirror the prover's, numbered alike.

use ballast_air::Air;
use ballast_field::{Ext3, Felt};
use ballast_fri::{FriVerifierInput, verify_query};
use ballast_merkle::{hash_row, verify_path};
use ballast_ntt::LdePlan;
use ballast_transcript::Transcript;

use crate::deep::DeepComposer;
use crate::proof::SegmentShape;
use crate::protocol::{SegmentPosition, absorb_ood, bind, draw_ood_point};
use crate::quotient::Composition;
use crate::{SegmentProof, StarkParams, VerifierError};

/// Checks that `proof` shows a trace satisfying `air` exists.
///
/// # Errors
/// The first check that fails.
pub fn verify<A: Air>(
    air: &A,
    proof: &SegmentProof,
    params: &StarkParams,
    position: SegmentPosition,
) -> Result<(), VerifierError> {
    verify_with_transcript(air, proof, params, position).map(|_| ())
}

/// [`verify`], also returning the final transcript.
fn verify_with_transcript<A: Air>(
    air: &A,
    proof: &SegmentProof,
    params: &StarkParams,
    position: SegmentPosition,
) -> Result<Transcript, VerifierError> {
    let segment = position.index;
    let log_rows = air.log_rows();
    let shape = SegmentShape::new(air, params)?;
    check_shape(proof, &shape)?;

    // 0 ----- bind the statement
    let mut transcript = bind(air, params, position);

    // 1 ----- trace commitment; α
    transcript.absorb("trace-root", &proof.trace_root);
    let alpha = transcript.challenge_ext("alpha");

    // 2 ----- quotient commitment; z
    transcript.absorb("quotient-root", &proof.quotient_root);
    let z = draw_ood_point(&mut transcript, log_rows, params.log_blowup);

    // 3 ----- out-of-domain claims must satisfy the constraints; γ
    let ood = &proof.ood;
    let composition = Composition::new(air, alpha);
    let expected = composition.evaluate_at(air, &ood.trace_z, &ood.trace_zw, z);
    if expected != recombine_quotient(&ood.quotient_z, z, log_rows) {
        return Err(VerifierError::OodMismatch { segment });
    }
    absorb_ood(&mut transcript, ood);
    let gamma = transcript.challenge_ext("gamma");

    // 4 ----- DEEP composition coefficients
    let deep = DeepComposer::new(ood, z, log_rows, gamma);

    // 5 ----- FRI commit phase: replay the folding challenges
    let log_lde = shape.log_lde();
    let fri = FriVerifierInput::new(
        log_lde,
        shape.fri_folds(),
        proof.fri_roots.clone(),
        proof.final_poly.clone(),
        &mut transcript,
    );

    // 6 ----- proof of work
    if !transcript.check_pow(params.pow_bits, proof.pow_nonce) {
        return Err(VerifierError::ProofOfWork { segment });
    }
    transcript.absorb_u64("pow-nonce", proof.pow_nonce);

    // 7 ----- queries: pair openings, DEEP values at x and −x, FRI folding path
    let pairs = transcript.challenge_indices("queries", params.num_queries, log_lde - 1);
    let zeta = Felt::two_adic_root(log_lde);
    for (query, (&j, q)) in pairs.iter().zip(&proof.queries).enumerate() {
        if !verify_path(&proof.trace_root, j, hash_row(&q.trace_rows), &q.trace_path) {
            return Err(VerifierError::Opening {
                segment,
                query,
                commitment: "trace",
            });
        }
        if !verify_path(
            &proof.quotient_root,
            j,
            hash_row(&q.quotient_rows),
            &q.quotient_path,
        ) {
            return Err(VerifierError::Opening {
                segment,
                query,
                commitment: "quotient",
            });
        }
        let x = LdePlan::SHIFT * zeta.pow(j as u64);
        let (trace_lo, trace_hi) = q.trace_rows.split_at(shape.width);
        let (quotient_lo, quotient_hi) = q.quotient_rows.split_at(shape.quotient_width);
        let values = (
            deep.evaluate(trace_lo, quotient_lo, x),
            deep.evaluate(trace_hi, quotient_hi, -x),
        );
        verify_query(&fri, j, values, &q.fri).map_err(|source| VerifierError::Fri {
            segment,
            query,
            source,
        })?;
    }
    Ok(transcript)
}

/// Q(z) = Σ_j z^(j·n)·Q_j(z), with Q_j(z) rebuilt from its three coordinate columns.
fn recombine_quotient(quotient_z: &[Ext3], z: Ext3, log_rows: usize) -> Ext3 {
    let z_n = z.pow(1 << log_rows);
    quotient_z
        .chunks_exact(Ext3::DEGREE)
        .rev()
        .fold(Ext3::ZERO, |acc, coords| {
            let chunk = coords
                .iter()
                .enumerate()
                .fold(Ext3::ZERO, |s, (c, &v)| s + Ext3::basis(c) * v);
            acc * z_n + chunk
        })
}

/// Rejects a proof whose parts do not have the sizes the shape fixes, before any algebra.
fn check_shape(proof: &SegmentProof, shape: &SegmentShape) -> Result<(), VerifierError> {
    let expect = |what: &'static str, expected: usize, got: usize| {
        if expected == got {
            Ok(())
        } else {
            Err(VerifierError::Shape {
                what,
                expected,
                got,
            })
        }
    };
    let path = shape.log_lde() - 1;
    expect(
        "out-of-domain trace values",
        shape.width,
        proof.ood.trace_z.len(),
    )?;
    expect(
        "out-of-domain next-row values",
        shape.width,
        proof.ood.trace_zw.len(),
    )?;
    expect(
        "out-of-domain quotient values",
        shape.quotient_width,
        proof.ood.quotient_z.len(),
    )?;
    expect("FRI layer roots", shape.fri_layers(), proof.fri_roots.len())?;
    expect(
        "final polynomial coefficients",
        1 << shape.log_final_poly_len,
        proof.final_poly.len(),
    )?;
    expect("queries", shape.num_queries, proof.queries.len())?;
    for q in &proof.queries {
        expect("trace row values", 2 * shape.width, q.trace_rows.len())?;
        expect("trace path digests", path, q.trace_path.len())?;
        expect(
            "quotient row values",
            2 * shape.quotient_width,
            q.quotient_rows.len(),
        )?;
        expect("quotient path digests", path, q.quotient_path.len())?;
        expect("FRI openings", shape.fri_layers(), q.fri.len())?;
        for (i, layer) in (1..).zip(&q.fri) {
            expect("FRI path digests", shape.fri_path_len(i), layer.path.len())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prover::prove_with_transcript;
    use crate::{CpuBackend, PhaseTimes, Statement};
    use ballast_air::FibonacciAir;

    #[test]
    fn prover_and_verifier_transcripts_end_in_the_same_state() {
        let start = Statement::default_start(3);
        let trace = FibonacciAir::generate_trace(6, &start);
        let air = FibonacciAir::new(6, start, trace.row(63));
        let params = StarkParams {
            pow_bits: 3,
            ..StarkParams::testing()
        };
        let position = SegmentPosition { index: 2, count: 5 };
        let (proof, prover_state) = prove_with_transcript(
            &air,
            &trace,
            &params,
            position,
            &CpuBackend::new(),
            &mut PhaseTimes::default(),
        )
        .unwrap();
        let verifier_state = verify_with_transcript(&air, &proof, &params, position).unwrap();
        assert_eq!(prover_state, verifier_state);
    }
}
