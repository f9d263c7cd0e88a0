//! FRI's transcript steps, one function each, taken alike by the prover and the verifier.

use ballast_field::Ext3;
use ballast_merkle::Digest;
use ballast_transcript::Transcript;

/// A round's step: absorb its layer's root, draw its folding challenge β.
pub(crate) fn round_challenge(transcript: &mut Transcript, layer_root: &Digest) -> Ext3 {
    transcript.absorb_root("fri-layer-root", layer_root);
    transcript.challenge_ext("fri-fold")
}

/// The last step: absorb the final polynomial's coefficients.
pub(crate) fn absorb_final_poly(transcript: &mut Transcript, coeffs: &[Ext3]) {
    transcript.absorb_ext("fri-final-poly", coeffs);
}
