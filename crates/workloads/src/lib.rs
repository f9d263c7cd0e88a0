#![doc = include_str!("../README.md")]

mod fibonacci;
mod keccak_chain;
mod registry;

pub use fibonacci::{Fibonacci, FibonacciAir};
pub use keccak_chain::{KeccakChain, KeccakChainAir, keccak_f};
pub use registry::{AnyPart, AnyProof, Describe, MAX_HEADER_LEN};
