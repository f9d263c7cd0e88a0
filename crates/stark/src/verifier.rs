//! Verifying one table's proof. The steps mirror the prover's, numbered alike.

use ballast_air::{Air, ConstraintInfo};
use ballast_field::{Ext3, Felt};
use ballast_fri::{FriVerifierInput, verify_queries};
use ballast_merkle::{Digest, verify_batch};
use ballast_ntt::LdePlan;
use ballast_transcript::{Message, Transcript, TranscriptStep};

use crate::deep::deep_coefficients;
use crate::periodic::periodic_at;
use crate::proof::segment_geometry;
use crate::protocol::{
    Run, air_key, bind, distinct, draw_alpha, draw_gamma, draw_ood_point, ood_identity_holds,
    work_and_draws,
};
use crate::quotient::Composition;
use crate::sizes::check_segment;
use crate::{
    DeepCoefficients, SegmentProof, SegmentStatement, StarkParams, VerifierError, VerifyPolicy,
};

/// Checks that `proof` shows a trace exists that satisfies `air` with the segment's public
/// inputs, using `params`, which must satisfy `policy` (its security floor and, when set,
/// its required parameters; [`VerifyPolicy::default`] requires
/// [`DEFAULT_MIN_SECURITY_BITS`](crate::DEFAULT_MIN_SECURITY_BITS)).
///
/// # Errors
/// Parameters the policy refuses, or the first check that fails.
pub fn verify<A: Air>(
    air: &A,
    proof: &SegmentProof,
    segment: &SegmentStatement<'_>,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<(), VerifierError> {
    policy.check_params(air, params)?;
    verify_with_transcript(air, proof, segment, params).map(|_| ())
}

/// What a verifier derives from a proof it accepts, besides its verdict: the values a
/// recursive layer's witness is built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// α, the constraints' combination challenge: constraint i's coefficient is α^i.
    pub alpha: Ext3,
    /// The query positions in the LDE (distinct and increasing), drawn from the transcript.
    pub positions: Vec<usize>,
    /// The same positions as drawn: in the transcript's order, a repeated one repeated.
    pub draws: Vec<usize>,
    /// γ, the DEEP composition's challenge.
    pub gamma: Ext3,
    /// The DEEP constants: γ's powers, the claims' sums, z and zω.
    pub deep: DeepCoefficients,
    /// Each FRI round's folding challenge β.
    pub betas: Vec<Ext3>,
    /// Each FRI layer's opened rows (`ballast_fri::verify_queries`'s): the queried cosets'
    /// values, coset after coset in leaf order.
    pub fri_rows: Vec<Vec<Felt>>,
    /// Every permutation of the transcript, the work word's among them
    /// (`Transcript::steps`; [`replay`] lists them); none for Keccak-256.
    pub transcript: Option<Vec<TranscriptStep>>,
    /// Every message of the transcript, with its payload's place among the data its duplex
    /// absorbed (`Transcript::messages`); none for Keccak-256.
    pub messages: Option<Vec<Message>>,
}

/// [`verify`], returning what the verifier derived on the way.
///
/// # Errors
/// Parameters the policy refuses, or the first check that fails.
pub fn replay<A: Air>(
    air: &A,
    proof: &SegmentProof,
    segment: &SegmentStatement<'_>,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<Replay, VerifierError> {
    policy.check_params(air, params)?;
    let (transcript, replay) = verify_with_transcript(air, proof, segment, params)?;
    Ok(Replay {
        transcript: transcript.steps(),
        messages: transcript.messages(),
        ..replay
    })
}

