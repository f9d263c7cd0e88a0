//! The FRI query phase on the verifier's side.

use ballast_field::{Ext3, Felt};
use ballast_merkle::{Digest, verify_path};
use ballast_ntt::{LdePlan, evaluate_poly};
use ballast_transcript::Transcript;

use crate::{FriError, fold_pair, layer_leaf};

/// What a query reveals about one committed layer: the other half of the pair and its
/// Merkle path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FriLayerProof {
    /// The value at the position paired with the query's (x ↔ −x).
    pub sibling: Ext3,
    /// The authentication path of the pair's leaf.
    pub path: Vec<Digest>,
}

/// The commit-phase messages, with the folding challenges replayed from the transcript.
#[derive(Clone, Debug)]
pub struct FriVerifierInput {
    log_domain: usize,
    layer_roots: Vec<Digest>,
    betas: Vec<Ext3>,
    final_poly: Vec<Ext3>,
}

impl FriVerifierInput {
    /// Replays [`commit`](crate::commit): draws the first folding challenge, then absorbs
    /// each layer root and draws its challenge, then absorbs the final polynomial.
    ///
    /// # Panics
    /// If there is not one root per fold after the first (the caller checks proof shapes).
    pub fn new(
        log_domain: usize,
        folds: usize,
        layer_roots: Vec<Digest>,
        final_poly: Vec<Ext3>,
        transcript: &mut Transcript,
    ) -> Self {
        assert_eq!(
            layer_roots.len(),
            folds.saturating_sub(1),
            "one root per committed layer"
        );
        let mut betas = Vec::with_capacity(folds);
        if folds > 0 {
            betas.push(transcript.challenge_ext("fri-fold"));
        }
        for root in &layer_roots {
            transcript.absorb("fri-layer-root", root);
            betas.push(transcript.challenge_ext("fri-fold"));
        }
        transcript.absorb_ext("fri-final-poly", &final_poly);
        Self {
            log_domain,
            layer_roots,
            betas,
            final_poly,
        }
    }
}

