//! The FRI query phase on the verifier's side.

use ballast_field::{Ext3, Felt, TWO_ADICITY};
use ballast_merkle::{Digest, MerkleHash, verify_batch};
use ballast_ntt::{LdePlan, evaluate_poly};
use ballast_transcript::Transcript;

use crate::steps::{absorb_final_poly, round_challenge};
use crate::{FriError, QueryPlan, fold_coset, layer_row, roll_in_arities};

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
    log_domains: Vec<usize>,
    log_arities: Vec<usize>,
    layer_roots: Vec<Digest>,
    betas: Vec<Ext3>,
    final_poly: Vec<Ext3>,
}

impl FriVerifierInput {
    /// Replays [`commit_phase`](crate::commit_phase) for inputs of 2^`log_domains[i]`
    /// values (tallest first), its layers committed with the transcript's hash: absorbs each
    /// layer root and draws its challenge, then absorbs the final polynomial.
    ///
    /// # Errors
    /// [`FriError::Shape`] if there is no input, the domain is larger than the field's
    /// two-adic subgroup, the sizes do not strictly decrease, there is not one root per
    /// round, the final polynomial does not have 2^`log_final_poly_len` coefficients, or
    /// the sizes leave nothing to test.
    pub fn new(
        log_domains: &[usize],
        log_blowup: usize,
        log_final_poly_len: usize,
        layer_roots: Vec<Digest>,
        final_poly: Vec<Ext3>,
        transcript: &mut Transcript,
    ) -> Result<Self, FriError> {
        let log_final_domain = log_blowup + log_final_poly_len;
        let (Some(&log_domain), Some(&smallest)) = (log_domains.first(), log_domains.last()) else {
            return Err(FriError::Shape {
                what: "inputs",
                expected: 1,
                got: 0,
            });
        };
        if log_domain > TWO_ADICITY {
            return Err(FriError::Shape {
                what: "domain bits",
                expected: TWO_ADICITY,
                got: log_domain,
            });
        }
        if smallest < log_final_domain {
            return Err(FriError::Shape {
                what: "domain bits",
                expected: log_final_domain,
                got: smallest,
            });
        }
        if let Some(w) = log_domains.windows(2).find(|w| w[0] <= w[1]) {
            return Err(FriError::Shape {
                what: "domain bits of an input rolled in (below the one before)",
                expected: w[0].saturating_sub(1),
                got: w[1],
            });
        }
        let log_arities = roll_in_arities(log_domains, log_final_domain);
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
            log_domains: log_domains.to_vec(),
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

/// Checks the queries at the first input's `positions` (strictly increasing). `values` are
/// the first input's values there, and `roll_ins[t]` input t + 1's at the positions the
/// queries reach in it (the distinct `positions` mod its length, increasing), computed by
/// the caller from its own openings. Returns each layer's opened rows: the queried cosets'
/// values (base coordinates, slot by slot), coset after coset in leaf order, as the layer's
/// tree hashed them.
///
/// Layer by layer: every queried coset is rebuilt from the values folded so far and the
/// proof's other values, the cosets' batch opening is checked against the layer's root, and
/// each coset is folded, with β^a times an input of the folded size added. The folded values
/// must lie on the final polynomial.
///
/// # Errors
/// The first check that fails, or a shape error if the openings or values do not match the
/// plan.
pub fn verify_queries(
    input: &FriVerifierInput,
    positions: &[usize],
    values: &[Ext3],
    roll_ins: &[Vec<Ext3>],
    openings: &[FriLayerOpening],
) -> Result<Vec<Vec<Felt>>, FriError> {
    let plan = QueryPlan::new(input.log_domains[0], &input.log_arities, positions)?;
    expect("query values", positions.len(), values.len())?;
    expect(
        "inputs rolled in",
        input.log_domains.len() - 1,
        roll_ins.len(),
    )?;
    expect("layer openings", plan.layers().len(), openings.len())?;
    let mut pending = input.log_domains[1..].iter().zip(roll_ins).peekable();
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
        if let Some((_, rolled)) = pending.next_if(|(l, _)| **l == planned.height()) {
            expect("values of an input rolled in", folded.len(), rolled.len())?;
            let coefficient = beta.pow(arity as u64);
            for (f, &v) in folded.iter_mut().zip(rolled) {
                *f += coefficient * v;
            }
        }
        positions = planned.leaves().to_vec();
        values = folded;
        shift = shift.pow(arity as u64);
        opened.push(rows);
    }
    let log_final_domain = input.log_domains[0] - input.log_arities.iter().sum::<usize>();
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
    use crate::steps::{absorb_final_poly, round_challenge};
    use crate::{HostLayers, commit_layer, commit_phase, round_arities};
    use ballast_merkle::MerkleTree;
    use ballast_ntt::interpolate_coset;

    const LOG_BLOWUP: usize = 1;
    const LOG_FINAL: usize = 2;

    /// Values on g·H_N of a polynomial with `degree` coefficients.
    fn codeword(log_domain: usize, degree: usize) -> Vec<Ext3> {
        codeword_of(0, log_domain, degree)
    }

    /// Values on g·H_N of the `seed`-th polynomial with `degree` coefficients.
    fn codeword_of(seed: u64, log_domain: usize, degree: usize) -> Vec<Ext3> {
        let coeffs: Vec<Ext3> = (0..degree as u64)
            .map(|i| {
                Ext3::new([
                    Felt::new(i * 7 + 1 + seed),
                    Felt::new(i ^ 0xabc),
                    Felt::new(3),
                ])
            })
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
        let mut layers = HostLayers::new(vec![evals], hash);
        let commitment =
            commit_phase::<_, FriError>(&mut layers, &[log_domain], LOG_BLOWUP, LOG_FINAL, &mut t)?;
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
            &[log_domain],
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
            let rows = verify_queries(&input, &positions, &at(&evals, &positions), &[], &openings)
                .unwrap();
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
                verify_queries(&input, &positions, &bad, &[], &openings),
                Err(FriError::LayerOpening { layer: 0 })
            );
        }
        for layer in 0..openings.len() {
            for k in 0..openings[layer].values.len() {
                let mut bad = openings.clone();
                bad[layer].values[k] += Ext3::ONE;
                assert_eq!(
                    verify_queries(&input, &positions, &values, &[], &bad),
                    Err(FriError::LayerOpening { layer }),
                );
            }
            for k in 0..openings[layer].nodes.len() {
                let mut bad = openings.clone();
                bad[layer].nodes[k][0] ^= 1;
                assert_eq!(
                    verify_queries(&input, &positions, &values, &[], &bad),
                    Err(FriError::LayerOpening { layer }),
                );
            }
        }
        let mut short = openings.clone();
        short[1].values.pop();
        assert!(matches!(
            verify_queries(&input, &positions, &values, &[], &short),
            Err(FriError::Shape { .. })
        ));
        assert!(verify_queries(&input, &[3, 77], &values, &[], &openings).is_err());
        assert!(verify_queries(&input, &[77, 3, 200, 333, 500], &values, &[], &openings).is_err());
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
                &[],
                &c.open(&positions)
            ),
            Err(FriError::FinalPolynomial { .. })
        ));
        let mut t = Transcript::new(MerkleHash::Keccak256, b"fri-test");
        assert!(
            FriVerifierInput::new(&[log_domain], LOG_BLOWUP, LOG_FINAL, vec![], vec![], &mut t)
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
            verify_queries(&input, &all, &evals, &[], &c.open(&all)).unwrap();
            let mut bad = evals.clone();
            bad[1] += Ext3::ONE;
            assert!(verify_queries(&input, &all, &bad, &[], &c.open(&all)).is_err());
        }
    }

    /// The distinct `positions` mod 2^`log_len`, increasing: where queries reach an input.
    fn reached(positions: &[usize], log_len: usize) -> Vec<usize> {
        let reached: std::collections::BTreeSet<usize> =
            positions.iter().map(|p| p & ((1 << log_len) - 1)).collect();
        reached.into_iter().collect()
    }

    /// Inputs of 2^10, 2^7 and 2^3 values (the final domain), each of rate 1/2.
    fn three_inputs() -> Vec<Vec<Ext3>> {
        [10, 7, 3]
            .into_iter()
            .enumerate()
            .map(|(seed, l)| codeword_of(seed as u64, l, 1 << (l - LOG_BLOWUP)))
            .collect()
    }

    fn log_domains(inputs: &[Vec<Ext3>]) -> Vec<usize> {
        inputs
            .iter()
            .map(|i| i.len().trailing_zeros() as usize)
            .collect()
    }

    /// The values the verifier is given: the first input's at `positions`, the others' where
    /// the queries reach them.
    fn given(inputs: &[Vec<Ext3>], positions: &[usize]) -> (Vec<Ext3>, Vec<Vec<Ext3>>) {
        let rolled = inputs[1..]
            .iter()
            .map(|input| {
                let log_len = input.len().trailing_zeros() as usize;
                at(input, &reached(positions, log_len))
            })
            .collect();
        (at(&inputs[0], positions), rolled)
    }

    /// A commit phase written out by hand, rolling each later input in with
    /// `coefficient(β, a)`, and its openings.
    struct ByHand {
        layers: Vec<(Vec<Ext3>, usize, MerkleTree)>,
        roots: Vec<Digest>,
        final_poly: Vec<Ext3>,
        /// Whether the last layer is of degree < 2^`LOG_FINAL`.
        low_degree: bool,
    }

    impl ByHand {
        fn prove(inputs: &[Vec<Ext3>], coefficient: impl Fn(Ext3, usize) -> Ext3) -> Self {
            let hash = MerkleHash::Poseidon2;
            let mut t = Transcript::new(hash, b"fri-test");
            let mut current = inputs[0].clone();
            let mut rest = inputs[1..].iter().peekable();
            let mut shift = LdePlan::SHIFT;
            let (mut layers, mut roots) = (Vec::new(), Vec::new());
            for log_arity in roll_in_arities(&log_domains(inputs), LOG_BLOWUP + LOG_FINAL) {
                let tree = commit_layer(hash, &current, log_arity);
                let beta = round_challenge(&mut t, &tree.root());
                let stride = current.len() >> log_arity;
                let zeta = Felt::two_adic_root(current.len().trailing_zeros() as usize);
                let mut folded: Vec<Ext3> = (0..stride)
                    .map(|r| {
                        let mut coset: Vec<Ext3> = (0..1 << log_arity)
                            .map(|i| current[r + i * stride])
                            .collect();
                        fold_coset(&mut coset, shift * zeta.pow(r as u64), beta)
                    })
                    .collect();
                if let Some(input) = rest.next_if(|i| i.len() == stride) {
                    let c = coefficient(beta, 1 << log_arity);
                    folded.iter_mut().zip(input).for_each(|(f, &v)| *f += c * v);
                }
                shift = shift.pow(1 << log_arity);
                roots.push(tree.root());
                layers.push((std::mem::replace(&mut current, folded), log_arity, tree));
            }
            let mut final_poly = interpolate_coset(&current, shift);
            let low_degree = final_poly[1 << LOG_FINAL..]
                .iter()
                .all(|&c| c == Ext3::ZERO);
            final_poly.truncate(1 << LOG_FINAL);
            absorb_final_poly(&mut t, &final_poly);
            Self {
                layers,
                roots,
                final_poly,
                low_degree,
            }
        }

        fn open(&self, log_domain: usize, positions: &[usize]) -> Vec<FriLayerOpening> {
            let arities: Vec<usize> = self.layers.iter().map(|l| l.1).collect();
            let plan = QueryPlan::new(log_domain, &arities, positions).unwrap();
            self.layers
                .iter()
                .zip(plan.layers())
                .map(|((evals, log_arity, tree), planned)| FriLayerOpening {
                    values: planned
                        .unknown_slots()
                        .map(|(leaf, slot)| evals[leaf + slot * (evals.len() >> log_arity)])
                        .collect(),
                    nodes: tree.open_batch(planned.leaves()),
                })
                .collect()
        }

        fn verify(&self, inputs: &[Vec<Ext3>], positions: &[usize]) -> Result<(), FriError> {
            let mut t = Transcript::new(MerkleHash::Poseidon2, b"fri-test");
            let domains = log_domains(inputs);
            let input = FriVerifierInput::new(
                &domains,
                LOG_BLOWUP,
                LOG_FINAL,
                self.roots.clone(),
                self.final_poly.clone(),
                &mut t,
            )?;
            let (values, rolled) = given(inputs, positions);
            let openings = self.open(domains[0], positions);
            verify_queries(&input, positions, &values, &rolled, &openings).map(|_| ())
        }
    }

    #[test]
    fn inputs_roll_in_at_their_sizes() {
        let inputs = three_inputs();
        let domains = log_domains(&inputs);
        let hash = MerkleHash::Poseidon2;
        let mut prover_t = Transcript::new(hash, b"fri-test");
        let mut layers = HostLayers::new(inputs.clone(), hash);
        let commitment = commit_phase::<_, FriError>(
            &mut layers,
            &domains,
            LOG_BLOWUP,
            LOG_FINAL,
            &mut prover_t,
        )
        .unwrap();
        // The library's commit phase is the one written out by hand with β^a.
        let by_hand = ByHand::prove(&inputs, |beta, a| beta.pow(a as u64));
        assert!(by_hand.low_degree);
        assert_eq!(commitment.layer_roots, by_hand.roots);
        assert_eq!(commitment.final_poly, by_hand.final_poly);

        let mut verifier_t = Transcript::new(hash, b"fri-test");
        let input = FriVerifierInput::new(
            &domains,
            LOG_BLOWUP,
            LOG_FINAL,
            commitment.layer_roots.clone(),
            commitment.final_poly.clone(),
            &mut verifier_t,
        )
        .unwrap();
        assert_eq!(prover_t, verifier_t);
        assert_eq!(input.log_arities(), [3, 3, 1]);
        let positions = [0, 9, 137, 265, 700, 1023];
        let plan = QueryPlan::new(10, input.log_arities(), &positions).unwrap();
        let openings = layers.open(&plan);
        let (values, rolled) = given(&inputs, &positions);
        verify_queries(&input, &positions, &values, &rolled, &openings).unwrap();
        for t in 0..rolled.len() {
            for k in 0..rolled[t].len() {
                let mut bad = rolled.clone();
                bad[t][k] += Ext3::ONE;
                let result = verify_queries(&input, &positions, &values, &bad, &openings);
                assert!(result.is_err(), "input {} value {k}", t + 1);
            }
        }
        assert!(matches!(
            verify_queries(&input, &positions, &values, &rolled[..1], &openings),
            Err(FriError::Shape { .. })
        ));
        let mut short = rolled.clone();
        short[0].pop();
        assert!(matches!(
            verify_queries(&input, &positions, &values, &short, &openings),
            Err(FriError::Shape { .. })
        ));
    }

    #[test]
    fn a_high_degree_input_cannot_be_rolled_in() {
        let mut inputs = three_inputs();
        inputs[1] = codeword_of(5, 7, 1 << 7);
        let mut layers = HostLayers::new(inputs.clone(), MerkleHash::Poseidon2);
        let mut t = Transcript::new(MerkleHash::Poseidon2, b"fri-test");
        let result = commit_phase::<_, FriError>(
            &mut layers,
            &log_domains(&inputs),
            LOG_BLOWUP,
            LOG_FINAL,
            &mut t,
        );
        assert!(matches!(result, Err(FriError::DegreeTooHigh { .. })));
    }

    #[test]
    fn a_far_input_cancelled_by_a_roll_in_of_coefficient_one_is_refused() {
        // f = F + ẽ with ẽ(p) = e(p mod 2^7): every fold of ẽ is e, whatever β. With h = H − e
        // rolled in with a coefficient of 1, the fold of f plus h is the fold of F plus H, a
        // codeword, though f and h are far from the code; with β^8 it keeps (1 − β^8)·e.
        let (f_low, h_low) = (codeword_of(1, 10, 1 << 9), codeword_of(2, 7, 1 << 6));
        let e: Vec<Ext3> = (0..1u64 << 7)
            .map(|i| {
                Ext3::new([
                    Felt::new(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                    Felt::new(i),
                    Felt::ONE,
                ])
            })
            .collect();
        let f: Vec<Ext3> = (0..1 << 10).map(|p| f_low[p] + e[p % (1 << 7)]).collect();
        let h: Vec<Ext3> = h_low.iter().zip(&e).map(|(&v, &e)| v - e).collect();
        let inputs = vec![f, h, codeword_of(3, 3, 1 << 2)];

        let forged = ByHand::prove(&inputs, |_, _| Ext3::ONE);
        assert!(forged.low_degree, "a coefficient of 1 lets e cancel");
        let all: Vec<usize> = (0..1 << 10).collect();
        assert!(forged.verify(&inputs, &all).is_err());
        assert!(!ByHand::prove(&inputs, |beta, a| beta.pow(a as u64)).low_degree);

        let honest = ByHand::prove(&three_inputs(), |beta, a| beta.pow(a as u64));
        honest.verify(&three_inputs(), &all).unwrap();
    }

    #[test]
    fn input_sizes_must_decrease_to_the_final_domain() {
        let shape = |domains: &[usize]| {
            let mut t = Transcript::new(MerkleHash::Keccak256, b"fri-test");
            let roots = vec![[0u8; 32]; 2];
            FriVerifierInput::new(
                domains,
                LOG_BLOWUP,
                LOG_FINAL,
                roots,
                vec![Ext3::ZERO; 4],
                &mut t,
            )
        };
        assert!(shape(&[6, 4]).is_ok());
        assert!(matches!(shape(&[]), Err(FriError::Shape { .. })));
        assert!(matches!(shape(&[6, 6]), Err(FriError::Shape { .. })));
        assert!(matches!(shape(&[6, 7]), Err(FriError::Shape { .. })));
        assert!(matches!(shape(&[6, 2]), Err(FriError::Shape { .. })));
    }
}
