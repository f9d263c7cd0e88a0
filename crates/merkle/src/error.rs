//! Why a tree could not be assembled.

use thiserror::Error;

/// Levels that do not form a Merkle tree.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum MerkleError {
    /// This error occurs when the number of leaves is not a power of two.
    #[error("{leaves} leaves is not a power of two")]
    LeafCount {
        /// The number of leaves given.
        leaves: usize,
    },
    /// This error occurs when a level, or the number of levels, has the wrong size.
    #[error("{what}: expected {expected}, got {got}")]
    Shape {
        /// Which size is wrong.
        what: &'static str,
        /// The size a tree needs.
        expected: usize,
        /// The size given.
        got: usize,
    },
    /// This error occurs when the leaves to open are not a strictly increasing, non-empty
    /// list of leaf indices.
    #[error("{0}")]
    Indices(&'static str),
    /// This error occurs when the tables of a mixed tree are none, or not tallest first.
    #[error("{0}")]
    Tables(&'static str),
}
