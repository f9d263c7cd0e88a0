#![doc = include_str!("../README.md")]

mod deep;
mod openings;

pub use deep::{DeepAir, DeepClaims, WIDTH as DEEP_WIDTH};
pub use openings::{Opened, OpeningsAir, OpeningsError, WIDTH as OPENINGS_WIDTH};