/// [`verify`] without the policy check (for parameters that already passed it), also
/// returning the final transcript and what the verifier derived.
pub(crate) fn verify_with_transcript<A: Air>(
    air: &A,
    proof: &SegmentProof,
    statement: &SegmentStatement<'_>,
    params: &StarkParams,
) -> Result<(Transcript, Replay), VerifierError> {
    let segment = statement.position.index;
    let log_rows = air.log_rows();
    let info = ConstraintInfo::of(air).map_err(crate::ParamsError::from)?;
    let shape = segment_geometry(air, &info, params)?;
    check_segment(proof, &shape, segment)?;
    check_public_inputs(air, statement)?;

    let (
        transcript,
        Challenges {
            alpha,
            z,
            gamma,
            fri,
            work_done,
            draws,
        },
    ) = run_transcript(
        Run::Proof,
        air,
        &air_key(air, &info),
        statement,
        params,
        proof,
    )?;

    // 3 ----- out-of-domain claims must satisfy the constraints
    let ood = &proof.ood;
    let composition = Composition::new(&info, alpha);
    let periodic_at_z = periodic_at(air, statement.public_inputs, z);
    if !ood_identity_holds(
        air,
        &info,
        &composition,
        ood,
        &periodic_at_z,
        statement.public_inputs,
        z,
    ) {
        return Err(VerifierError::OodMismatch { segment });
    }

    // 4 ----- DEEP composition coefficients
    let deep = deep_coefficients(ood, z, log_rows, gamma);

    // 6 ----- proof of work
    if !work_done {
        return Err(VerifierError::ProofOfWork { segment });
    }
    let log_lde = shape.log_lde();

    // 7 ----- queries: row openings, DEEP values at the positions, FRI layer openings
    let q = &proof.queries;
    let positions = distinct(&draws);
    if positions != q.positions {
        return Err(VerifierError::QueryPositions { segment });
    }
    let opened = |root, rows: &[Felt], width: usize, nodes: &[_], commitment| {
        let leaves: Vec<_> = (0..positions.len())
            .map(|k| params.hash.row(&rows[k * width..(k + 1) * width]))
            .collect();
        if verify_batch(params.hash, root, log_lde, &positions, &leaves, nodes) {
            Ok(())
        } else {
            Err(VerifierError::Opening {
                segment,
                commitment,
            })
        }
    };
    opened(
        &proof.trace_root,
        &q.trace_rows,
        shape.width,
        &q.trace_nodes,
        "trace",
    )?;
    opened(
        &proof.quotient_root,
        &q.quotient_rows,
        shape.quotient_width(),
        &q.quotient_nodes,
        "quotient",
    )?;
    let zeta = Felt::two_adic_root(log_lde);
    let values: Vec<Ext3> = positions
        .iter()
        .enumerate()
        .map(|(k, &j)| {
            let trace = &q.trace_rows[k * shape.width..(k + 1) * shape.width];
            let quotient =
                &q.quotient_rows[k * shape.quotient_width()..(k + 1) * shape.quotient_width()];
            deep.evaluate(trace, quotient, LdePlan::SHIFT * zeta.pow(j as u64))
        })
        .collect();
    let fri_rows = verify_queries(&fri, &positions, &values, &[], &q.fri)
        .map_err(|source| VerifierError::Fri { segment, source })?;
    Ok((
        transcript,
        Replay {
            alpha,
            positions,
            draws,
            gamma,
            deep,
            betas: fri.betas().to_vec(),
            fri_rows,
            transcript: None,
            messages: None,
        },
    ))
}

/// What the verifier draws from a proof's commitments and claims (a segment's or a tables
/// proof's).
pub(crate) struct Challenges {
    pub alpha: Ext3,
    pub z: Ext3,
    pub gamma: Ext3,
    /// FRI's roots, folding challenges and final polynomial.
    pub fri: FriVerifierInput,
    /// Whether the nonce's work word has the grinding bits' leading zeros.
    pub work_done: bool,
    /// The query draws, in order.
    pub draws: Vec<usize>,
}

/// The verifier's Fiat–Shamir transcript over `proof`'s commitments and claims (its roots,
/// out-of-domain values, final polynomial and nonce), in the protocol's order: the one
/// definition of that order a verifier and [`transcript_layout`] run. The work word is
/// checked on a copy of the duplex and its outcome returned; nothing else is checked but
/// the shapes FRI needs.
fn run_transcript<A: Air>(
    run: Run,
    air: &A,
    key: &Digest,
    statement: &SegmentStatement<'_>,
    params: &StarkParams,
    proof: &SegmentProof,
) -> Result<(Transcript, Challenges), VerifierError> {
    let log_rows = air.log_rows();
    let log_lde = log_rows + params.log_blowup;

    // 0 ----- bind the statement
    let mut transcript = bind(run, key, statement, params);

    // 1 ----- trace commitment; α
    let alpha = draw_alpha(&mut transcript, &proof.trace_root);

    // 2 ----- quotient commitment; z
    let z = draw_ood_point(
        &mut transcript,
        &proof.quotient_root,
        log_rows,
        params.log_blowup,
    );

    // 3 ----- out-of-domain claims; γ
    let gamma = draw_gamma(&mut transcript, std::slice::from_ref(&proof.ood));

    // 5 ----- FRI commit phase: the folding challenges
    let fri = FriVerifierInput::new(
        &[log_lde],
        params.log_blowup,
        params.log_final_poly_len,
        proof.fri_roots.clone(),
        proof.final_poly.clone(),
        &mut transcript,
    )
    .map_err(|source| VerifierError::Fri {
        segment: statement.position.index,
        source,
    })?;

    // 6–7 ----- proof of work, then its nonce; the query draws
    let (work_done, draws) = work_and_draws(
        &mut transcript,
        params.pow_bits,
        proof.pow_nonce,
        params.num_queries,
        log_lde,
    );
    Ok((
        transcript,
        Challenges {
            alpha,
            z,
            gamma,
            fri,
            work_done,
            draws,
        },
    ))
}

