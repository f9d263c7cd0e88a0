//! Why a trace does not satisfy its AIR, or an AIR is malformed.

use thiserror::Error;

/// A trace that is not a witness for its AIR, or an AIR that cannot be proven.
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
    /// This error occurs when the public inputs are not as many as the AIR reads.
    #[error("{got} public inputs, the AIR reads {expected}")]
    PublicInputs {
        /// Public inputs the AIR reads.
        expected: usize,
        /// Public inputs given.
        got: usize,
    },
    /// This error occurs when a constraint does not vanish on a row of its domain.
    #[error("constraint {constraint} fails on row {row}")]
    Unsatisfied {
        /// The constraint's index, in the order the AIR asserts them.
        constraint: usize,
        /// The failing row (for a transition, the first of the pair).
        row: usize,
    },
    /// This error occurs when a periodic column's length is not a power of two no larger
    /// than the table.
    #[error("periodic column {index} has {len} values, need a power of two ≤ {rows}")]
    PeriodicColumn {
        /// The column's index.
        index: usize,
        /// Its length.
        len: usize,
        /// Rows in the table.
        rows: usize,
    },
    /// This error occurs when a public column's cell is out of the table or its inputs, or
    /// not below the next one.
    #[error(
        "public column {index}: a cell in row {row} holding input {input}, need rows in \
         increasing order below {rows} and inputs below {inputs}"
    )]
    PublicColumn {
        /// The column's index.
        index: usize,
        /// The cell's row.
        row: usize,
        /// The cell's input.
        input: usize,
        /// Rows in the table.
        rows: usize,
        /// Public inputs the AIR reads.
        inputs: usize,
    },
    /// This error occurs when a sparse periodic column's entry is out of its rows or the
    /// columns, or not after the one before it.
    #[error(
        "sparse periodic entry {index} in row {row}, column {column}: need entries in \
         increasing order of row, then column, below {rows} rows and {columns} columns"
    )]
    SparseEntry {
        /// The entry's index.
        index: usize,
        /// Its row.
        row: usize,
        /// Its column.
        column: usize,
        /// The columns' rows (their period).
        rows: usize,
        /// The columns.
        columns: usize,
    },
    /// This error occurs when an AIR asserts no constraint at all.
    #[error("the AIR asserts no constraint")]
    NoConstraints,
}
