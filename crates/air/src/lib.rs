#![doc = include_str!("../README.md")]

mod air;
mod check;
mod error;
mod fibonacci;

pub use air::{Air, Boundary, BoundaryRow};
pub use check::check_trace;
pub use error::AirError;
pub use fibonacci::FibonacciAir;
