//! What goes wrong in FRI: a query the verifier rejects, or an input the prover cannot commit.

use thiserror::Error;

/// A FRI check that did not hold, on either side.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FriError {
    /// This error occurs when a layer's batch opening, built from the queried cosets, does
    /// not lead to the layer's root.
    #[error("fri layer {layer}: the batch opening of the queried cosets does not match the root")]
    LayerOpening {
        /// The layer index.
        layer: usize,
    },
    /// This error occurs when a folded value differs from the final polynomial.
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
    /// This error occurs when a part of the FRI proof has the wrong size.
    #[error("fri {what}: expected {expected}, got {got}")]
    Shape {
        /// Which part.
        what: &'static str,
        /// The size the parameters fix.
        expected: usize,
        /// The size given.
        got: usize,
    },
    /// This error occurs when the query positions are not a strictly increasing, non-empty
    /// list of positions in the input domain.
    #[error("fri query positions: {0}")]
    Positions(String),
}

impl From<std::convert::Infallible> for FriError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}