/// What the protocol's order and a proof's shape fix of its Poseidon2 transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranscriptLayout {
    /// Every permutation, the work word's among them (`Transcript::steps`).
    pub steps: Vec<TranscriptStep>,
    /// Every message, with its payload's place among the data (`Transcript::messages`).
    pub messages: Vec<Message>,
}

impl TranscriptLayout {
    /// The layout `transcript` made so far (`None` for Keccak-256).
    pub(crate) fn of(transcript: &Transcript) -> Option<Self> {
        (transcript.steps())
            .zip(transcript.messages())
            .map(|(steps, messages)| Self { steps, messages })
    }
}

/// The permutations and messages of the Poseidon2 transcript of any proof of `air`, whose
/// key is `key` (`TableAir::key`'s: a verifier of several children of one AIR keys it once), for
/// `statement` made with `params`: what the protocol's order and the proof's shape fix,
/// each absorbed value taken as zero, on a shape transcript (`None` for Keccak-256). A proof's own
/// ([`Replay::transcript`], [`Replay::messages`]) differ from these in their data and what
/// they read only: the same steps, framing and layout.
///
/// # Errors
/// Parameters `air` cannot be proven with, or public inputs of another count than it takes.
pub fn transcript_layout<A: Air>(
    air: &A,
    key: &Digest,
    statement: &SegmentStatement<'_>,
    params: &StarkParams,
) -> Result<Option<TranscriptLayout>, VerifierError> {
    let info = ConstraintInfo::of(air).map_err(crate::ParamsError::from)?;
    let shape = segment_geometry(air, &info, params)?;
    check_public_inputs(air, statement)?;
    let zeros = |n| vec![Ext3::ZERO; n];
    let proof = SegmentProof {
        ood: crate::OodValues {
            trace_z: zeros(shape.width),
            trace_zw: zeros(shape.width),
            quotient_z: zeros(shape.quotient_width()),
        },
        fri_roots: vec![Default::default(); shape.fri_arities().len()],
        final_poly: zeros(1 << shape.log_final_poly_len),
        ..SegmentProof::default()
    };
    let (transcript, _) = run_transcript(Run::Shape, air, key, statement, params, &proof)?;
    Ok(TranscriptLayout::of(&transcript))
}

