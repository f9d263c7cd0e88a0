#![doc = include_str!("../README.md")]

mod air;
mod check;
mod error;
mod info;
pub mod lanes;
mod program;
mod symbolic;

pub use air::{
    Air, ConstraintBuilder, Domain, Frame, PeriodicColumn, PublicCell, PublicColumn, SparseColumns,
    SparseEntry, known_columns, known_count, periodic_lengths,
};
pub use ballast_field::{Algebra, Halve};
pub use check::check_trace;
pub use error::AirError;
pub use info::{ConstraintInfo, Degree};
pub use program::{ConstraintProgram, Instruction, Operand, ProgramError};
pub use symbolic::{Leaf, Node, Symbolic, SymbolicAir};
