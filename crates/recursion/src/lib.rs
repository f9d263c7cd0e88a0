#![doc = include_str!("../README.md")]

mod openings;

pub use openings::{OpeningsAir, OpeningsError, WIDTH};