/// Checks one query. `pair` (< N/2) names the input positions `pair` and `pair` + N/2, i.e.
/// the points x = g·ζ^pair and −x; `lo` and `hi` are the input's values there, computed by
/// the caller from its own openings.
///
/// # Errors
/// The first check that fails.
///
/// # Panics
/// If `layers` does not hold one opening per committed layer (the caller parses proofs to
/// shape).
pub fn verify_query(
    input: &FriVerifierInput,
    pair: usize,
    (lo, hi): (Ext3, Ext3),
    layers: &[FriLayerProof],
) -> Result<(), FriError> {
    assert_eq!(
        layers.len(),
        input.layer_roots.len(),
        "one opening per layer"
    );
    let zeta = Felt::two_adic_root(input.log_domain);
    let x = LdePlan::SHIFT * zeta.pow(pair as u64);
    let Some((&beta, betas)) = input.betas.split_first() else {
        // Nothing to fold: both values must already lie on the final polynomial.
        let on_final =
            |point: Felt, value| evaluate_poly(&input.final_poly, Ext3::from(point)) == value;
        return if on_final(x, lo) && on_final(-x, hi) {
            Ok(())
        } else {
            Err(FriError::FinalPolynomial { position: pair })
        };
    };
    let mut value = fold_pair(lo, hi, beta, (x + x).inverse());
    // The running value sits at `point` = x^(2^i), position `index` of layer i.
    let mut point = x.square();
    let mut index = pair;
    let mut len = 1usize << (input.log_domain - 1);
    for (layer, ((opening, root), &beta)) in
        layers.iter().zip(&input.layer_roots).zip(betas).enumerate()
    {
        let half = len / 2;
        let leaf = index % half;
        let (lo, hi, x) = if index < half {
            (value, opening.sibling, point)
        } else {
            (opening.sibling, value, -point)
        };
        if !verify_path(root, leaf, layer_leaf(lo, hi), &opening.path) {
            return Err(FriError::LayerOpening {
                layer: layer + 1,
                leaf,
            });
        }
        value = fold_pair(lo, hi, beta, (x + x).inverse());
        point = point.square();
        index = leaf;
        len = half;
    }
    if evaluate_poly(&input.final_poly, Ext3::from(point)) != value {
        return Err(FriError::FinalPolynomial { position: index });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FriCommitment, commit, commit_layer_cpu};

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

    fn folds(log_domain: usize) -> usize {
        log_domain - LOG_BLOWUP - LOG_FINAL
    }

    fn prove(evals: Vec<Ext3>) -> Result<(FriCommitment, Transcript), FriError> {
        let mut t = Transcript::new(b"fri-test");
        let c = commit(evals, LOG_BLOWUP, LOG_FINAL, &mut t, |e| {
            Ok::<_, FriError>(commit_layer_cpu(e))
        })?;
        Ok((c, t))
    }

    fn verifier_input(c: &FriCommitment, log_domain: usize) -> (FriVerifierInput, Transcript) {
        let mut t = Transcript::new(b"fri-test");
        let input = FriVerifierInput::new(
            log_domain,
            folds(log_domain),
            c.layer_roots(),
            c.final_poly().to_vec(),
            &mut t,
        );
        (input, t)
    }

    fn pair(evals: &[Ext3], j: usize) -> (Ext3, Ext3) {
        (evals[j], evals[j + evals.len() / 2])
    }

    #[test]
    fn honest_queries_verify_and_transcripts_agree() {
        let log_domain = 10;
        let evals = codeword(log_domain, 1 << (log_domain - LOG_BLOWUP));
        let (c, prover_t) = prove(evals.clone()).unwrap();
        let (input, verifier_t) = verifier_input(&c, log_domain);
        assert_eq!(prover_t, verifier_t);
        assert_eq!(c.layer_roots().len(), folds(log_domain) - 1);
        for j in [0, 1, 255, 256, 511, 300] {
            verify_query(&input, j, pair(&evals, j), &c.open(j)).unwrap();
        }
    }

    #[test]
    fn a_wrong_value_or_sibling_is_rejected() {
        let log_domain = 9;
        let evals = codeword(log_domain, 1 << (log_domain - LOG_BLOWUP));
        let (c, _) = prove(evals.clone()).unwrap();
        let (input, _) = verifier_input(&c, log_domain);
        let j = 77;
        let (lo, hi) = pair(&evals, j);
        assert_eq!(
            verify_query(&input, j, (lo + Ext3::ONE, hi), &c.open(j)),
            Err(FriError::LayerOpening { layer: 1, leaf: 77 })
        );
        let mut openings = c.open(j);
        openings[2].sibling += Ext3::ONE;
        assert!(matches!(
            verify_query(&input, j, (lo, hi), &openings),
            Err(FriError::LayerOpening { layer: 3, .. })
        ));
    }

    #[test]
    fn a_tampered_final_polynomial_is_rejected() {
        let log_domain = 9;
        let evals = codeword(log_domain, 1 << (log_domain - LOG_BLOWUP));
        let (c, _) = prove(evals.clone()).unwrap();
        let mut final_poly = c.final_poly().to_vec();
        final_poly[0] += Ext3::ONE;
        let mut t = Transcript::new(b"fri-test");
        let input = FriVerifierInput::new(
            log_domain,
            folds(log_domain),
            c.layer_roots(),
            final_poly,
            &mut t,
        );
        assert!(matches!(
            verify_query(&input, 5, pair(&evals, 5), &c.open(5)),
            Err(FriError::FinalPolynomial { .. })
        ));
    }

    #[test]
    fn a_high_degree_input_cannot_be_committed() {
        let log_domain = 9;
        // Degree equal to the domain size: far from the rate-1/2 code.
        let evals = codeword(log_domain, 1 << log_domain);
        assert!(matches!(
            prove(evals),
            Err(FriError::DegreeTooHigh { bound: 4 })
        ));
    }

    #[test]
    fn one_fold_and_no_fold_are_handled() {
        for log_domain in [LOG_BLOWUP + LOG_FINAL, LOG_BLOWUP + LOG_FINAL + 1] {
            let evals = codeword(log_domain, 1 << (log_domain - LOG_BLOWUP));
            let (c, _) = prove(evals.clone()).unwrap();
            assert!(c.layer_roots().is_empty());
            let (input, _) = verifier_input(&c, log_domain);
            for j in 0..evals.len() / 2 {
                verify_query(&input, j, pair(&evals, j), &[]).unwrap();
                let (lo, hi) = pair(&evals, j);
                assert!(verify_query(&input, j, (lo, hi + Ext3::ONE), &[]).is_err());
            }
        }
    }
}