/// Refuses public inputs of another count than `air` takes.
fn check_public_inputs<A: Air>(
    air: &A,
    statement: &SegmentStatement<'_>,
) -> Result<(), VerifierError> {
    if statement.public_inputs.len() == air.num_public_inputs() {
        Ok(())
    } else {
        Err(VerifierError::Shape {
            what: "public inputs",
            expected: air.num_public_inputs(),
            got: statement.public_inputs.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::bind;
    use crate::prover::{TraceCheck, prove_with_transcript};
    use crate::test_air::{
        CounterAir, HiddenEndAir, MarkedAir, counter_trace, hidden_end_trace, marked_trace,
    };
    use crate::{CpuBackend, PhaseTimes, SegmentPosition};
    use ballast_air::Domain;
    use ballast_field::Ext3;

    /// The test parameters' few bits, accepted.
    fn no_floor() -> VerifyPolicy {
        VerifyPolicy {
            min_security_bits: 0,
            ..VerifyPolicy::default()
        }
    }

    /// Segment 2 of 5 of the counter, of these public inputs.
    fn counter_segment(public_inputs: &[Felt]) -> SegmentStatement<'_> {
        SegmentStatement {
            context: b"test",
            position: SegmentPosition { index: 2, count: 5 },
            public_inputs,
        }
    }

    /// The counter proven with `params` for [`counter_segment`]: the AIR, the public
    /// inputs, the proof and the prover's final transcript.
    fn counter_proof(params: &StarkParams) -> (CounterAir, Vec<Felt>, SegmentProof, Transcript) {
        let air = CounterAir { log_rows: 6 };
        let (mut trace, public_inputs) = counter_trace(6, 5);
        let (proof, transcript) = prove_with_transcript(
            &air,
            &mut trace,
            &counter_segment(&public_inputs),
            params,
            &CpuBackend::new(),
            &mut PhaseTimes::default(),
            TraceCheck::Check,
            None,
        )
        .unwrap();
        (air, public_inputs, proof, transcript)
    }

    #[test]
    fn a_public_column_binds_its_inputs_at_their_rows() {
        let air = MarkedAir { log_rows: 5 };
        let (trace, public_inputs) = marked_trace(5, 7);
        let params = StarkParams::testing();
        let segment = |public_inputs| SegmentStatement {
            context: b"marked",
            position: SegmentPosition { index: 0, count: 1 },
            public_inputs,
        };
        let prove = |public_inputs, check| {
            prove_with_transcript(
                &air,
                &mut trace.clone(),
                &segment(public_inputs),
                &params,
                &CpuBackend::new(),
                &mut PhaseTimes::default(),
                check,
                None,
            )
            .map(|(proof, _)| proof)
        };
        let proof = prove(&public_inputs, TraceCheck::Check).unwrap();
        verify(&air, &proof, &segment(&public_inputs), &params, &no_floor()).unwrap();
        // Another input at a marked row (row 9): the prover refuses the trace, and the
        // proof it makes unchecked does not verify.
        let mut other = public_inputs.clone();
        other[2] += Felt::ONE;
        assert!(matches!(
            prove(&other, TraceCheck::Check),
            Err(crate::ProverError::Unsatisfied(
                ballast_air::AirError::Unsatisfied {
                    constraint: 2,
                    row: 9
                }
            ))
        ));
        let forged = prove(&other, TraceCheck::Skip).unwrap();
        assert!(verify(&air, &forged, &segment(&other), &params, &no_floor()).is_err());
    }

    #[test]
    fn prover_and_verifier_transcripts_end_in_the_same_state() {
        let params = StarkParams {
            pow_bits: 3,
            ..StarkParams::testing()
        };
        let (air, public_inputs, proof, prover_state) = counter_proof(&params);
        let segment = counter_segment(&public_inputs);
        let (verifier_state, _) = verify_with_transcript(&air, &proof, &segment, &params).unwrap();
        assert_eq!(prover_state, verifier_state);
    }

    /// A nonzero δ ∈ F_p^4 with Σ_b c_b·δ_b = 0 for four extension coefficients c_b: three
    /// base-field equations in four unknowns always have one.
    fn kernel_vector(c: [Ext3; 4]) -> [Felt; 4] {
        // Rows: coordinates; columns: unknowns. Gaussian elimination over F_p.
        let mut m: Vec<Vec<Felt>> = (0..3)
            .map(|i| c.iter().map(|e| e.coeffs()[i]).collect())
            .collect();
        let mut pivots = Vec::new();
        let mut row = 0;
        for col in 0..4 {
            let Some(p) = (row..3).find(|&r| m[r][col] != Felt::ZERO) else {
                continue;
            };
            m.swap(row, p);
            let inv = m[row][col].inverse();
            m[row].iter_mut().for_each(|v| *v *= inv);
            for r in 0..3 {
                if r != row && m[r][col] != Felt::ZERO {
                    let factor = m[r][col];
                    let pivot_row = m[row].clone();
                    m[r].iter_mut()
                        .zip(&pivot_row)
                        .for_each(|(v, &pv)| *v -= factor * pv);
                }
            }
            pivots.push(col);
            row += 1;
            if row == 3 {
                break;
            }
        }
        let free = (0..4)
            .find(|c| !pivots.contains(c))
            .expect("a free unknown");
        let mut delta = [Felt::ZERO; 4];
        delta[free] = Felt::ONE;
        for (r, &p) in pivots.iter().enumerate() {
            delta[p] = -m[r][free];
        }
        delta
    }

    #[test]
    fn the_layout_is_every_proofs_transcript_but_for_its_data() {
        let params = StarkParams {
            pow_bits: 3,
            hash: crate::MerkleHash::Poseidon2,
            ..StarkParams::testing()
        };
        let (air, public_inputs, proof, _) = counter_proof(&params);
        let segment = counter_segment(&public_inputs);
        let replay = replay(&air, &proof, &segment, &params, &no_floor()).unwrap();
        let key = air_key(&air, &ConstraintInfo::of(&air).unwrap());
        let TranscriptLayout { steps, messages } = transcript_layout(&air, &key, &segment, &params)
            .unwrap()
            .unwrap();
        assert_eq!(Some(messages), replay.messages);
        let proofs = replay.transcript.unwrap();
        assert_eq!(steps.len(), proofs.len());
        for (layout, proof) in steps.iter().zip(&proofs) {
            assert_eq!(layout.kind, proof.kind);
            assert_eq!(layout.step.data, proof.step.data);
            assert_eq!(layout.step.read.len(), proof.step.read.len());
            let framing = |s: &TranscriptStep| {
                (s.step.added.iter().zip(s.step.data))
                    .map(|(&added, data)| if data { Felt::ZERO } else { added })
                    .collect::<Vec<_>>()
            };
            assert_eq!(framing(layout), framing(proof));
        }
        assert_ne!(steps, proofs, "the proof's roots and claims are not zero");
        let keccak = StarkParams {
            hash: crate::MerkleHash::Keccak256,
            ..params
        };
        assert_eq!(transcript_layout(&air, &key, &segment, &keccak), Ok(None));
    }

    /// The weak Fiat–Shamir forgery: with the last row's values outside the transcript, the
    /// prover learns α from an honest proof and shifts the four claimed end values by a δ with
    /// Σ_b α^(k_b)·δ_b = 0, which leaves the out-of-domain identity intact — a proof of a false
    /// end row. The AIR's key binds those values before α, so the shifted claim draws
    /// another α and is rejected.
    #[test]
    fn a_frozen_heart_forgery_of_a_hidden_boundary_fails() {
        let log_rows = 5;
        let (mut trace, public_inputs) = hidden_end_trace(log_rows);
        let end: [Felt; 4] = trace.row(31).try_into().unwrap();
        let honest = HiddenEndAir { log_rows, end };
        let params = StarkParams::testing();
        let segment = SegmentStatement {
            context: b"frozen-heart",
            position: SegmentPosition { index: 0, count: 1 },
            public_inputs: &public_inputs,
        };
        let proof = crate::prove(
            &honest,
            &mut trace,
            &segment,
            &params,
            &CpuBackend::new(),
            &mut PhaseTimes::default(),
        )
        .unwrap();
        verify(&honest, &proof, &segment, &params, &no_floor()).unwrap();
        // The library verifier's default policy keeps its floor, judged in provable bits: 8
        // queries at blowup 2 are refused, naming the conjectured figure too.
        assert!(matches!(
            verify(&honest, &proof, &segment, &params, &VerifyPolicy::default()),
            Err(VerifierError::InsufficientSecurity {
                got: 0..=4,
                regime: crate::Regime::Jbr,
                conjectured: 8,
                required: 100
            })
        ));

        // The attacker replays the honest transcript up to α.
        let info = ConstraintInfo::of(&honest).unwrap();
        let mut t = bind(Run::Proof, &air_key(&honest, &info), &segment, &params);
        let alpha = crate::protocol::draw_alpha(&mut t, &proof.trace_root);
        let powers = alpha.powers(info.constraints.len());
        let last: Vec<Ext3> = info
            .constraints
            .iter()
            .zip(&powers)
            .filter(|((d, _), _)| *d == Domain::LastRow)
            .map(|(_, &p)| p)
            .collect();
        let delta = kernel_vector(last.clone().try_into().unwrap());
        let combined = last
            .iter()
            .zip(&delta)
            .fold(Ext3::ZERO, |acc, (&c, &d)| acc + c.scale(d));
        assert_eq!(combined, Ext3::ZERO, "δ leaves the α-combination unchanged");
        let forged_end: [Felt; 4] = std::array::from_fn(|i| end[i] - delta[i]);
        assert_ne!(forged_end, end);
        let forged = HiddenEndAir {
            log_rows,
            end: forged_end,
        };
        assert_eq!(
            verify(&forged, &proof, &segment, &params, &no_floor()),
            Err(VerifierError::OodMismatch { segment: 0 }),
            "the claimed false end row must be rejected"
        );
    }
}
