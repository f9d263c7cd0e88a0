//! A child proof turned into what a recursive layer proves about it ([`Child`]): its
//! verifier replayed (`ballast_stark::replay` for a segment), then the [`TranscriptAir`] of
//! its transcript, the [`IdentityAir`] of its out-of-domain identity and the [`QueriesAir`]
//! of its query positions with the witness and inputs it takes, from the proof's claims and
//! openings and what the replay derived; the links a layer's verifier checks of the
//! transcript AIR's public inputs ([`Child::check_links`]); and the query AIR's inputs built
//! from them ([`Child::query_inputs`]).

use ballast_air::Air;
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_fri::label as fri_label;
use ballast_merkle::{Digest, MixedShape};
use ballast_poseidon2::{FeltDigest, digest_from_bytes};
use ballast_stark::{
    MerkleHash, OodValues, QueryOpenings, Replay, SegmentProof, SegmentStatement, StarkParams,
    TablesProof, TablesReplay, VerifierError, VerifyPolicy, air_geometry, label, replay,
    statement_data,
};
use ballast_transcript::Message;

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

// Where the transcript AIR's reads hold α, z, γ and the first β: the child verifier's order.
pub(crate) const READ_ALPHA: usize = 0;
pub(crate) const READ_Z: usize = 3;
pub(crate) const READ_GAMMA: usize = 6;
pub(crate) const READ_BETAS: usize = 9;

/// Where the transcript AIR's public inputs disagree with the child's shape, statement or
/// layout, or do not give the other AIRs'.
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
    #[error("the transcript's layout places no message {label:?} among its data")]
    NoMessage {
        /// The message's label.
        label: &'static str,
    },
    /// A message of the layout the links do not check (or one they check, more often than
    /// the child's shape has it).
    #[error("the transcript's data hold {label:?}, which no link checks")]
    Unlinked {
        /// The message's label.
        label: String,
    },
    /// A list the transcript absorbed whose length is not the one it leads with.
    #[error("the transcript's {label:?} list leads with another length than it has")]
    ListLength {
        /// The list's label.
        label: &'static str,
    },
    /// A work word the transcript AIR takes short of the child's grinding bits.
    #[error("the transcript AIR's inputs: {0}")]
    Work(TranscriptError),
    /// A value the transcript AIR read or absorbed that is not the one the statement or the
    /// transcript itself fixes (or, for another AIR, not the one its prover took).
    #[error("the {air} AIR's {what} is not the one the transcript took")]
    Differs {
        /// The AIR.
        air: &'static str,
        /// The value.
        what: &'static str,
    },
}

/// A child proof, ready for a layer to prove: the AIRs of its verifier's transcript, of its
/// out-of-domain identities and of its query phase. The child is a segment's proof
/// ([`Child::of_segment`]) or a layer's over a child of either kind ([`Child::of_layer`]);
/// the verifiers are [`verify_layer`](crate::verify_layer) over a segment and
/// [`verify_layer_over_layers`](crate::verify_layer_over_layers) over a stack of layers.
#[derive(Clone, Debug)]
pub struct Child {
    /// Its verifier's transcript's AIR, whose trace is [`TranscriptAir::trace`].
    pub transcript: TranscriptAir,
    /// Its out-of-domain identities' AIR, whose trace is [`IdentityAir::trace`]: a
    /// segment's one, or a layer's tables' in one table ([`IdentityAir::joint`]).
    pub identity: IdentityAir,
    /// Its query phase.
    pub queries: ChildQueries,
    /// Where each message of its transcript has its payload among the transcript AIR's
    /// data (`ballast_transcript::Message`): a layout of the child's shape.
    pub messages: Vec<Message>,
    /// The data its transcript absorbs from its statement, AIRs and parameters alone
    /// (`ballast_stark::statement_data` of a segment, `tables_statement_data` of a
    /// layer): what the layer proves about.
    pub statement_data: Vec<Felt>,
}

