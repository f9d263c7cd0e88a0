//! FRI's transcript steps, one function each, taken alike by the prover and the verifier.

use ballast_field::Ext3;
use ballast_merkle::Digest;
use ballast_transcript::Transcript;

/// The labels of the messages FRI absorbs, by which a recursive verifier finds them among
/// a transcript's data (`ballast_transcript::Message`).
pub mod label {
    /// Each round's layer root.
    pub const LAYER_ROOT: &str = "fri-layer-root";
    /// The final polynomial's coefficients.
    pub const FINAL_POLY: &str = "fri-final-poly";
}

/// A round's step: absorb its layer's root, draw its folding challenge β.
pub(crate) fn round_challenge(transcript: &mut Transcript, layer_root: &Digest) -> Ext3 {
    transcript.absorb_root(label::LAYER_ROOT, layer_root);
    transcript.challenge_ext("fri-fold")
}

/// The last step: absorb the final polynomial's coefficients.
pub(crate) fn absorb_final_poly(transcript: &mut Transcript, coeffs: &[Ext3]) {
    transcript.absorb_ext(label::FINAL_POLY, coeffs);
}
