#![doc = include_str!("../README.md")]

mod pow;
mod transcript;

pub use transcript::Transcript;