impl Child {
    /// `proof`, a segment's proof of `air` for `statement` made with `params`, once its
    /// verifier accepts it under `policy`.
    ///
    /// # Errors
    /// A child committed with Keccak-256, one that does not verify, or one whose shape the
    /// layer's AIRs do not take.
    pub fn of_segment<A: Air>(
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
        let claims = OodClaims::of(
            air,
            statement.public_inputs,
            replay.alpha,
            replay.deep.z,
            proof.ood.clone(),
        );
        Ok(Self {
            transcript: TranscriptAir::new(&steps, params.pow_bits)?,
            identity: IdentityAir::new(air, claims)?,
            queries: ChildQueries::of(&child_shape(air, params)?, proof, replay)?,
            messages,
            statement_data: statement_data(air, statement, params).map_err(VerifierError::from)?,
        })
    }

    /// What a layer's verifier checks of the transcript AIR's public `inputs` besides the
    /// proof: as many reads as the child's verifier draws (α, z, γ, each β, then the query
    /// draws), the data its layout places, each of them a message the layer's AIRs take, the
    /// statement's data first, the work words' grinding bits, and the work copy's data: the
    /// transcript's pending data and the nonce it absorbs next. The other AIRs' inputs are
    /// built from these ([`query_inputs`](Self::query_inputs), [`OodClaims::of`]), so they
    /// need no link. The checks read the child's shape from its AIRs and
    /// [`messages`](Self::messages).
    ///
    /// # Errors
    /// Inputs of another length than the shape gives, or the first value that differs.
    pub fn check_links(&self, inputs: &[Felt]) -> Result<(), LinkError> {
        Links {
            transcript: &self.transcript,
            queries: &self.queries.air,
            messages: &self.messages,
            statement_data: &self.statement_data,
        }
        .check(inputs)
    }
}

/// What a layer's verifier checks the transcript AIR's public inputs against: the child's
/// AIRs, its transcript layout and the data its statement binds.
pub(crate) struct Links<'a> {
    pub transcript: &'a TranscriptAir,
    pub queries: &'a QueriesAir,
    pub messages: &'a [Message],
    pub statement_data: &'a [Felt],
}

impl Links<'_> {
    /// [`Child::check_links`].
    pub fn check(&self, inputs: &[Felt]) -> Result<(), LinkError> {
        let queries = &self.queries;
        let rounds = queries.rounds();
        let draws = queries.deep().openings().positions().len();
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
            inputs,
        )?;
        let read = &inputs[..self.transcript.reads()];
        length("the transcript AIR's reads", 3 * (3 + rounds) + draws, read)?;
        self.check_data(inputs)
    }

    /// The data links of [`check_links`](Self::check_links), once the lengths are checked:
    /// every datum the transcript AIR takes is the statement's or a message the other AIRs
    /// take.
    fn check_data(&self, inputs: &[Felt]) -> Result<(), LinkError> {
        let data = &inputs[self.transcript.reads()..];
        let absorbed = Absorbed {
            messages: self.messages,
            data,
        };
        let payload = |label, k| absorbed.payload(label, k);
        let agree = |air, what, taken: &[Felt], absorbed: &[Felt]| {
            if taken == absorbed {
                Ok(())
            } else {
                Err(LinkError::Differs { air, what })
            }
        };

        // Every datum is linked: the statement's, or a message the layer's AIRs take.
        let linked = [
            label::TRACE_ROOT,
            label::QUOTIENT_ROOT,
            label::OOD_TRACE_Z,
            label::OOD_TRACE_ZW,
            label::OOD_QUOTIENT_Z,
            fri_label::LAYER_ROOT,
            fri_label::FINAL_POLY,
            label::POW_NONCE,
        ];
        let bound = self.statement_data.len();
        let own = self.transcript.work_inputs().start - self.transcript.reads();
        let placed = self.messages.last().map_or(0, |m| m.data.end);
        if placed != own {
            return Err(LinkError::Length {
                what: "the data the transcript's layout places",
                expected: own,
                got: placed,
            });
        }
        // Each FRI layer's root, each table's claims (a segment's one, a layer's each
        // table's), every other message once.
        let layers = self.queries.deep().openings().trees().len() - 2;
        let tables: usize = self.queries.deep().heights().map(|(count, _)| count).sum();
        let claims = [
            label::OOD_TRACE_Z,
            label::OOD_TRACE_ZW,
            label::OOD_QUOTIENT_Z,
        ];
        let count = |label: &str| self.messages.iter().filter(|m| m.label == label).count();
        let unlinked = self.messages.iter().find(|m| {
            let once = if m.label == fri_label::LAYER_ROOT {
                layers
            } else if claims.contains(&m.label.as_str()) {
                tables
            } else {
                1
            };
            m.data.end > bound && (!linked.contains(&m.label.as_str()) || count(&m.label) != once)
        });
        if let Some(m) = unlinked {
            return Err(LinkError::Unlinked {
                label: m.label.clone(),
            });
        }

        // What binds the statement, first of all.
        agree(
            "transcript",
            "statement",
            self.statement_data,
            data.get(..bound).unwrap_or_default(),
        )?;

        // The work words: the grinding bits' leading zeros, the child verifier's check.
        self.transcript
            .check_words(inputs)
            .map_err(LinkError::Work)?;

        // The work copy: the data pending when it forked, the last absorbed before the nonce's
        // message, then the nonce, the one that message absorbs.
        let work = &inputs[self.transcript.work_inputs()];
        if let Some(pending) = work.len().checked_sub(2) {
            let nonce = self
                .messages
                .iter()
                .position(|m| m.label == label::POW_NONCE);
            let before = nonce
                .and_then(|k| k.checked_sub(1))
                .map(|k| self.messages[k].data.end)
                .filter(|&end| end >= pending)
                .ok_or(LinkError::NoMessage {
                    label: label::POW_NONCE,
                })?;
            agree(
                "transcript",
                "work copy's pending data",
                &work[..pending],
                &data[before - pending..before],
            )?;
            agree(
                "transcript",
                "work nonce",
                &work[pending..],
                payload(label::POW_NONCE, 0)?,
            )?;
        }
        Ok(())
    }
}

