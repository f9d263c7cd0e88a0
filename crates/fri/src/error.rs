//! What goes wrong in FRI: a query the verifier rejects, or an input the prover cannot commit.

use thiserror::Error;

/// A FRI check that did not hold, on either side.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FriError {
    /// This error occurs when a layer's Merkle opening, built from the query's own value and
    /// the sibling in the proof, does not lead to the layer's root.
    #[error("fri layer {layer}: merkle opening of leaf {leaf} does not match the root")]
    LayerOpening {
        /// The layer index.
        layer: usize,
        /// The leaf that was opened.
        leaf: usize,
    },
    /// This error occurs when the last folded value differs from the final polynomial.
    #[error("fri final polynomial disagrees with the folded value at position {position}")]
    FinalPolynomial {
        /// The position in the final domain.
        position: usize,
    },
    /// This error occurs when the prover's input is not of low enough degree: the trace did
    /// not satisfy the constraints.
    #[error("the folded function has degree ≥ {bound}: the input is not a low-degree polynomial")]
    DegreeTooHigh {
        /// The degree bound that was exceeded.
        bound: usize,
    },
}
