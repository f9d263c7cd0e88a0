//! The FRI query phase on the verifier's side.

use ballast_field::{Ext3, Felt, TWO_ADICITY};
use ballast_merkle::{Digest, MerkleHash, verify_batch};
use ballast_ntt::{LdePlan, evaluate_poly};
use ballast_transcript::Transcript;

use crate::steps::{absorb_final_poly, round_challenge};
use crate::{FriError, QueryPlan, fold_coset, layer_row, round_arities};

/// What the queries reveal about one committed layer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FriLayerOpening {
    /// The queried cosets' values the verifier cannot fold itself, coset by coset (leaf
    /// order) and slot by slot ([`PlannedLayer::unknown_slots`](crate::PlannedLayer::unknown_slots)).
    pub values: Vec<Ext3>,
    /// The batch opening of the queried cosets in the layer's tree.
    pub nodes: Vec<Digest>,
}

/// The commit-phase messages, with the folding challenges replayed from the transcript.
#[derive(Clone, Debug)]
pub struct FriVerifierInput {
    hash: MerkleHash,
    log_domain: usize,
    log_arities: Vec<usize>,
    layer_roots: Vec<Digest>,
    betas: Vec<Ext3>,
    final_poly: Vec<Ext3>,
}

impl FriVerifierInput {
    /// Replays [`commit_phase`](crate::commit_phase) for an input of 2^`log_domain` values,
    /// its layers committed with the transcript's hash: absorbs each layer root and draws
    /// its challenge, then absorbs the final polynomial.
    ///
    /// # Errors
    /// [`FriError::Shape`] if the domain is larger than the field's two-adic subgroup, there
    /// is not one root per round, the final polynomial does not have 2^`log_final_poly_len`
    /// coefficients, or the sizes leave nothing to test.
    pub fn new(
        log_domain: usize,
        log_blowup: usize,
        log_final_poly_len: usize,
        layer_roots: Vec<Digest>,
        final_poly: Vec<Ext3>,
        transcript: &mut Transcript,
    ) -> Result<Self, FriError> {
        if log_domain > TWO_ADICITY {
            return Err(FriError::Shape {
                what: "domain bits",
                expected: TWO_ADICITY,
                got: log_domain,
            });
        }
        let Some(folds) = log_domain.checked_sub(log_blowup + log_final_poly_len) else {
            return Err(FriError::Shape {
                what: "domain bits",
                expected: log_blowup + log_final_poly_len,
                got: log_domain,
            });
        };
        let log_arities = round_arities(folds);
        expect("layer roots", log_arities.len(), layer_roots.len())?;
        expect(
            "final polynomial coefficients",
            1 << log_final_poly_len,
            final_poly.len(),
        )?;
        let betas = layer_roots
            .iter()
            .map(|root| round_challenge(transcript, root))
            .collect();
        absorb_final_poly(transcript, &final_poly);
        Ok(Self {
            hash: transcript.hash(),
            log_domain,
            log_arities,
            layer_roots,
            betas,
            final_poly,
        })
    }

    /// log2 of each round's arity.
    pub fn log_arities(&self) -> &[usize] {
        &self.log_arities
    }

    /// Each round's folding challenge β, drawn from the transcript.
    pub fn betas(&self) -> &[Ext3] {
        &self.betas
    }
}

/// Checks the queries at input `positions` (strictly increasing); `values` are the input's
/// values there, computed by the caller from its own openings. Returns each layer's opened
/// rows: the queried cosets' values (base coordinates, slot by slot), coset after coset in
/// leaf order, as the layer's tree hashed them.
///
/// Layer by layer: every queried coset is rebuilt from the values folded so far and the
/// proof's other values, the cosets' batch opening is checked against the layer's root, and
/// each coset is folded. The folded values must lie on the final polynomial.
///
/// # Errors
/// The first check that fails, or a shape error if the openings do not match the plan.
pub fn verify_queries(
    input: &FriVerifierInput,
    positions: &[usize],
    values: &[Ext3],
    openings: &[FriLayerOpening],
) -> Result<Vec<Vec<Felt>>, FriError> {
    let plan = QueryPlan::new(input.log_domain, &input.log_arities, positions)?;
    expect("query values", positions.len(), values.len())?;
    expect("layer openings", plan.layers().len(), openings.len())?;
    let mut positions = positions.to_vec();
    let mut values = values.to_vec();
    let mut shift = LdePlan::SHIFT;
    let mut opened = Vec::with_capacity(openings.len());
    for (layer, ((planned, opening), (root, &beta))) in plan
        .layers()
        .iter()
        .zip(openings)
        .zip(input.layer_roots.iter().zip(&input.betas))
        .enumerate()
    {
        expect(
            "layer values",
            planned.unknown_count(),
            opening.values.len(),
        )?;
        let arity = 1usize << planned.log_arity();
        let stride_bits = planned.height();
        let zeta = Felt::two_adic_root(planned.log_len());
        let mut carried = opening.values.iter();
        let mut leaves = Vec::with_capacity(planned.leaves().len());
        let mut rows = Vec::with_capacity(planned.leaves().len() * arity * 3);
        let mut folded = Vec::with_capacity(planned.leaves().len());
        for (&leaf, known) in planned.leaves().iter().zip(planned.known_slots()) {
            let mut coset = Vec::with_capacity(arity);
            for slot in 0..arity {
                let value = if known.binary_search(&slot).is_ok() {
                    let position = leaf + (slot << stride_bits);
                    let at = positions
                        .binary_search(&position)
                        .expect("the plan's known slots are query positions");
                    values[at]
                } else {
                    *carried.next().expect("the count was checked")
                };
                coset.push(value);
            }
            let row = layer_row(&coset);
            leaves.push(input.hash.row(&row));
            rows.extend(row);
            let x = shift * zeta.pow(leaf as u64);
            folded.push(fold_coset(&mut coset, x, beta));
        }
        if !verify_batch(
            input.hash,
            root,
            planned.height(),
            planned.leaves(),
            &leaves,
            &opening.nodes,
        ) {
            return Err(FriError::LayerOpening { layer });
        }
        positions = planned.leaves().to_vec();
        values = folded;
        shift = shift.pow(arity as u64);
        opened.push(rows);
    }
    let log_final_domain = input.log_domain - input.log_arities.iter().sum::<usize>();
    let zeta = Felt::two_adic_root(log_final_domain);
    for (&position, &value) in positions.iter().zip(&values) {
        let point = shift * zeta.pow(position as u64);
        if evaluate_poly(&input.final_poly, Ext3::from(point)) != value {
            return Err(FriError::FinalPolynomial { position });
        }
    }
    Ok(opened)
}

