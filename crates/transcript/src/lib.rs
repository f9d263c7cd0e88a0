#![doc = include_str!("../README.md")]

mod keccak;
mod poseidon2;
mod pow;
mod transcript;

pub use transcript::{Transcript, WorkState};
