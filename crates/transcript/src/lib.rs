#![doc = include_str!("../README.md")]

mod keccak;
mod poseidon2;
mod pow;
mod transcript;

pub use poseidon2::{Message, StepKind, TranscriptStep, step_inputs};
pub use pow::meets_work;
pub use transcript::{Transcript, WorkState};
