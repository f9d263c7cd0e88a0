//! Why a trace does not satisfy its AIR.

use thiserror::Error;

/// A trace that is not a witness for its AIR.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AirError {
    /// This error occurs when the trace's shape differs from the AIR's.
    #[error("trace is {got_width} columns × {got_height} rows, expected {width} × {height}")]
    Shape {
        /// Columns the AIR expects.
        width: usize,
        /// Rows the AIR expects.
        height: usize,
        /// Columns in the trace.
        got_width: usize,
        /// Rows in the trace.
        got_height: usize,
    },
    /// This error occurs when a transition constraint is not zero on a row pair.
    #[error("transition constraint {constraint} fails between rows {row} and {}", row + 1)]
    Transition {
        /// The constraint index.
        constraint: usize,
        /// The first row of the failing pair.
        row: usize,
    },
    /// This error occurs when a boundary constraint does not hold.
    #[error("boundary constraint on column {column}, row {row}: expected {expected}, got {got}")]
    Boundary {
        /// The constrained column.
        column: usize,
        /// The constrained row.
        row: usize,
        /// The required value.
        expected: u64,
        /// The trace's value.
        got: u64,
    },
}
