//! A child segment proof turned into what a recursive layer proves about it: its verifier
//! replayed (`ballast_stark::replay`), then the [`TranscriptAir`] of its transcript, the
//! [`IdentityAir`] of its out-of-domain identity and the [`QueriesAir`] of its query positions
//! with the witness and inputs it takes, from the proof's claims and openings and what the
//! replay derived; and the links a layer's verifier checks between those AIRs' public
//! inputs ([`ChildSegment::check_links`]).

use ballast_air::Air;
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_fri::label as fri_label;
use ballast_merkle::Digest;
use ballast_poseidon2::{DIGEST_ELEMENTS, FeltDigest, digest_from_bytes};
use ballast_stark::{
    MerkleHash, Replay, SegmentProof, SegmentStatement, StarkParams, VerifierError, VerifyPolicy,
    label, replay,
};
use ballast_transcript::Message;

use crate::identity;
use crate::openings::expect_len;
use crate::{
    ChildShape, DeepClaims, IdentityAir, IdentityError, OodClaims, Opened, OpeningsError,
    QueriesAir, TranscriptAir, TranscriptError,
};

/// Why a child proof cannot be taken into a layer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ChildError {
    /// A child committed with Keccak-256: an AIR cannot afford to recompute its hashes.
    #[error(
        "the child proof's trees are Keccak-256's; only a proof made with --hash poseidon2 can be compressed"
    )]
    NotPoseidon2,
    /// A child its own verifier refuses.
    #[error("the child proof does not verify: {0}")]
    Invalid(#[from] VerifierError),
    /// A child whose shape the query AIR does not take.
    #[error("the child proof's queries: {0}")]
    Queries(#[from] OpeningsError),
    /// A child whose transcript the transcript AIR does not take.
    #[error("the child proof's transcript: {0}")]
    Transcript(#[from] TranscriptError),
    /// A child whose constraints the identity AIR does not take.
    #[error("the child proof's out-of-domain identity: {0}")]
    Identity(#[from] IdentityError),
}

/// Where the public inputs of a child's AIRs disagree.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LinkError {
    /// Inputs of another length than the child's shape gives.
    #[error("{what}: {got} values, expected {expected}")]
    Length {
        /// Which inputs.
        what: &'static str,
        /// The count its shape gives.
        expected: usize,
        /// The count given.
        got: usize,
    },
    /// A message the child's transcript absorbs that its layout does not place.
    #[error("the transcript's layout has no message {label:?}")]
    NoMessage {
        /// The message's label.
        label: &'static str,
    },
    /// A value the transcript AIR read or absorbed, taken otherwise by another AIR.
    #[error("the {air} AIR's {what} is not the one the transcript took")]
    Differs {
        /// The AIR.
        air: &'static str,
        /// The value.
        what: &'static str,
    },
}

/// The public inputs of a child's three AIRs, as a layer's verifier sees them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerInputs {
    /// The transcript AIR's: what the child's transcript read, then the data it absorbed.
    pub transcript: Vec<Felt>,
    /// The identity AIR's: α, z and the quotient's values at z.
    pub identity: Vec<Felt>,
    /// The query AIR's: the roots, the positions' digest, the DEEP claims, each β and the
    /// final polynomial.
    pub queries: Vec<Felt>,
}

/// A child segment proof, ready for a layer to prove: the AIRs of its transcript, of its
/// out-of-domain identity and of its query phase.
#[derive(Clone, Debug)]
pub struct ChildSegment {
    /// Its transcript's AIR, whose trace is [`TranscriptAir::trace`].
    pub transcript: TranscriptAir,
    /// Its out-of-domain identity's AIR, whose trace is [`IdentityAir::trace`].
    pub identity: IdentityAir,
    /// Its query phase.
    pub queries: ChildQueries,
    /// Where each message of its transcript has its payload among the transcript AIR's
    /// data (`ballast_transcript::Message`): a layout of the child's shape.
    pub messages: Vec<Message>,
}

impl ChildSegment {
    /// `proof`, a proof of `air` for `statement` made with `params`, once its verifier
    /// accepts it under `policy`.
    ///
    /// # Errors
    /// A child committed with Keccak-256, one that does not verify, or one whose shape the
    /// layer's AIRs do not take.
    pub fn of<A: Air>(
        air: &A,
        proof: &SegmentProof,
        statement: &SegmentStatement<'_>,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<Self, ChildError> {
        if params.hash != MerkleHash::Poseidon2 {
            return Err(ChildError::NotPoseidon2);
        }
        let mut replay = replay(air, proof, statement, params, policy)?;
        let steps = replay.transcript.take().ok_or(ChildError::NotPoseidon2)?;
        let messages = replay.messages.take().ok_or(ChildError::NotPoseidon2)?;
        let claims = OodClaims {
            alpha: replay.alpha,
            z: replay.deep.z,
            trace_z: proof.ood.trace_z.clone(),
            trace_zw: proof.ood.trace_zw.clone(),
            periodic_z: std::mem::take(&mut replay.periodic_at_z),
            public_inputs: statement.public_inputs.to_vec(),
            quotient_z: proof.ood.quotient_z.clone(),
        };
        Ok(Self {
            transcript: TranscriptAir::new(&steps, params.pow_bits)?,
            identity: IdentityAir::new(air, claims)?,
            queries: ChildQueries::of(air, proof, params, replay)?,
            messages,
        })
    }

    /// The public inputs of its three AIRs.
    ///
    /// # Errors
    /// What [`ChildQueries::public_inputs`] refuses.
    pub fn public_inputs(&self) -> Result<LayerInputs, OpeningsError> {
        Ok(LayerInputs {
            transcript: self.transcript.public_inputs(),
            identity: self.identity.public_inputs(),
            queries: self.queries.public_inputs()?,
        })
    }

    /// What a layer's verifier checks of its AIRs' `inputs` besides their proofs: the
    /// transcript AIR read the challenges the others take (α, z, γ, each β, in the order
    /// the child's verifier draws them, then the query draws), the positions whose digest
    /// the query AIR takes are the draws' low bits (a position of the LDE), and it absorbed
    /// the values the others take: the query AIR's roots and final polynomial, the
    /// identity AIR's quotient values at z and its immediates (the trace's values at z and
    /// zω, the child's public inputs). The checks read the child's shape from these AIRs
    /// and [`messages`](Self::messages), and the immediates from the identity AIR's
    /// definition.
    ///
    /// # Errors
    /// Inputs of another length than the shape gives, or the first value that differs.
    pub fn check_links(&self, inputs: &LayerInputs) -> Result<(), LinkError> {
        let queries = &self.queries.air;
        let deep = queries.deep();
        let openings = deep.openings();
        let rounds = queries.rounds();
        let draws = openings.positions().len();
        let length = |what, expected, got: &[Felt]| {
            if got.len() == expected {
                Ok(())
            } else {
                let got = got.len();
                Err(LinkError::Length {
                    what,
                    expected,
                    got,
                })
            }
        };
        length(
            "the transcript AIR's public inputs",
            self.transcript.num_public_inputs(),
            &inputs.transcript,
        )?;
        let read = &inputs.transcript[..self.transcript.reads()];
        length("the transcript AIR's reads", 3 * (3 + rounds) + draws, read)?;
        length(
            "the identity AIR's public inputs",
            self.identity.num_public_inputs(),
            &inputs.identity,
        )?;
        length(
            "the query AIR's public inputs",
            queries.num_public_inputs(),
            &inputs.queries,
        )?;
        // Each value, 3 coordinates at `at` in the transcript's reads and in `inputs`.
        let same = |air, what, at: usize, inputs: &[Felt], their: usize| {
            if read[at..at + 3] == inputs[their..their + 3] {
                Ok(())
            } else {
                Err(LinkError::Differs { air, what })
            }
        };
        // Where the reads hold α, z, γ and the first β: the child verifier's order.
        let (alpha, z, gamma, beta) = (0, 3, 6, 9);
        same("identity", "α", alpha, &inputs.identity, identity::ALPHA)?;
        same("identity", "z", z, &inputs.identity, identity::Z)?;
        let claims = deep.claims();
        same("query", "γ", gamma, &inputs.queries, claims)?;
        same("query", "z", z, &inputs.queries, claims + 3)?;
        let betas = deep.num_public_inputs();
        for k in 0..rounds {
            same("query", "β", beta + 3 * k, &inputs.queries, betas + 3 * k)?;
        }
        let log_lde = openings.trees()[0].height;
        let positions: Vec<usize> = read[read.len() - draws..]
            .iter()
            .map(|d| (d.as_u64() & ((1 << log_lde) - 1)) as usize)
            .collect();
        let digest = openings.num_public_inputs() - DIGEST_ELEMENTS;
        if openings.digest_of(&positions).as_ref().map(|d| &d[..])
            != Some(&inputs.queries[digest..digest + DIGEST_ELEMENTS])
        {
            return Err(LinkError::Differs {
                air: "query",
                what: "positions' digest",
            });
        }
        self.check_data(inputs)
    }

    /// The data links of [`check_links`](Self::check_links), once the lengths are checked.
    fn check_data(&self, inputs: &LayerInputs) -> Result<(), LinkError> {
        let data = &inputs.transcript[self.transcript.reads()..];
        // The payload of the `k`-th message labelled `label`; a list's leads with its length.
        let payload = |label: &'static str, k: usize| {
            let message = self.messages.iter().filter(|m| m.label == label).nth(k);
            message
                .and_then(|m| data.get(m.data.clone()))
                .ok_or(LinkError::NoMessage { label })
        };
        let list = |label: &'static str| {
            let payload = payload(label, 0)?;
            match payload.split_first() {
                Some((len, values)) if len.as_u64() == values.len() as u64 => Ok(values),
                _ => Err(LinkError::Differs {
                    air: "transcript",
                    what: "list length",
                }),
            }
        };
        let agree = |air, what, taken: &[Felt], absorbed: &[Felt]| {
            if taken == absorbed {
                Ok(())
            } else {
                Err(LinkError::Differs { air, what })
            }
        };
        let coeffs = |values: &[Ext3]| values.iter().flat_map(|v| v.coeffs()).collect::<Vec<_>>();

        let queries = &self.queries.air;
        let trees = queries.deep().openings().trees().len();
        let roots = inputs.queries[..trees * DIGEST_ELEMENTS].chunks_exact(DIGEST_ELEMENTS);
        for (k, root) in roots.enumerate() {
            let (what, absorbed) = match k {
                0 => ("trace root", payload(label::TRACE_ROOT, 0)?),
                1 => ("quotient root", payload(label::QUOTIENT_ROOT, 0)?),
                _ => ("FRI layer root", payload(fri_label::LAYER_ROOT, k - 2)?),
            };
            agree("query", what, root, absorbed)?;
        }
        let final_poly = inputs.queries.len() - queries.final_poly_inputs();
        agree(
            "query",
            "final polynomial",
            &inputs.queries[final_poly..],
            list(fri_label::FINAL_POLY)?,
        )?;
        agree(
            "identity",
            "quotient values at z",
            &inputs.identity[identity::Z + 3..],
            list(label::OOD_QUOTIENT_Z)?,
        )?;
        let claims = self.identity.claims();
        agree(
            "identity",
            "trace values at z",
            &coeffs(&claims.trace_z),
            list(label::OOD_TRACE_Z)?,
        )?;
        agree(
            "identity",
            "trace values at zω",
            &coeffs(&claims.trace_zw),
            list(label::OOD_TRACE_ZW)?,
        )?;
        agree(
            "identity",
            "public inputs",
            &claims.public_inputs,
            list(label::PUBLIC_INPUTS)?,
        )
    }
}

