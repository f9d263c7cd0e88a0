#![doc = include_str!("../README.md")]

mod openings;

pub use openings::{Opened, OpeningsAir, OpeningsError, WIDTH};
