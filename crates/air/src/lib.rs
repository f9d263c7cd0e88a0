#![doc = include_str!("../README.md")]

mod air;
mod check;
mod error;
mod info;

pub use air::{Air, Algebra, ConstraintBuilder, Domain, Frame, PeriodicColumn};
pub use check::check_trace;
pub use error::AirError;
pub use info::{ConstraintInfo, Degree};