/// `expected` == `got`, or [`FriError::Shape`] naming `what`.
fn expect(what: &'static str, expected: usize, got: usize) -> Result<(), FriError> {
    if expected == got {
        Ok(())
    } else {
        Err(FriError::Shape {
            what,
            expected,
            got,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HostLayers, commit_phase};

    const LOG_BLOWUP: usize = 1;
    const LOG_FINAL: usize = 2;

    /// Values on g·H_N of a polynomial with `degree` coefficients.
    fn codeword(log_domain: usize, degree: usize) -> Vec<Ext3> {
        let coeffs: Vec<Ext3> = (0..degree as u64)
            .map(|i| Ext3::new([Felt::new(i * 7 + 1), Felt::new(i ^ 0xabc), Felt::new(3)]))
            .collect();
        let zeta = Felt::two_adic_root(log_domain);
        (0..1u64 << log_domain)
            .map(|t| evaluate_poly(&coeffs, Ext3::from(LdePlan::SHIFT * zeta.pow(t))))
            .collect()
    }

    /// The commit phase's messages and the layers the prover keeps for openings.
    struct Proven {
        hash: MerkleHash,
        layers: HostLayers,
        commitment: crate::FriCommitment,
    }

    impl Proven {
        fn layer_roots(&self) -> Vec<Digest> {
            self.commitment.layer_roots.clone()
        }
        fn final_poly(&self) -> &[Ext3] {
            &self.commitment.final_poly
        }
        fn open(&self, positions: &[usize]) -> Vec<FriLayerOpening> {
            let arities = round_arities(self.layers.log_domain() - LOG_BLOWUP - LOG_FINAL);
            let plan = QueryPlan::new(self.layers.log_domain(), &arities, positions).unwrap();
            self.layers.open(&plan)
        }
    }

    fn prove(evals: Vec<Ext3>, hash: MerkleHash) -> Result<(Proven, Transcript), FriError> {
        let mut t = Transcript::new(hash, b"fri-test");
        let log_domain = evals.len().trailing_zeros() as usize;
        let mut layers = HostLayers::new(evals, hash);
        let commitment =
            commit_phase::<_, FriError>(&mut layers, log_domain, LOG_BLOWUP, LOG_FINAL, &mut t)?;
        let proven = Proven {
            hash,
            layers,
            commitment,
        };
        Ok((proven, t))
    }

    fn verifier_input(
        c: &Proven,
        log_domain: usize,
        final_poly: Vec<Ext3>,
    ) -> (FriVerifierInput, Transcript) {
        let mut t = Transcript::new(c.hash, b"fri-test");
        let input = FriVerifierInput::new(
            log_domain,
            LOG_BLOWUP,
            LOG_FINAL,
            c.layer_roots(),
            final_poly,
            &mut t,
        )
        .unwrap();
        (input, t)
    }

    fn at(evals: &[Ext3], positions: &[usize]) -> Vec<Ext3> {
        positions.iter().map(|&p| evals[p]).collect()
    }

    #[test]
    fn honest_queries_verify_and_transcripts_agree() {
        for hash in MerkleHash::ALL {
            honest_queries_verify(hash);
        }
    }

    fn honest_queries_verify(hash: MerkleHash) {
        // 10 − 1 − 2 = 7 folds: rounds of 8, 8 and 2.
        let log_domain = 10;
        let evals = codeword(log_domain, 1 << (log_domain - LOG_BLOWUP));
        let (c, prover_t) = prove(evals.clone(), hash).unwrap();
        let (input, verifier_t) = verifier_input(&c, log_domain, c.final_poly().to_vec());
        assert_eq!(prover_t, verifier_t);
        assert_eq!(input.log_arities(), [3, 3, 1]);
        for positions in [
            vec![0],
            vec![1023],
            vec![0, 1, 128, 255, 256, 300, 511, 512, 1000],
            (0..1024).collect(),
        ] {
            let openings = c.open(&positions);
            let rows =
                verify_queries(&input, &positions, &at(&evals, &positions), &openings).unwrap();
            // The first layer's rows hold each queried value at its coset's slot.
            let plan = QueryPlan::new(log_domain, input.log_arities(), &positions).unwrap();
            let first = &plan.layers()[0];
            let row_len = 3 << first.log_arity();
            assert_eq!(rows[0].len(), first.leaves().len() * row_len);
            for &p in &positions {
                let (leaf, slot) = (p & ((1 << first.height()) - 1), p >> first.height());
                let k = first.leaves().binary_search(&leaf).unwrap();
                let at = k * row_len + 3 * slot;
                assert_eq!(rows[0][at..at + 3], evals[p].coeffs());
            }
        }
    }

    #[test]
    fn every_changed_value_or_node_is_rejected() {
        for hash in MerkleHash::ALL {
            changes_are_rejected(hash);
        }
    }

    fn changes_are_rejected(hash: MerkleHash) {
        let log_domain = 9;
        let evals = codeword(log_domain, 1 << (log_domain - LOG_BLOWUP));
        let (c, _) = prove(evals.clone(), hash).unwrap();
        let (input, _) = verifier_input(&c, log_domain, c.final_poly().to_vec());
        let positions = [3, 77, 200, 333, 500];
        let values = at(&evals, &positions);
        let openings = c.open(&positions);
        for k in 0..values.len() {
            let mut bad = values.clone();
            bad[k] += Ext3::ONE;
            assert_eq!(
                verify_queries(&input, &positions, &bad, &openings),
                Err(FriError::LayerOpening { layer: 0 })
            );
        }
        for layer in 0..openings.len() {
            for k in 0..openings[layer].values.len() {
                let mut bad = openings.clone();
                bad[layer].values[k] += Ext3::ONE;
                assert_eq!(
                    verify_queries(&input, &positions, &values, &bad),
                    Err(FriError::LayerOpening { layer }),
                );
            }
            for k in 0..openings[layer].nodes.len() {
                let mut bad = openings.clone();
                bad[layer].nodes[k][0] ^= 1;
                assert_eq!(
                    verify_queries(&input, &positions, &values, &bad),
                    Err(FriError::LayerOpening { layer }),
                );
            }
        }
        let mut short = openings.clone();
        short[1].values.pop();
        assert!(matches!(
            verify_queries(&input, &positions, &values, &short),
            Err(FriError::Shape { .. })
        ));
        assert!(verify_queries(&input, &[3, 77], &values, &openings).is_err());
        assert!(verify_queries(&input, &[77, 3, 200, 333, 500], &values, &openings).is_err());
    }

    #[test]
    fn a_tampered_final_polynomial_is_rejected() {
        let log_domain = 9;
        let evals = codeword(log_domain, 1 << (log_domain - LOG_BLOWUP));
        let (c, _) = prove(evals.clone(), MerkleHash::Keccak256).unwrap();
        let mut final_poly = c.final_poly().to_vec();
        final_poly[0] += Ext3::ONE;
        let (input, _) = verifier_input(&c, log_domain, final_poly);
        let positions = [5, 6];
        assert!(matches!(
            verify_queries(
                &input,
                &positions,
                &at(&evals, &positions),
                &c.open(&positions)
            ),
            Err(FriError::FinalPolynomial { .. })
        ));
        let mut t = Transcript::new(MerkleHash::Keccak256, b"fri-test");
        assert!(
            FriVerifierInput::new(log_domain, LOG_BLOWUP, LOG_FINAL, vec![], vec![], &mut t)
                .is_err()
        );
    }

    #[test]
    fn a_high_degree_input_cannot_be_committed() {
        let log_domain = 9;
        // Degree equal to the domain size: far from the rate-1/2 code.
        let evals = codeword(log_domain, 1 << log_domain);
        assert!(matches!(
            prove(evals, MerkleHash::Keccak256),
            Err(FriError::DegreeTooHigh { bound: 4 })
        ));
    }

    #[test]
    fn short_schedules_are_handled() {
        // No fold, one binary fold, one full round.
        for (log_domain, rounds) in [(3, 0), (4, 1), (6, 1)] {
            let evals = codeword(log_domain, 1 << (log_domain - LOG_BLOWUP));
            let (c, _) = prove(evals.clone(), MerkleHash::Keccak256).unwrap();
            assert_eq!(c.layer_roots().len(), rounds);
            let (input, _) = verifier_input(&c, log_domain, c.final_poly().to_vec());
            let all: Vec<usize> = (0..evals.len()).collect();
            verify_queries(&input, &all, &evals, &c.open(&all)).unwrap();
            let mut bad = evals.clone();
            bad[1] += Ext3::ONE;
            assert!(verify_queries(&input, &all, &bad, &c.open(&all)).is_err());
        }
    }
}