/// The shape of a proof of `air` made with `params`, as the query AIR takes it.
pub(crate) fn child_shape<A: Air>(
    air: &A,
    params: &StarkParams,
) -> Result<ChildShape, VerifierError> {
    let geometry = air_geometry(air, params)?;
    Ok(ChildShape {
        trace_width: geometry.width,
        quotient_width: geometry.quotient_width(),
        log_rows: geometry.log_rows,
        log_lde: geometry.log_lde(),
        log_final_poly_len: geometry.log_final_poly_len,
    })
}

/// The positions of the LDE of 2^`log_lde` values that query draws name: each draw's low
/// `log_lde` bits, as the child's verifier takes them.
pub(crate) fn positions_of(draws: &[Felt], log_lde: usize) -> Vec<usize> {
    draws
        .iter()
        .map(|d| (d.as_u64() & ((1 << log_lde) - 1)) as usize)
        .collect()
}

/// The data a child's transcript absorbed, read by its layout.
pub(crate) struct Absorbed<'a> {
    pub messages: &'a [Message],
    pub data: &'a [Felt],
}

impl<'a> Absorbed<'a> {
    /// The payload of the `k`-th message labelled `label`.
    pub fn payload(&self, label: &'static str, k: usize) -> Result<&'a [Felt], LinkError> {
        let m = self.messages.iter().filter(|m| m.label == label).nth(k);
        m.filter(|m| m.data.end <= self.data.len())
            .map(|m| &self.data[m.data.clone()])
            .ok_or(LinkError::NoMessage { label })
    }

    /// The values of the `k`-th list labelled `label`, whose payload leads with its length.
    pub fn list(&self, label: &'static str, k: usize) -> Result<&'a [Felt], LinkError> {
        match self.payload(label, k)?.split_first() {
            Some((len, values)) if len.as_u64() == values.len() as u64 => Ok(values),
            _ => Err(LinkError::ListLength { label }),
        }
    }

    /// The extension values of the `k`-th list labelled `label`, 3 coordinates each.
    pub fn exts(&self, label: &'static str, k: usize) -> Result<Vec<Ext3>, LinkError> {
        let values = self.list(label, k)?;
        if values.len() % 3 != 0 {
            return Err(LinkError::ListLength { label });
        }
        Ok((values.chunks_exact(3))
            .map(|c| Ext3::new([c[0], c[1], c[2]]))
            .collect())
    }

    /// The out-of-domain values the transcript absorbed for its `k`-th table (a segment's
    /// one, or a tables proof's, tallest first).
    pub fn ood(&self, k: usize) -> Result<OodValues, LinkError> {
        Ok(OodValues {
            trace_z: self.exts(label::OOD_TRACE_Z, k)?,
            trace_zw: self.exts(label::OOD_TRACE_ZW, k)?,
            quotient_z: self.exts(label::OOD_QUOTIENT_Z, k)?,
        })
    }
}

/// A child's query phase (a segment's or a layer's): the AIR and what its trace and public
/// inputs are made of.
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
    fn of(shape: &ChildShape, proof: &SegmentProof, replay: Replay) -> Result<Self, OpeningsError> {
        let q = &proof.queries;
        let air = QueriesAir::new(shape, &replay.draws)?;
        let roots = roots_of(&proof.trace_root, &proof.quotient_root, &proof.fri_roots)?;
        let openings = air.deep().openings();
        let opened = vec![
            openings.open(0, &roots[0], &q.trace_rows, &q.trace_nodes)?,
            openings.open(1, &roots[1], &q.quotient_rows, &q.quotient_nodes)?,
        ];
        Self {
            claims: DeepClaims::of(replay.gamma, std::slice::from_ref(&replay.deep)),
            betas: replay.betas,
            final_poly: proof.final_poly.clone(),
            air,
            opened,
            roots,
        }
        .with_fri(&replay.fri_rows, q)
    }

    /// The query phase of `proof`, a Poseidon2 proof of tables made with `params` (a
    /// layer's, for a layer over it), from what its verifier derived (`replay`).
    pub(crate) fn of_tables(
        proof: &TablesProof,
        replay: TablesReplay,
        params: &StarkParams,
    ) -> Result<Self, OpeningsError> {
        let q = &proof.queries;
        let [trace, quotient] = &replay.trees;
        let (log_blowup, log_final) = (params.log_blowup, params.log_final_poly_len);
        let air = QueriesAir::mixed(trace, quotient, log_blowup, log_final, &replay.draws)?;
        let roots = roots_of(&proof.trace_root, &proof.quotient_root, &proof.fri_roots)?;
        let openings = air.deep().openings();
        let open = |tree: usize, shape: &MixedShape, rows: &[Felt], nodes: &[Digest]| {
            let rows = (shape.split_rows(rows, replay.positions.len()))
                .ok_or(OpeningsError::OtherTables { tree })?;
            openings.open_mixed(tree, &roots[tree], shape, &replay.positions, &rows, nodes)
        };
        let opened = vec![
            open(0, trace, &q.trace_rows, &q.trace_nodes)?,
            open(1, quotient, &q.quotient_rows, &q.quotient_nodes)?,
        ];
        Self {
            claims: DeepClaims::of(replay.gamma, &replay.deeps),
            betas: replay.betas,
            final_poly: proof.final_poly.clone(),
            air,
            opened,
            roots,
        }
        .with_fri(&replay.fri_rows, q)
    }

    /// With each FRI layer's openings: its `rows` (`ballast_fri::verify_queries`'s) and
    /// nodes (the proof's `q`).
    fn with_fri(mut self, rows: &[Vec<Felt>], q: &QueryOpenings) -> Result<Self, OpeningsError> {
        let openings = self.air.deep().openings();
        let layers = openings.trees().len() - 2;
        expect_len("FRI layers", layers, rows.len())?;
        for (i, (rows, layer)) in rows.iter().zip(&q.fri).enumerate() {
            let opened = openings.open(2 + i, &self.roots[2 + i], rows, &layer.nodes)?;
            self.opened.push(opened);
        }
        Ok(self)
    }

    /// The AIR's trace.
    ///
    /// # Errors
    /// None for one [`Child::of_segment`] or [`Child::of_layer`] built;
    /// what [`QueriesAir::trace`] refuses after the fields are changed.
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

/// A proof's roots, as the query AIR takes them: the trace's, the quotient's, then each FRI
/// layer's.
fn roots_of(
    trace: &Digest,
    quotient: &Digest,
    layers: &[Digest],
) -> Result<Vec<FeltDigest>, OpeningsError> {
    [trace, quotient]
        .into_iter()
        .chain(layers)
        .map(felt_digest)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_is_a_draws_low_bits() {
        // Bits above the LDE's size leave the position; the low ones are it.
        let draws = [3, 3 + (1 << 5), (1 << 40) + 31, 32].map(Felt::new);
        assert_eq!(positions_of(&draws, 5), [3, 3, 31, 0]);
    }
}