/// A child segment's query phase: the AIR and what its trace and public inputs are made of.
#[derive(Clone, Debug)]
pub struct ChildQueries {
    /// The AIR of the child's queries.
    pub air: QueriesAir,
    /// Each tree's openings: the trace's, the quotient's, then each FRI layer's.
    pub opened: Vec<Opened>,
    /// The trees' roots, in the same order.
    pub roots: Vec<FeltDigest>,
    /// The DEEP claims the child's transcript fixed.
    pub claims: DeepClaims,
    /// Each FRI round's folding challenge.
    pub betas: Vec<Ext3>,
    /// The final polynomial's coefficients.
    pub final_poly: Vec<Ext3>,
}

impl ChildQueries {
    /// The query phase of `proof`, a Poseidon2 proof of `air` made with `params`, from
    /// what its verifier derived (`replay`).
    fn of<A: Air>(
        air: &A,
        proof: &SegmentProof,
        params: &StarkParams,
        replay: Replay,
    ) -> Result<Self, OpeningsError> {
        let q = &proof.queries;
        // The replay checked the positions (at least one) and each row's length.
        let per_position = |len: usize| len / q.positions.len();
        let shape = ChildShape {
            trace_width: per_position(q.trace_rows.len()),
            quotient_width: per_position(q.quotient_rows.len()),
            log_rows: air.log_rows(),
            log_lde: air.log_rows() + params.log_blowup,
            log_final_poly_len: params.log_final_poly_len,
        };
        let queries = QueriesAir::new(&shape, &replay.draws)?;
        let roots = [&proof.trace_root, &proof.quotient_root]
            .into_iter()
            .chain(&proof.fri_roots)
            .map(felt_digest)
            .collect::<Result<Vec<_>, _>>()?;
        let openings = queries.deep().openings();
        let mut opened = vec![
            openings.open(0, &roots[0], &q.trace_rows, &q.trace_nodes)?,
            openings.open(1, &roots[1], &q.quotient_rows, &q.quotient_nodes)?,
        ];
        let layers = openings.trees().len() - 2;
        expect_len("FRI layers", layers, replay.fri_rows.len())?;
        for (i, (rows, layer)) in replay.fri_rows.iter().zip(&q.fri).enumerate() {
            opened.push(openings.open(2 + i, &roots[2 + i], rows, &layer.nodes)?);
        }
        let claims = DeepClaims {
            gamma: replay.gamma,
            z: replay.deep.z,
            at_z: replay.deep.at_z,
            at_zw: replay.deep.at_zw,
        };
        Ok(Self {
            air: queries,
            opened,
            roots,
            claims,
            betas: replay.betas,
            final_poly: proof.final_poly.clone(),
        })
    }

    /// The AIR's trace.
    ///
    /// # Errors
    /// None for one [`ChildSegment::of`] built; what [`QueriesAir::trace`] refuses after the
    /// fields are changed.
    pub fn trace(&self) -> Result<RowBlocks, OpeningsError> {
        self.air.trace(&self.opened, &self.claims, &self.betas)
    }

    /// The AIR's public inputs.
    ///
    /// # Errors
    /// As for [`trace`](Self::trace), what [`QueriesAir::public_inputs`] refuses.
    pub fn public_inputs(&self) -> Result<Vec<Felt>, OpeningsError> {
        self.air
            .public_inputs(&self.roots, &self.claims, &self.betas, &self.final_poly)
    }
}

/// A Poseidon2 root's elements. A root its verifier accepted is one: openings hashed to it.
fn felt_digest(root: &Digest) -> Result<FeltDigest, OpeningsError> {
    digest_from_bytes(root).ok_or(OpeningsError::Rejected)
}
