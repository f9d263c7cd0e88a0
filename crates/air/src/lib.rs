#![doc = include_str!("../README.md")]

mod air;
mod check;
mod error;
mod info;
pub mod lanes;

pub use air::{Air, ConstraintBuilder, Domain, Frame, PeriodicColumn};
pub use ballast_field::Algebra;
pub use check::check_trace;
pub use error::AirError;
pub use info::{ConstraintInfo, Degree};
